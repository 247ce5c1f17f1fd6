//! Which filesystem a path is on, read from `/proc/self/mountinfo`.

use std::path::Path;

use fslab_record::{mountinfo, TargetInfo};

/// Describes the mount that holds `path` (the longest mount point that is a
/// prefix of its canonical form). Missing information is left empty.
pub fn describe(path: &Path) -> TargetInfo {
    let mut info = TargetInfo {
        path: path.display().to_string(),
        ..Default::default()
    };
    if let Some(m) = mountinfo::holding(path) {
        info.fs_type = m.fs_type;
        info.source = m.source;
        info.mount_point = m.mount_point;
        info.mount_options = m.options;
    }
    info
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn describes_dev_shm_as_tmpfs() {
        let t = describe(Path::new("/dev/shm"));
        assert_eq!(t.fs_type, "tmpfs");
        assert_eq!(t.mount_point, "/dev/shm");
    }
}
