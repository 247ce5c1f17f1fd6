//! createmany's create loop with a stonewall (`--stonewall S`, fslab's:
//! createmany has none): every thread stops at the name that passes S
//! seconds from the phase's start, the ranks agree on the most names any
//! thread of any rank made, and every thread makes names up to that count
//! (or to the end of its share of COUNT, when that comes first), in one
//! phase whose time holds both stretches (see [`crate::stonewall`]).

use fslab_cluster::Cluster;
use fslab_model::{RecordError, SeriesPoint};

#[allow(clippy::wildcard_imports)]
use super::*;
use crate::common::PhaseRun;
use crate::measure::{supervise, CpuMeter, PhaseClock, Progress};
use crate::stonewall::{agree, Check, Round, Wall, WallSummary};

/// What the walled phase did.
pub(super) struct Walled {
    pub run: PhaseRun<()>,
    /// The rank's stonewall (None when a rank had ended: no agreement).
    pub wall: Option<Wall>,
    /// Every thread made the agreed count (or all of its share).
    pub reached: bool,
}

/// One stretch of every thread's names, the phase's clock running on.
fn stretch(
    ctx: &mut RunCtx,
    name: &str,
    w: &Work,
    tallies: &[Mutex<Tally>],
    progress: &Progress,
    clock: &mut PhaseClock,
    on_tick: &mut dyn FnMut(&SeriesPoint),
) {
    let jobs: Vec<Box<dyn FnOnce() + Send + '_>> = tallies
        .iter()
        .enumerate()
        .map(|(t, tally)| {
            Box::new(move || {
                let mut tally = tally.lock().unwrap_or_else(|e| e.into_inner());
                work(w, t, progress, &mut tally);
            }) as Box<dyn FnOnce() + Send + '_>
        })
        .collect();
    let mut on_point = |p: SeriesPoint| {
        on_tick(&p);
        ctx.second(name, p);
    };
    supervise(jobs, clock, progress, &mut on_point);
}

/// Each thread's names made so far, and its share of COUNT.
fn counts(tallies: &[Mutex<Tally>]) -> Vec<(u64, u64)> {
    tallies
        .iter()
        .map(|t| {
            let t = t.lock().unwrap_or_else(|e| e.into_inner());
            (t.done, t.cursor.as_ref().map_or(0, |c| c.mine))
        })
        .collect()
}

/// Runs phase `name` with a stonewall `seconds` after its start on every
/// thread of `shared`'s, and the wear-out to the count the ranks of `c`
/// agree on.
pub(super) fn phase(
    ctx: &mut RunCtx,
    c: &dyn Cluster,
    name: &str,
    seconds: u64,
    tallies: &[Mutex<Tally>],
    shared: Work,
    on_tick: &mut dyn FnMut(&SeriesPoint),
) -> Result<Walled, RecordError> {
    // Its count is not known until its wall.
    let index = ctx.start_phase(name, None);
    let progress = Progress::new(tallies.len());
    let mut clock = PhaseClock::start(index);
    let cpu = CpuMeter::start();
    let started = Instant::now();
    let first = Work {
        wall: Check::after(seconds),
        ..shared
    };
    stretch(ctx, name, &first, tallies, &progress, &mut clock, on_tick);
    let at = counts(tallies);
    let at_wall: u64 = at.iter().map(|(n, _)| n).sum();
    let most = at.iter().map(|(n, _)| *n).max().unwrap_or(0);
    // The agreement, on this (the main) thread: MPI is funneled.
    let agreed = agree(c, most);
    let wall_s = started.elapsed().as_secs_f64();
    if let Some(a) = agreed {
        let rest = Work {
            wall: Check::NEVER,
            upto: a,
            ..shared
        };
        stretch(ctx, name, &rest, tallies, &progress, &mut clock, on_tick);
    }
    clock.stop();
    let (usr, sys) = cpu.read();
    if let Some(p) = clock.finish(progress.total()) {
        on_tick(&p);
        ctx.second(name, p);
    }
    ctx.end_phase(index, name)?;
    let end = counts(tallies);
    let at_end: u64 = end.iter().map(|(n, _)| n).sum();
    let reached = agreed.is_some_and(|a| end.iter().all(|(n, mine)| *n == a.min(*mine)));
    Ok(Walled {
        run: PhaseRun {
            results: Vec::new(),
            index,
            elapsed_s: clock.elapsed().as_secs_f64(),
            usr_cpu_s: usr,
            sys_cpu_s: sys,
        },
        wall: agreed.map(|agreed| Wall {
            at_wall,
            agreed,
            wall_s,
            at_end,
        }),
        reached,
    })
}

/// How the phase ended.
pub(super) struct Ended {
    pub run: PhaseRun<()>,
    /// With a stonewall, every rank's on rank 0.
    pub walls: Option<Vec<WallSummary>>,
    /// With a stonewall, every thread reached the agreed count.
    pub reached: bool,
}

/// The phase, with a stonewall when the options ask for one: its run,
/// with a stonewall every rank's on rank 0 (a collective: every rank
/// asks), and whether every thread reached the agreed count.
pub(super) fn either(
    ctx: &mut RunCtx,
    c: &dyn Cluster,
    name: &str,
    tallies: &[Mutex<Tally>],
    shared: Work,
    on_tick: &mut dyn FnMut(&SeriesPoint),
) -> Result<Ended, RecordError> {
    let Some(seconds) = shared.o.stonewall else {
        // COUNT names, unless -t's time ends the phase.
        let total = shared.deadline.is_none().then_some(shared.o.count);
        let p = ctx.phase_ticking(
            name,
            total,
            tallies.len(),
            |t, progress| {
                let mut tally = tallies[t].lock().unwrap_or_else(|e| e.into_inner());
                work(&shared, t, progress, &mut tally);
            },
            on_tick,
        )?;
        return Ok(Ended {
            run: p,
            walls: None,
            reached: false,
        });
    };
    let w = phase(ctx, c, name, seconds, tallies, shared, on_tick)?;
    let mine: Vec<Round> = w
        .wall
        .map(|wall| Round {
            wall,
            round_s: w.run.elapsed_s,
        })
        .into_iter()
        .collect();
    let walls = crate::stonewall::summaries(c, &mine);
    Ok(Ended {
        run: w.run,
        walls,
        reached: w.reached,
    })
}
