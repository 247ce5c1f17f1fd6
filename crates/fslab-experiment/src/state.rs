//! The state journal: every resource `fslab run` sets up is written to
//! `$FSLAB_STATE_DIR/run-PID.json` (default `/run/fslab`) before it is
//! used and struck out when it is undone, so `fslab cleanup` can undo what
//! a run killed with SIGKILL left behind.

use std::path::{Path, PathBuf};

use fslab_lab::loopdev::backing_file;
use fslab_lab::mount::is_mount_point;
use serde::{Deserialize, Serialize};

use crate::machine::{remove_cgroup, write_sysctl};

/// Something a run set up.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Resource {
    Image {
        path: PathBuf,
        /// `--keep-images`: left in place by `fslab cleanup` too.
        #[serde(default)]
        keep: bool,
    },
    Loop {
        number: u32,
        backing: PathBuf,
    },
    MountDir {
        path: PathBuf,
    },
    Mount {
        target: PathBuf,
    },
    Sysctl {
        name: String,
        original: String,
    },
    Cgroup {
        path: PathBuf,
    },
    /// A scratch file (the workload's log).
    File {
        path: PathBuf,
    },
}

#[derive(Debug, Serialize, Deserialize)]
struct StateFile {
    pid: u32,
    started_at: String,
    command_line: Vec<String>,
    /// (id, resource) in the order they were set up.
    resources: Vec<(u64, Resource)>,
}

/// This process's journal.
pub struct Journal {
    path: PathBuf,
    state: StateFile,
    next: u64,
}

