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

/// A lab failure, with a message that names what failed and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct LabError(pub String);

impl LabError {
    pub fn new(msg: impl Into<String>) -> Self {
        LabError(msg.into())
    }
}

pub type LabResult<T> = Result<T, LabError>;

/// Formats a byte count with binary units (`100 TiB`, `512 MiB`).
pub fn human_bytes(b: u64) -> String {
    const UNITS: [&str; 7] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if v.fract() == 0.0 {
        format!("{v:.0} {}", UNITS[u])
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn human_bytes_uses_binary_units() {
        assert_eq!(super::human_bytes(100 << 40), "100 TiB");
        assert_eq!(super::human_bytes(1536), "1.5 KiB");
        assert_eq!(super::human_bytes(0), "0 B");
    }
}
