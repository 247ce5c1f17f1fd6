//! Raw system calls that `std` and `rustix` do not cover.
//!
//! This is the only crate of the workspace that may use `unsafe`; every block
//! carries a `// SAFETY:` note and every function names its C call.

use std::io;
use std::time::Duration;

pub mod child;
pub mod clock;
pub mod crc32c;
pub mod fd;
pub mod fiemap;
pub mod item_path;
pub mod lock;
pub mod loopdev;
pub mod mmap;
pub mod perf_event;
pub mod tsc;

pub use child::die_with_parent;

/// Whose resource usage [`rusage`] reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Who {
    /// The whole process, all threads (`RUSAGE_SELF`).
    Process,
    /// The calling thread only (`RUSAGE_THREAD`, Linux 2.6.26+).
    Thread,
    /// Terminated and waited-for children (`RUSAGE_CHILDREN`).
    Children,
}

/// CPU time and peak memory from `getrusage(2)`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    /// Time spent in user mode.
    pub user: Duration,
    /// Time spent in the kernel on behalf of the caller.
    pub system: Duration,
    /// Peak resident set size in KiB (`ru_maxrss`).
    pub max_rss_kib: u64,
}

impl Usage {
    /// CPU time consumed between `earlier` and `self` (saturating).
    pub fn since(&self, earlier: &Usage) -> Usage {
        Usage {
            user: self.user.saturating_sub(earlier.user),
            system: self.system.saturating_sub(earlier.system),
            max_rss_kib: self.max_rss_kib,
        }
    }
}

fn timeval(tv: libc::timeval) -> Duration {
    Duration::from_secs(tv.tv_sec.max(0) as u64) + Duration::from_micros(tv.tv_usec.max(0) as u64)
}

/// The size of a memory page, `sysconf(_SC_PAGESIZE)` (rustix's
/// `param::page_size` parses the auxiliary vector's vDSO image, which under
/// valgrind is not mapped: SIGSEGV, rustix issue 1559).
pub fn page_size() -> usize {
    // SAFETY: sysconf reads a configuration value; _SC_PAGESIZE always exists.
    let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(n).ok().filter(|&n| n > 0).unwrap_or(4096)
}

/// `getrusage(2)`: CPU times and peak RSS of the process, this thread or the children.
pub fn rusage(who: Who) -> io::Result<Usage> {
    let who = match who {
        Who::Process => libc::RUSAGE_SELF,
        Who::Thread => libc::RUSAGE_THREAD,
        Who::Children => libc::RUSAGE_CHILDREN,
    };
    let mut ru = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: `ru` points to writable memory of the size of `struct rusage`,
    // and `who` is one of the three values the kernel accepts.
    let rc = unsafe { libc::getrusage(who, ru.as_mut_ptr()) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: getrusage returned 0, so it filled the whole structure; it was
    // zero-initialised before in any case.
    let ru = unsafe { ru.assume_init() };
    Ok(Usage {
        user: timeval(ru.ru_utime),
        system: timeval(ru.ru_stime),
        max_rss_kib: ru.ru_maxrss.max(0) as u64,
    })
}

/// `wait4(2)`: waits for child `pid` and returns its exit status (as
/// `waitpid` gives it) and its own resource usage (peak RSS included).
pub fn wait4(pid: u32) -> io::Result<(i32, Usage)> {
    let mut status = 0i32;
    let mut ru = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    loop {
        // SAFETY: `status` and `ru` are valid, writable and live across the call.
        let rc = unsafe { libc::wait4(pid as libc::pid_t, &mut status, 0, ru.as_mut_ptr()) };
        if rc >= 0 {
            break;
        }
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EINTR) {
            return Err(e);
        }
    }
    // SAFETY: wait4 succeeded and filled the structure (zeroed before in any case).
    let ru = unsafe { ru.assume_init() };
    Ok((
        status,
        Usage {
            user: timeval(ru.ru_utime),
            system: timeval(ru.ru_stime),
            max_rss_kib: ru.ru_maxrss.max(0) as u64,
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_cpu_time_grows_with_work() {
        // Spin until this thread has used 20 ms of CPU (on a loaded machine
        // that takes longer than 20 ms of wall time); 5 s is the give-up.
        let before = rusage(Who::Thread).unwrap();
        let start = std::time::Instant::now();
        let mut x = 0u64;
        let mut spent = Usage::default();
        while start.elapsed() < Duration::from_secs(5)
            && spent.user + spent.system < Duration::from_millis(20)
        {
            for _ in 0..100_000 {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            }
            spent = rusage(Who::Thread).unwrap().since(&before);
        }
        std::hint::black_box(x);
        assert!(
            spent.user + spent.system >= Duration::from_millis(20),
            "{spent:?}"
        );
    }

    #[test]
    fn wait4_reports_the_childs_own_peak() {
        // Reaped by wait4 itself, which is what is under test.
        #[allow(clippy::zombie_processes)]
        let child = std::process::Command::new("true").spawn().unwrap();
        let (status, usage) = wait4(child.id()).unwrap();
        assert_eq!(status, 0);
        assert!(usage.max_rss_kib > 0 && usage.max_rss_kib < 100_000);
    }

    #[test]
    fn process_reports_peak_rss() {
        assert!(rusage(Who::Process).unwrap().max_rss_kib > 0);
    }
}
