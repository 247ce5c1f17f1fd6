//! What every workload shares: the options `fslab run` passes to a
//! workload it runs in a cell, the callbacks into a run, and [`RunCtx`],
//! which runs a phase's threads while sampling progress once a second and
//! recording everything.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use clap::Args;
use fslab_model::protocol::{DropCaches, Harness};
use fslab_model::{
    LatencyHistogram, LatencySummary, Monitor, PhaseResult, ProbeNote, RecordError, Recorder,
    RunInfo, RunStatus, SeriesPoint, TargetInfo,
};
use serde::Serialize;

use crate::measure::{supervise, CpuMeter, PhaseClock, Progress};
use crate::plugin::Start;

mod held;
use held::Held;

/// Options every workload command takes, as a person types them. What runs
/// around the workload reads them through the [`Harness`] they make
/// ([`CommonArgs::harness`]); `fslab run` makes its children's harness
/// itself and hands it over beside the job ([`crate::ChildSpec`]).
#[derive(Debug, Clone, Args, Serialize, serde::Deserialize)]
pub struct CommonArgs {
    /// Print a JSON report on stdout instead of the tool's text
    #[arg(long)]
    pub json: bool,
    /// Also write the run's document to FILE once it is recorded (CSV when FILE ends in
    /// .csv, else JSON, as `fslab results export` writes it); the text stays on stdout
    #[arg(long, value_name = "FILE")]
    #[serde(default)]
    pub output: Option<std::path::PathBuf>,
    /// Instruments to record: default (all but perf), all, none, or a list such as cpu,disk,mem,blockio,frag,journal,writeback,stacks,perf (-NAME removes one)
    #[arg(long, value_name = "LIST", default_value = "default")]
    pub probes: String,
    /// Sync and drop the page cache, dentries and inodes before each phase (needs root)
    #[arg(long = "drop-caches")]
    pub drop_caches: bool,
    /// Sync and drop the caches once, before the run, not between its phases (as seed 003's script: once per filesystem) (needs root)
    #[arg(long = "drop-caches-once", conflicts_with = "drop_caches")]
    pub drop_caches_once: bool,
}

impl CommonArgs {
    /// The harness of a run a person started with these options and
    /// `command_line` (recorded with the run).
    pub fn harness(&self, command_line: Vec<String>) -> Harness {
        Harness {
            json: self.json,
            output: self.output.clone(),
            probes: self.probes.clone(),
            drop_caches: if self.drop_caches {
                DropCaches::EachPhase
            } else if self.drop_caches_once {
                DropCaches::Once
            } else {
                DropCaches::Never
            },
            ..Harness::typed(command_line)
        }
    }
}

/// Called with the phase's name before it starts.
pub type PhaseHook<'a> = Box<dyn FnMut(&str) + 'a>;
/// Reads the machine's facts for a run in the directory given.
pub type MachineFactsHook<'a> = Box<dyn FnOnce(&std::path::Path) -> fslab_model::MachineFacts + 'a>;
/// What shows a run's progress as it goes: a line on a terminal
/// ([`crate::live::PhaseBar`]), the messages `fslab run` reads. Called by
/// the phase's coordinator thread, or by the helper beside a rank's one
/// thread ([`RunCtx::beside`], hence `Send`), never from a timed loop.
pub trait PhaseWatch: Send {
    /// Phase `phase` starts; it will make `total` operations, when known
    /// (none for time-limited and stonewalled phases).
    fn start(&mut self, phase: &str, total: Option<u64>);
    /// The point of the second just ended.
    fn second(&mut self, phase: &str, p: &SeriesPoint);
    /// The phase's operations are done.
    fn end(&mut self, phase: &str);
}

/// A phase's watch and seconds while a helper thread takes them beside a
/// rank's one thread ([`RunCtx::beside`]).
pub struct Beside<'n, 'h> {
    phase: &'n str,
    watch: Option<Box<dyn PhaseWatch + 'h>>,
    points: Vec<SeriesPoint>,
}

impl Beside<'_, '_> {
    /// The second just ended: shown now, stored later.
    pub fn second(&mut self, p: SeriesPoint) {
        if let Some(w) = self.watch.as_mut() {
            w.second(self.phase, &p);
        }
        self.points.push(p);
    }
}

/// Callbacks into a run: before each phase (the lab drops caches there),
/// what shows its progress, when the run has its id, and the probes
/// watching it.
#[derive(Default)]
pub struct Hooks<'a> {
    pub before_phase: Option<PhaseHook<'a>>,
    pub watch: Option<Box<dyn PhaseWatch + 'a>>,
    pub run_started: Option<Box<dyn FnMut(i64) + 'a>>,
    /// The machine's facts for a run in this directory (the runtime reads
    /// them where the probes read the machine), recorded with the run.
    pub machine_facts: Option<MachineFactsHook<'a>>,
    pub monitor: Option<&'a mut dyn Monitor>,
}

