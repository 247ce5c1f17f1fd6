//! The CPU the calling thread runs on: glibc's `sched_getcpu` (the vDSO's
//! `getcpu` where the kernel offers one, no system call). rustix's own
//! `sched_getcpu` reads the vDSO through the auxiliary vector itself, which
//! faults under valgrind (the `loop_calls` bench runs fslab there).

/// The CPU the calling thread is running on now; None if the kernel will
/// not say.
#[inline]
pub fn this_cpu() -> Option<usize> {
    // SAFETY: sched_getcpu takes no arguments and only returns a number.
    let cpu = unsafe { libc::sched_getcpu() };
    usize::try_from(cpu).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cpu_is_one_this_thread_may_run_on() {
        let allowed = rustix::thread::sched_getaffinity(None).unwrap();
        let cpu = this_cpu().expect("sched_getcpu answers on Linux");
        assert!(allowed.is_set(cpu), "cpu {cpu} outside the thread's set");
    }
}
