//! The CPU a workload's own threads use: each worker thread adds what it
//! used (`RUSAGE_THREAD`, read when it starts and when it ends) to one
//! process-wide sum, and a [`CpuMeter`] reads how much that sum grew. The
//! probes' threads, the coordinator's clock and the results store are not
//! in it (`RUSAGE_SELF` counted them all).

use std::sync::atomic::{AtomicU64, Ordering};

use fslab_sys::{rusage, Usage, Who};

/// Nanoseconds of user and of system CPU of every worker thread so far.
static USER_NS: AtomicU64 = AtomicU64::new(0);
static SYSTEM_NS: AtomicU64 = AtomicU64::new(0);

/// Runs `job` on the calling thread (a worker) and adds the CPU the thread
/// used meanwhile to the workers' sum. [`crate::measure::supervise`] runs
/// every job so; a workload that spawns its own threads wraps their bodies.
pub fn counted<T>(job: impl FnOnce() -> T) -> T {
    let start = rusage(Who::Thread).unwrap_or_default();
    let r = job();
    let d: Usage = rusage(Who::Thread).unwrap_or_default().since(&start);
    USER_NS.fetch_add(d.user.as_nanos() as u64, Ordering::Relaxed);
    SYSTEM_NS.fetch_add(d.system.as_nanos() as u64, Ordering::Relaxed);
    r
}

/// User and system CPU of the workload's own threads over an interval.
pub struct CpuMeter {
    user_ns: u64,
    system_ns: u64,
}

impl CpuMeter {
    pub fn start() -> Self {
        CpuMeter {
            user_ns: USER_NS.load(Ordering::Relaxed),
            system_ns: SYSTEM_NS.load(Ordering::Relaxed),
        }
    }

    /// (user seconds, system seconds) the worker threads that ended since
    /// `start` used (read it after they are joined).
    pub fn read(&self) -> (f64, f64) {
        let u = USER_NS.load(Ordering::Relaxed).saturating_sub(self.user_ns);
        let s = SYSTEM_NS
            .load(Ordering::Relaxed)
            .saturating_sub(self.system_ns);
        (u as f64 / 1e9, s as f64 / 1e9)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;
    use std::time::{Duration, Instant};

    fn spin(d: Duration) {
        let t = Instant::now();
        let mut x = 0u64;
        while t.elapsed() < d {
            x = std::hint::black_box(x.wrapping_add(1));
        }
    }

    /// What fslab's own threads burn (a probe, here a spinning thread) is
    /// not the workload's CPU; what a worker burns is.
    #[test]
    fn the_meter_counts_the_workers_and_not_the_other_threads() {
        /// Stops the spinning thread however the test ends (a failed
        /// assertion too, which would otherwise leave the scope waiting).
        struct StopOnDrop<'a>(&'a AtomicBool);
        impl Drop for StopOnDrop<'_> {
            fn drop(&mut self) {
                self.0.store(true, Ordering::Relaxed);
            }
        }
        let stop = AtomicBool::new(false);
        std::thread::scope(|s| {
            let _stop = StopOnDrop(&stop);
            s.spawn(|| {
                while !stop.load(Ordering::Relaxed) {
                    spin(Duration::from_millis(5));
                }
            });
            let m = CpuMeter::start();
            let process = rusage(Who::Process).unwrap();
            // The worker sleeps until the other thread has spun 150 ms of
            // CPU (at most 20 s: the machine is shared).
            std::thread::scope(|w| {
                w.spawn(|| {
                    counted(|| {
                        let t0 = std::time::Instant::now();
                        while rusage(Who::Process).unwrap().since(&process).user
                            < Duration::from_millis(150)
                            && t0.elapsed() < Duration::from_secs(20)
                        {
                            std::thread::sleep(Duration::from_millis(20));
                        }
                    });
                });
            });
            let (u, s) = m.read();
            let burnt = rusage(Who::Process).unwrap().since(&process);
            assert!(
                burnt.user.as_secs_f64() > 0.1,
                "the other thread spun: {burnt:?}"
            );
            assert!(u + s < 0.05, "a sleeping worker used {u} + {s} s");
            let m = CpuMeter::start();
            // Until the worker's own CPU reaches 150 ms (the machine is shared).
            std::thread::scope(|w| {
                w.spawn(|| {
                    counted(|| {
                        let t0 = rusage(Who::Thread).unwrap();
                        while rusage(Who::Thread).unwrap().since(&t0).user
                            < Duration::from_millis(150)
                        {
                            spin(Duration::from_millis(1));
                        }
                    });
                });
            });
            let (u, _) = m.read();
            stop.store(true, Ordering::Relaxed);
            assert!(u >= 0.15, "a spinning worker used {u} s");
        });
    }
}
