//! fs_mark's create phase: its loops, each loop's row of fs_mark's table,
//! the unlinks after a loop whose files are not kept, and with
//! `--stonewall` each loop's stonewall ([`super::walled`]).

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use fslab_cluster::Cluster;
use fslab_model::{CallStats, LatencyHistogram, LoopRow, PhaseResult};
use rustix::io::Errno;

use super::create::{LoopCtx, LoopOutcome, Worker, CALLS};
use super::{output, walled, FsMarkOptions, Sinks, WorkError};
use crate::common::RunCtx;
use crate::measure::{supervise, CpuMeter, PhaseClock, Progress};
use crate::stonewall::{Check, Round};

/// Free bytes for unprivileged users, and the FSUse% fs_mark prints.
fn space(dir: &Path) -> Option<(u64, u32)> {
    let v = rustix::fs::statvfs(dir).ok()?;
    let free = v.f_bavail.saturating_mul(v.f_frsize);
    let pct = if v.f_blocks == 0 {
        0
    } else {
        (100.0 * (v.f_blocks.saturating_sub(v.f_bavail)) as f64 / v.f_blocks as f64) as u32
    };
    Some((free, pct))
}

/// Unlinks every worker's last loop, the workers side by side: (files,
/// seconds, (user, system) CPU seconds, the first error).
fn unlink_loop(workers: &mut [Worker]) -> (u64, f64, (f64, f64), Option<WorkError>) {
    let cpu = CpuMeter::start();
    let t = Instant::now();
    let results: Vec<Result<u64, WorkError>> = std::thread::scope(|s| {
        let hs: Vec<_> = workers
            .iter_mut()
            .map(|w| s.spawn(move || crate::measure::counted(|| w.unlink_loop())))
            .collect();
        hs.into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    Err(WorkError {
                        op: "worker",
                        path: std::path::PathBuf::new(),
                        errno: Errno::CANCELED,
                        hint: Some("a worker thread panicked: this is a bug in fslab"),
                    })
                })
            })
            .collect()
    });
    let secs = t.elapsed().as_secs_f64();
    let (mut n, mut err) = (0, None);
    for r in results {
        match r {
            Ok(k) => n += k,
            Err(e) => {
                err.get_or_insert(e);
            }
        }
    }
    (n, secs, cpu.read(), err)
}

/// Loop `end.index`'s row of fs_mark's table from its workers' outcomes
/// (adding its files and bytes to the phase's), and its first real error.
/// The loop is complete when every worker made `end.want` files.
fn loop_row(
    opts: &FsMarkOptions,
    end: &LoopEnd,
    outcomes: &[Option<LoopOutcome>],
    workers: &[Worker],
    count: &mut u64,
    bytes: &mut u64,
) -> (LoopRow, Option<WorkError>) {
    let (l, wall) = (end.index, end.wall);
    let mut error: Option<WorkError> = None;
    let mut files = 0u64;
    let mut files_per_sec = 0.0;
    let mut overhead_us = 0u64;
    for (o, w) in outcomes.iter().zip(workers) {
        let Some(o) = o else {
            error.get_or_insert(WorkError {
                op: "worker",
                path: w.dir.clone(),
                errno: Errno::CANCELED,
                hint: Some("a worker thread panicked: this is a bug in fslab"),
            });
            continue;
        };
        files += o.files;
        *bytes += o.bytes;
        let secs = o.loop_time.as_secs_f64();
        if secs > 0.0 {
            files_per_sec += o.files as f64 / secs;
        }
        overhead_us += o.loop_time.saturating_sub(o.call_time).as_micros() as u64;
        if let Some(e) = &o.error {
            // Prefer the first real failure over a secondary one.
            if error
                .as_ref()
                .is_none_or(|cur| cur.is_no_space() && !e.is_no_space())
            {
                error = Some(e.clone());
            }
        }
    }
    *count += files;
    let calls = CALLS
        .iter()
        .enumerate()
        .map(|(c, name)| {
            let per: Vec<CallStats> = workers
                .iter()
                .filter(|w| w.calls[c].loop_count() > 0)
                .map(|w| w.calls[c].loop_stats())
                .collect();
            let stats = CallStats {
                min_us: per.iter().map(|s| s.min_us).min().unwrap_or(0),
                avg_us: per.iter().map(|s| s.avg_us).sum::<u64>() / workers.len() as u64,
                max_us: per.iter().map(|s| s.max_us).max().unwrap_or(0),
            };
            (name.to_string(), stats)
        })
        .collect();
    let complete = error.is_none() && files == end.want * opts.threads as u64;
    let row = LoopRow {
        index: l as u32,
        fs_use_pct: space(&opts.dirs[0]).map(|s| s.1).unwrap_or(0),
        count: *count,
        files,
        file_size: opts.file_size,
        files_per_sec,
        wall_files_per_sec: if wall.as_secs_f64() > 0.0 {
            files as f64 / wall.as_secs_f64()
        } else {
            0.0
        },
        wall_s: wall.as_secs_f64(),
        app_overhead_us: overhead_us,
        calls,
        complete,
    };
    (row, error)
}

