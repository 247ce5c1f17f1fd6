//! `fslab fsmark`: fs_mark 3.3 re-implemented, with seed 001's stat and
//! unlink phases, per-call latency histograms and a per-second series.
//!
//! The flow of a run ([`run`]): validate options (see [`options`]), print
//! fs_mark's header, run each phase with one worker thread per fs_mark
//! thread while the calling thread samples progress once a second, then
//! print and record the results. The run, its phases, their seconds and
//! the probes go through [`RunCtx`] as every workload's do; fsmark only
//! runs each phase's threads itself (a create phase is many loops). A worker
//! error, a full filesystem or the stop flag ends the run early; everything
//! measured until then is printed and recorded.

pub mod cli;
pub mod create;
pub mod names;
pub mod options;
pub mod output;
pub mod plugin;
pub mod tree;

use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Instant;

use fslab_record::{CallStats, LatencyHistogram, LoopRow, PhaseResult, Recorder};
use rustix::io::Errno;
use serde::Serialize;

pub use options::{DirPolicy, FsMarkOptions, OptionError, Phase, RawOptions, SyncMethod};

use crate::common::{Hooks, Outcome, RunCtx, WithOutcome};
use crate::measure::{supervise, CpuMeter, PhaseClock, Progress};
use create::{LoopCtx, LoopOutcome, Worker, CALLS};
use tree::{TreeCtx, TreeOp, TreeOutcome};

/// A system call that failed during the run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkError {
    pub op: &'static str,
    pub path: PathBuf,
    pub errno: Errno,
    /// What the user can do about it, when fslab knows.
    pub hint: Option<&'static str>,
}

impl WorkError {
    pub fn new(op: &'static str, path: PathBuf, errno: Errno) -> Self {
        WorkError {
            op,
            path,
            errno,
            hint: None,
        }
    }

    pub fn io(op: &'static str, path: PathBuf, e: std::io::Error) -> Self {
        WorkError::new(op, path, Errno::from_io_error(&e).unwrap_or(Errno::IO))
    }

    /// ENOSPC or EDQUOT: the filesystem (or the quota) is full.
    pub fn is_no_space(&self) -> bool {
        self.errno == Errno::NOSPC || self.errno == Errno::DQUOT
    }
}

impl std::fmt::Display for WorkError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let e = std::io::Error::from_raw_os_error(self.errno.raw_os_error());
        write!(f, "{} {}: {e}", self.op, self.path.display())?;
        if let Some(h) = self.hint {
            write!(f, " ({h})")?;
        }
        Ok(())
    }
}

/// Everything a run measured (what `--json` prints).
#[derive(Debug, Clone, Serialize)]
pub struct FsMarkReport {
    /// What every workload's run has (status, error, notes such as a full
    /// filesystem under -F, target, phases, latency, series, probes, and
    /// fs_mark's numbers, see [`loop_metrics`]).
    #[serde(flatten)]
    pub outcome: Outcome,
    pub options: FsMarkOptions,
    pub loops: Vec<LoopRow>,
}

/// The metric of the files a run created (fs_mark's last Count), as the
/// summary and `compare` name it: `fsmark files created`.
pub const FILES_CREATED: &str = "files created";

/// fs_mark's totals: the files created and the mean of the complete loops'
/// Files/sec (what `stats` makes of the column); each loop's row is
/// recorded as it ends (`LoopRow::metrics`). `files created` is exact by
/// construction (threads x files x loops) when every loop `opts` asked for
/// ran to its end and none filled the disk (`-F`).
pub fn loop_metrics(loops: &[LoopRow], opts: &FsMarkOptions) -> Vec<fslab_record::Metric> {
    use fslab_record::{Better, Metric, Unit};
    let mut v = Vec::new();
    // fs_mark's cumulative Count at its last loop: the files the run
    // created (what seed 000's extents per file are counted against).
    if let Some(last) = loops.last() {
        let created = Metric::new(
            "fsmark",
            None,
            FILES_CREATED,
            last.count as f64,
            Unit::Count,
            Better::Neither,
        );
        let fixed =
            !opts.fill && loops.len() as u64 == opts.loops && loops.iter().all(|l| l.complete);
        v.push(if fixed { created.exact() } else { created });
    }
    let done: Vec<f64> = loops
        .iter()
        .filter(|l| l.complete)
        .map(|l| l.files_per_sec)
        .collect();
    if !done.is_empty() {
        let mean = done.iter().sum::<f64>() / done.len() as f64;
        v.push(Metric::new(
            "fsmark",
            None,
            "Files/sec (mean of loops)",
            mean,
            Unit::FilesPerSec,
            Better::Higher,
        ));
    }
    v
}

