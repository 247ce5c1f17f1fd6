//! The calls fs_mark's create loops and its stat and unlink walks both
//! make: a directory opened, and a call retried while a memory cgroup at
//! its limit fails it with ENOMEM ([`crate::patience`]). (Both import
//! this; neither imports the other.)

use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;

use rustix::fs::{Mode, OFlags};
use rustix::io::Errno;

pub use crate::patience::{retrying, within_patience, ENOMEM_RETRIES};

/// `path` (relative to `at`) opened as a directory.
pub(super) fn open_dir<Fd: AsFd>(at: Fd, path: &Path) -> Result<OwnedFd, Errno> {
    rustix::fs::openat(
        at,
        path,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
}
