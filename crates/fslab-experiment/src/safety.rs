//! What an experiment may make fslab do as root, checked once for the whole
//! experiment before anything is made (and by `--dry-run`, which refuses
//! what the run would refuse).
//!
//! The experiment language is closed:
//! - mkfs options, mount options and `after_mkfs` arguments name no path
//!   and no device: the only device a cell's commands reach is the one
//!   fslab made for it (`{device}` in `after_mkfs`); mkfs and after_mkfs
//!   run in an empty directory, so a bare word cannot name a file either;
//! - `after_mkfs` runs filesystem tuning tools (tune2fs, xfs_admin,
//!   btrfstune, e2label) as argv, never a shell; any other program only
//!   when named with `--allow-command PROGRAM`;
//! - sysctls are well-formed names under /proc/sys, limited to the
//!   writeback and memory settings of `vm.*` and a few `fs.*` ones; any
//!   other only when named with `--allow-sysctl NAME`;
//! - workload arguments are parsed and validated by the workload's own
//!   parser, may not set what `fslab run` sets (`-d`, `--db`, `--json`,
//!   ...), and every path the workload writes is inside the cell's
//!   filesystem;
//! - a directory device is never a system directory, and is empty or
//!   fslab's own unless `--force`.

use std::path::{Path, PathBuf};

use crate::plan;
use crate::spec::{Cell, Device, Experiment};

/// What the user allowed on the command line beyond the closed language.
#[derive(Debug, Clone, Default)]
pub struct Permissions {
    /// `--allow-sysctl NAME`: sysctls outside the filesystem-experiment set.
    pub allow_sysctl: Vec<String>,
    /// `--allow-command PROGRAM`: programs `after_mkfs` may run besides the
    /// filesystem tuning tools.
    pub allow_command: Vec<String>,
    /// `--force`: use a directory device that holds other files.
    pub force: bool,
}

/// Programs `after_mkfs` may run without `--allow-command`.
pub const TUNING_TOOLS: [&str; 4] = ["tune2fs", "xfs_admin", "btrfstune", "e2label"];

/// The marker that makes a directory device fslab's own.
pub const DIRECTORY_MARKER: &str = ".fslab-directory-device";

pub use crate::spec::sysctl_name_error;

/// vm.* settings that are not about writeback or memory pressure: they
/// panic the machine, weaken its security, or are one-shot triggers.
const VM_REFUSED: [&str; 12] = [
    "vm.panic_on_oom",
    "vm.oom_kill_allocating_task",
    "vm.mmap_min_addr",
    "vm.mmap_rnd_bits",
    "vm.mmap_rnd_compat_bits",
    "vm.unprivileged_userfaultfd",
    "vm.drop_caches",
    "vm.compact_memory",
    "vm.stat_refresh",
    "vm.hugetlb_shm_group",
    "vm.memory_failure_recovery",
    "vm.memory_failure_early_kill",
];

/// fs.* settings a filesystem experiment may change.
const FS_ALLOWED: [&str; 8] = [
    "fs.xfs.",
    "fs.aio-max-nr",
    "fs.file-max",
    "fs.nr_open",
    "fs.inotify.",
    "fs.lease-break-time",
    "fs.leases-enable",
    "fs.dir-notify-enable",
];

/// Whether sysctl `name` is in the set a filesystem experiment may change
/// without `--allow-sysctl`.
pub fn sysctl_in_policy(name: &str) -> bool {
    if name.starts_with("vm.") {
        return !VM_REFUSED.contains(&name);
    }
    FS_ALLOWED
        .iter()
        .any(|p| name == *p || (p.ends_with('.') && name.starts_with(p)))
}

fn sysctl_error(name: &str, value: &str, perms: &Permissions) -> Option<String> {
    if let Some(e) = sysctl_name_error(name) {
        return Some(e);
    }
    if value.is_empty()
        || value.len() > 256
        || value.bytes().any(|b| b.is_ascii_control() && b != b'\t')
    {
        return Some(format!(
            "sysctl {name}: value {value:?} must be one line of at most 256 characters"
        ));
    }
    if !sysctl_in_policy(name) && !perms.allow_sysctl.iter().any(|a| a == name) {
        return Some(format!(
            "sysctl {name} is outside what a filesystem experiment changes (vm.* writeback and \
             memory settings, fs.xfs.*, ...): name it with --allow-sysctl {name} to allow it"
        ));
    }
    None
}

