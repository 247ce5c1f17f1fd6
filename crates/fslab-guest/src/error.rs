//! [`GuestError`]: why a kernel could not be had or a guest could not run.

use std::path::PathBuf;

/// Why a kernel could not be had, or a guest could not start or finish.
/// Each message is one line naming the bad value.
#[derive(Debug, thiserror::Error)]
pub enum GuestError {
    /// The kernel image named is not there.
    #[error("kernel {0}: no such file")]
    NoImage(PathBuf),
    /// The file named is not a bootable x86 kernel (no bzImage header).
    #[error("kernel {path}: not a kernel image ({why})")]
    NotKernel { path: PathBuf, why: String },
    /// A `debian:NAME` that Debian's package lists do not hold.
    #[error("kernel debian:{name}: no package linux-image-{name} ({why})")]
    NoPackage { name: String, why: String },
    /// A `debian:NAME` that is not a package name.
    #[error("kernel {0:?}: not a kernel (a path to a vmlinuz, or debian:RELEASE such as debian:6.1.0-50-cloud-amd64)")]
    BadName(String),
    /// A tool the guest needs is missing (QEMU, virtiofsd, busybox, apt-get).
    #[error("{tool} not found: {hint}")]
    NoTool { tool: String, hint: String },
    /// A module the guest needs is not among the kernel's.
    #[error("kernel {release}: module {module} is neither built in nor in {dir}")]
    NoModule {
        release: String,
        module: String,
        dir: PathBuf,
    },
    /// The guest cannot have the memory asked for.
    #[error("guest memory {asked}: {why}")]
    Memory { asked: String, why: String },
    /// Reading or writing a file of the guest's.
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A command fslab ran failed (apt-get, dpkg-deb, QEMU).
    #[error("{command}: {why}")]
    Command { command: String, why: String },
    /// What the guest handed back cannot be read.
    #[error("the guest's results: {0}")]
    Handoff(String),
}

impl GuestError {
    /// An I/O error on `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> GuestError {
        GuestError::Io {
            path: path.into(),
            source,
        }
    }

    /// Whether the error is the user's (a bad name, a missing image or
    /// package, memory that cannot be had): `fslab run` exits 2 on it.
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            GuestError::NoImage(_)
                | GuestError::NotKernel { .. }
                | GuestError::NoPackage { .. }
                | GuestError::BadName(_)
                | GuestError::NoTool { .. }
                | GuestError::NoModule { .. }
                | GuestError::Memory { .. }
        )
    }
}
