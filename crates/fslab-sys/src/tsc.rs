//! The x86-64 time-stamp counter (`rdtsc`): a cycle-rate counter read in a
//! few nanoseconds, less than half the cost of a vDSO `clock_gettime`.
//!
//! Whether its ticks can stand for time (invariant rate, synchronised across
//! CPUs) is for the caller to decide: see `fslab_workload::measure`.

/// Whether this build can read the counter at all.
pub const AVAILABLE: bool = cfg!(target_arch = "x86_64");

/// The counter's current value; 0 on architectures without it.
#[inline(always)]
pub fn read() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: `rdtsc` reads a register; every x86-64 CPU has it and it
        // touches no memory. Linux leaves it enabled for user space unless a
        // process asks otherwise with prctl(PR_SET_TSC), which fslab never does.
        unsafe { std::arch::x86_64::_rdtsc() }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_counter_advances() {
        if !AVAILABLE {
            // Elsewhere the counter reads 0, and callers use the clock instead.
            assert_eq!(read(), 0);
            return;
        }
        let a = read();
        std::thread::sleep(std::time::Duration::from_millis(1));
        assert!(read() > a);
    }
}
