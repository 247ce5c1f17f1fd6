//! The filesystem lab: everything fslab sets up under a workload and tears
//! down afterwards, and the journal's undo of it.
//!
//! - [`image`]: sparse image files, with the host filesystem's size limits;
//! - [`loopdev`]: loop devices bound to images (private, never by number);
//! - [`signature`]: refusing targets that already hold a filesystem or data;
//! - [`mkfs`]: making filesystems with recorded, prompt-free command lines;
//! - [`mount`]: mounting, checking the mount is real, timed unmounts;
//! - [`scheduler`]: a device's IO scheduler, read, checked and set;
//! - [`vm`]: dropping the caches, joining a memory cgroup;
//! - [`machine`]: sysctls (locked machine-wide), memory cgroups;
//! - [`pressure`]: whether a workload is at its memory limit;
//! - [`cellfs`]: a cell's filesystem made (image, loop device, scheduler,
//!   mkfs, mount, or a fresh directory) and torn down, each piece journalled;
//! - [`image_host`]: the host XFS for images larger than `image_dir` holds;
//! - [`host_lab`]: one cluster host's lab (`fslab host-lab up/down/check`);
//! - [`undo`]: undoing what the state journal lists (`fslab cleanup`).
//!
//! Every resource is a value whose `Drop` undoes it, so an error or a panic
//! unwinding through a cell cleans up what the cell made. No module imports
//! one that imports it back: the resources at the bottom, `cellfs` on them,
//! `image_host` and `host_lab` on `cellfs`, `undo` on the resources.

pub mod cellfs;
pub mod host_lab;
pub mod image;
pub mod image_host;
pub mod loopdev;
pub mod machine;
pub mod mkfs;
pub mod mount;
pub mod pressure;
pub mod scheduler;
pub mod signature;
pub mod undo;
pub mod vm;

pub use fslab_model::units::{human_bytes, parse_bytes};

/// Why the lab did not do something; the message names what and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LabError {
    /// fslab will not touch it: a device it was not told to format, one
    /// that is mounted, held open or holds data, an image that already
    /// exists, a directory that is not on the filesystem it made.
    #[error("{0}")]
    Refused(String),
    /// A system call or a tool failed.
    #[error("{0}")]
    Failed(String),
}

impl From<fslab_model::journal::JournalError> for LabError {
    fn from(e: fslab_model::journal::JournalError) -> Self {
        LabError::Failed(e.to_string())
    }
}

impl LabError {
    /// fslab refused rather than failed.
    pub fn is_refusal(&self) -> bool {
        matches!(self, LabError::Refused(_))
    }
}

pub type LabResult<T> = Result<T, LabError>;
