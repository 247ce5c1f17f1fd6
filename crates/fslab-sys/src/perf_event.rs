//! `perf_event_open(2)`: one CPU's cycle counter, counted system-wide (every
//! task on that CPU), for the clock a phase ran at. Where the CPU has no
//! hardware counters (a VM without a virtual PMU) the open fails with
//! `ENOENT` or `EOPNOTSUPP`, and the caller measures the clock another way.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// `PERF_TYPE_HARDWARE`.
const TYPE_HARDWARE: u32 = 0;
/// `PERF_COUNT_HW_CPU_CYCLES`.
const HW_CPU_CYCLES: u64 = 0;
/// `PERF_FLAG_FD_CLOEXEC`.
const FLAG_FD_CLOEXEC: libc::c_ulong = 8;

/// The first 64 bytes of `struct perf_event_attr` (<linux/perf_event.h>,
/// `PERF_ATTR_SIZE_VER0`): all a plain counter needs; the kernel takes
/// the size from `size`.
#[repr(C)]
struct AttrVer0 {
    kind: u32,
    size: u32,
    config: u64,
    sample_period: u64,
    sample_type: u64,
    read_format: u64,
    /// The bit field (`disabled`, `inherit`, ...): all clear, so the
    /// counter counts from the moment it is opened.
    flags: u64,
    wakeup_events: u32,
    bp_type: u32,
    config1: u64,
}

const _: () = assert!(std::mem::size_of::<AttrVer0>() == 64);

/// A cycle counter of one CPU.
#[derive(Debug)]
pub struct Cycles {
    fd: OwnedFd,
}

impl Cycles {
    /// `perf_event_open(&attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC)` for
    /// `PERF_COUNT_HW_CPU_CYCLES`: the cycles of every task on `cpu` (needs
    /// CAP_PERFMON or root, or perf_event_paranoid <= 0).
    pub fn on_cpu(cpu: u32) -> io::Result<Cycles> {
        let attr = AttrVer0 {
            kind: TYPE_HARDWARE,
            size: std::mem::size_of::<AttrVer0>() as u32,
            config: HW_CPU_CYCLES,
            sample_period: 0,
            sample_type: 0,
            read_format: 0,
            flags: 0,
            wakeup_events: 0,
            bp_type: 0,
            config1: 0,
        };
        // SAFETY: `attr` is a valid, initialised perf_event_attr prefix whose
        // `size` field tells the kernel how much of it to read; it lives
        // across the call. The other arguments are plain integers.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_perf_event_open,
                &attr as *const AttrVer0,
                -1 as libc::pid_t,
                cpu as libc::c_int,
                -1 as libc::c_int,
                FLAG_FD_CLOEXEC,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: the kernel returned a new file descriptor that nothing
        // else owns.
        Ok(Cycles {
            fd: unsafe { OwnedFd::from_raw_fd(fd as libc::c_int) },
        })
    }

    /// The cycles counted since the counter was opened (`read(2)` of the
    /// counter's 8-byte value).
    pub fn read(&self) -> io::Result<u64> {
        let mut v = 0u64;
        // SAFETY: `v` is 8 writable bytes that live across the call; the
        // descriptor is a perf event owned by `self`.
        let n = unsafe {
            libc::read(
                self.fd.as_raw_fd(),
                &mut v as *mut u64 as *mut libc::c_void,
                8,
            )
        };
        if n != 8 {
            return Err(if n < 0 {
                io::Error::last_os_error()
            } else {
                io::Error::new(io::ErrorKind::UnexpectedEof, "short read of a perf counter")
            });
        }
        Ok(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_counter_counts_up_or_says_why_it_cannot_open() {
        match Cycles::on_cpu(0) {
            Ok(c) => {
                let a = c.read().unwrap();
                let mut x = 0u64;
                for i in 0..1_000_000u64 {
                    x = x.wrapping_mul(31).wrapping_add(i);
                }
                std::hint::black_box(x);
                assert!(c.read().unwrap() > a);
            }
            // No hardware counters (this VM), no permission, or no perf
            // events at all: each is an OS error, never a panic.
            Err(e) => assert!(e.raw_os_error().is_some(), "{e}"),
        }
    }
}
