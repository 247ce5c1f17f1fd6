//! A block device's IO scheduler (`/sys/block/DEV/queue/scheduler`).
//!
//! A loop device has none by default (`[none] mq-deadline kyber bfq`), so
//! nothing merges a filesystem's small writes into larger IOs; a VM's
//! virtio disk of 2013 (seed 000) had the kernel's default elevator. A
//! loop device keeps its scheduler after it is detached, so whoever sets
//! one must put back what it found before detaching.

use std::path::{Path, PathBuf};

use crate::{LabError, LabResult};

/// What a device's scheduler file says: the schedulers it offers and the
/// one in use (the bracketed name).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schedulers {
    pub offered: Vec<String>,
    pub current: String,
}

/// Parses `none [mq-deadline] kyber bfq`.
pub fn parse(text: &str) -> Option<Schedulers> {
    let mut offered = Vec::new();
    let mut current = None;
    for w in text.split_whitespace() {
        match w.strip_prefix('[').and_then(|w| w.strip_suffix(']')) {
            Some(c) => {
                current = Some(c.to_string());
                offered.push(c.to_string());
            }
            None => offered.push(w.to_string()),
        }
    }
    Some(Schedulers {
        offered,
        current: current?,
    })
}

/// `/sys/block/loopN/queue/scheduler`.
pub fn loop_file(number: u32) -> PathBuf {
    PathBuf::from(format!("/sys/block/loop{number}/queue/scheduler"))
}

/// Reads a scheduler file.
pub fn read(file: &Path) -> LabResult<Schedulers> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| LabError::Failed(format!("cannot read {}: {e}", file.display())))?;
    parse(&text).ok_or_else(|| {
        LabError::Failed(format!(
            "{}: no scheduler in use in {:?}",
            file.display(),
            text.trim()
        ))
    })
}

/// Sets `name` in a scheduler file and reads back that it holds.
pub fn write(file: &Path, name: &str) -> LabResult<()> {
    std::fs::write(file, name).map_err(|e| {
        LabError::Failed(format!(
            "cannot set IO scheduler {name:?} in {}: {e}",
            file.display()
        ))
    })?;
    let now = read(file)?.current;
    if now != name {
        return Err(LabError::Failed(format!(
            "{} says {now:?} after fslab set {name:?}",
            file.display()
        )));
    }
    Ok(())
}

/// The schedulers a loop device offers on this machine (every loop device
/// offers the same: the kernel's registered blk-mq schedulers), read from
/// the first loop device in /sys/block; None when there is none to read.
pub fn loop_offered() -> Option<Vec<String>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir("/sys/block")
        .ok()?
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("loop"))
        .map(|e| e.path().join("queue/scheduler"))
        .collect();
    files.sort();
    files.iter().find_map(|f| read(f).ok()).map(|s| s.offered)
}

/// Why `name` cannot be a loop device's scheduler here (None: it can):
/// one line naming the bad value and what the machine offers.
pub fn loop_scheduler_error(name: &str) -> Option<String> {
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Some(format!("{name:?} is not an IO scheduler's name"));
    }
    let offered = loop_offered()?;
    (!offered.iter().any(|o| o == name)).then(|| {
        format!(
            "{name:?} is not an IO scheduler this machine's loop devices offer ({})",
            offered.join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bracketed_name_is_the_scheduler_in_use() {
        let s = parse("none [mq-deadline] kyber bfq\n").unwrap();
        assert_eq!(s.current, "mq-deadline");
        assert_eq!(s.offered, ["none", "mq-deadline", "kyber", "bfq"]);
        assert_eq!(parse("[none] \n").unwrap().current, "none");
        assert!(parse("none mq-deadline").is_none());
    }

    #[test]
    fn a_name_that_no_loop_device_offers_is_refused_with_the_list() {
        assert!(loop_scheduler_error("../x").unwrap().contains("not an IO"));
        assert!(loop_scheduler_error("").is_some());
        let Some(offered) = loop_offered() else {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "no loop device in /sys/block to read the schedulers of"
            );
            return;
        };
        assert!(offered.iter().any(|o| o == "none"), "{offered:?}");
        assert_eq!(loop_scheduler_error("none"), None);
        let e = loop_scheduler_error("cfq").unwrap();
        assert!(e.contains("\"cfq\"") && e.contains("none"), "{e}");
    }
}
