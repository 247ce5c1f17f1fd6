//! The state journal: every machine resource an fslab process acquires
//! (image, loop device, mount, sysctl, cgroup, tracefs instance, ...) is
//! written here, durably, before it is acquired, and struck out once it is
//! undone. `fslab cleanup` (and `fslab run`, for the workloads it started)
//! undoes what a killed process left, reading nothing but these files.
//!
//! Each process keeps one file per role in the state directory:
//! `run-PID.json` for `fslab run`, `probes-PID.json` for a workload's
//! probes. A file names its owner (pid and start time, so a reused pid is
//! never mistaken for it) and, for a workload started by `fslab run`, that
//! run ([`PARENT_ENV`]), which undoes it when the workload dies.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::process::ProcessId;

/// Environment variable through which `fslab run` names itself
/// (`PID:START`) to the workloads it starts.
pub const PARENT_ENV: &str = "FSLAB_PARENT_RUN";

/// Something a process set up that must be undone.
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
    /// A loop device's IO scheduler, set by fslab: `original` is put back
    /// (a loop device keeps its scheduler after it is detached).
    Scheduler {
        number: u32,
        backing: PathBuf,
        original: String,
    },
    Cgroup {
        path: PathBuf,
    },
    /// A scratch file (the workload's log).
    File {
        path: PathBuf,
    },
    /// A directory fslab made and fills (a directory device's cell
    /// directory): removed with everything in it.
    Tree {
        path: PathBuf,
    },
    /// A private tracefs instance (tracing is switched off, then it is removed).
    TracefsInstance {
        path: PathBuf,
    },
    /// A private tracefs mount on a directory fslab made.
    TracefsMount {
        path: PathBuf,
    },
}

/// The journal file's contents.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StateFile {
    pub pid: u32,
    /// The owner's start time (see [`ProcessId`]); 0 in old journals.
    #[serde(default)]
    pub start: u64,
    /// The `fslab run` that started this process, if one did.
    #[serde(default)]
    pub parent: Option<ProcessId>,
    pub started_at: String,
    pub command_line: Vec<String>,
    /// The host whose lab this is (`fslab host-lab up` on a cluster's
    /// host): undone only by a process on that host (its own mounts), and
    /// never by the `fslab run` that asked for it as one of its children.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// (id, resource) in the order they were set up.
    pub resources: Vec<(u64, Resource)>,
}

impl StateFile {
    pub fn owner(&self) -> ProcessId {
        ProcessId {
            pid: self.pid,
            start: self.start,
        }
    }
}

/// A journal could not be written: the resource must not be acquired.
#[derive(Debug, thiserror::Error)]
#[error("cannot write the state journal {path}: {source}")]
pub struct JournalError {
    pub path: PathBuf,
    pub source: std::io::Error,
}

/// This process's journal for one role.
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

/// This host's name (its UTS namespace's: a namespace host's own).
pub fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// The `fslab run` named by [`PARENT_ENV`], if any.
pub fn parent_from_env() -> Option<ProcessId> {
    let v = std::env::var(PARENT_ENV).ok()?;
    let (pid, start) = v.split_once(':')?;
    Some(ProcessId {
        pid: pid.parse().ok()?,
        start: start.parse().ok()?,
    })
}

/// The value of [`PARENT_ENV`] that names this process.
pub fn parent_env_value() -> String {
    let me = ProcessId::current();
    format!("{}:{}", me.pid, me.start)
}

impl Journal {
    /// Starts `ROLE-PID.json` in `dir` (made if needed), written durably.
    pub fn create(
        dir: &Path,
        role: &str,
        command_line: Vec<String>,
    ) -> Result<Journal, JournalError> {
        Journal::create_for(dir, role, command_line, parent_from_env(), None)
    }

