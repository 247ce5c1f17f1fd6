//! The filesystem lab: everything fslab sets up under a workload and tears
//! down afterwards.
//!
//! - [`image`]: sparse image files, with the host filesystem's size limits;
//! - [`loopdev`]: loop devices bound to images (private, never by number);
//! - [`signature`]: refusing targets that already hold a filesystem or data;
//! - [`mkfs`]: making filesystems with recorded, prompt-free command lines;
//! - [`mount`]: mounting, checking the mount is real, timed unmounts.
//!
//! Every resource is a value whose `Drop` undoes it, so an error or a panic
//! unwinding through a cell cleans up what the cell made.

pub mod image;
pub mod loopdev;
pub mod mkfs;
pub mod mount;
pub mod signature;

pub use fslab_record::units::{human_bytes, parse_bytes};

/// A lab failure, with a message that names what failed and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct LabError(pub String);

impl From<fslab_record::journal::JournalError> for LabError {
    fn from(e: fslab_record::journal::JournalError) -> Self {
        LabError(e.to_string())
    }
}

impl LabError {
    pub fn new(msg: impl Into<String>) -> Self {
        LabError(msg.into())
    }
}

pub type LabResult<T> = Result<T, LabError>;