/// Why a mkfs option or `after_mkfs` argument could reach something fslab
/// did not make, if it could: a path, a device, or a climb out of a directory.
fn token_error(token: &str) -> Option<String> {
    if token.contains('/') {
        return Some(format!(
            "{token:?} names a path or device: options may name only the device fslab made \
             ({{device}} in after_mkfs)"
        ));
    }
    if token.split(['=', ',', ':']).any(|p| p == "..") {
        return Some(format!("{token:?} names a path (..)"));
    }
    None
}

/// Mount option keys that name another device or a file.
const MOUNT_KEYS_REFUSED: [&str; 8] = [
    "device",
    "logdev",
    "rtdev",
    "journal_dev",
    "journal_path",
    "usrjquota",
    "grpjquota",
    "prjjquota",
];

fn mount_option_error(opts: &str) -> Option<String> {
    for o in opts.split(',').map(str::trim).filter(|o| !o.is_empty()) {
        let key = o.split('=').next().unwrap_or(o);
        if MOUNT_KEYS_REFUSED.contains(&key) {
            return Some(format!(
                "mount option {o:?} names another device or file: a cell mounts only the \
                 filesystem fslab made"
            ));
        }
        if let Some(e) = token_error(o) {
            return Some(format!("mount option {e}"));
        }
    }
    None
}

fn after_mkfs_error(cmd: &[String], perms: &Permissions) -> Option<String> {
    let Some(prog) = cmd.first() else {
        return Some("after_mkfs: an empty command".into());
    };
    if prog.contains('/') {
        return Some(format!(
            "after_mkfs: {prog:?}: give a program name (found in PATH, /usr/sbin, /sbin), not a path"
        ));
    }
    if !TUNING_TOOLS.contains(&prog.as_str()) && !perms.allow_command.iter().any(|a| a == prog) {
        return Some(format!(
            "after_mkfs: {prog} is not a filesystem tuning tool ({}): name it with \
             --allow-command {prog} to run it as root",
            TUNING_TOOLS.join(", ")
        ));
    }
    if !cmd.iter().any(|a| a == "{device}") {
        return Some(format!(
            "after_mkfs: `{}` must name the cell's device as {{device}}",
            cmd.join(" ")
        ));
    }
    for a in &cmd[1..] {
        if a.contains("{device}") && a != "{device}" {
            return Some(format!("after_mkfs: {a:?}: {{device}} must stand alone"));
        }
        if a != "{device}" {
            if let Some(e) = token_error(a) {
                return Some(format!("after_mkfs: {e}"));
            }
        }
    }
    None
}

/// System directories a directory device may never be (nor their parents).
const SYSTEM_DIRS: [&str; 22] = [
    "/", "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32", "/lib64", "/media", "/mnt",
    "/opt", "/proc", "/root", "/run", "/sbin", "/srv", "/sys", "/tmp", "/usr", "/var", "/var/tmp",
];

/// Whether canonical path `canon` is in the kernel's own filesystems:
/// /proc, /sys, /dev (below /dev only /dev/shm's subdirectories, a tmpfs,
/// may serve).
fn in_kernel_fs(canon: &Path) -> bool {
    ["/proc", "/sys", "/dev"]
        .iter()
        .any(|k| canon.starts_with(k))
        && !(canon.starts_with("/dev/shm") && canon != Path::new("/dev/shm"))
}

/// Checks a directory device: not a system directory, and empty or
/// fslab's own (holding its marker) unless `force`.
pub fn directory_device_error(path: &Path, force: bool) -> Option<String> {
    let canon = match std::fs::canonicalize(path) {
        Ok(c) => c,
        Err(e) => return Some(format!("device.path {}: {e}", path.display())),
    };
    if !canon.is_dir() {
        return Some(format!("device.path {} is not a directory", path.display()));
    }
    let system = SYSTEM_DIRS.iter().any(|s| canon == Path::new(s))
        || in_kernel_fs(&canon)
        || canon.starts_with("/etc")
        || canon.starts_with("/usr")
        || canon.starts_with("/boot");
    if system {
        return Some(format!(
            "device.path {} is a system directory: give an empty directory made for fslab",
            path.display()
        ));
    }
    let entries: Vec<String> = match std::fs::read_dir(&canon) {
        Ok(rd) => rd
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect(),
        Err(e) => return Some(format!("device.path {}: {e}", path.display())),
    };
    let ours = entries.iter().any(|e| e == DIRECTORY_MARKER);
    if !entries.is_empty() && !ours && !force {
        return Some(format!(
            "device.path {} holds files fslab did not make: give an empty directory, or add \
             --force to work beside them",
            path.display()
        ));
    }
    None
}