/// The latency summary of one call in one phase.
#[derive(Debug, Clone, Serialize)]
pub struct LatencyEntry {
    pub phase: String,
    pub op: String,
    #[serde(flatten)]
    pub summary: LatencySummary,
}

/// What any workload's `--json` report has, and how the command ends.
/// Serializable behind a `Box<dyn Report>` (erased-serde).
pub trait Report: erased_serde::Serialize {
    fn run_id(&self) -> i64;
    fn status(&self) -> RunStatus;
    fn error(&self) -> Option<&str>;
    /// Remarks that are not errors.
    fn notes(&self) -> &[String];
    /// The phases as recorded.
    fn phases(&self) -> &[PhaseResult];
    /// The tool's own numbers as recorded.
    fn metrics(&self) -> &[fslab_model::Metric];
}

erased_serde::serialize_trait_object!(Report);

/// The generic parts of a run's report.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Outcome {
    pub run_id: i64,
    pub status: RunStatus,
    pub error: Option<String>,
    pub notes: Vec<String>,
    pub target: TargetInfo,
    pub phases: Vec<PhaseResult>,
    pub latency: Vec<LatencyEntry>,
    pub series: Vec<SeriesPoint>,
    pub probes: Vec<ProbeNote>,
    /// The tool's own numbers, as it printed them.
    pub metrics: Vec<fslab_model::Metric>,
}

/// A run in progress: records as it goes.
pub struct RunCtx<'r, 'h> {
    pub rec: &'r mut dyn Recorder,
    pub hooks: &'r mut Hooks<'h>,
    pub stop: &'r AtomicBool,
    pub out: Outcome,
    next_phase: u32,
    /// The first store error of the running phase's seconds (returned when
    /// the phase ends).
    store_err: Option<RecordError>,
    /// Records kept back while held ([`RunCtx::hold`]).
    held: Option<Vec<Held>>,
}

/// How a phase went, beside what its threads returned.
pub struct PhaseRun<T> {
    /// One result per thread (None if the thread panicked).
    pub results: Vec<Option<T>>,
    pub index: u32,
    pub elapsed_s: f64,
    pub usr_cpu_s: f64,
    pub sys_cpu_s: f64,
}

/// A run just begun ([`Start::begin`]): the run in progress, and what its
/// start gave it besides: where its text goes, its command line (fs_mark
/// and mdtest print it) and the MPI ranks it is one of.
pub struct Begun<'a, 'h> {
    pub ctx: RunCtx<'a, 'h>,
    pub out: &'a mut dyn std::io::Write,
    pub argv: &'a [String],
    pub cluster: &'a dyn fslab_cluster::Cluster,
}

impl<'a, 'h> Start<'a, 'h> {
    /// Records the start of the run of `workload` working in `dir`, with
    /// `params` (its validated options) kept beside it; what a workload's
    /// run does once its options are checked and before its first phase.
    pub fn begin(
        self,
        workload: &str,
        dir: &std::path::Path,
        params: &impl Serialize,
    ) -> Result<Begun<'a, 'h>, RecordError> {
        crate::measure::start_timebase();
        let Start {
            argv,
            stop,
            out,
            rec,
            hooks,
            cluster,
        } = self;
        let target = fslab_model::TargetInfo::of(dir);
        let (kernel, hostname) = fslab_model::host_facts();
        let info = RunInfo {
            workload: workload.into(),
            command_line: argv.to_vec(),
            fslab_version: env!("CARGO_PKG_VERSION").into(),
            kernel,
            hostname,
            started_at: fslab_model::time::now(),
            target: target.clone(),
            params: serde_json::to_value(params).unwrap_or_default(),
        };
        let run_id = rec.begin_run(&info)?;
        // The machine's facts (the hook knows where to look).
        if let Some(facts) = hooks.machine_facts.take() {
            rec.record_facts(run_id, &facts(dir))?;
        }
        if let Some(f) = hooks.run_started.as_mut() {
            f(run_id);
        }
        let ctx = RunCtx {
            rec,
            hooks,
            stop,
            out: Outcome {
                run_id,
                status: RunStatus::Running,
                target,
                ..Outcome::default()
            },
            next_phase: 0,
            store_err: None,
            held: None,
        };
        Ok(Begun {
            ctx,
            out,
            argv,
            cluster,
        })
    }
}