    /// [`Journal::create`] with the owner's parent run and the host whose
    /// lab it lists (see [`StateFile::host`]) given.
    pub fn create_for(
        dir: &Path,
        role: &str,
        command_line: Vec<String>,
        parent: Option<ProcessId>,
        host: Option<String>,
    ) -> Result<Journal, JournalError> {
        let path = dir.join(format!("{role}-{}.json", std::process::id()));
        std::fs::create_dir_all(dir).map_err(|source| JournalError {
            path: path.clone(),
            source,
        })?;
        let me = ProcessId::current();
        let j = Journal {
            path,
            state: StateFile {
                pid: me.pid,
                start: me.start,
                parent,
                started_at: crate::time::now(),
                command_line,
                host,
                resources: Vec::new(),
            },
            next: 0,
        };
        j.save()?;
        Ok(j)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The directory for this run's mount points.
    pub fn mount_base(&self) -> PathBuf {
        self.path.with_file_name(format!("mnt-{}", self.state.pid))
    }

    /// Writes the journal to a temporary file, flushes it to disk, renames
    /// it over the journal and flushes the directory: after a crash the
    /// journal is the old one or the new one, never a torn one.
    fn save(&self) -> Result<(), JournalError> {
        let err = |source| JournalError {
            path: self.path.clone(),
            source,
        };
        let tmp = self.path.with_extension("json.tmp");
        let text = serde_json::to_vec_pretty(&self.state).map_err(|e| err(e.into()))?;
        let mut f = std::fs::File::create(&tmp).map_err(err)?;
        f.write_all(&text).map_err(err)?;
        f.sync_all().map_err(err)?;
        drop(f);
        std::fs::rename(&tmp, &self.path).map_err(err)?;
        if let Some(dir) = self.path.parent() {
            std::fs::File::open(dir)
                .and_then(|d| d.sync_all())
                .map_err(err)?;
        }
        Ok(())
    }

    /// Notes a resource before it is acquired; returns its id. On an error
    /// the resource is not noted, and the caller must not acquire it.
    pub fn add(&mut self, r: Resource) -> Result<u64, JournalError> {
        let id = self.next;
        self.state.resources.push((id, r));
        if let Err(e) = self.save() {
            self.state.resources.pop();
            return Err(e);
        }
        self.next += 1;
        Ok(id)
    }

    /// Strikes out a resource that was undone. A journal that cannot be
    /// rewritten still lists it, which is safe: undoing is idempotent.
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

    /// Takes the resources still listed (in the order they were set up),
    /// leaving the journal empty.
    pub fn take_all(&mut self) -> Vec<Resource> {
        let left = self.state.resources.drain(..).map(|(_, r)| r).collect();
        let _ = self.save();
        left
    }

    /// Removes the journal file (its resources must have been undone).
    pub fn remove(self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Removes journal files in `dir` that a process killed while rewriting
/// its journal left half-written (`ROLE-PID.json.tmp`), once no process
/// has that pid any more (or only a zombie). Returns what it removed.
pub fn remove_torn(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut removed = Vec::new();
    for p in entries.flatten().map(|e| e.path()) {
        let Some(name) = p.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let pid = name
            .strip_suffix(".json.tmp")
            .and_then(|stem| stem.rsplit_once('-'))
            .and_then(|(_, pid)| pid.parse::<u32>().ok());
        if let Some(pid) = pid {
            let gone = ProcessId::of(pid).is_none_or(|p| !p.is_alive());
            if gone && std::fs::remove_file(&p).is_ok() {
                removed.push(p);
            }
        }
    }
    removed
}

/// Every journal in `dir` (any role), with its contents, sorted by file
/// name; `None` for a file that cannot be read or parsed.
pub fn journals(dir: &Path) -> Vec<(PathBuf, Option<StateFile>)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.ends_with(".json") && n.contains('-'))
        })
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|f| {
            let s = std::fs::read(&f)
                .ok()
                .and_then(|b| serde_json::from_slice(&b).ok());
            (f, s)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_resource_is_listed_only_once_the_journal_holds_it() {
        let dir = tempfile::tempdir().unwrap();
        let mut j = Journal::create(dir.path(), "run", vec!["fslab".into()]).unwrap();
        let id = j.add(Resource::File { path: "/x".into() }).unwrap();
        let (_, s) = &journals(dir.path())[0];
        assert_eq!(s.as_ref().unwrap().resources.len(), 1);
        assert_eq!(s.as_ref().unwrap().owner(), ProcessId::current());
        j.done(id);
        let (_, s) = &journals(dir.path())[0];
        assert!(s.as_ref().unwrap().resources.is_empty());
    }

    #[test]
    fn a_journal_that_cannot_be_written_refuses_the_resource() {
        let dir = tempfile::tempdir().unwrap();
        let mut j = Journal::create(dir.path(), "run", vec![]).unwrap();
        // The directory goes away: nothing can be written any more.
        std::fs::remove_dir_all(dir.path()).unwrap();
        let e = j.add(Resource::File { path: "/x".into() });
        assert!(e.is_err());
        assert!(j.resources().is_empty(), "not listed, so never acquired");
    }

    #[test]
    fn a_torn_journal_of_a_dead_process_is_removed_and_a_live_ones_kept() {
        let dir = tempfile::tempdir().unwrap();
        let dead = dir.path().join("probes-999999999.json.tmp");
        let live = dir
            .path()
            .join(format!("run-{}.json.tmp", std::process::id()));
        std::fs::write(&dead, b"{").unwrap();
        std::fs::write(&live, b"{").unwrap();
        assert_eq!(remove_torn(dir.path()), vec![dead.clone()]);
        assert!(!dead.exists() && live.exists());
    }
}
