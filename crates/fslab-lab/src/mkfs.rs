//! Making filesystems: the tool for each type, flags that keep it from
//! prompting, its version, and the exact command line (recorded by callers).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::{LabError, LabResult};

/// A filesystem type fslab can make.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(into = "String", from = "String")]
pub enum FsType {
    Ext2,
    Ext3,
    Ext4,
    Xfs,
    Btrfs,
    /// Any other type whose `mkfs.NAME` exists (f2fs, nilfs2, ...).
    Other(String),
}

impl From<String> for FsType {
    fn from(s: String) -> Self {
        FsType::parse(&s)
    }
}

impl From<FsType> for String {
    fn from(f: FsType) -> Self {
        f.name().to_string()
    }
}

impl FsType {
    pub fn parse(s: &str) -> FsType {
        match s {
            "ext2" => FsType::Ext2,
            "ext3" => FsType::Ext3,
            "ext4" => FsType::Ext4,
            "xfs" => FsType::Xfs,
            "btrfs" => FsType::Btrfs,
            other => FsType::Other(other.to_string()),
        }
    }

    pub fn name(&self) -> &str {
        match self {
            FsType::Ext2 => "ext2",
            FsType::Ext3 => "ext3",
            FsType::Ext4 => "ext4",
            FsType::Xfs => "xfs",
            FsType::Btrfs => "btrfs",
            FsType::Other(s) => s,
        }
    }

    /// The mkfs program.
    pub fn tool(&self) -> String {
        format!("mkfs.{}", self.name())
    }

    /// The Debian package that provides the tool.
    pub fn package(&self) -> String {
        match self {
            FsType::Ext2 | FsType::Ext3 | FsType::Ext4 => "e2fsprogs".into(),
            FsType::Xfs => "xfsprogs".into(),
            FsType::Btrfs => "btrfs-progs".into(),
            FsType::Other(s) if s == "f2fs" => "f2fs-tools".into(),
            FsType::Other(s) if s == "nilfs2" => "nilfs-tools".into(),
            FsType::Other(s) => format!("the package that provides mkfs.{s}"),
        }
    }

    /// Flags that make the tool overwrite without asking and keep quiet.
    fn force_args(&self) -> &'static [&'static str] {
        match self {
            FsType::Ext2 | FsType::Ext3 | FsType::Ext4 => &["-F", "-q"],
            FsType::Xfs | FsType::Btrfs => &["-f", "-q"],
            FsType::Other(s) if s == "f2fs" => &["-f", "-q"],
            FsType::Other(_) => &[],
        }
    }

    fn version_args(&self) -> &'static [&'static str] {
        match self {
            FsType::Btrfs => &["--version"],
            _ => &["-V"],
        }
    }

    /// Mount options fslab adds unless the user's options say otherwise,
    /// so that a fresh filesystem does not initialise itself in the
    /// background during the benchmark (ext4's lazy inode table init).
    pub fn quiet_mount_options(&self) -> &'static [&'static str] {
        match self {
            FsType::Ext4 => &["noinit_itable"],
            _ => &[],
        }
    }
}

/// Finds an executable in $PATH, /usr/sbin or /sbin.
pub fn find_tool(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/sbin"), PathBuf::from("/sbin")])
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// The tool for `fs`, or an error naming what to install.
pub fn require_tool(fs: &FsType) -> LabResult<PathBuf> {
    find_tool(&fs.tool()).ok_or_else(|| {
        LabError::Failed(format!(
            "{} not found: install {} (apt-get install {})",
            fs.tool(),
            fs.package(),
            fs.package().split(' ').next().unwrap_or_default()
        ))
    })
}

/// The first line the tool prints about its version.
pub fn tool_version(fs: &FsType) -> LabResult<String> {
    let tool = require_tool(fs)?;
    let out = Command::new(&tool)
        .args(fs.version_args())
        .stdin(Stdio::null())
        .output()
        .map_err(|e| LabError::Failed(format!("cannot run {}: {e}", tool.display())))?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("unknown")
        .to_string())
}

/// The command line that makes `fs` on `device` with the user's `options`.
pub fn mkfs_argv(fs: &FsType, options: &[String], device: &Path) -> Vec<String> {
    let mut argv = vec![fs.tool()];
    argv.extend(fs.force_args().iter().map(|s| s.to_string()));
    argv.extend(options.iter().cloned());
    argv.push(device.display().to_string());
    argv
}

/// Runs a mkfs command line (stdin closed, so it can never wait on a prompt).
pub fn run_mkfs(argv: &[String]) -> LabResult<Duration> {
    let fs = FsType::parse(argv[0].trim_start_matches("mkfs."));
    require_tool(&fs)?;
    run_tool(argv)
}

/// An empty directory of this process's own, for tools to run in: a bare
/// word on their command line then names no existing file.
struct EmptyDir(PathBuf);

impl EmptyDir {
    fn new() -> LabResult<EmptyDir> {
        use std::sync::atomic::{AtomicU32, Ordering};
        static N: AtomicU32 = AtomicU32::new(0);
        let p = std::env::temp_dir().join(format!(
            "fslab-empty-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir(&p)
            .map_err(|e| LabError::Failed(format!("cannot create {}: {e}", p.display())))?;
        Ok(EmptyDir(p))
    }
}

impl Drop for EmptyDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.0);
    }
}

/// Runs a tool's command line (found in $PATH, /usr/sbin or /sbin) as argv
/// (never through a shell), with stdin closed, in an empty directory; the
/// error gives the command and the last lines it printed.
pub fn run_tool(argv: &[String]) -> LabResult<Duration> {
    let tool =
        find_tool(&argv[0]).ok_or_else(|| LabError::Failed(format!("{} not found", argv[0])))?;
    let cwd = EmptyDir::new()?;
    let start = Instant::now();
    let out = Command::new(tool)
        .args(&argv[1..])
        .current_dir(&cwd.0)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| LabError::Failed(format!("cannot run {}: {e}", argv[0])))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let msg: Vec<&str> = err
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        return Err(LabError::Failed(format!(
            "`{}` failed ({}): {}",
            argv.join(" "),
            out.status,
            msg.iter()
                .rev()
                .take(3)
                .rev()
                .copied()
                .collect::<Vec<_>>()
                .join(" / ")
        )));
    }
    Ok(start.elapsed())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argv_has_force_flags_before_user_options() {
        let a = mkfs_argv(
            &FsType::Xfs,
            &["-m".into(), "crc=1".into()],
            Path::new("/dev/loop9"),
        );
        assert_eq!(a, ["mkfs.xfs", "-f", "-q", "-m", "crc=1", "/dev/loop9"]);
        assert_eq!(FsType::parse("nilfs2"), FsType::Other("nilfs2".into()));
    }

    #[test]
    fn a_missing_tool_names_its_package() {
        let e = require_tool(&FsType::Other("nosuchfs".into()))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("mkfs.nosuchfs not found: install"), "{e}");
    }
}
