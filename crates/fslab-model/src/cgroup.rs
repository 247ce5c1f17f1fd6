//! Where a process's memory cgroup is (cgroup v1 or v2), and what it holds.

use std::path::{Path, PathBuf};

/// The memory cgroup could not be found (why, in one line).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct CgroupError(pub String);

/// A memory cgroup directory and which hierarchy it is in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryCgroup {
    pub path: PathBuf,
    pub v2: bool,
}

/// This process's memory cgroup.
pub fn own_memory_cgroup() -> Result<MemoryCgroup, CgroupError> {
    let text = std::fs::read_to_string("/proc/self/cgroup")
        .map_err(|e| CgroupError(format!("cannot read /proc/self/cgroup: {e}")))?;
    memory_cgroup_in(&text, Path::new("/sys/fs/cgroup"))
}

/// The memory cgroup named by a /proc/PID/cgroup text, with cgroup
/// filesystems mounted under `root` (v1: `root/memory`; v2: `root` or
/// `root/unified`, when it has the memory controller).
pub fn memory_cgroup_in(text: &str, root: &Path) -> Result<MemoryCgroup, CgroupError> {
    for line in text.lines() {
        let mut f = line.splitn(3, ':');
        let (_, ctrl, path) = (f.next(), f.next().unwrap_or(""), f.next().unwrap_or("/"));
        if ctrl.split(',').any(|c| c == "memory") {
            let base = root.join("memory");
            if base.join("memory.limit_in_bytes").exists() {
                return Ok(MemoryCgroup {
                    path: base.join(path.trim_start_matches('/')),
                    v2: false,
                });
            }
        }
    }
    for base in [root.to_path_buf(), root.join("unified")] {
        let ctrls = std::fs::read_to_string(base.join("cgroup.controllers")).unwrap_or_default();
        if ctrls.split_whitespace().any(|c| c == "memory") {
            let own = text
                .lines()
                .find_map(|l| l.strip_prefix("0::"))
                .unwrap_or("/");
            return Ok(MemoryCgroup {
                path: base.join(own.trim_start_matches('/')),
                v2: true,
            });
        }
    }
    Err(CgroupError(
        "no memory cgroup controller is available (neither cgroup v1 memory nor v2 with memory)"
            .into(),
    ))
}

impl MemoryCgroup {
    fn read(&self, file: &str) -> Option<String> {
        std::fs::read_to_string(self.path.join(file)).ok()
    }

    /// Memory charged to the cgroup now, bytes.
    pub fn usage(&self) -> Option<u64> {
        self.usage_in(|f| self.read(f))
    }

    /// Peak memory charged, bytes.
    pub fn peak(&self) -> Option<u64> {
        self.peak_in(|f| self.read(f))
    }

    /// [`MemoryCgroup::peak`], reading the cgroup's files with `read`.
    pub fn peak_in(&self, read: impl Fn(&str) -> Option<String>) -> Option<u64> {
        let f = if self.v2 {
            "memory.peak"
        } else {
            "memory.max_usage_in_bytes"
        };
        read(f)?.trim().parse().ok()
    }

    /// How often the limit was hit.
    pub fn limit_hits(&self) -> Option<u64> {
        self.limit_hits_in(|f| self.read(f))
    }

    /// [`MemoryCgroup::usage`], reading the cgroup's files (by name) with `read`.
    pub fn usage_in(&self, read: impl Fn(&str) -> Option<String>) -> Option<u64> {
        let f = if self.v2 {
            "memory.current"
        } else {
            "memory.usage_in_bytes"
        };
        read(f)?.trim().parse().ok()
    }

    /// [`MemoryCgroup::limit_hits`], reading the cgroup's files with `read`.
    pub fn limit_hits_in(&self, read: impl Fn(&str) -> Option<String>) -> Option<u64> {
        if self.v2 {
            read("memory.events")?
                .lines()
                .find_map(|l| l.strip_prefix("max "))
                .and_then(|v| v.trim().parse().ok())
        } else {
            read("memory.failcnt")?.trim().parse().ok()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v1_and_v2_hierarchies_are_told_apart() {
        let root = tempfile::tempdir().unwrap();
        let v1 = root.path().join("memory");
        std::fs::create_dir_all(&v1).unwrap();
        std::fs::write(v1.join("memory.limit_in_bytes"), "9223372036854771712\n").unwrap();
        let text = "4:memory:/a/b\n0::/c\n";
        let cg = memory_cgroup_in(text, root.path()).unwrap();
        assert_eq!(
            cg,
            MemoryCgroup {
                path: v1.join("a/b"),
                v2: false
            }
        );

        let root2 = tempfile::tempdir().unwrap();
        std::fs::write(
            root2.path().join("cgroup.controllers"),
            "cpu io memory pids\n",
        )
        .unwrap();
        let cg = memory_cgroup_in("0::/user.slice/x\n", root2.path()).unwrap();
        assert_eq!(
            cg,
            MemoryCgroup {
                path: root2.path().join("user.slice/x"),
                v2: true
            }
        );
        std::fs::create_dir_all(&cg.path).unwrap();
        std::fs::write(cg.path.join("memory.current"), "4096\n").unwrap();
        std::fs::write(
            cg.path.join("memory.events"),
            "low 0\nhigh 0\nmax 7\noom 1\n",
        )
        .unwrap();
        assert_eq!(cg.usage(), Some(4096));
        assert_eq!(cg.limit_hits(), Some(7));

        let root3 = tempfile::tempdir().unwrap();
        assert!(memory_cgroup_in("0::/\n", root3.path())
            .unwrap_err()
            .to_string()
            .contains("no memory cgroup"));
    }
}
