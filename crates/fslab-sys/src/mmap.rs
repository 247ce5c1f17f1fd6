//! `mmap(2)` of a file with MAP_SHARED, behind bounds-checked accessors.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};

/// A shared, writable mapping of a whole file; unmapped on drop.
///
/// The accessors are `#[inline(always)]` so that the page fault of a first
/// touch is taken in the caller's loop, as the seed's C program takes it:
/// inside a function that returns after the fault it costs some 500 ns
/// more on the VMs fslab is measured on (bench `loop_cost` shows the same
/// for a system call).
pub struct SharedMap {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: the mapping is plain memory owned by this value; access goes
// through &self / &mut self, so the usual borrow rules serialise it.
unsafe impl Send for SharedMap {}
// SAFETY: &self methods only read the mapping or msync it; writes need
// &mut self, so no data race can come through a shared reference.
unsafe impl Sync for SharedMap {}

impl SharedMap {
    /// `mmap(NULL, len, PROT_READ|PROT_WRITE, MAP_SHARED, fd, 0)`.
    pub fn new(fd: BorrowedFd, len: usize) -> io::Result<SharedMap> {
        if len == 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "cannot map 0 bytes",
            ));
        }
        // SAFETY: a fresh mapping chosen by the kernel (addr NULL) cannot
        // overlap Rust-owned memory; the result is checked against MAP_FAILED.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd.as_raw_fd(),
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(SharedMap {
            ptr: p as *mut u8,
            len,
        })
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline(always)]
    fn check(&self, offset: usize, size: usize) {
        if offset.checked_add(size).is_none_or(|e| e > self.len) {
            self.outside(offset);
        }
    }

    #[cold]
    #[inline(never)]
    fn outside(&self, offset: usize) -> ! {
        panic!("offset {offset} outside the {}-byte mapping", self.len)
    }

    /// Reads the native-endian u32 at `offset` (faulting the page in).
    #[inline(always)]
    pub fn read_u32(&self, offset: usize) -> u32 {
        self.check(offset, 4);
        // SAFETY: in bounds (checked); a [u8; 4] has alignment 1.
        u32::from_le_bytes(unsafe {
            std::ptr::read_volatile(self.ptr.add(offset) as *const [u8; 4])
        })
    }

    /// Writes `v` at `offset` (dirtying the page).
    #[inline(always)]
    pub fn write_u32(&mut self, offset: usize, v: u32) {
        self.check(offset, 4);
        // SAFETY: in bounds (checked); [u8; 4] has alignment 1; writable and exclusively borrowed.
        unsafe { std::ptr::write_volatile(self.ptr.add(offset) as *mut [u8; 4], v.to_le_bytes()) }
    }

    #[inline(always)]
    pub fn read_u8(&self, offset: usize) -> u8 {
        self.check(offset, 1);
        // SAFETY: in bounds (checked).
        unsafe { std::ptr::read_volatile(self.ptr.add(offset)) }
    }

    #[inline(always)]
    pub fn write_u8(&mut self, offset: usize, v: u8) {
        self.check(offset, 1);
        // SAFETY: in bounds (checked); writable and exclusively borrowed.
        unsafe { std::ptr::write_volatile(self.ptr.add(offset), v) }
    }

    /// Copies `data` into the mapping at `offset`.
    #[inline(always)]
    pub fn write_bytes(&mut self, offset: usize, data: &[u8]) {
        self.check(offset, data.len());
        // SAFETY: in bounds (checked); the source is a distinct Rust slice.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), self.ptr.add(offset), data.len()) }
    }

    /// Copies from the mapping at `offset` into `out`.
    #[inline(always)]
    pub fn read_bytes(&self, offset: usize, out: &mut [u8]) {
        self.check(offset, out.len());
        // SAFETY: in bounds (checked); the destination is a distinct Rust slice.
        unsafe { std::ptr::copy_nonoverlapping(self.ptr.add(offset), out.as_mut_ptr(), out.len()) }
    }

    /// `msync(MS_SYNC)` of the whole mapping.
    pub fn msync(&self) -> io::Result<()> {
        // SAFETY: ptr/len describe exactly this live mapping.
        if unsafe { libc::msync(self.ptr as *mut libc::c_void, self.len, libc::MS_SYNC) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// `munmap`, reporting its error (drop ignores it).
    pub fn unmap(mut self) -> io::Result<()> {
        let r = self.unmap_now();
        std::mem::forget(self);
        r
    }

    fn unmap_now(&mut self) -> io::Result<()> {
        // SAFETY: ptr/len describe exactly this mapping, unmapped only once
        // (unmap forgets self; drop runs otherwise).
        if unsafe { libc::munmap(self.ptr as *mut libc::c_void, self.len) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

impl Drop for SharedMap {
    fn drop(&mut self) {
        let _ = self.unmap_now();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;

    #[test]
    fn writes_reach_the_file() {
        let f = tempfile::tempfile().unwrap();
        f.set_len(8192).unwrap();
        let mut m = SharedMap::new(f.as_fd(), 8192).unwrap();
        m.write_u32(4096, 0xdead_beef);
        assert_eq!(m.read_u32(4096), 0xdead_beef);
        m.msync().unwrap();
        m.unmap().unwrap();
        use std::os::unix::fs::FileExt;
        let mut b = [0u8; 4];
        f.read_exact_at(&mut b, 4096).unwrap();
        assert_eq!(u32::from_le_bytes(b), 0xdead_beef);
    }

    #[test]
    #[should_panic(expected = "outside")]
    fn out_of_bounds_is_caught() {
        let f = tempfile::tempfile().unwrap();
        f.set_len(4096).unwrap();
        SharedMap::new(f.as_fd(), 4096).unwrap().read_u32(4094);
    }
}