/// Where the run's text goes: stdout (or nothing with --json) and the log file.
struct Sinks<'a> {
    out: &'a mut dyn Write,
    log: std::fs::File,
}

impl Sinks<'_> {
    fn both(&mut self, stdout_text: &str, log_text: &str) {
        // Output errors (a closed pipe) must not stop the measurement.
        let _ = self.out.write_all(stdout_text.as_bytes());
        let _ = self.out.flush();
        let _ = self.log.write_all(log_text.as_bytes());
        let _ = self.log.flush();
    }
}

/// Runs fs_mark with `opts`. `argv` is echoed in the header and recorded.
pub fn run(
    opts: &FsMarkOptions,
    argv: &[String],
    stop: &AtomicBool,
    out: &mut dyn Write,
    rec: &mut dyn Recorder,
) -> crate::Result<FsMarkReport> {
    run_with(opts, argv, stop, out, rec, &mut Hooks::default())
}

/// Makes the -d directories and opens the -l log file.
fn prepare(opts: &FsMarkOptions) -> crate::Result<std::fs::File> {
    for d in &opts.dirs {
        match std::fs::create_dir(d) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => {
                return Err(crate::Error::Setup(format!(
                    "-d {}: cannot create directory: {e}",
                    d.display()
                )))
            }
        }
    }
    OpenOptions::new()
        .create(true)
        .append(true)
        .open(&opts.log_file)
        .map_err(|e| {
            crate::Error::Setup(format!(
                "-l {}: cannot open the log file: {e}",
                opts.log_file.display()
            ))
        })
}

/// [`run`] with [`Hooks`].
pub fn run_with(
    opts: &FsMarkOptions,
    argv: &[String],
    stop: &AtomicBool,
    out: &mut dyn Write,
    rec: &mut dyn Recorder,
    hooks: &mut Hooks,
) -> crate::Result<FsMarkReport> {
    let log = prepare(opts)?;
    let mut sinks = Sinks { out, log };
    let params = serde_json::to_value(opts).unwrap_or_default();
    let mut ctx = RunCtx::begin("fsmark", argv, &opts.dirs[0], params, rec, hooks, stop)?;

    let ctime = chrono::Local::now()
        .format("%a %b %e %H:%M:%S %Y")
        .to_string();
    sinks.both(
        &output::header(argv, opts, &ctime, false),
        &output::header(argv, opts, &ctime, true),
    );

    let mut loops = Vec::new();
    let mut failed = false;
    for phase in &opts.phases {
        if ctx.stopping() || failed {
            break;
        }
        let index = ctx.start_phase(phase.name());
        let ok = match phase {
            Phase::Create => create_phase(opts, index, &mut sinks, &mut ctx, &mut loops)?,
            Phase::Stat => tree_phase(opts, index, TreeOp::Stat, &mut ctx)?,
            Phase::Unlink => tree_phase(opts, index, TreeOp::Unlink, &mut ctx)?,
        };
        failed = !ok;
        ctx.end_phase(index, phase.name())?;
    }
    if opts.phases.iter().any(|p| *p != Phase::Create) && !ctx.out.phases.is_empty() {
        let text = output::phase_summary(&ctx.out.phases);
        sinks.both(&text, &text);
    }
    ctx.record_metrics(loop_metrics(&loops, opts))?;
    // A run that failed has said why (a full filesystem before a loop, a
    // worker's call); one cut short by the stop flag ends interrupted.
    let error = ctx.out.error.take();
    Ok(FsMarkReport {
        outcome: ctx.finish(error)?,
        options: opts.clone(),
        loops,
    })
}

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

