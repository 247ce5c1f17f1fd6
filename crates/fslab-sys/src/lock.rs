//! Byte-range locks owned by an open file description (`F_OFD_SETLKW`).
//!
//! Classic POSIX record locks belong to a process, so threads of one process
//! never conflict on them. An open-file-description lock belongs to the open
//! file: two threads that opened the file separately conflict just as two
//! processes with classic locks do, which is what a workload whose clients
//! are threads (dbench's are processes) needs.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};

/// What [`range`] asks of a byte range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Request {
    /// A write lock, waiting while another open file holds the range.
    WriteWait,
    /// A write lock if it can be had at once.
    WriteTry,
    /// Release.
    Unlock,
}

/// Applies `req` to the byte range `start..start+len` of `fd`'s open file
/// (`len` 0: to the end of the file and beyond, as in fcntl(2)). Returns
/// false only for [`Request::WriteTry`] on a range another open file holds.
pub fn range(fd: BorrowedFd, start: u64, len: u64, req: Request) -> io::Result<bool> {
    let too_big = |what: &str| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("lock {what} beyond off_t"),
        )
    };
    // SAFETY: an all-zero `flock` is a valid value (integers only); the
    // fields fcntl(2) reads are set below and l_pid must be 0 for OFD locks.
    let mut fl: libc::flock = unsafe { std::mem::zeroed() };
    fl.l_type = match req {
        Request::WriteWait | Request::WriteTry => libc::F_WRLCK,
        Request::Unlock => libc::F_UNLCK,
    } as libc::c_short;
    fl.l_whence = libc::SEEK_SET as libc::c_short;
    fl.l_start = libc::off_t::try_from(start).map_err(|_| too_big("start"))?;
    fl.l_len = libc::off_t::try_from(len).map_err(|_| too_big("length"))?;
    let cmd = if req == Request::WriteWait {
        libc::F_OFD_SETLKW
    } else {
        libc::F_OFD_SETLK
    };
    loop {
        // SAFETY: fcntl(fd, F_OFD_SETLK[W], &flock) reads the struct, which
        // lives across the call; `fd` is a valid descriptor for its lifetime.
        let r = unsafe { libc::fcntl(fd.as_raw_fd(), cmd, &fl) };
        if r == 0 {
            return Ok(true);
        }
        let e = io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::EINTR) => continue,
            Some(libc::EAGAIN) | Some(libc::EACCES) if req == Request::WriteTry => {
                return Ok(false)
            }
            _ => return Err(e),
        }
    }
}

/// Whether another open file holds a lock that conflicts with a write lock
/// on `start..start+len` (`F_OFD_GETLK`).
pub fn conflicts(fd: BorrowedFd, start: u64, len: u64) -> io::Result<bool> {
    // SAFETY: as in `range`.
    let mut fl: libc::flock = unsafe { std::mem::zeroed() };
    fl.l_type = libc::F_WRLCK as libc::c_short;
    fl.l_whence = libc::SEEK_SET as libc::c_short;
    fl.l_start = start as libc::off_t;
    fl.l_len = len as libc::off_t;
    // SAFETY: fcntl(fd, F_OFD_GETLK, &mut flock) writes into the struct,
    // which lives across the call.
    let r = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_OFD_GETLK, &mut fl) };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(fl.l_type != libc::F_UNLCK as libc::c_short)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;

    #[test]
    fn two_opens_of_one_file_conflict_and_release() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        let a = std::fs::File::create(&p).unwrap();
        let b = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
        assert!(range(a.as_fd(), 2147483538, 1, Request::WriteTry).unwrap());
        assert!(conflicts(b.as_fd(), 2147483538, 1).unwrap());
        assert!(!range(b.as_fd(), 2147483538, 1, Request::WriteTry).unwrap());
        assert!(
            !conflicts(b.as_fd(), 0, 100).unwrap(),
            "other bytes are free"
        );
        assert!(
            !conflicts(a.as_fd(), 2147483538, 1).unwrap(),
            "not with its owner"
        );
        range(a.as_fd(), 2147483538, 1, Request::Unlock).unwrap();
        assert!(!conflicts(b.as_fd(), 2147483538, 1).unwrap());
    }

    #[test]
    fn a_waiting_lock_is_granted_on_release() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        let a = std::fs::File::create(&p).unwrap();
        let b = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
        range(a.as_fd(), 10, 5, Request::WriteWait).unwrap();
        let waiter = std::thread::spawn(move || {
            let t = std::time::Instant::now();
            range(b.as_fd(), 12, 1, Request::WriteWait).unwrap();
            t.elapsed()
        });
        std::thread::sleep(std::time::Duration::from_millis(50));
        range(a.as_fd(), 10, 5, Request::Unlock).unwrap();
        assert!(waiter.join().unwrap() >= std::time::Duration::from_millis(40));
    }
}
