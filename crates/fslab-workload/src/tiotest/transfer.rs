//! One block's call in tiotest's timed loops, and why a thread's test
//! stopped.

use std::os::fd::OwnedFd;

/// Why a thread's test stopped, said before its file's name: a call that
/// failed ("write: No space left on device (os error 28)"), the mapping,
/// or a short transfer. Small and made only when a call fails: the timed
/// loops return it on every block.
#[derive(Debug, thiserror::Error)]
pub(super) enum Failed {
    #[error("{call}: {source}")]
    Call {
        call: &'static str,
        #[source]
        source: rustix::io::Errno,
    },
    #[error("mmap: {0}")]
    Map(#[source] std::io::Error),
    #[error("short {call} ({n} of {b} bytes)")]
    Short {
        call: &'static str,
        n: usize,
        b: u64,
    },
}

impl Failed {
    pub(super) fn call(call: &'static str, source: rustix::io::Errno) -> Failed {
        Failed::Call { call, source }
    }
}

/// The call a transfer makes.
fn transfer_call(write: bool) -> &'static str {
    if write {
        "write"
    } else {
        "read"
    }
}

/// One `write` or `read` of `buf` at the file position.
#[inline(always)]
pub(super) fn transfer(fd: &OwnedFd, buf: &mut [u8], write: bool) -> Result<usize, Failed> {
    let r = if write {
        rustix::io::write(fd, &*buf)
    } else {
        rustix::io::read(fd, buf)
    };
    r.map_err(|e| Failed::call(transfer_call(write), e))
}

/// Refuses a transfer of `n` bytes where a block of `b` was asked for.
pub(super) fn whole_block(n: usize, b: u64, write: bool) -> Result<(), Failed> {
    if n as u64 == b {
        return Ok(());
    }
    Err(Failed::Short {
        call: transfer_call(write),
        n,
        b,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_call_and_a_short_block_say_what_they_said_as_strings_with_the_errno_as_source() {
        let e = Failed::call("write", rustix::io::Errno::NOSPC);
        assert_eq!(
            e.to_string(),
            "write: No space left on device (os error 28)"
        );
        let source = std::error::Error::source(&e).expect("the errno");
        assert_eq!(
            source.downcast_ref::<rustix::io::Errno>(),
            Some(&rustix::io::Errno::NOSPC)
        );
        assert!(whole_block(4096, 4096, true).is_ok());
        assert_eq!(
            whole_block(512, 4096, false).unwrap_err().to_string(),
            "short read (512 of 4096 bytes)"
        );
    }
}
