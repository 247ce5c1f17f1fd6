//! Which filesystem a path is on, read from `/proc/self/mountinfo`.

use std::path::Path;

use fslab_record::TargetInfo;

/// Describes the mount that holds `path` (the longest mount point that is a
/// prefix of its canonical form). Missing information is left empty.
pub fn describe(path: &Path) -> TargetInfo {
    let canon = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let mut info = TargetInfo {
        path: path.display().to_string(),
        ..Default::default()
    };
    let Ok(text) = std::fs::read_to_string("/proc/self/mountinfo") else {
        return info;
    };
    let mut best_len = 0usize;
    for line in text.lines() {
        let Some(m) = parse_mountinfo_line(line) else {
            continue;
        };
        let mp = Path::new(&m.mount_point);
        if canon.starts_with(mp) && m.mount_point.len() >= best_len {
            best_len = m.mount_point.len();
            info.fs_type = m.fs_type;
            info.source = m.source;
            info.mount_point = m.mount_point;
            info.mount_options = m.options;
        }
    }
    info
}

/// One parsed mountinfo line.
#[derive(Debug, PartialEq)]
pub struct MountEntry {
    /// `major:minor` of the filesystem.
    pub dev: String,
    pub mount_point: String,
    pub fs_type: String,
    pub source: String,
    /// Per-mount options followed by superblock options not already listed.
    pub options: String,
}

/// Parses a line of proc(5)'s mountinfo format.
pub fn parse_mountinfo_line(line: &str) -> Option<MountEntry> {
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
        let m = parse_mountinfo_line(line).unwrap();
        assert_eq!(m.dev, "7:2");
        assert_eq!(m.mount_point, "/mnt/my lab");
        assert_eq!(m.fs_type, "ext4");
        assert_eq!(m.source, "/dev/loop2");
        assert_eq!(m.options, "rw,relatime,noinit_itable");
    }

    #[test]
    fn describes_dev_shm_as_tmpfs() {
        let t = describe(Path::new("/dev/shm"));
        assert_eq!(t.fs_type, "tmpfs");
        assert_eq!(t.mount_point, "/dev/shm");
    }
}
