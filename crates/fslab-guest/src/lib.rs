//! fslab's guests: an experiment's cell run inside a virtual machine on
//! another kernel.
//!
//! - [`kernel`]: a kernel image (its bzImage header checked), its
//!   release, modules and config;
//! - [`package`]: `debian:RELEASE`, Debian's `linux-image-RELEASE`
//!   fetched and unpacked into fslab's cache;
//! - [`modules`]: which modules a guest loads, dependencies first;
//! - [`initramfs`]: the guest's init (the host's root over virtiofs,
//!   read-only, one command run in it) as a cpio archive;
//! - [`accel`]: KVM where it boots a kernel, TCG otherwise;
//! - [`qemu`]: virtiofsd and QEMU started, watched, killed at the time
//!   limit, the console kept;
//! - [`handoff`]: the results the guest hands back on a raw disk;
//! - [`kmsg`]: the guest kernel's log, read inside it.
//!
//! Nothing here mounts, formats or changes anything on the host: a guest
//! lives in the directory it is given, and its processes die with fslab.

pub mod accel;
mod error;
pub mod handoff;
pub mod initramfs;
pub mod kernel;
pub mod kmsg;
pub mod modules;
pub mod package;
pub mod qemu;

pub use accel::Accel;
pub use error::GuestError;
pub use kernel::Kernel;
pub use qemu::{Disk, End, GuestRun, GuestSpec};

/// A kernel as an experiment names it: `debian:RELEASE` (fetched into
/// `cache` when it is not there yet) or the path of a kernel image.
pub fn resolve(name: &str, cache: &std::path::Path) -> Result<Kernel, GuestError> {
    match package::debian_release(name)? {
        Some(release) => package::fetch(release, cache),
        None if name.trim().is_empty() => Err(GuestError::BadName(name.to_string())),
        None => Kernel::open(name, std::path::Path::new(name)),
    }
}

/// As [`resolve`], without fetching: a package must be in the cache or in
/// the package lists, an image must be a kernel.
pub fn check(name: &str, cache: &std::path::Path) -> Result<(), GuestError> {
    match package::debian_release(name)? {
        Some(release) => package::available(release, cache),
        None => resolve(name, cache).map(|_| ()),
    }
}

/// The first tool a guest needs that this host lacks (QEMU, virtiofsd, a
/// static busybox), if one is missing.
pub fn missing_tool() -> Option<GuestError> {
    qemu::find_qemu()
        .err()
        .or_else(|| qemu::find_virtiofsd().err())
        .or_else(|| initramfs::find_busybox().err())
}

/// The command lines of this host's processes that mention `path` (a
/// guest's directory or disk): what a check that nothing of a guest is
/// left running looks for.
pub fn processes_using(path: &std::path::Path) -> Vec<String> {
    let p = path.display().to_string();
    let me = std::process::id().to_string();
    std::fs::read_dir("/proc")
        .map(|rd| {
            rd.filter_map(Result::ok)
                .filter(|e| e.file_name().to_string_lossy() != me)
                .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
                .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
                .filter(|c| c.contains(&p))
                .collect()
        })
        .unwrap_or_default()
}
