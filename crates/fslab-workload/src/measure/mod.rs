//! Measuring shared by all workloads.
//!
//! Workers never block on the coordinator: each owns one cache-line-sized
//! counter that it overwrites with a plain store after every operation, and
//! the coordinator sums the counters once a second ([`PhaseClock`]).

mod clock;
mod cpu;
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

/// The name of [`supervise_here`]'s helper thread.
pub const HELPER: &str = "fslab-seconds";

/// Runs `job` on the calling thread while a scoped helper thread records
/// one series point a second: a rank of one worker (mdtest, io500md) works
/// as the original's one thread does, on the thread that passed the
/// barrier. The helper has started before `job` begins and ends after it
/// returns: a caller whose `job` is the whole timed region, barriers
/// included, starts and ends no thread inside the time. The CPU the job
/// uses is the caller's to count ([`counted`] around its work, not around
/// its barriers). A panic in `job` ends the helper and goes on.
///
/// Against the worker thread started for each phase that it replaced
/// (docs/speed.md, `-n 20000 -C -T -E -r`, alternating rounds): item
/// phases 1.00-1.06x its rates on tmpfs (stats and reads gaining most),
/// 0.99-1.07x on a loop ext4, unchanged at 2 ranks; the same phases with
/// the worker thread but an idle second thread run here were as fast, so
/// the cost was the per-phase thread (its start and end, 52 us, and the
/// work moved off the CPU that ran the phase before), not a second thread.
pub fn supervise_here<T>(
    job: impl FnOnce() -> T,
    clock: &mut PhaseClock,
    progress: &Progress,
    on_point: &mut (dyn FnMut(SeriesPoint) + Send),
) -> T {
    std::thread::scope(|s| {
        let (done, ended) = mpsc::channel::<()>();
        let (up, up_rx) = mpsc::sync_channel::<()>(1);
        // Until the job ends (its last, partial second is the caller's).
        let helper = std::thread::Builder::new().name(HELPER.into());
        let started = helper.spawn_scoped(s, move || {
            let _ = up.send(());
            while let Err(mpsc::RecvTimeoutError::Timeout) = ended.recv_timeout(clock.until_tick())
            {
                if let Some(p) = clock.tick(progress.total()) {
                    on_point(p);
                }
            }
        });
        if started.is_ok() {
            let _ = up_rx.recv();
        }
        // Dropped when the job returns or unwinds: the helper ends.
        let _done = done;
        job()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_lone_job_runs_on_the_calling_thread_its_seconds_taken_beside_it() {
        let progress = Progress::new(1);
        let mut clock = PhaseClock::start(3);
        let mut points = Vec::new();
        let ran_on = supervise_here(
            || {
                for i in 1..=7 {
                    progress.set(0, i * 10);
                    std::thread::sleep(Duration::from_millis(250));
                }
                std::thread::current().id()
            },
            &mut clock,
            &progress,
            &mut |p| points.push(p),
        );
        assert_eq!(ran_on, std::thread::current().id());
        // 1.75 s of work: the helper took the first second's point while
        // the job ran; the last, partial second is the caller's (finish).
        assert_eq!(points.len(), 1, "{points:?}");
        assert_eq!(points[0].phase_index, 3);
        assert!((40..=60).contains(&points[0].total_ops), "{points:?}");
        assert_eq!(
            clock.finish(progress.total()).map(|p| p.total_ops),
            Some(70)
        );
    }

    #[test]
    fn a_panic_in_the_job_ends_the_helper_and_goes_on() {
        let progress = Progress::new(1);
        let mut clock = PhaseClock::start(0);
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            supervise_here(|| panic!("planted"), &mut clock, &progress, &mut |_| {});
        }));
        assert!(r.is_err(), "the job's panic goes on");
    }
}