/// The create phase's record: its result (time, CPU, bytes; complete),
/// the end-of-loop unlinks as phase `loop_unlink` when files are not kept,
/// and each call's latency.
fn record_create(
    ctx: &mut RunCtx,
    workers: &[Worker],
    (elapsed, usr, sys, bytes, complete): (f64, f64, f64, u64, bool),
    (unlinked, unlink_s, unlink_cpu): (u64, f64, (f64, f64)),
    failed: bool,
) -> crate::Result<()> {
    let ops: u64 = workers.iter().map(|w| w.phase_files).sum();
    ctx.record_phase(PhaseResult {
        usr_cpu_s: usr,
        sys_cpu_s: sys,
        bytes,
        complete,
        ..PhaseResult::timed("create", ops, elapsed)
    })?;
    if unlinked > 0 {
        ctx.record_phase(PhaseResult {
            usr_cpu_s: unlink_cpu.0,
            sys_cpu_s: unlink_cpu.1,
            complete: !failed,
            ..PhaseResult::timed("loop_unlink", unlinked, unlink_s)
        })?;
    }
    for (c, name) in CALLS.iter().enumerate() {
        let mut h = LatencyHistogram::new();
        for w in workers {
            h.merge(&w.calls[c].phase);
        }
        ctx.record_latency("create", name, &h)?;
    }
    Ok(())
}

/// fs_mark's check before each loop: a directory without room for this
/// loop's data gives the message it prints.
fn out_of_space(opts: &FsMarkOptions, threads_per_dir: u64) -> Option<String> {
    let need = opts
        .file_size
        .saturating_mul(opts.files)
        .saturating_mul(threads_per_dir);
    let dir = opts
        .dirs
        .iter()
        .find(|d| space(d).is_some_and(|(free, _)| free < need))?;
    Some(format!(
        "Insufficient free space in {} to create {} new files, exiting",
        dir.display(),
        opts.files
    ))
}

/// The create phase's running totals.
#[derive(Default)]
struct Totals {
    count: u64,
    bytes: u64,
    failed: bool,
    cut_short: bool,
    /// The loops' own time (what Files/sec divides by).
    loops_s: f64,
    /// The unlinks after each loop when files are not kept, which fs_mark
    /// leaves out of the loops' time: files, seconds, (user, system) CPU.
    unlinked: u64,
    unlink_s: f64,
    unlink_cpu: (f64, f64),
    create_enomem: u64,
    /// Each loop's stonewall on this rank (with --stonewall).
    rounds: Vec<Round>,
}

/// A loop that has ended: its index, time, and the files each worker was
/// to make (-n; the agreed count with a stonewall).
struct LoopEnd {
    index: u64,
    wall: Duration,
    want: u64,
}

