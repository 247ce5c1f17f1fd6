//! One host's lab in a `[cluster]` experiment: `fslab host-lab up JSON`
//! makes the cell's filesystem on the host it runs on (image, loop device,
//! mkfs, mount at the path every host uses) with fslab's own lab code,
//! journals it there (a journal naming the host, so `fslab cleanup` on
//! that host undoes a `kill -9` and no other host's cleanup touches it)
//! and leaves it mounted; `fslab host-lab down JSON` undoes it from that
//! journal; `fslab host-lab check JSON` says whether a shared directory's
//! marker is seen. `fslab run` starts each through the cluster's launcher,
//! one process per host, and reads the one JSON line each prints.

use std::collections::BTreeMap;
use std::path::PathBuf;

use fslab_model::journal::{hostname, Journal};
use fslab_model::process::ProcessId;
use fslab_model::CellRunInfo;
use serde::{Deserialize, Serialize};

use crate::cellfs::{NewFs, Prepared};
use crate::mkfs::FsType;

/// Why a host's lab could not be made or undone.
#[derive(Debug, thiserror::Error)]
pub enum HostLabError {
    /// The command's JSON does not parse.
    #[error("host-lab: {0}")]
    Json(#[from] serde_json::Error),
    /// The journal could not be written: nothing is made.
    #[error(transparent)]
    Journal(#[from] fslab_model::journal::JournalError),
    /// Making the filesystem failed (what was made is undone).
    #[error(transparent)]
    Lab(#[from] crate::LabError),
    /// Undoing it failed.
    #[error(transparent)]
    Undo(#[from] crate::undo::UndoError),
    /// `down` was given no journal for this host.
    #[error("no lab of host {0} to undo")]
    NoJournal(String),
    /// The filesystem type is not one fslab knows.
    #[error("unknown filesystem type {0:?}")]
    FsType(String),
    /// A workload directory could not be made on the new filesystem.
    #[error("cannot create {}: {source}", path.display())]
    Dir {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// What `fslab host-lab up` makes on every host for one repetition of a
/// cell: the cell's image device and filesystem (the experiment's
/// `host_lab::up_job` fills it from the cell).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Up {
    /// `fslab-PID-cC-rR`: with the host's name, the image's.
    pub tag: String,
    pub image_dir: PathBuf,
    pub size: u64,
    pub direct_io: bool,
    pub scheduler: Option<String>,
    pub fs: String,
    pub mkfs_options: Vec<String>,
    pub after_mkfs: Vec<Vec<String>>,
    pub mount_options: String,
    /// The mount path, the same on every host.
    pub mnt: PathBuf,
    pub keep_images: bool,
    /// Where the host journals its lab.
    pub state_dir: PathBuf,
    /// The `fslab run` that asked (its journals' parent: while it lives,
    /// `fslab cleanup` leaves the lab to it).
    pub parent: Option<ProcessId>,
    /// The workload's directories on the new filesystem, made once it is
    /// mounted (a program's launcher starts its ranks in the first: they
    /// must be there on every host; gone with the filesystem).
    #[serde(default)]
    pub dirs: Vec<PathBuf>,
}

/// What `fslab host-lab down` undoes: each host's journal.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Down {
    pub journals: BTreeMap<String, PathBuf>,
}

/// What `fslab host-lab check` looks for: a file the head wrote in the
/// shared directory; without one, the host only answers (it was reached).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Check {
    #[serde(default)]
    pub marker: Option<PathBuf>,
}

/// The one JSON line a host prints.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Report {
    pub host: String,
    pub ok: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// up: the host's journal, which down needs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub journal: Option<PathBuf>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub loop_device: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub image: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kernel_options: String,
    /// down: what was undone.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub undone: Vec<String>,
}

impl Report {
    /// What `fslab host-lab ACTION` says of a report that is not ok:
    /// `host-lab ACTION on HOST: ERROR` (None when it is).
    pub fn failure(&self, action: &str) -> Option<String> {
        let error = self.error.as_deref().unwrap_or_default();
        (!self.ok).then(|| format!("host-lab {action} on {}: {error}", self.host))
    }
}

/// A host name as part of a file name.
fn file_safe(host: &str) -> String {
    host.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// `fslab host-lab up`: makes this host's lab, leaves it mounted and
/// journalled.
pub fn up(job: &Up) -> Report {
    let host = hostname();
    let mut report = Report {
        host: host.clone(),
        ..Report::default()
    };
    match make(job, &host, &mut report) {
        Ok(()) => report.ok = true,
        Err(e) => report.error = Some(e.to_string()),
    }
    report
}

fn make(job: &Up, host: &str, report: &mut Report) -> Result<(), HostLabError> {
    if job.fs.is_empty() {
        return Err(HostLabError::FsType(job.fs.clone()));
    }
    let fs = FsType::parse(&job.fs);
    let role = format!("hostlab-{}-{}", job.tag, file_safe(host));
    let argv: Vec<String> = std::env::args().collect();
    let mut journal = Journal::create_for(
        &job.state_dir,
        &role,
        argv,
        job.parent,
        Some(host.to_string()),
    )?;
    report.journal = Some(journal.path().to_path_buf());
    let mut info = CellRunInfo::default();
    let mut p = Prepared::empty();
    let made = (|| -> Result<(), HostLabError> {
        let image = job
            .image_dir
            .join(format!("{}-{}.img", job.tag, file_safe(host)));
        report.image = image.display().to_string();
        let lo = p.attach_new_image(
            &image,
            job.size,
            job.direct_io,
            job.keep_images,
            &mut journal,
        )?;
        let dev = lo.path().to_path_buf();
        report.loop_device = dev.display().to_string();
        p.set_scheduler(job.scheduler.as_deref(), &image, &mut journal, &mut info)?;
        NewFs {
            fs,
            mkfs_options: &job.mkfs_options,
            after_mkfs: &job.after_mkfs,
            mount_options: job.mount_options.clone(),
        }
        .make(&mut p, &dev, &job.mnt, &mut journal, &mut info)?;
        for d in &job.dirs {
            std::fs::create_dir_all(d).map_err(|source| HostLabError::Dir {
                path: d.clone(),
                source,
            })?;
        }
        Ok(())
    })();
    match made {
        Ok(()) => {
            report.kernel_options = info.kernel_mount_options;
            p.leave();
            Ok(())
        }
        Err(e) => {
            let _ = p.teardown_quietly(&mut journal, &mut info);
            if journal.resources().is_empty() {
                journal.remove();
                report.journal = None;
            }
            Err(e)
        }
    }
}

/// `fslab host-lab down`: undoes this host's lab from its journal.
pub fn down(job: &Down) -> Report {
    let host = hostname();
    let mut report = Report {
        host: host.clone(),
        ..Report::default()
    };
    let r = job
        .journals
        .get(&host)
        .ok_or_else(|| HostLabError::NoJournal(host.clone()))
        .and_then(|f| Ok(crate::undo::undo_host_lab(f)?));
    match r {
        Ok(lines) => {
            report.ok = !lines.iter().any(|l| l.contains("FAILED"));
            if !report.ok {
                report.error = lines.iter().find(|l| l.contains("FAILED")).cloned();
            }
            report.undone = lines;
        }
        Err(e) => report.error = Some(e.to_string()),
    }
    report
}

/// `fslab host-lab check`: whether this host sees the marker.
pub fn check(job: &Check) -> Report {
    let missing = job.marker.as_ref().filter(|m| !m.is_file());
    Report {
        host: hostname(),
        ok: missing.is_none(),
        error: missing.map(|m| format!("{} is not there", m.display())),
        ..Report::default()
    }
}

/// Runs `fslab host-lab ACTION JSON`: the report to print.
pub fn run(action: &str, json: &str) -> Result<Report, HostLabError> {
    Ok(match action {
        "up" => up(&serde_json::from_str(json)?),
        "down" => down(&serde_json::from_str(json)?),
        _ => check(&serde_json::from_str(json)?),
    })
}

/// The hosts' reports in `stdout` (one JSON line each; other lines, which
/// a launcher may add, are skipped).
pub fn reports(stdout: &str) -> Vec<Report> {
    stdout
        .lines()
        .filter_map(|l| serde_json::from_str(l.trim()).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_that_is_not_ok_says_its_host_and_error() {
        let mut r = Report {
            host: "h1".into(),
            ok: true,
            ..Report::default()
        };
        assert_eq!(r.failure("up"), None);
        r.ok = false;
        r.error = Some("mkfs failed".into());
        assert_eq!(
            r.failure("up").as_deref(),
            Some("host-lab up on h1: mkfs failed")
        );
    }

    #[test]
    fn reports_are_read_back_from_their_lines_among_others() {
        let r = Report {
            host: "h1".into(),
            ok: true,
            journal: Some("/run/fslab/x.json".into()),
            loop_device: "/dev/loop3".into(),
            ..Report::default()
        };
        let text = format!(
            "a launcher's note\n{}\n{{\"host\":\"h2\",\"ok\":false,\"error\":\"mkfs failed\"}}\n",
            serde_json::to_string(&r).unwrap()
        );
        let got = reports(&text);
        assert_eq!(got.len(), 2);
        assert_eq!(got[0], r);
        assert_eq!(got[1].error.as_deref(), Some("mkfs failed"));
    }

    #[test]
    fn a_host_without_a_journal_says_so_and_a_missing_marker_is_not_seen() {
        let d = down(&Down {
            journals: BTreeMap::new(),
        });
        assert!(!d.ok);
        assert_eq!(
            d.error.unwrap(),
            format!("no lab of host {} to undo", hostname())
        );
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("m");
        assert!(
            !check(&Check {
                marker: Some(marker.clone())
            })
            .ok
        );
        std::fs::write(&marker, "x").unwrap();
        assert!(
            check(&Check {
                marker: Some(marker)
            })
            .ok
        );
        // Without a marker a host only answers.
        assert!(check(&Check { marker: None }).ok);
    }
}
