//! The CPU a workload's own threads use: each worker thread adds what it
//! used (`RUSAGE_THREAD`, read when it starts and when it ends) to one
//! process-wide sum, and a [`CpuMeter`] reads how much that sum grew. The
//! probes' threads, the coordinator's clock and the results store are not
//! in it (`RUSAGE_SELF` counted them all). Tested in `tests/cpu_meter.rs`
//! (a process of its own: the sum is the whole process's workers').

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

/// The calling thread's CPU from [`ThreadCpu::start`] to
/// [`ThreadCpu::add`], added to the workers' sum: [`counted`] for work done
/// on the calling thread whose end must be read outside a timed region (one
/// `getrusage` at each end).
pub struct ThreadCpu(Usage);

impl ThreadCpu {
    pub fn start() -> Self {
        ThreadCpu(rusage(Who::Thread).unwrap_or_default())
    }

    /// Adds the CPU the thread used since `start` to the workers' sum.
    pub fn add(self) {
        let d: Usage = rusage(Who::Thread).unwrap_or_default().since(&self.0);
        USER_NS.fetch_add(d.user.as_nanos() as u64, Ordering::Relaxed);
        SYSTEM_NS.fetch_add(d.system.as_nanos() as u64, Ordering::Relaxed);
    }
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
