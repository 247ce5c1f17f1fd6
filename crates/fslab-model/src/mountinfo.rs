//! The kernel's account of mounts, from `/proc/self/mountinfo` (proc(5)):
//! what a run records as its target, and what fslab checks its own mounts
//! against.

use std::path::Path;

/// One mountinfo line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MountEntry {
    /// `major:minor` of the filesystem.
    pub dev: String,
    /// Where it is mounted (octal escapes undone).
    pub mount_point: String,
    pub fs_type: String,
    /// The mount source, e.g. `/dev/loop2` (octal escapes undone).
    pub source: String,
    /// Per-mount options followed by the superblock options not already listed.
    pub options: String,
}

/// Parses one line; None for a line that is not in mountinfo's format.
pub fn parse_line(line: &str) -> Option<MountEntry> {
    let (left, right) = line.split_once(" - ")?;
    let l: Vec<&str> = left.split(' ').collect();
    let r: Vec<&str> = right.split(' ').collect();
    if l.len() < 6 || r.len() < 3 {
        return None;
    }
    let mut opts: Vec<&str> = l[5].split(',').collect();
    for o in r[2].split(',') {
        if !opts.contains(&o) {
            opts.push(o);
        }
    }
    Some(MountEntry {
        dev: l[2].to_string(),
        mount_point: unescape(l[4]),
        fs_type: r[0].to_string(),
        source: unescape(r[1]),
        options: opts.join(","),
    })
}

/// This process's mounts, in mount order (empty if mountinfo cannot be read).
pub fn read() -> Vec<MountEntry> {
    std::fs::read_to_string("/proc/self/mountinfo")
        .map(|t| t.lines().filter_map(parse_line).collect())
        .unwrap_or_default()
}

/// The mount that holds `path`: the longest mount point that is a prefix
/// of its canonical form (the latest such mount, if several are stacked).
pub fn holding(path: &Path) -> Option<MountEntry> {
    let canon = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let mut best: Option<MountEntry> = None;
    for m in read() {
        if canon.starts_with(&m.mount_point)
            && best
                .as_ref()
                .is_none_or(|b| m.mount_point.len() >= b.mount_point.len())
        {
            best = Some(m);
        }
    }
    best
}

/// The topmost mount at exactly `target`.
pub fn at(target: &Path) -> Option<MountEntry> {
    let canon = std::fs::canonicalize(target).ok()?;
    read()
        .into_iter()
        .rev()
        .find(|m| Path::new(&m.mount_point) == canon)
}

/// mountinfo escapes space, tab, newline and backslash as octal `\NNN`.
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            out.push((b[i + 1] - b'0') * 64 + (b[i + 2] - b'0') * 8 + (b[i + 3] - b'0'));
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_loop_mount_line() {
        let line =
            "36 25 7:2 / /mnt/my\\040lab rw,relatime shared:1 - ext4 /dev/loop2 rw,noinit_itable";
        let m = parse_line(line).unwrap();
        assert_eq!(m.dev, "7:2");
        assert_eq!(m.mount_point, "/mnt/my lab");
        assert_eq!(m.fs_type, "ext4");
        assert_eq!(m.source, "/dev/loop2");
        assert_eq!(m.options, "rw,relatime,noinit_itable");
        assert_eq!(parse_line("36 25 7:2 / /mnt rw"), None);
    }

    #[test]
    fn finds_the_mount_holding_a_path_and_the_one_at_it() {
        let shm = holding(Path::new("/dev/shm/some/file")).unwrap();
        assert_eq!(shm.mount_point, "/dev/shm");
        assert_eq!(shm.fs_type, "tmpfs");
        assert_eq!(at(Path::new("/dev/shm")).unwrap().fs_type, "tmpfs");
        assert_eq!(at(Path::new("/dev/shm/..")).unwrap().mount_point, "/dev");
        assert_eq!(holding(Path::new("/")).unwrap().mount_point, "/");
    }
}
