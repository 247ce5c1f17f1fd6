//! The filesystem lab: everything fslab sets up under a workload and tears
//! down afterwards.
//!
//! - [`image`]: sparse image files, with the host filesystem's size limits;
//! - [`loopdev`]: loop devices bound to images (private, never by number);
//! - [`signature`]: refusing targets that already hold a filesystem or data;
//! - [`mkfs`]: making filesystems with recorded, prompt-free command lines;
//! - [`mount`]: mounting, checking the mount is real, timed unmounts;
//! - [`scheduler`]: a device's IO scheduler, read, checked and set;
//! - [`vm`]: dropping the caches, joining a memory cgroup.
//!
//! Every resource is a value whose `Drop` undoes it, so an error or a panic
//! unwinding through a cell cleans up what the cell made.

pub mod image;
pub mod loopdev;
pub mod mkfs;
pub mod mount;
pub mod scheduler;
pub mod signature;
pub mod vm;

pub use fslab_record::units::{human_bytes, parse_bytes};

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

impl From<fslab_record::journal::JournalError> for LabError {
    fn from(e: fslab_record::journal::JournalError) -> Self {
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