/// Checks a target that is an existing directory (`[[target]] path`): it
/// exists, is a directory, is not `/` nor in the kernel's own filesystems
/// (`/proc`, `/sys`, `/dev` but for `/dev/shm`'s subdirectories), and can
/// be written. Nothing in it is touched but the fresh subdirectory each
/// repetition makes and removes, so it may hold other files.
pub fn path_target_error(path: &Path) -> Option<String> {
    let field = format!("target path {}", path.display());
    let canon = match std::fs::canonicalize(path) {
        Ok(c) => c,
        Err(e) => return Some(format!("{field}: {e}")),
    };
    if !canon.is_dir() {
        return Some(format!("{field} is not a directory"));
    }
    let kernel = in_kernel_fs(&canon);
    if canon == Path::new("/") || kernel {
        return Some(format!(
            "{field} is {}: give a directory of its own on the filesystem to measure",
            if kernel {
                "in the kernel's own filesystems"
            } else {
                "the root directory"
            }
        ));
    }
    match rustix::fs::access(&canon, rustix::fs::Access::WRITE_OK) {
        Ok(()) => None,
        Err(e) => Some(format!(
            "{field} cannot be written: {}",
            std::io::Error::from(e)
        )),
    }
}

/// A directory made for the check and removed after it.
pub(crate) struct Scratch(pub(crate) PathBuf);

/// A directory that could not be made, and the system's reason.
#[derive(Debug, thiserror::Error)]
#[error("cannot create {}: {source}", path.display())]
pub(crate) struct CannotCreate {
    path: PathBuf,
    source: std::io::Error,
}

