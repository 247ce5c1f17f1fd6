//! Machine settings for a cell: sysctls (restored afterwards), dropping
//! caches, and a memory cgroup for the workload (removed afterwards).

use std::path::{Path, PathBuf};

use fslab_lab::{LabError, LabResult};

/// `/proc/sys/vm/dirty_ratio` for `vm.dirty_ratio`.
pub fn sysctl_path(name: &str) -> PathBuf {
    PathBuf::from("/proc/sys").join(name.replace('.', "/"))
}

pub fn read_sysctl(name: &str) -> LabResult<String> {
    std::fs::read_to_string(sysctl_path(name))
        .map(|s| s.trim().to_string())
        .map_err(|e| {
            LabError(format!(
                "sysctl {name}: cannot read {}: {e}",
                sysctl_path(name).display()
            ))
        })
}

pub fn write_sysctl(name: &str, value: &str) -> LabResult<()> {
    std::fs::write(sysctl_path(name), value)
        .map_err(|e| LabError(format!("sysctl {name}: cannot set {value:?}: {e}")))
}

/// `sync`, then drop the page cache, dentries and inodes (drop_caches = 3).
pub fn drop_caches() -> LabResult<()> {
    rustix::fs::sync();
    std::fs::write("/proc/sys/vm/drop_caches", "3")
        .map_err(|e| LabError(format!("cannot drop caches: {e}")))
}

/// A memory cgroup made for one workload.
#[derive(Debug)]
pub struct MemCgroup {
    path: PathBuf,
    v2: bool,
}

/// Where this process's memory cgroup is: (mount + own path, is v2).
fn own_memory_cgroup() -> LabResult<(PathBuf, bool)> {
    let text = std::fs::read_to_string("/proc/self/cgroup")
        .map_err(|e| LabError(format!("cannot read /proc/self/cgroup: {e}")))?;
    for line in text.lines() {
        let mut f = line.splitn(3, ':');
        let (_, ctrl, path) = (f.next(), f.next().unwrap_or(""), f.next().unwrap_or("/"));
        if ctrl.split(',').any(|c| c == "memory") {
            let base = Path::new("/sys/fs/cgroup/memory");
            if base.join("memory.limit_in_bytes").exists() {
                return Ok((base.join(path.trim_start_matches('/')), false));
            }
        }
    }
    // cgroup v2: the unified hierarchy, when it has the memory controller.
    for base in ["/sys/fs/cgroup", "/sys/fs/cgroup/unified"] {
        let ctrls =
            std::fs::read_to_string(Path::new(base).join("cgroup.controllers")).unwrap_or_default();
        if ctrls.split_whitespace().any(|c| c == "memory") {
            let own = text
                .lines()
                .find_map(|l| l.strip_prefix("0::"))
                .unwrap_or("/");
            return Ok((Path::new(base).join(own.trim_start_matches('/')), true));
        }
    }
    Err(LabError(
        "no memory cgroup controller is available (neither cgroup v1 memory nor v2 with memory)"
            .into(),
    ))
}

impl MemCgroup {
    /// Makes `NAME` below this process's own memory cgroup, limited to `limit` bytes.
    pub fn create(name: &str, limit: u64) -> LabResult<MemCgroup> {
        let (parent, v2) = own_memory_cgroup()?;
        let path = parent.join(name);
        std::fs::create_dir(&path).map_err(|e| {
            LabError(format!(
                "cannot create memory cgroup {}: {e}",
                path.display()
            ))
        })?;
        let cg = MemCgroup { path, v2 };
        let file = if v2 {
            "memory.max"
        } else {
            "memory.limit_in_bytes"
        };
        std::fs::write(cg.path.join(file), limit.to_string())
            .map_err(|e| LabError(format!("cannot set {} in {}: {e}", file, cg.path.display())))?;
        Ok(cg)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Moves process `pid` into the cgroup.
    pub fn add_process(path: &Path, pid: u32) -> LabResult<()> {
        std::fs::write(path.join("cgroup.procs"), pid.to_string()).map_err(|e| {
            LabError(format!(
                "cannot move process {pid} into {}: {e}",
                path.display()
            ))
        })
    }

    fn read_u64(&self, file: &str) -> Option<u64> {
        std::fs::read_to_string(self.path.join(file))
            .ok()?
            .trim()
            .parse()
            .ok()
    }

    /// Peak memory use.
    pub fn max_usage(&self) -> Option<u64> {
        self.read_u64(if self.v2 {
            "memory.peak"
        } else {
            "memory.max_usage_in_bytes"
        })
    }

    /// How often the limit was hit.
    pub fn failcnt(&self) -> Option<u64> {
        if self.v2 {
            let ev = std::fs::read_to_string(self.path.join("memory.events")).ok()?;
            ev.lines()
                .find_map(|l| l.strip_prefix("max "))
                .and_then(|v| v.trim().parse().ok())
        } else {
            self.read_u64("memory.failcnt")
        }
    }

    /// Removes the cgroup (its processes must have exited).
    pub fn remove(self) -> LabResult<()> {
        remove_cgroup(&self.path)
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
    Err(LabError(format!(
        "cannot remove cgroup {}: {}",
        path.display(),
        last.map(|e| e.to_string()).unwrap_or_default()
    )))
}

/// The memory cgroup path of a process, as /proc/PID/cgroup says.
pub fn memory_cgroup_of(pid: &str) -> Option<String> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).ok()?;
    text.lines().find_map(|l| {
        let mut f = l.splitn(3, ':');
        let (_, ctrl, path) = (f.next()?, f.next()?, f.next()?);
        ctrl.split(',')
            .any(|c| c == "memory")
            .then(|| path.to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sysctl_names_map_to_proc_sys() {
        assert_eq!(
            sysctl_path("vm.dirty_ratio"),
            PathBuf::from("/proc/sys/vm/dirty_ratio")
        );
        assert!(read_sysctl("vm.dirty_ratio")
            .unwrap()
            .parse::<u32>()
            .is_ok());
        assert!(read_sysctl("vm.no_such_knob").is_err());
    }
}