/// fs_mark's loops on this rank of `cluster`. Returns false when the run
/// failed.
pub(super) fn create_phase(
    opts: &FsMarkOptions,
    cluster: &dyn Cluster,
    phase_index: u32,
    sinks: &mut Sinks,
    ctx: &mut RunCtx,
    loops: &mut Vec<LoopRow>,
) -> crate::Result<bool> {
    let stop = ctx.stop;
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0x5eed);
    let ndirs = opts.dirs.len();
    let mut workers: Vec<Worker> = (0..opts.threads as usize)
        .map(|i| {
            Worker::new(
                i,
                opts.dirs[i % ndirs].clone(),
                opts,
                seed,
                cluster.rank() as u32,
            )
        })
        .collect();
    let threads_per_dir = opts.threads as u64 / ndirs as u64;
    let progress = Progress::new(workers.len());
    let mut clock = PhaseClock::start(phase_index);
    let cpu = CpuMeter::start();
    let mut t = Totals::default();
    let mut l = 0u64;
    let mut ended = false;
    loop {
        let more = !ended && (opts.fill || l < opts.loops) && !stop.load(Ordering::Relaxed);
        // fs_mark checks before every loop that this loop's data fits.
        let full = if more {
            out_of_space(opts, threads_per_dir)
        } else {
            None
        };
        let go = more && full.is_none();
        // With a stonewall the ranks decide together (see `walled`).
        if opts.stonewall.is_some() && !walled::all_go_on(cluster, go) && go {
            t.cut_short = true;
            ctx.out.notes.push(format!(
                "another rank ended the create phase before loop {l}"
            ));
            break;
        }
        if let Some(msg) = full {
            sinks.both(&format!("{msg}\n"), &format!("{msg}\n"));
            if opts.fill {
                ctx.out.notes.push(format!("filesystem full: {msg}"));
            } else {
                ctx.out.error = Some(msg);
                t.failed = true;
            }
            break;
        }
        if !more {
            break;
        }
        let abort = AtomicBool::new(false);
        let in_loop = LoopCtx {
            opts,
            stop,
            abort: &abort,
            progress: &progress,
            wall: Check::NEVER,
            upto: opts.files,
        };
        let loop_start = Instant::now();
        let (outcomes, wall) =
            run_workers(&mut workers, &in_loop, cluster, &mut clock, &progress, ctx);
        let end = LoopEnd {
            index: l,
            wall: loop_start.elapsed(),
            want: wall.map_or(opts.files, |w| w.agreed.min(opts.files)),
        };
        if let Some(wall) = wall {
            t.rounds.push(Round {
                wall,
                round_s: end.wall.as_secs_f64(),
            });
        }
        ctx.store_error()?;
        ended = !end_of_loop(
            opts,
            &end,
            &outcomes,
            &mut workers,
            sinks,
            ctx,
            &mut t,
            loops,
        )?;
        l += 1;
    }
    clock.stop();
    let (usr, sys) = cpu.read();
    let (usr, sys) = (usr - t.unlink_cpu.0, sys - t.unlink_cpu.1);
    if let Some(p) = clock.finish(progress.total()) {
        ctx.second("create", p);
    }
    if opts.stonewall.is_some() {
        // Every rank's stonewalls, on rank 0 (a collective: every rank asks).
        if let Some(walls) = crate::stonewall::summaries(cluster, &t.rounds) {
            for w in &walls {
                let line = format!("{}\n", w.line_for("loop", "thread"));
                sinks.both(&line, &line);
            }
            ctx.record_metrics(crate::stonewall::metrics("fsmark", "create", &walls))?;
        }
    }
    let complete = !t.cut_short && !t.failed && !stop.load(Ordering::Relaxed);
    ctx.record_metrics(vec![fslab_model::Metric::new(
        "fsmark",
        Some("create"),
        super::calls::ENOMEM_RETRIES,
        t.create_enomem as f64,
        fslab_model::Unit::Count,
        fslab_model::Better::Lower,
    )])?;
    record_create(
        ctx,
        &workers,
        (t.loops_s, usr, sys, t.bytes, complete),
        (t.unlinked, t.unlink_s, t.unlink_cpu),
        t.failed,
    )?;
    Ok(!t.failed)
}

/// One loop of every worker (with --stonewall, its stretches and the
/// agreement between them): each worker's outcome and the rank's stonewall.
fn run_workers(
    workers: &mut [Worker],
    in_loop: &LoopCtx,
    cluster: &dyn Cluster,
    clock: &mut PhaseClock,
    progress: &Progress,
    ctx: &mut RunCtx,
) -> (Vec<Option<LoopOutcome>>, Option<crate::stonewall::Wall>) {
    let mut on_point = |p| ctx.second("create", p);
    if let Some(s) = in_loop.opts.stonewall {
        return walled::one_loop(workers, in_loop, s, cluster, clock, progress, &mut on_point);
    }
    let jobs: Vec<Box<dyn FnOnce() -> LoopOutcome + Send + '_>> = workers
        .iter_mut()
        .map(|w| {
            Box::new(move || w.run_loop(in_loop)) as Box<dyn FnOnce() -> LoopOutcome + Send + '_>
        })
        .collect();
    (supervise(jobs, clock, progress, &mut on_point), None)
}

/// A loop's end: its row printed and recorded, its files unlinked when
/// they are not kept. Returns false when the phase is to end.
#[allow(clippy::too_many_arguments)]
fn end_of_loop(
    opts: &FsMarkOptions,
    end: &LoopEnd,
    outcomes: &[Option<LoopOutcome>],
    workers: &mut [Worker],
    sinks: &mut Sinks,
    ctx: &mut RunCtx,
    t: &mut Totals,
    loops: &mut Vec<LoopRow>,
) -> crate::Result<bool> {
    t.create_enomem += outcomes
        .iter()
        .flatten()
        .map(|o| o.enomem_retries)
        .sum::<u64>();
    let (row, mut error) = loop_row(opts, end, outcomes, workers, &mut t.count, &mut t.bytes);
    let complete = row.complete;
    let line = output::row(&row, opts.verbose);
    sinks.both(&line, &line);
    ctx.record_metrics(row.metrics("fsmark"))?;
    loops.push(row);
    t.loops_s += end.wall.as_secs_f64();
    if !opts.keep {
        let (n, secs, cpu, e) = unlink_loop(workers);
        t.unlinked += n;
        t.unlink_s += secs;
        t.unlink_cpu = (t.unlink_cpu.0 + cpu.0, t.unlink_cpu.1 + cpu.1);
        if error.is_none() {
            error = e;
        }
    }
    if let Some(e) = error {
        t.cut_short = true;
        if e.is_no_space() && opts.fill {
            ctx.out.notes.push(format!("filesystem full: {e}"));
        } else {
            ctx.out.error = Some(e.to_string());
            t.failed = true;
        }
        return Ok(false);
    }
    if !complete {
        t.cut_short = true;
    }
    Ok(true)
}