impl Scratch {
    pub(crate) fn new() -> Result<Scratch, CannotCreate> {
        use std::sync::atomic::{AtomicU32, Ordering};
        static N: AtomicU32 = AtomicU32::new(0);
        let p = std::env::temp_dir().join(format!(
            "fslab-check-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        match std::fs::create_dir(&p) {
            Ok(()) => Ok(Scratch(p)),
            Err(source) => Err(CannotCreate { path: p, source }),
        }
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Checks a cell's workload arguments with the workload's own parser
/// against a stand-in for the cell's filesystem.
fn workload_error(exp: &Experiment, cell: &Cell) -> Option<String> {
    let scratch = match Scratch::new() {
        Ok(s) => s,
        Err(e) => return Some(e.to_string()),
    };
    let dirs = plan::workload_dirs(exp, &scratch.0);
    for d in &dirs {
        if let Err(e) = std::fs::create_dir_all(d) {
            return Some(format!("cannot create {}: {e}", d.display()));
        }
    }
    let fslab_dirs = if exp.workload.kind.takes_dirs() {
        dirs.len()
    } else {
        0
    };
    plan::experiment_job(exp, cell, &scratch.0)
        .and_then(|job| fslab_workload::args::check_job(&job, fslab_dirs, &scratch.0))
        .err()
        .map(|e| {
            let stand_in = scratch.0.display().to_string();
            format!("workload: {}", e.to_string().replace(&stand_in, "{cell}"))
        })
}

/// Checks everything an experiment would make fslab do. Returns the lines
/// the dry run prints about what the command line allowed beyond the
/// closed language; the error is one line naming the cell and the value.
/// Where images may go: not in the kernel's own filesystems (`/proc`,
/// `/sys`, `/dev` but for `/dev/shm`).
pub fn image_dir_error(dir: &Path) -> Option<String> {
    let canon = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let kernel = ["/proc", "/sys", "/dev"]
        .iter()
        .any(|k| canon.starts_with(k))
        && !canon.starts_with("/dev/shm");
    kernel.then(|| {
        format!(
            "device.image_dir {}: images go in a directory of a real filesystem, not under /proc, /sys or /dev",
            dir.display()
        )
    })
}

/// What an experiment asks fslab to do that it refuses: the cell (none
/// for the device) and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{why}", cell.as_ref().map(|c| format!("cell {c:?}: ")).unwrap_or_default())]
pub struct Refused {
    pub cell: Option<String>,
    pub why: String,
}

pub fn check(exp: &Experiment, perms: &Permissions) -> Result<Vec<String>, Refused> {
    let device = |why| Refused { cell: None, why };
    match &exp.device {
        Device::Directory { path } => {
            if let Some(e) = directory_device_error(path, perms.force) {
                return Err(device(e));
            }
        }
        Device::Image { dir, .. } => {
            if let Some(e) = image_dir_error(dir) {
                return Err(device(e));
            }
        }
        Device::Block { .. } => {}
    }
    let mut allowed = Vec::new();
    for cell in &exp.cells {
        let at = |why: String| Refused {
            cell: Some(cell.label.clone()),
            why,
        };
        if let Some(e) = cell.path.as_deref().and_then(path_target_error) {
            return Err(at(e));
        }
        for (name, value) in &cell.sysctl {
            if let Some(e) = sysctl_error(name, value, perms) {
                return Err(at(e));
            }
            if !sysctl_in_policy(name) {
                allowed.push(format!("sysctl {name} (allowed by --allow-sysctl)"));
            }
        }
        for o in &cell.mkfs_options {
            if let Some(e) = token_error(o) {
                return Err(at(format!("mkfs option {e}")));
            }
        }
        if let Some(e) = mount_option_error(&cell.mount_options) {
            return Err(at(e));
        }
        for cmd in &cell.after_mkfs {
            if let Some(e) = after_mkfs_error(cmd, perms) {
                return Err(at(e));
            }
            if !TUNING_TOOLS.contains(&cmd[0].as_str()) {
                allowed.push(format!(
                    "after_mkfs: {} (allowed by --allow-command)",
                    cmd.join(" ")
                ));
            }
        }
        if let Some(e) = workload_error(exp, cell) {
            return Err(at(e));
        }
    }
    // A program named with --allow-command (a shell) that the workload runs.
    if let Some(prog) = exp.workload.args.first() {
        let name = prog.rsplit('/').next().unwrap_or(prog);
        if exp
            .workload
            .kind
            .experiment_keys()
            .iter()
            .any(|(k, _)| *k == "parser")
            && perms.allow_command.iter().any(|a| a == name)
        {
            allowed.push(format!("workload: {prog} (allowed by --allow-command)"));
        }
    }
    allowed.sort();
    allowed.dedup();
    Ok(allowed)
}

/// Why an experiment cannot start here, found before anything is touched
/// (by `runner::preflight`, which re-exports it).
#[derive(Debug, thiserror::Error)]
pub enum Preflight {
    /// The experiment asks for what is not there: an image directory that
    /// does not exist, an image its directory's filesystem cannot hold, a
    /// sysctl this kernel does not have. Bad input: the binary exits 2.
    #[error("{0}")]
    Input(String),
    /// This machine or user cannot run it: a missing tool, not root, a
    /// filesystem that cannot be asked its limits.
    #[error("{0}")]
    Machine(String),
    /// This machine's filesystem could not be asked its limits (whether
    /// an image fits): a failure, with the lab's error as its source.
    #[error("{0}")]
    Lab(#[from] fslab_lab::LabError),
}

impl Preflight {
    pub fn is_usage(&self) -> bool {
        matches!(self, Preflight::Input(_))
    }
}

/// For the preflight: an `image_dir` that cannot be written (a read-only
/// filesystem; for root, anything else that refuses it too) is bad input.
/// Another user's dry run is not refused for what root could write.
pub(crate) fn writable(dir: &std::path::Path, root: bool) -> Result<(), Preflight> {
    match rustix::fs::access(dir, rustix::fs::Access::WRITE_OK) {
        Err(e) if e == rustix::io::Errno::ROFS || root => Err(Preflight::Input(format!(
            "device.image_dir {} cannot be written: {}",
            dir.display(),
            std::io::Error::from(e)
        ))),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sysctl_names_that_map_outside_proc_sys_are_refused() {
        for bad in [
            ".tmp.victim",
            ".etc.shadow",
            "vm..x",
            "vm",
            "vm.",
            "VM.x",
            "vm/x",
            "a.b c",
        ] {
            assert!(sysctl_name_error(bad).is_some(), "{bad}");
        }
        assert!(sysctl_name_error("vm.dirty_ratio").is_none());
        assert!(sysctl_name_error("fs.xfs.xfssyncd_centisecs").is_none());
    }

    #[test]
    fn sysctls_outside_filesystem_experiments_need_a_flag() {
        let none = Permissions::default();
        assert!(sysctl_error("vm.dirty_ratio", "20", &none).is_none());
        assert!(sysctl_error("fs.xfs.xfssyncd_centisecs", "100", &none).is_none());
        let e = sysctl_error("kernel.core_pattern", "|/tmp/x", &none).unwrap();
        assert!(e.contains("--allow-sysctl kernel.core_pattern"), "{e}");
        assert!(sysctl_error("vm.panic_on_oom", "1", &none).is_some());
        assert!(sysctl_error("fs.protected_symlinks", "0", &none).is_some());
        assert!(sysctl_error("vm.dirty_ratio", "1\n2", &none).is_some());
        let allow = Permissions {
            allow_sysctl: vec!["kernel.sched_latency_ns".into()],
            ..Default::default()
        };
        assert!(sysctl_error("kernel.sched_latency_ns", "1", &allow).is_none());
    }

    #[test]
    fn options_naming_another_device_are_refused() {
        assert!(token_error("/dev/loop7").is_some());
        assert!(token_error("logdev=/dev/loop7").is_some());
        assert!(token_error("-O").is_none());
        assert!(token_error("^metadata_csum").is_none());
        assert!(mount_option_error("logdev=/dev/loop7").is_some());
        assert!(mount_option_error("journal_dev=1792").is_some());
        assert!(mount_option_error("device=loop7").is_some());
        assert!(mount_option_error("nodatacow,ssd").is_none());
    }

    #[test]
    fn after_mkfs_runs_tuning_tools_on_the_cells_device_only() {
        let none = Permissions::default();
        let cmd = |s: &str| s.split_whitespace().map(String::from).collect::<Vec<_>>();
        assert!(after_mkfs_error(&cmd("tune2fs -E hash_alg=tea {device}"), &none).is_none());
        let e = after_mkfs_error(&cmd("sh -c rm {device}"), &none).unwrap();
        assert!(e.contains("--allow-command sh"), "{e}");
        assert!(after_mkfs_error(&cmd("tune2fs -O ^has_journal /dev/loop7"), &none).is_some());
        assert!(after_mkfs_error(&cmd("tune2fs -l"), &none).is_some());
        assert!(after_mkfs_error(&cmd(""), &none).is_some(), "empty");
        assert!(after_mkfs_error(&cmd("/sbin/tune2fs {device}"), &none).is_some());
        let allow = Permissions {
            allow_command: vec!["dumpe2fs".into()],
            ..Default::default()
        };
        assert!(after_mkfs_error(&cmd("dumpe2fs -h {device}"), &allow).is_none());
    }

    #[test]
    fn images_never_go_into_the_kernels_filesystems() {
        for d in ["/proc", "/sys/fs", "/dev", "/dev/disk"] {
            assert!(image_dir_error(Path::new(d)).is_some(), "{d}");
        }
        for d in ["/var/tmp", "/dev/shm", "/tmp"] {
            assert!(image_dir_error(Path::new(d)).is_none(), "{d}");
        }
    }

    #[test]
    fn system_and_foreign_directories_are_refused_as_devices() {
        for d in [
            "/",
            "/tmp",
            "/etc",
            "/usr/lib",
            "/var/tmp",
            "/dev/shm",
            "/dev/disk",
        ] {
            assert!(directory_device_error(Path::new(d), true).is_some(), "{d}");
        }
        let dir = tempfile::tempdir().unwrap();
        assert!(directory_device_error(dir.path(), false).is_none(), "empty");
        std::fs::write(dir.path().join("precious"), b"x").unwrap();
        let e = directory_device_error(dir.path(), false).unwrap();
        assert!(e.contains("--force"), "{e}");
        assert!(directory_device_error(dir.path(), true).is_none());
        std::fs::write(dir.path().join(DIRECTORY_MARKER), b"").unwrap();
        assert!(directory_device_error(dir.path(), false).is_none(), "ours");
    }
}
