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

mod calls;
pub mod cli;
pub mod create;
mod create_phase;
pub mod names;
pub mod options;
pub mod output;
pub mod plugin;
pub mod tree;
mod walled;

use std::fs::OpenOptions;
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use fslab_model::{LatencyHistogram, LoopRow, PhaseResult};
use rustix::io::Errno;
use serde::Serialize;

pub use options::{DirPolicy, FsMarkOptions, Phase, RawOptions, SyncMethod};

use crate::common::{Begun, Outcome, RunCtx, WithOutcome};
use crate::measure::{supervise, CpuMeter, PhaseClock, Progress};
use crate::plugin::Start;
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
pub fn loop_metrics(loops: &[LoopRow], opts: &FsMarkOptions) -> Vec<fslab_model::Metric> {
    use fslab_model::{Better, Metric, Unit};
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
        // A stonewall's agreed count is the run's, not the options'.
        let fixed = !opts.fill
            && opts.stonewall.is_none()
            && loops.len() as u64 == opts.loops
            && loops.iter().all(|l| l.complete);
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

/// Runs fs_mark with `opts` as `start` gives it: its command line is
/// echoed in the header and recorded; on one rank of its cluster (its
/// stonewall's agreement and summary; [`fslab_cluster::Solo`] in one
/// process).
pub fn run(opts: &FsMarkOptions, start: Start<'_, '_>) -> crate::Result<FsMarkReport> {
    let log = prepare(opts)?;
    let Begun {
        mut ctx,
        out,
        argv,
        cluster,
    } = start.begin("fsmark", &opts.dirs[0], opts)?;
    let mut sinks = Sinks { out, log };

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
        let index = ctx.start_phase(phase.name(), phase_total(opts, *phase, &loops));
        let ok = match phase {
            Phase::Create => {
                create_phase::create_phase(opts, cluster, index, &mut sinks, &mut ctx, &mut loops)?
            }
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

/// The files phase `phase` will make or walk, when known: each loop's
/// files of every thread, unless -F fills the filesystem or a stonewall
/// ends the loops; the stat and unlink walks, the files this run's
/// create phase made and kept.
fn phase_total(opts: &FsMarkOptions, phase: Phase, loops: &[LoopRow]) -> Option<u64> {
    match phase {
        Phase::Create if opts.fill || opts.stonewall.is_some() => None,
        Phase::Create => Some(opts.loops * opts.files * u64::from(opts.threads)),
        _ if loops.is_empty() || !opts.keep => None,
        _ => Some(loops.iter().map(|l| l.files).sum()),
    }
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
    ctx.record_metrics(vec![fslab_model::Metric::new(
        "fsmark",
        Some(phase_name),
        calls::ENOMEM_RETRIES,
        enomem_retries as f64,
        fslab_model::Unit::Count,
        fslab_model::Better::Lower,
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
            stonewall: None,
            seed: None,
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