impl<'r, 'h> RunCtx<'r, 'h> {
    pub fn stopping(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// Runs phase `name`, which will make `total` operations when known:
    /// `threads` threads each call `work(thread, &progress)` (which sets its
    /// own progress counter after each operation) while this thread records
    /// one series point and the probes' points each second.
    pub fn phase<T: Send>(
        &mut self,
        name: &str,
        total: Option<u64>,
        threads: usize,
        work: impl Fn(usize, &Progress) -> T + Sync,
    ) -> Result<PhaseRun<T>, RecordError> {
        self.phase_ticking(name, total, threads, work, |_| {})
    }

    /// [`RunCtx::phase`], calling `on_tick` with each second's point (a
    /// workload's own progress lines).
    pub fn phase_ticking<T: Send>(
        &mut self,
        name: &str,
        total: Option<u64>,
        threads: usize,
        work: impl Fn(usize, &Progress) -> T + Sync,
        mut on_tick: impl FnMut(&SeriesPoint),
    ) -> Result<PhaseRun<T>, RecordError> {
        let index = self.start_phase(name, total);
        let progress = Progress::new(threads);
        let mut clock = PhaseClock::start(index);
        let cpu = CpuMeter::start();
        let work = &work;
        let progress_ref = &progress;
        let jobs: Vec<Box<dyn FnOnce() -> T + Send + '_>> = (0..threads)
            .map(|t| Box::new(move || work(t, progress_ref)) as Box<dyn FnOnce() -> T + Send + '_>)
            .collect();
        let mut on_point = |p: SeriesPoint| {
            on_tick(&p);
            self.second(name, p);
        };
        let results = supervise(jobs, &mut clock, &progress, &mut on_point);
        clock.stop();
        let (usr, sys) = cpu.read();
        if let Some(p) = clock.finish(progress.total()) {
            on_point(p);
        }
        self.end_phase(index, name)?;
        Ok(PhaseRun {
            results,
            index,
            elapsed_s: clock.elapsed().as_secs_f64(),
            usr_cpu_s: usr,
            sys_cpu_s: sys,
        })
    }

    /// How a phase's worker tells the instruments the pid of a program it
    /// started (a command workload's), so that they watch it (see
    /// [`fslab_model::Monitor::program_watch`]).
    pub fn program_watch(&mut self) -> Option<fslab_model::ProgramWatch> {
        self.hooks.monitor.as_mut().and_then(|m| m.program_watch())
    }

    /// Starts the next phase, `name`, which will make `total` operations
    /// when known: the before-phase hook (where caches are dropped), then
    /// the probes and the watch are told. Returns the phase's index.
    /// A workload that runs its phase's threads itself (fsmark's loops)
    /// calls this, [`RunCtx::second`] and [`RunCtx::end_phase`]; the others
    /// call [`RunCtx::phase`].
    pub fn start_phase(&mut self, name: &str, total: Option<u64>) -> u32 {
        let index = self.next_phase;
        self.next_phase += 1;
        if let Some(f) = self.hooks.before_phase.as_mut() {
            f(name);
        }
        if let Some(m) = self.hooks.monitor.as_mut() {
            m.phase_start(index, name, Instant::now());
        }
        if let Some(w) = self.hooks.watch.as_mut() {
            w.start(name, total);
        }
        index
    }

    /// One second of phase `name` (the phase clock's point): shown through
    /// the watch, then recorded with the probes' points of that
    /// second. A store error is kept for [`RunCtx::end_phase`].
    pub fn second(&mut self, name: &str, p: SeriesPoint) {
        if let Some(w) = self.hooks.watch.as_mut() {
            w.second(name, &p);
        }
        self.keep_second(p);
    }

    /// The watch, taken for a phase whose seconds a helper thread takes
    /// beside the rank's one thread ([`crate::measure::supervise_here`], the points given
    /// to [`Beside::second`]) while that thread works on: the live line is
    /// drawn each second; the points, and the probes' points of those
    /// seconds, are stored at [`RunCtx::keep_beside`] (the store is the
    /// rank thread's).
    pub fn beside<'n>(&mut self, phase: &'n str) -> Beside<'n, 'h> {
        Beside {
            phase,
            watch: self.hooks.watch.take(),
            points: Vec::new(),
        }
    }

    /// The watch given back and the points of [`RunCtx::beside`] stored.
    pub fn keep_beside(&mut self, b: Beside<'_, 'h>) {
        self.hooks.watch = b.watch;
        for p in b.points {
            self.keep_second(p);
        }
    }

    /// A second's point and the probes' points so far, stored.
    fn keep_second(&mut self, p: SeriesPoint) {
        let probes = self
            .hooks
            .monitor
            .as_mut()
            .map(|m| m.drain())
            .unwrap_or_default();
        if self.store_err.is_none() {
            if let Err(e) = self
                .put(Held::Series(p))
                .and_then(|_| self.put(Held::ProbePoints(probes)))
            {
                self.store_err = Some(e);
            }
        }
        self.out.series.push(p);
    }

    /// The store error of the running phase's seconds so far, if any (a
    /// workload that runs many rounds in a phase stops at the first).
    pub fn store_error(&mut self) -> Result<(), RecordError> {
        self.store_err.take().map_or(Ok(()), Err)
    }

    /// Ends phase `index`: the store error of its seconds, if any; else the
    /// probes' last points, notes and numbers for the phase are recorded.
    pub fn end_phase(&mut self, index: u32, name: &str) -> Result<(), RecordError> {
        if let Some(w) = self.hooks.watch.as_mut() {
            w.end(name);
        }
        self.store_error()?;
        if let Some(m) = self.hooks.monitor.as_mut() {
            let notes = m.phase_end(index, name);
            let (points, probed) = (m.drain(), m.metrics());
            self.put(Held::ProbePoints(points))?;
            for n in notes {
                self.put(Held::Note(n.clone()))?;
                self.out.probes.push(n);
            }
            self.record_metrics(probed)?;
        }
        Ok(())
    }

    /// Records a phase's result.
    pub fn record_phase(&mut self, p: PhaseResult) -> Result<(), RecordError> {
        self.put(Held::Phase(p.clone()))?;
        self.out.phases.push(p);
        Ok(())
    }

    /// Records the tool's own numbers (what its original prints).
    pub fn record_metrics(&mut self, m: Vec<fslab_model::Metric>) -> Result<(), RecordError> {
        self.put(Held::Metrics(m.clone()))?;
        self.out.metrics.extend(m);
        Ok(())
    }

    /// Records a latency distribution (if it has values).
    pub fn record_latency(
        &mut self,
        phase: &str,
        op: &str,
        h: &LatencyHistogram,
    ) -> Result<(), RecordError> {
        if h.count() == 0 {
            return Ok(());
        }
        if self.held.is_some() {
            return self.keep_latency(phase, op, h.clone());
        }
        self.rec.record_latency(self.out.run_id, phase, op, h)?;
        self.out.latency.push(LatencyEntry {
            phase: phase.into(),
            op: op.into(),
            summary: h.summary(),
        });
        Ok(())
    }

    /// [`RunCtx::record_latency`] of a histogram its caller is done with:
    /// while held ([`RunCtx::hold`]) it is kept as it is, neither copied
    /// nor read.
    pub fn keep_latency(
        &mut self,
        phase: &str,
        op: &str,
        hist: LatencyHistogram,
    ) -> Result<(), RecordError> {
        if hist.count() == 0 {
            return Ok(());
        }
        self.put(Held::Latency {
            phase: phase.into(),
            op: op.into(),
            hist,
        })
    }

    /// Ends the run: failed if `error`, interrupted if stopped, else complete.
    pub fn finish(mut self, error: Option<String>) -> Result<Outcome, RecordError> {
        self.release()?;
        if let Some(m) = self.hooks.monitor.as_mut() {
            for n in m.finish() {
                self.rec.record_probe_note(self.out.run_id, &n)?;
                self.out.probes.push(n);
            }
        }
        self.out.status = if error.is_some() {
            RunStatus::Failed
        } else if self.stopping() {
            RunStatus::Interrupted
        } else {
            RunStatus::Complete
        };
        self.out.error = error;
        self.rec
            .finish_run(self.out.run_id, self.out.status, self.out.error.as_deref())?;
        Ok(std::mem::take(&mut self.out))
    }
}

/// A report built around an [`Outcome`]: it is a [`Report`] through it.
pub trait WithOutcome {
    fn outcome(&self) -> &Outcome;
}

impl WithOutcome for Outcome {
    fn outcome(&self) -> &Outcome {
        self
    }
}

impl<T: WithOutcome + Serialize> Report for T {
    fn run_id(&self) -> i64 {
        self.outcome().run_id
    }
    fn status(&self) -> RunStatus {
        self.outcome().status
    }
    fn error(&self) -> Option<&str> {
        self.outcome().error.as_deref()
    }
    fn notes(&self) -> &[String] {
        &self.outcome().notes
    }
    fn phases(&self) -> &[PhaseResult] {
        &self.outcome().phases
    }
    fn metrics(&self) -> &[fslab_model::Metric] {
        &self.outcome().metrics
    }
}

/// A phase result from its measurements.
pub fn phase_result(
    name: &str,
    ops: u64,
    bytes: u64,
    p: &PhaseRun<impl Sized>,
    complete: bool,
) -> PhaseResult {
    PhaseResult {
        usr_cpu_s: p.usr_cpu_s,
        sys_cpu_s: p.sys_cpu_s,
        bytes,
        complete,
        ..PhaseResult::timed(name, ops, p.elapsed_s)
    }
}
