//! `ioctl(FS_IOC_FIEMAP)`: the extents of a file, as the filesystem maps them.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};

const FS_IOC_FIEMAP: libc::c_ulong = 0xC020_660B;
/// `FIEMAP_FLAG_SYNC`: write dirty data back before mapping.
pub const FLAG_SYNC: u32 = 1;
/// `FIEMAP_FLAG_XATTR`: map the file's extended attributes instead of its data.
pub const FLAG_XATTR: u32 = 2;
/// `FIEMAP_EXTENT_DATA_INLINE`: the extent's data lives in the inode (or
/// its metadata), not in a block of its own.
pub const EXTENT_DATA_INLINE: u32 = 0x200;
const EXTENT_LAST: u32 = 1;
const BATCH: usize = 512;

/// One `struct fiemap_extent`, as the kernel reports it (never merged).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Extent {
    pub logical: u64,
    pub physical: u64,
    pub length: u64,
    /// `FIEMAP_EXTENT_*` flags.
    pub flags: u32,
}

#[repr(C)]
struct FiemapHeader {
    fm_start: u64,
    fm_length: u64,
    fm_flags: u32,
    fm_mapped_extents: u32,
    fm_extent_count: u32,
    fm_reserved: u32,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct FiemapExtent {
    fe_logical: u64,
    fe_physical: u64,
    fe_length: u64,
    fe_reserved64: [u64; 2],
    fe_flags: u32,
    fe_reserved: [u32; 3],
}

#[repr(C)]
struct Request {
    header: FiemapHeader,
    extents: [FiemapExtent; BATCH],
}

const _: () = assert!(std::mem::size_of::<FiemapHeader>() == 32);
const _: () = assert!(std::mem::size_of::<FiemapExtent>() == 56);

/// Calls `f` for every extent record of the open file `fd`, in order, and
/// returns how many there were. `flags` may be [`FLAG_SYNC`] or
/// [`FLAG_XATTR`].
pub fn fiemap(fd: BorrowedFd, flags: u32, mut f: impl FnMut(&Extent)) -> io::Result<u64> {
    let empty = FiemapExtent {
        fe_logical: 0,
        fe_physical: 0,
        fe_length: 0,
        fe_reserved64: [0; 2],
        fe_flags: 0,
        fe_reserved: [0; 3],
    };
    let mut req = Box::new(Request {
        header: FiemapHeader {
            fm_start: 0,
            fm_length: 0,
            fm_flags: 0,
            fm_mapped_extents: 0,
            fm_extent_count: 0,
            fm_reserved: 0,
        },
        extents: [empty; BATCH],
    });
    let mut start = 0u64;
    let mut count = 0u64;
    loop {
        req.header = FiemapHeader {
            fm_start: start,
            fm_length: u64::MAX - start,
            fm_flags: flags,
            fm_mapped_extents: 0,
            fm_extent_count: BATCH as u32,
            fm_reserved: 0,
        };
        // SAFETY: `req` is a `struct fiemap` followed by room for BATCH
        // extents, as fm_extent_count tells the kernel; it lives across the call.
        let rc = unsafe {
            libc::ioctl(
                fd.as_raw_fd(),
                FS_IOC_FIEMAP as _,
                &mut *req as *mut Request,
            )
        };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        let n = (req.header.fm_mapped_extents as usize).min(BATCH);
        if n == 0 {
            return Ok(count);
        }
        for e in &req.extents[..n] {
            f(&Extent {
                logical: e.fe_logical,
                physical: e.fe_physical,
                length: e.fe_length,
                flags: e.fe_flags,
            });
        }
        count += n as u64;
        let last = req.extents[n - 1];
        if last.fe_flags & EXTENT_LAST != 0 {
            return Ok(count);
        }
        start = last.fe_logical + last.fe_length;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Seek, SeekFrom, Write};
    use std::os::fd::AsFd;

    #[test]
    fn a_file_with_holes_has_one_extent_per_written_run() {
        // /var/tmp is on a disk filesystem (tmpfs has no FIEMAP).
        let dir = tempfile::tempdir_in("/var/tmp").unwrap();
        let p = dir.path().join("holes");
        let mut f = std::fs::File::create(&p).unwrap();
        for i in 0..5u64 {
            f.seek(SeekFrom::Start(i * 1024 * 1024)).unwrap();
            f.write_all(&[1u8; 4096]).unwrap();
        }
        f.sync_all().unwrap();
        let mut seen = Vec::new();
        let n = fiemap(f.as_fd(), FLAG_SYNC, |e| seen.push(*e)).unwrap();
        assert_eq!(n, 5);
        assert_eq!(seen[3].logical, 3 * 1024 * 1024);
        assert_eq!(seen[3].length, 4096);
        assert!(seen[4].flags & EXTENT_LAST != 0);
    }
}