/// fs_mark's loops. Returns false when the run failed.
/// Loop `l`'s row of fs_mark's table from its workers' outcomes (adding
/// its files and bytes to the phase's), and its first real error.
fn loop_row(
    opts: &FsMarkOptions,
    l: u64,
    outcomes: &[Option<LoopOutcome>],
    workers: &[Worker],
    wall: std::time::Duration,
    count: &mut u64,
    bytes: &mut u64,
) -> (LoopRow, Option<WorkError>) {
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
    let complete = error.is_none() && files == opts.files * opts.threads as u64;
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

fn create_phase(
    opts: &FsMarkOptions,
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
        .map(|i| Worker::new(i, opts.dirs[i % ndirs].clone(), opts, seed))
        .collect();
    let threads_per_dir = opts.threads as u64 / ndirs as u64;
    let progress = Progress::new(workers.len());
    let mut clock = PhaseClock::start(phase_index);
    let cpu = CpuMeter::start();
    let mut count = 0u64;
    let mut bytes = 0u64;
    let mut failed = false;
    let mut cut_short = false;
    // The loops' own time (what Files/sec divides by), and the unlinks after
    // each loop when files are not kept, which fs_mark leaves out of it.
    let mut loops_s = 0.0;
    let (mut unlinked, mut unlink_s, mut unlink_cpu) = (0u64, 0.0, (0.0, 0.0));

    let mut l = 0u64;
    let mut create_enomem = 0u64;
    while (opts.fill || l < opts.loops) && !stop.load(Ordering::Relaxed) {
        // fs_mark checks before every loop that this loop's data fits.
        if let Some(msg) = out_of_space(opts, threads_per_dir) {
            sinks.both(&format!("{msg}\n"), &format!("{msg}\n"));
            if opts.fill {
                ctx.out.notes.push(format!("filesystem full: {msg}"));
            } else {
                ctx.out.error = Some(msg);
                failed = true;
            }
            break;
        }
        let abort = AtomicBool::new(false);
        let in_loop = LoopCtx {
            opts,
            stop,
            abort: &abort,
            progress: &progress,
        };
        let loop_start = Instant::now();
        let jobs: Vec<Box<dyn FnOnce() -> LoopOutcome + Send + '_>> = workers
            .iter_mut()
            .map(|w| {
                let in_loop = &in_loop;
                Box::new(move || w.run_loop(in_loop))
                    as Box<dyn FnOnce() -> LoopOutcome + Send + '_>
            })
            .collect();
        let outcomes = supervise(jobs, &mut clock, &progress, &mut |p| {
            ctx.second("create", p);
        });
        let wall = loop_start.elapsed();
        ctx.store_error()?;

        create_enomem += outcomes
            .iter()
            .flatten()
            .map(|o| o.enomem_retries)
            .sum::<u64>();
        let (row, mut error) = loop_row(opts, l, &outcomes, &workers, wall, &mut count, &mut bytes);
        let complete = row.complete;
        let line = output::row(&row, opts.verbose);
        sinks.both(&line, &line);
        ctx.record_metrics(row.metrics("fsmark"))?;
        loops.push(row);
        l += 1;
        loops_s += wall.as_secs_f64();
        if !opts.keep {
            let (n, secs, cpu, e) = unlink_loop(&mut workers);
            unlinked += n;
            unlink_s += secs;
            unlink_cpu = (unlink_cpu.0 + cpu.0, unlink_cpu.1 + cpu.1);
            if error.is_none() {
                error = e;
            }
        }

        if let Some(e) = error {
            cut_short = true;
            if e.is_no_space() && opts.fill {
                ctx.out.notes.push(format!("filesystem full: {e}"));
            } else {
                ctx.out.error = Some(e.to_string());
                failed = true;
            }
            break;
        }
        if !complete {
            cut_short = true;
        }
    }
    clock.stop();
    let (usr, sys) = cpu.read();
    let (usr, sys) = (usr - unlink_cpu.0, sys - unlink_cpu.1);
    let elapsed = loops_s;
    if let Some(p) = clock.finish(progress.total()) {
        ctx.second("create", p);
    }
    let (complete, loop_unlink) = (
        !cut_short && !failed && !stop.load(Ordering::Relaxed),
        (unlinked, unlink_s, unlink_cpu),
    );
    ctx.record_metrics(vec![fslab_record::Metric::new(
        "fsmark",
        Some("create"),
        tree::ENOMEM_RETRIES,
        create_enomem as f64,
        fslab_record::Unit::Count,
        fslab_record::Better::Lower,
    )])?;
    record_create(
        ctx,
        &workers,
        (elapsed, usr, sys, bytes, complete),
        loop_unlink,
        failed,
    )?;
    Ok(!failed)
}

/// The stat or unlink phase. Returns false when the run failed.
fn tree_phase(
    opts: &FsMarkOptions,
    phase_index: u32,
    op: TreeOp,
    ctx: &mut RunCtx,
) -> crate::Result<bool> {
    let stop = ctx.stop;
    let phase_name = match op {
        TreeOp::Stat => "stat",
        TreeOp::Unlink => "unlink",
    };
    let units = match tree::plan(&opts.dirs) {
        Ok(u) => u,
        Err(e) => {
            ctx.out.error = Some(e.to_string());
            return Ok(false);
        }
    };
    let threads = opts.threads as usize;
    let progress = Progress::new(threads);
    let mut clock = PhaseClock::start(phase_index);
    let cpu = CpuMeter::start();
    let next = AtomicUsize::new(0);
    let abort = AtomicBool::new(false);
    let in_tree = TreeCtx {
        op,
        units: &units,
        next: &next,
        name_len: opts.name_len,
        rand_len: opts.rand_len,
        stop,
        abort: &abort,
        progress: &progress,
    };
    let jobs: Vec<Box<dyn FnOnce() -> TreeOutcome + Send + '_>> = (0..threads)
        .map(|t| {
            let in_tree = &in_tree;
            Box::new(move || tree::work(in_tree, t)) as Box<dyn FnOnce() -> TreeOutcome + Send + '_>
        })
        .collect();
    let outcomes = supervise(jobs, &mut clock, &progress, &mut |p| {
        ctx.second(phase_name, p);
    });
    let mut hist = LatencyHistogram::new();
    let mut ops = 0;
    let mut error = None;
    let mut enomem_retries = 0;
    for o in &outcomes {
        match o {
            Some(o) => {
                ops += o.files;
                enomem_retries += o.enomem_retries;
                hist.merge(&o.hist);
                if error.is_none() {
                    error = o.error.clone();
                }
            }
            None => {
                error.get_or_insert(WorkError {
                    op: "worker",
                    path: PathBuf::new(),
                    errno: Errno::CANCELED,
                    hint: Some("a worker thread panicked: this is a bug in fslab"),
                });
            }
        }
    }
    let interrupted = stop.load(Ordering::Relaxed);
    if op == TreeOp::Unlink && error.is_none() && !interrupted {
        if let Err(e) = tree::remove_empty_subdirs(&units) {
            error = Some(e);
        }
    }
    clock.stop();
    let (usr, sys) = cpu.read();
    let elapsed = clock.elapsed().as_secs_f64();
    if let Some(p) = clock.finish(progress.total()) {
        ctx.second(phase_name, p);
    }
    ctx.record_phase(PhaseResult {
        usr_cpu_s: usr,
        sys_cpu_s: sys,
        complete: error.is_none() && !interrupted,
        ..PhaseResult::timed(phase_name, ops, elapsed)
    })?;
    ctx.record_latency(phase_name, op.call(), &hist)?;
    ctx.record_metrics(vec![fslab_record::Metric::new(
        "fsmark",
        Some(phase_name),
        tree::ENOMEM_RETRIES,
        enomem_retries as f64,
        fslab_record::Unit::Count,
        fslab_record::Better::Lower,
    )])?;
    if let Some(e) = error {
        ctx.out.error = Some(e.to_string());
        return Ok(false);
    }
    Ok(true)
}

impl WithOutcome for FsMarkReport {
    fn outcome(&self) -> &Outcome {
        &self.outcome
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(loops: i64, fill: bool) -> FsMarkOptions {
        RawOptions {
            dirs: vec!["/x".into()],
            threads: None,
            files: Some(10),
            file_size: None,
            io_size: None,
            sync: None,
            subdirs: None,
            per_subdir: None,
            subdir_secs: None,
            name_len: None,
            rand_len: None,
            loops: Some(loops),
            keep: false,
            fill,
            log_file: None,
            verbose: false,
            phases: None,
        }
        .validate()
        .unwrap()
    }

    fn row(index: u32, complete: bool) -> LoopRow {
        LoopRow {
            index,
            count: 10 * (u64::from(index) + 1),
            files: 10,
            complete,
            ..Default::default()
        }
    }

    /// Whether `files created` is declared exact by construction.
    fn exact(loops: &[LoopRow], o: &FsMarkOptions) -> bool {
        let m = loop_metrics(loops, o);
        let created = m.iter().find(|m| m.name == FILES_CREATED).unwrap();
        created.exact
    }

    #[test]
    fn files_created_is_exact_only_when_the_options_fixed_it() {
        // Every loop asked for ran to its end: threads x files x loops.
        assert!(exact(&[row(0, true), row(1, true)], &opts(2, false)));
        // A loop cut short, or fewer loops than asked: not fixed.
        assert!(!exact(&[row(0, true), row(1, false)], &opts(2, false)));
        assert!(!exact(&[row(0, true)], &opts(2, false)));
        // -F loops until the filesystem is full: its size decides.
        assert!(!exact(&[row(0, true)], &opts(1, true)));
        // No other fs_mark number is declared.
        let m = loop_metrics(&[row(0, true)], &opts(1, false));
        assert_eq!(m.iter().filter(|m| m.exact).count(), 1, "{m:?}");
    }
}
