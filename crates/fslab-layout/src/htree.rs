//! An ext4 directory's htree depth, read from its first block (the
//! dx_root) on the filesystem's block device, as `debugfs htree` reports
//! "Indirect levels" (seed 004: a 2-level htree holds ~20.7M names at 4
//! KiB blocks, ~315k at 1 KiB; `large_dir` lets it grow a third level).
//!
//! ext4 reads and writes directory blocks through the block device's
//! buffer cache, so a buffered read of the device sees the directory as
//! the filesystem has it now, written back or not.

use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// Why a directory's htree depth could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HtreeError {
    /// The directory's filesystem has no block device (tmpfs, a directory
    /// on the host's filesystem).
    #[error("the workload's filesystem has no block device")]
    NoDevice,
    /// What could not be done, to which directory, and why.
    #[error("htree: {0}")]
    Failed(String),
}

const EXT4_SUPER_MAGIC: u32 = 0xEF53;
/// `EXT4_INDEX_FL`: the directory is hash-indexed.
const INDEX_FL: u32 = 0x1000;

/// The depth of an indexed directory from its dx_root block: indirect
/// levels + 1 (1: the root alone indexes the leaves; 2, 3). None when the
/// block is not a dx_root ("." and ".." then an 8-byte dx_root_info).
pub fn parse_dx_root(block: &[u8]) -> Option<u32> {
    if block.len() < 32 {
        return None;
    }
    let dot = block[6] == 1 && block[8] == b'.';
    let dotdot = block[18] == 2 && &block[20..22] == b"..";
    let info_length = block[29];
    if !(dot && dotdot && info_length == 8) {
        return None;
    }
    Some(u32::from(block[30]) + 1)
}

/// The block device a filesystem of device number `dev` sits on.
fn device_path(dev: u64) -> Result<PathBuf, HtreeError> {
    let (maj, min) = (rustix::fs::major(dev), rustix::fs::minor(dev));
    let uevent = PathBuf::from(format!("/sys/dev/block/{maj}:{min}/uevent"));
    let text = std::fs::read_to_string(&uevent).map_err(|_| HtreeError::NoDevice)?;
    text.lines()
        .find_map(|l| l.strip_prefix("DEVNAME="))
        .map(|n| PathBuf::from("/dev").join(n.trim()))
        .ok_or(HtreeError::NoDevice)
}

fn failed(what: &str, dir: &Path, e: impl std::fmt::Display) -> HtreeError {
    HtreeError::Failed(format!("{what} {}: {e}", dir.display()))
}

/// The htree depth of directory `dir`: Some(0) for an ext4 directory that
/// is not indexed (one linear block), Some(1..) for an indexed one; None
/// when `dir` is not on ext4.
pub fn levels(dir: &Path) -> Result<Option<u32>, HtreeError> {
    use rustix::fs::{Mode, OFlags};
    let fd = rustix::fs::open(
        dir,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| failed("cannot open", dir, std::io::Error::from(e)))?;
    let fs = rustix::fs::fstatfs(&fd).map_err(|e| failed("statfs", dir, e))?;
    #[allow(clippy::unnecessary_cast)] // f_type's width differs between targets
    if fs.f_type as u32 != EXT4_SUPER_MAGIC {
        return Ok(None);
    }
    let flags = rustix::fs::ioctl_getflags(&fd).map_err(|e| failed("flags of", dir, e))?;
    if flags.bits() & INDEX_FL == 0 {
        return Ok(Some(0));
    }
    let mut first = None;
    fslab_sys::fiemap::fiemap(std::os::fd::AsFd::as_fd(&fd), 0, |e| {
        if e.logical == 0 {
            first = Some(e.physical);
        }
    })
    .map_err(|e| failed("FIEMAP of", dir, e))?;
    let phys = first.ok_or_else(|| failed("no block 0 in", dir, "FIEMAP"))?;
    let st = rustix::fs::fstat(&fd).map_err(|e| failed("stat", dir, e))?;
    let dev = device_path(st.st_dev)?;
    let bdev =
        std::fs::File::open(&dev).map_err(|e| failed("cannot read the device of", dir, e))?;
    let mut block = [0u8; 32];
    bdev.read_exact_at(&mut block, phys)
        .map_err(|e| failed("cannot read the dx_root of", dir, e))?;
    parse_dx_root(&block)
        .map(Some)
        .ok_or_else(|| failed("no dx_root in block 0 of", dir, "not an htree"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 1 KiB dx_root with `indirect` levels below the root.
    fn dx_root(indirect: u8) -> Vec<u8> {
        let mut b = vec![0u8; 1024];
        b[0..4].copy_from_slice(&2u32.to_le_bytes());
        b[4..6].copy_from_slice(&12u16.to_le_bytes());
        b[6] = 1;
        b[7] = 2;
        b[8] = b'.';
        b[12..16].copy_from_slice(&2u32.to_le_bytes());
        b[16..18].copy_from_slice(&1012u16.to_le_bytes());
        b[18] = 2;
        b[19] = 2;
        b[20..22].copy_from_slice(b"..");
        b[28] = 1; // half_md4
        b[29] = 8;
        b[30] = indirect;
        b
    }

    #[test]
    fn a_dx_root_gives_its_depth() {
        assert_eq!(parse_dx_root(&dx_root(0)), Some(1));
        assert_eq!(parse_dx_root(&dx_root(1)), Some(2));
        assert_eq!(parse_dx_root(&dx_root(2)), Some(3));
    }

    #[test]
    fn a_block_that_is_not_a_dx_root_gives_nothing() {
        let mut b = dx_root(1);
        b[29] = 0; // a linear directory's ".." entry runs on
        assert_eq!(parse_dx_root(&b), None);
        let mut b = dx_root(1);
        b[8] = b'x';
        assert_eq!(parse_dx_root(&b), None);
        assert_eq!(parse_dx_root(&[0u8; 16]), None);
    }

    #[test]
    fn a_directory_off_ext4_has_no_htree() {
        let d = tempfile::tempdir_in("/dev/shm").unwrap();
        assert_eq!(levels(d.path()).unwrap(), None);
    }
}
