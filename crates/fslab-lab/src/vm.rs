//! What a workload's process asks of the kernel around its run, and what
//! `fslab run` asks between cells: dropping the caches, and joining a
//! memory cgroup (made by `fslab run`).

use std::path::Path;

use crate::{LabError, LabResult};

/// `sync`, then drop the page cache, dentries and inodes (drop_caches = 3).
pub fn drop_caches() -> LabResult<()> {
    rustix::fs::sync();
    std::fs::write("/proc/sys/vm/drop_caches", "3").map_err(|e| {
        LabError::Failed(if e.kind() == std::io::ErrorKind::PermissionDenied {
            format!("cannot drop caches: {e}: dropping caches needs root")
        } else {
            format!("cannot drop caches: {e}")
        })
    })
}

/// Moves process `pid` into the cgroup at `path`.
pub fn join_cgroup(path: &Path, pid: u32) -> LabResult<()> {
    std::fs::write(path.join("cgroup.procs"), pid.to_string()).map_err(|e| {
        LabError::Failed(format!(
            "cannot move process {pid} into {}: {e}",
            path.display()
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joining_a_directory_that_is_no_cgroup_names_the_process_and_the_path() {
        let d = tempfile::tempdir().unwrap();
        let missing = d.path().join("nope");
        let e = join_cgroup(&missing, 42).unwrap_err().to_string();
        assert!(e.starts_with("cannot move process 42 into "), "{e}");
        assert!(e.contains("nope"), "{e}");
    }
}
