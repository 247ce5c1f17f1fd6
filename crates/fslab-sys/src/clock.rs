//! CLOCK_MONOTONIC through the C library (`clock_gettime(2)`, which glibc
//! answers from the vDSO).
//!
//! rustix finds the vDSO itself by parsing the ELF image the auxiliary
//! vector points at; under valgrind that image is not mapped and the
//! process dies with SIGSEGV (rustix issue 1559). Reading the clock through
//! glibc instead keeps fslab runnable under `valgrind --tool=callgrind`,
//! whose instruction counts are how its per-item costs are compared on a
//! loaded machine (the timed loops themselves read the time-stamp counter).

/// CLOCK_MONOTONIC now, in nanoseconds (the clock of `Instant` on Linux).
pub fn monotonic_ns() -> u64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid, writable timespec; CLOCK_MONOTONIC exists on
    // every Linux, so the call cannot fail (it would leave `t` zero).
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut t) };
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clock_matches_instant_and_advances() {
        let a = monotonic_ns();
        let i = std::time::Instant::now();
        std::thread::sleep(std::time::Duration::from_millis(5));
        let b = monotonic_ns();
        let e = i.elapsed().as_nanos() as u64;
        assert!(b - a >= 5_000_000, "{a} .. {b}");
        assert!((b - a).abs_diff(e) < 2_000_000, "{} vs {e}", b - a);
    }
}
