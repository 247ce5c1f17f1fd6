//! Patience with a memory cgroup at its limit: a call that fails with
//! ENOMEM is made again, for a while, and counted (fs_mark's loops and
//! createmany's share it).

use rustix::io::Errno;

use crate::measure::now_ns;

/// The metric of a phase's ENOMEM retries: `fsmark PHASE ENOMEM retries`,
/// `createmany OP ENOMEM retries`.
pub const ENOMEM_RETRIES: &str = "ENOMEM retries";

/// How long a call that keeps getting ENOMEM is retried before the phase fails.
const ENOMEM_PATIENCE: std::time::Duration = std::time::Duration::from_secs(60);

/// Whether a call that got ENOMEM may be made again: the first ENOMEM
/// starts the clock in `since`; after [`ENOMEM_PATIENCE`] the error stands.
pub fn within_patience(since: &mut Option<std::time::Instant>) -> bool {
    since.get_or_insert_with(std::time::Instant::now).elapsed() < ENOMEM_PATIENCE
}

/// Makes `call` until it does not fail with ENOMEM (for at most
/// `ENOMEM_PATIENCE`, 60 s, 10 ms apart), counting each retry in `retries`, and
/// returns its result with the time of the last call alone. In a memory
/// cgroup at its limit with its OOM killer off (cgroup v1), the kernel
/// fails a system call's allocation with ENOMEM where a machine of that
/// size would have waited for reclaim: the wait is the phase's (it counts
/// in its time, as on the seed's machine), the failed calls are no call's.
pub fn retrying<T>(
    retries: &mut u64,
    mut call: impl FnMut() -> Result<T, Errno>,
) -> (Result<T, Errno>, u64) {
    // The patience's clock starts at the first ENOMEM: a call that
    // succeeds reads no clock beyond its own timing.
    let mut since: Option<std::time::Instant> = None;
    loop {
        let t = now_ns();
        match call() {
            Err(Errno::NOMEM) if within_patience(&mut since) => {
                *retries += 1;
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            r => return (r, now_ns() - t),
        }
    }
}
