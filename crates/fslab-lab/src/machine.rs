//! Machine settings for a cell: sysctls (restored afterwards), dropping
//! caches, and a memory cgroup for the workload (removed afterwards).

use std::path::{Path, PathBuf};

use crate::{LabError, LabResult};

/// Why `name` is not a well-formed sysctl name (`vm.dirty_ratio`), if it is not.
pub fn sysctl_name_error(name: &str) -> Option<String> {
    let ok = !name.is_empty()
        && name.len() <= 128
        && name.split('.').count() >= 2
        && name.split('.').all(|c| {
            !c.is_empty()
                && c.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-')
        });
    (!ok).then(|| {
        format!(
            "{name:?} is not a sysctl name (dot-separated lower-case words, like vm.dirty_ratio)"
        )
    })
}

/// `/proc/sys/vm/dirty_ratio` for `vm.dirty_ratio`. A name that is not
/// well formed (see [`sysctl_name_error`]) maps to nothing,
/// so no name can reach a path outside /proc/sys.
pub fn sysctl_path(name: &str) -> LabResult<PathBuf> {
    if let Some(e) = sysctl_name_error(name) {
        return Err(LabError::Failed(e));
    }
    Ok(PathBuf::from("/proc/sys").join(name.replace('.', "/")))
}

pub fn read_sysctl(name: &str) -> LabResult<String> {
    let path = sysctl_path(name)?;
    std::fs::read_to_string(&path)
        .map(|s| s.trim().to_string())
        .map_err(|e| {
            LabError::Failed(format!(
                "sysctl {name}: cannot read {}: {e}",
                path.display()
            ))
        })
}

pub fn write_sysctl(name: &str, value: &str) -> LabResult<()> {
    std::fs::write(sysctl_path(name)?, value)
        .map_err(|e| LabError::Failed(format!("sysctl {name}: cannot set {value:?}: {e}")))
}

/// A sysctl this process holds: every fslab process that wants to change
/// (or restore) the same setting waits until the holder has restored it,
/// so two runs never save each other's value as the original. The lock is
/// an flock on `sysctl-NAME.lock` in [`lock_dir`], released by the kernel
/// if the holder dies.
#[derive(Debug)]
pub struct SysctlLock {
    _file: std::fs::File,
}

/// Where the locks on machine-wide settings live: one place for every
/// fslab process of the machine, whatever its state directory
/// (`/run/lock/fslab`, or `/run/fslab-locks` where there is no /run/lock).
pub fn lock_dir() -> PathBuf {
    if Path::new("/run/lock").is_dir() {
        PathBuf::from("/run/lock/fslab")
    } else {
        PathBuf::from("/run/fslab-locks")
    }
}

/// `DIR/sysctl-NAME.lock`. Lock files stay (empty but for the last
/// holder's pid): removing one while another process waits on it would
/// let two processes hold "the" lock.
fn lock_file(dir: &Path, name: &str) -> LabResult<std::fs::File> {
    sysctl_path(name)?;
    std::fs::create_dir_all(dir)
        .map_err(|e| LabError::Failed(format!("cannot create {}: {e}", dir.display())))?;
    let p = dir.join(format!("sysctl-{name}.lock"));
    std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(&p)
        .map_err(|e| LabError::Failed(format!("cannot open {}: {e}", p.display())))
}

fn try_flock(f: &std::fs::File) -> LabResult<bool> {
    use rustix::fs::{flock, FlockOperation};
    match flock(f, FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => Ok(true),
        Err(rustix::io::Errno::WOULDBLOCK) => Ok(false),
        Err(e) => Err(LabError::Failed(format!(
            "flock: {}",
            std::io::Error::from(e)
        ))),
    }
}