/// `$FSLAB_STATE_DIR`, else `/run/fslab`.
pub fn state_dir() -> PathBuf {
    std::env::var_os("FSLAB_STATE_DIR")
        .filter(|s| !s.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/run/fslab"))
}

impl Journal {
    pub fn create(dir: &Path, command_line: Vec<String>) -> std::io::Result<Journal> {
        std::fs::create_dir_all(dir)?;
        let pid = std::process::id();
        let j = Journal {
            path: dir.join(format!("run-{pid}.json")),
            state: StateFile {
                pid,
                started_at: chrono::Utc::now().to_rfc3339(),
                command_line,
                resources: Vec::new(),
            },
            next: 0,
        };
        j.save()?;
        Ok(j)
    }

    /// The directory for this run's mount points.
    pub fn mount_base(&self) -> PathBuf {
        self.path.with_file_name(format!("mnt-{}", self.state.pid))
    }

    fn save(&self) -> std::io::Result<()> {
        let tmp = self.path.with_extension("json.tmp");
        std::fs::write(
            &tmp,
            serde_json::to_vec_pretty(&self.state).unwrap_or_default(),
        )?;
        std::fs::rename(&tmp, &self.path)
    }

    /// Notes a resource (before it is used); returns its id.
    pub fn add(&mut self, r: Resource) -> u64 {
        let id = self.next;
        self.next += 1;
        self.state.resources.push((id, r));
        let _ = self.save();
        id
    }

    /// Strikes out a resource that was undone.
    pub fn done(&mut self, id: u64) {
        self.state.resources.retain(|(i, _)| *i != id);
        let _ = self.save();
    }

    pub fn resources(&self) -> Vec<Resource> {
        self.state
            .resources
            .iter()
            .map(|(_, r)| r.clone())
            .collect()
    }

    /// Undoes whatever is still listed (in reverse order) and removes the journal.
    pub fn close(mut self) -> Vec<String> {
        let left: Vec<Resource> = self.state.resources.drain(..).map(|(_, r)| r).collect();
        let report = undo_all(&left);
        let _ = std::fs::remove_dir(self.mount_base());
        let _ = std::fs::remove_file(&self.path);
        report
    }
}

/// Undoes one resource; returns what was done (None if nothing was left to do).
pub fn undo(r: &Resource) -> Result<Option<String>, String> {
    match r {
        Resource::Mount { target } => {
            if !is_mount_point(target) {
                return Ok(None);
            }
            let mut res = rustix::mount::unmount(target, rustix::mount::UnmountFlags::empty());
            for _ in 0..30 {
                if res != Err(rustix::io::Errno::BUSY) {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(100));
                res = rustix::mount::unmount(target, rustix::mount::UnmountFlags::empty());
            }
            if res.is_err() {
                rustix::mount::unmount(target, rustix::mount::UnmountFlags::DETACH).map_err(
                    |e| {
                        format!(
                            "cannot unmount {}: {}",
                            target.display(),
                            std::io::Error::from(e)
                        )
                    },
                )?;
            }
            Ok(Some(format!("unmounted {}", target.display())))
        }
        Resource::MountDir { path } => match std::fs::remove_dir(path) {
            Ok(()) => Ok(Some(format!("removed mount point {}", path.display()))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(format!("cannot remove {}: {e}", path.display())),
        },
        Resource::Loop { number, backing } => {
            if backing_file(*number).as_deref() != Some(backing.as_path()) {
                return Ok(None); // gone, or now someone else's: not ours to touch
            }
            let dev = PathBuf::from(format!("/dev/loop{number}"));
            let fd = rustix::fs::open(
                &dev,
                rustix::fs::OFlags::RDWR | rustix::fs::OFlags::CLOEXEC,
                rustix::fs::Mode::empty(),
            )
            .map_err(|e| format!("cannot open {}: {}", dev.display(), std::io::Error::from(e)))?;
            let _ = fslab_sys::loopdev::clear(std::os::fd::AsFd::as_fd(&fd));
            drop(fd);
            for _ in 0..200 {
                if backing_file(*number).is_none() {
                    return Ok(Some(format!("detached {}", dev.display())));
                }
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            Err(format!(
                "{} is still bound to {}",
                dev.display(),
                backing.display()
            ))
        }
        Resource::File { path } => match std::fs::remove_file(path) {
            Ok(()) => Ok(Some(format!("removed {}", path.display()))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(format!("cannot remove {}: {e}", path.display())),
        },
        Resource::Image { path, keep: true } => Ok(path
            .exists()
            .then(|| format!("kept image {} (--keep-images)", path.display()))),
        Resource::Image { path, .. } => match std::fs::remove_file(path) {
            Ok(()) => Ok(Some(format!("removed image {}", path.display()))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(format!("cannot remove {}: {e}", path.display())),
        },
        Resource::Sysctl { name, original } => {
            let now = crate::machine::read_sysctl(name).map_err(|e| e.0)?;
            if &now == original {
                return Ok(None);
            }
            write_sysctl(name, original).map_err(|e| e.0)?;
            Ok(Some(format!("restored {name} = {original}")))
        }
        Resource::Cgroup { path } => {
            if !path.exists() {
                return Ok(None);
            }
            remove_cgroup(path).map_err(|e| e.0)?;
            Ok(Some(format!("removed cgroup {}", path.display())))
        }
    }
}

fn undo_all(resources: &[Resource]) -> Vec<String> {
    resources
        .iter()
        .rev()
        .filter_map(|r| match undo(r) {
            Ok(Some(done)) => Some(done),
            Ok(None) => None,
            Err(e) => Some(format!("FAILED: {e}")),
        })
        .collect()
}

fn alive(pid: u32) -> bool {
    rustix::process::Pid::from_raw(pid as i32)
        .is_some_and(|p| rustix::process::test_kill_process(p).is_ok())
}

/// The `fslab run`s alive now, from their journals in `dir`: (pid, command line).
pub fn live_runs(dir: &Path) -> Vec<(u32, Vec<String>)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.starts_with("run-") && n.ends_with(".json"))
        })
        .filter_map(|e| serde_json::from_slice::<StateFile>(&std::fs::read(e.path()).ok()?).ok())
        .filter(|s| alive(s.pid) && s.pid != std::process::id())
        .map(|s| (s.pid, s.command_line))
        .collect()
}

/// `fslab cleanup`: undoes the journals of runs that are no longer alive.
/// Returns one line per action; journals of live runs are left alone.
pub fn cleanup(dir: &Path) -> Vec<String> {
    let mut report = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return report;
    };
    let mut files: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("run-") && n.ends_with(".json"))
        })
        .collect();
    files.sort();
    for f in files {
        let state: StateFile = match std::fs::read(&f)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
        {
            Some(s) => s,
            None => {
                report.push(format!(
                    "{}: unreadable journal, left in place",
                    f.display()
                ));
                continue;
            }
        };
        if alive(state.pid) && state.pid != std::process::id() {
            report.push(format!(
                "run {} (pid {}) is still running: left alone",
                f.display(),
                state.pid
            ));
            continue;
        }
        let rs: Vec<Resource> = state.resources.into_iter().map(|(_, r)| r).collect();
        let done = undo_all(&rs);
        let failed = done.iter().any(|l| l.starts_with("FAILED"));
        report.extend(done.into_iter().map(|l| format!("pid {}: {l}", state.pid)));
        let _ = std::fs::remove_dir(dir.join(format!("mnt-{}", state.pid)));
        if !failed {
            let _ = std::fs::remove_file(&f);
        }
    }
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn journal_lists_until_done_and_cleanup_undoes_dead_runs() {
        let dir = tempfile::tempdir().unwrap();
        let img = dir.path().join("left.img");
        std::fs::write(&img, b"x").unwrap();
        let mut j = Journal::create(dir.path(), vec!["fslab".into()]).unwrap();
        let a = j.add(Resource::Image {
            path: img.clone(),
            keep: false,
        });
        let kept = dir.path().join("kept.img");
        std::fs::write(&kept, b"x").unwrap();
        j.add(Resource::Image {
            path: kept.clone(),
            keep: true,
        });
        let b = j.add(Resource::MountDir {
            path: dir.path().join("nope"),
        });
        j.done(b);
        assert_eq!(
            j.resources()[0],
            Resource::Image {
                path: img.clone(),
                keep: false
            }
        );
        // A journal left by a dead process (pid 0 is never alive here) is undone.
        let text =
            std::fs::read_to_string(dir.path().join(format!("run-{}.json", std::process::id())))
                .unwrap();
        let dead = text.replace(
            &format!("\"pid\": {}", std::process::id()),
            "\"pid\": 999999999",
        );
        std::fs::write(dir.path().join("run-999999999.json"), dead).unwrap();
        let _ = a;
        let report = cleanup(dir.path());
        assert!(
            report.iter().any(|l| l.contains("removed image")),
            "{report:?}"
        );
        assert!(!img.exists());
        // An image kept with --keep-images stays, and cleanup says so.
        assert!(kept.exists());
        assert!(
            report.iter().any(|l| l.contains("kept image")),
            "{report:?}"
        );
        assert!(!dir.path().join("run-999999999.json").exists());
    }
}
