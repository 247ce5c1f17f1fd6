//! Measuring shared by all workloads.
//!
//! Workers never block on the coordinator: each owns one cache-line-sized
//! counter that it overwrites with a plain store after every operation, and
//! the coordinator sums the counters once a second ([`PhaseClock`]).

mod clock;
mod cpu;
pub mod place;
mod timebase;

pub use clock::{PhaseClock, Progress};
pub use cpu::{counted, CpuMeter, ThreadCpu};
pub use timebase::{now_ns, start_timebase};

use std::sync::mpsc;

use fslab_model::SeriesPoint;

/// Runs `jobs` on scoped threads while the calling thread records one
/// series point a second. Returns each job's result, in order. Each job's
/// CPU goes to the workers' sum ([`CpuMeter`]).
pub fn supervise<'env, T: Send + 'env>(
    jobs: Vec<Box<dyn FnOnce() -> T + Send + 'env>>,
    clock: &mut PhaseClock,
    progress: &Progress,
    on_point: &mut dyn FnMut(SeriesPoint),
) -> Vec<Option<T>> {
    std::thread::scope(|s| {
        let (tx, rx) = mpsc::channel::<()>();
        let handles: Vec<_> = jobs
            .into_iter()
            .map(|job| {
                let tx = tx.clone();
                s.spawn(move || {
                    let r = cpu::counted(job);
                    let _ = tx.send(());
                    r
                })
            })
            .collect();
        drop(tx);
        let mut left = handles.len();
        while left > 0 {
            match rx.recv_timeout(clock.until_tick()) {
                Ok(()) => left -= 1,
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
            if let Some(p) = clock.tick(progress.total()) {
                on_point(p);
            }
        }
        handles.into_iter().map(|h| h.join().ok()).collect()
    })
}
