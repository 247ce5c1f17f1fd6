//! Loop device ioctls (loop(4)): find a free device, bind a file to it,
//! unbind it, read its status.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};

const LOOP_CLR_FD: libc::c_ulong = 0x4C01;
const LOOP_GET_STATUS64: libc::c_ulong = 0x4C05;
const LOOP_CONFIGURE: libc::c_ulong = 0x4C0A;
const LOOP_CTL_GET_FREE: libc::c_ulong = 0x4C82;

/// `LO_FLAGS_READ_ONLY`.
pub const FLAG_READ_ONLY: u32 = 1;
/// `LO_FLAGS_AUTOCLEAR`: the kernel unbinds the device when its last user closes it.
pub const FLAG_AUTOCLEAR: u32 = 4;
/// `LO_FLAGS_DIRECT_IO`: the loop driver reads and writes the backing file with O_DIRECT.
pub const FLAG_DIRECT_IO: u32 = 16;

/// `struct loop_info64` from <linux/loop.h>.
#[repr(C)]
#[derive(Clone, Copy)]
struct LoopInfo64 {
    lo_device: u64,
    lo_inode: u64,
    lo_rdevice: u64,
    lo_offset: u64,
    lo_sizelimit: u64,
    lo_number: u32,
    lo_encrypt_type: u32,
    lo_encrypt_key_size: u32,
    lo_flags: u32,
    lo_file_name: [u8; 64],
    lo_crypt_name: [u8; 64],
    lo_encrypt_key: [u8; 32],
    lo_init: [u64; 2],
}

/// `struct loop_config` from <linux/loop.h> (Linux 5.8+).
#[repr(C)]
struct LoopConfig {
    fd: u32,
    block_size: u32,
    info: LoopInfo64,
    reserved: [u64; 8],
}

const _: () = assert!(std::mem::size_of::<LoopInfo64>() == 232);
const _: () = assert!(std::mem::size_of::<LoopConfig>() == 304);

fn zeroed_info() -> LoopInfo64 {
    LoopInfo64 {
        lo_device: 0,
        lo_inode: 0,
        lo_rdevice: 0,
        lo_offset: 0,
        lo_sizelimit: 0,
        lo_number: 0,
        lo_encrypt_type: 0,
        lo_encrypt_key_size: 0,
        lo_flags: 0,
        lo_file_name: [0; 64],
        lo_crypt_name: [0; 64],
        lo_encrypt_key: [0; 32],
        lo_init: [0; 2],
    }
}

/// `ioctl(control, LOOP_CTL_GET_FREE)` on `/dev/loop-control`: the number of
/// a free loop device, creating one if needed.
pub fn get_free(control: BorrowedFd) -> io::Result<u32> {
    // SAFETY: LOOP_CTL_GET_FREE takes no argument and returns a number.
    let rc = unsafe { libc::ioctl(control.as_raw_fd(), LOOP_CTL_GET_FREE as _) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(rc as u32)
}

/// `ioctl(dev, LOOP_CONFIGURE, &cfg)`: binds `backing` to the loop device
/// `dev` with `flags` (`FLAG_*`) in one step. Fails with EBUSY if another
/// process bound the device first.
pub fn configure(dev: BorrowedFd, backing: BorrowedFd, flags: u32, name: &str) -> io::Result<()> {
    let mut info = zeroed_info();
    info.lo_flags = flags;
    let n = name.len().min(63);
    info.lo_file_name[..n].copy_from_slice(&name.as_bytes()[..n]);
    let cfg = LoopConfig {
        fd: backing.as_raw_fd() as u32,
        block_size: 0,
        info,
        reserved: [0; 8],
    };
    // SAFETY: `cfg` is a fully initialised `struct loop_config` that lives
    // across the call; the kernel only reads it.
    let rc = unsafe {
        libc::ioctl(
            dev.as_raw_fd(),
            LOOP_CONFIGURE as _,
            &cfg as *const LoopConfig,
        )
    };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// `ioctl(dev, LOOP_CLR_FD)`: unbinds the backing file (deferred by the
/// kernel until the device's last user closes it).
pub fn clear(dev: BorrowedFd) -> io::Result<()> {
    // SAFETY: LOOP_CLR_FD takes no argument.
    let rc = unsafe { libc::ioctl(dev.as_raw_fd(), LOOP_CLR_FD as _) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// What `LOOP_GET_STATUS64` reports about a bound loop device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Status {
    /// st_dev of the backing file.
    pub backing_dev: u64,
    /// st_ino of the backing file.
    pub backing_inode: u64,
    /// `FLAG_*` bits.
    pub flags: u32,
}

/// `ioctl(dev, LOOP_GET_STATUS64, &info)`; ENXIO when nothing is bound.
pub fn status(dev: BorrowedFd) -> io::Result<Status> {
    let mut info = zeroed_info();
    // SAFETY: `info` is a writable `struct loop_info64`.
    let rc = unsafe {
        libc::ioctl(
            dev.as_raw_fd(),
            LOOP_GET_STATUS64 as _,
            &mut info as *mut LoopInfo64,
        )
    };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(Status {
        backing_dev: info.lo_device,
        backing_inode: info.lo_inode,
        flags: info.lo_flags,
    })
}
