//! Closing a file descriptor with the `close(2)` system call made where the
//! caller is (inlined), not inside a function.
//!
//! Dropping an `OwnedFd` calls std's `Drop`, which calls glibc's `close()`:
//! a function call, and the system call made inside it, then a return. On
//! the AMD EPYC VMs fslab runs on (the kernel's SRSO mitigation "Safe
//! RET") a system call made inside a function that returns costs up to
//! ~500 ns more than one made in a loop's own body (bench `loop_cost`), and
//! bench `loop_calls` flags every per-item function that makes system
//! calls: a timed loop closes its files with [`close`].

use std::os::fd::{IntoRawFd, OwnedFd};

/// Closes `fd` (errors ignored, as `OwnedFd`'s drop ignores them: Linux
/// frees the descriptor whatever `close` returns).
#[inline(always)]
pub fn close(fd: OwnedFd) {
    let raw = fd.into_raw_fd();
    // SAFETY: `raw` came out of an `OwnedFd`, so it is open and owned by
    // no one else; `into_raw_fd` gave up that ownership, so nothing closes
    // it again after this.
    unsafe { rustix::io::close(raw) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    #[test]
    fn a_closed_descriptor_is_no_longer_open() {
        let f = std::fs::File::open("/proc/self/stat").unwrap();
        // A high number, which no other test's open takes meanwhile (an
        // open takes the lowest free one).
        let high = rustix::io::fcntl_dupfd_cloexec(&f, 900).unwrap();
        let raw = high.as_raw_fd();
        // SAFETY: `raw` is open (held by `high`) for this call.
        let before = unsafe { libc::fcntl(raw, libc::F_GETFD) };
        assert!(before >= 0, "open before");
        close(high);
        // SAFETY: F_GETFD on a number reads flags or fails with EBADF.
        let after = unsafe { libc::fcntl(raw, libc::F_GETFD) };
        assert_eq!(after, -1, "descriptor {raw} still open");
        assert_eq!(
            std::io::Error::last_os_error().raw_os_error(),
            Some(libc::EBADF)
        );
    }
}