impl SysctlLock {
    /// Takes sysctl `name`, waiting while another fslab process holds it
    /// (`waiting` is told once, with the holder's pid). Gives up when `stop`
    /// is set.
    pub fn acquire(
        dir: &Path,
        name: &str,
        stop: &std::sync::atomic::AtomicBool,
        waiting: &mut dyn FnMut(String),
    ) -> LabResult<SysctlLock> {
        use std::io::{Read, Seek, Write};
        let mut f = lock_file(dir, name)?;
        let mut told = false;
        while !try_flock(&f)? {
            if stop.load(std::sync::atomic::Ordering::Relaxed) {
                return Err(LabError::Failed(format!(
                    "interrupted while waiting for sysctl {name}"
                )));
            }
            if !told {
                let mut holder = String::new();
                let _ = f.read_to_string(&mut holder);
                waiting(format!(
                    "waiting for sysctl {name}: fslab process {} has it set",
                    holder.trim()
                ));
                told = true;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        let _ = f.set_len(0);
        let _ = f.rewind();
        let _ = write!(f, "{}", std::process::id());
        Ok(SysctlLock { _file: f })
    }

    /// Takes sysctl `name` only if no other fslab process holds it.
    pub fn try_acquire(dir: &Path, name: &str) -> LabResult<Option<SysctlLock>> {
        let f = lock_file(dir, name)?;
        Ok(try_flock(&f)?.then_some(SysctlLock { _file: f }))
    }
}

pub use crate::vm::drop_caches;

/// A memory cgroup made for one workload.
#[derive(Debug)]
pub struct MemCgroup {
    cg: fslab_model::cgroup::MemoryCgroup,
}

/// Where this process's memory cgroup is.
fn own_memory_cgroup() -> LabResult<fslab_model::cgroup::MemoryCgroup> {
    fslab_model::cgroup::own_memory_cgroup().map_err(|e| LabError::Failed(e.to_string()))
}

impl MemCgroup {
    /// Where [`MemCgroup::create`] would make `NAME`: below this process's
    /// own memory cgroup.
    pub fn path_for(name: &str) -> LabResult<PathBuf> {
        Ok(own_memory_cgroup()?.path.join(name))
    }

    /// Makes `NAME` below this process's own memory cgroup, limited to
    /// `limit` bytes. Under cgroup v1 the kernel's OOM killer is off in it
    /// (`memory.oom_control`): a workload that outgrows its limit waits for
    /// reclaim, as a machine of that size waits, instead of being killed.
    /// The cgroup charges the inodes the workload caches, and xfs frees
    /// them lazily: seed 000's xfs cell (504k files, 512 MiB) was killed
    /// in 2 runs of 3 with the killer on, and ran in 3 of 3 with it off
    /// (and 3 of 3 at 256 MiB).
    pub fn create(name: &str, limit: u64) -> LabResult<MemCgroup> {
        let own = own_memory_cgroup()?;
        let path = own.path.join(name);
        let v2 = own.v2;
        std::fs::create_dir(&path).map_err(|e| {
            LabError::Failed(format!(
                "cannot create memory cgroup {}: {e}",
                path.display()
            ))
        })?;
        let file = if v2 {
            "memory.max"
        } else {
            "memory.limit_in_bytes"
        };
        let cg = MemCgroup {
            cg: fslab_model::cgroup::MemoryCgroup { path, v2 },
        };
        let set = |file: &str, value: String| {
            std::fs::write(cg.path().join(file), value).map_err(|e| {
                LabError::Failed(format!(
                    "cannot set {} in {}: {e}",
                    file,
                    cg.path().display()
                ))
            })
        };
        set(file, limit.to_string())?;
        if !v2 {
            set("memory.oom_control", "1".into())?;
        }
        Ok(cg)
    }

    pub fn path(&self) -> &Path {
        &self.cg.path
    }

    /// The cgroup as the probes watch it.
    pub fn watched(&self) -> fslab_model::cgroup::MemoryCgroup {
        self.cg.clone()
    }

    /// Moves process `pid` into the cgroup.
    pub fn add_process(path: &Path, pid: u32) -> LabResult<()> {
        crate::vm::join_cgroup(path, pid)
    }

    /// Peak memory use.
    pub fn max_usage(&self) -> Option<u64> {
        self.cg.peak()
    }

    /// How often the limit was hit.
    pub fn failcnt(&self) -> Option<u64> {
        self.cg.limit_hits()
    }

    /// Sets its limit-hit count and its peak usage back to 0 (cgroup v1;
    /// v2 keeps them), so that a second workload in it counts its own.
    pub fn reset_counters(&self) -> LabResult<()> {
        if self.cg.v2 {
            return Ok(());
        }
        for f in ["memory.failcnt", "memory.max_usage_in_bytes"] {
            std::fs::write(self.path().join(f), "0").map_err(|e| {
                LabError::Failed(format!(
                    "cannot reset {f} in {}: {e}",
                    self.path().display()
                ))
            })?;
        }
        Ok(())
    }

    /// Removes the cgroup (its processes must have exited).
    pub fn remove(self) -> LabResult<()> {
        remove_cgroup(&self.cg.path)
    }
}

/// Removes a cgroup directory, moving any process left in it to the parent first.
pub fn remove_cgroup(path: &Path) -> LabResult<()> {
    if !path.exists() {
        return Ok(());
    }
    if let (Ok(procs), Some(parent)) = (
        std::fs::read_to_string(path.join("cgroup.procs")),
        path.parent(),
    ) {
        for pid in procs.split_whitespace() {
            let _ = std::fs::write(parent.join("cgroup.procs"), pid);
        }
    }
    let mut last = None;
    for _ in 0..50 {
        match std::fs::remove_dir(path) {
            Ok(()) => return Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => last = Some(e),
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    Err(LabError::Failed(format!(
        "cannot remove cgroup {}: {}",
        path.display(),
        last.map(|e| e.to_string()).unwrap_or_default()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sysctl_names_map_to_proc_sys() {
        assert_eq!(
            sysctl_path("vm.dirty_ratio").unwrap(),
            PathBuf::from("/proc/sys/vm/dirty_ratio")
        );
        assert!(sysctl_path(".tmp.victim").is_err());
        assert!(sysctl_path("vm..x").is_err());
        assert!(read_sysctl("vm.dirty_ratio")
            .unwrap()
            .parse::<u32>()
            .is_ok());
        assert!(read_sysctl("vm.no_such_knob").is_err());
    }

    #[test]
    fn a_cell_cgroup_has_its_limit_and_makes_its_workload_wait_rather_than_be_killed() {
        let name = format!("fslab-test-{}", std::process::id());
        let cg = MemCgroup::create(&name, 64 << 20).unwrap();
        let read = |f: &str| std::fs::read_to_string(cg.path().join(f)).unwrap_or_default();
        if cg.cg.v2 {
            assert_eq!(read("memory.max").trim(), (64u64 << 20).to_string());
        } else {
            assert_eq!(
                read("memory.limit_in_bytes").trim(),
                (64u64 << 20).to_string()
            );
            assert!(
                read("memory.oom_control").contains("oom_kill_disable 1"),
                "{}",
                read("memory.oom_control")
            );
        }
        cg.remove().unwrap();
    }

    #[test]
    fn a_sysctl_held_by_one_process_is_not_taken_by_another() {
        let dir = tempfile::tempdir().unwrap();
        let stop = std::sync::atomic::AtomicBool::new(false);
        let held = SysctlLock::acquire(dir.path(), "vm.dirty_ratio", &stop, &mut |_| {}).unwrap();
        // flock locks belong to the open file: a second open is a second holder.
        assert!(SysctlLock::try_acquire(dir.path(), "vm.dirty_ratio")
            .unwrap()
            .is_none());
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let mut said = Vec::new();
        let e = SysctlLock::acquire(dir.path(), "vm.dirty_ratio", &stop, &mut |m| said.push(m))
            .unwrap_err();
        assert!(e.to_string().contains("interrupted"), "{e}");
        drop(held);
        assert!(SysctlLock::try_acquire(dir.path(), "vm.dirty_ratio")
            .unwrap()
            .is_some());
    }
}
