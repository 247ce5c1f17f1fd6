//! fs_mark's loops with a stonewall (`--stonewall S`, fslab's: fs_mark has
//! none). In each loop every worker thread stops after the file that passes
//! S seconds from the loop's start, the ranks agree on the most files any
//! thread of any rank made, and every thread creates files up to that count
//! before the loop's post-loop syncs: the loop's files are the agreed count
//! times the threads, and its table row says so (see [`crate::stonewall`]).
//!
//! The ranks decide together whether to run another loop (a sum of the
//! ranks that would stop), so that every rank makes the same collective
//! calls in the same order: one rank that stops (its filesystem full, an
//! error, a signal) stops them all at the next loop.

use fslab_cluster::Cluster;
use fslab_record::SeriesPoint;

use super::create::{LoopCtx, LoopOutcome, Worker};
use crate::measure::{supervise, PhaseClock, Progress};
use crate::stonewall::{agree, Check, Wall};

/// Whether every rank goes on to another loop, this one if `go`: a
/// collective every rank makes before each loop.
pub(super) fn all_go_on(c: &dyn Cluster, go: bool) -> bool {
    c.sum(u64::from(!go)) == 0
}

/// One loop of every worker with the stonewall `seconds` after its start:
/// each worker's outcome and the rank's stonewall (None when a rank had
/// ended: no agreement, and the loop ends where it stopped).
pub(super) fn one_loop(
    workers: &mut [Worker],
    in_loop: &LoopCtx,
    seconds: u64,
    c: &dyn Cluster,
    clock: &mut PhaseClock,
    progress: &Progress,
    on_point: &mut dyn FnMut(SeriesPoint),
) -> (Vec<Option<LoopOutcome>>, Option<Wall>) {
    let started = std::time::Instant::now();
    let first = LoopCtx {
        wall: Check::after(seconds),
        ..*in_loop
    };
    let jobs: Vec<Box<dyn FnOnce() -> u64 + Send + '_>> = workers
        .iter_mut()
        .map(|w| {
            let first = &first;
            Box::new(move || {
                w.begin_loop();
                w.create_more(first)
            }) as Box<dyn FnOnce() -> u64 + Send + '_>
        })
        .collect();
    let at: Vec<u64> = supervise(jobs, clock, progress, on_point)
        .into_iter()
        .map(Option::unwrap_or_default)
        .collect();
    let at_wall: u64 = at.iter().sum();
    // The agreement, on this (the main) thread: MPI is funneled.
    let agreed = agree(c, at.iter().copied().max().unwrap_or(0));
    let wall_s = started.elapsed().as_secs_f64();
    let rest = LoopCtx {
        wall: Check::NEVER,
        // Without an agreement nothing more is made.
        upto: agreed.unwrap_or(0),
        ..*in_loop
    };
    let jobs: Vec<Box<dyn FnOnce() -> LoopOutcome + Send + '_>> = workers
        .iter_mut()
        .map(|w| {
            let rest = &rest;
            Box::new(move || {
                w.create_more(rest);
                w.end_loop(rest)
            }) as Box<dyn FnOnce() -> LoopOutcome + Send + '_>
        })
        .collect();
    let outcomes = supervise(jobs, clock, progress, on_point);
    let at_end = outcomes.iter().flatten().map(|o| o.files).sum();
    let wall = agreed.map(|agreed| Wall {
        at_wall,
        agreed,
        wall_s,
        at_end,
    });
    (outcomes, wall)
}
