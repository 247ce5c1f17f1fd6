//! The scheduler: runs every (cell, repetition) of an experiment on a fresh
//! filesystem, records everything, and always tears down what it set up.
//!
//! The workload runs as a child process (`fslab fsmark --json ...`, see
//! [`ProcessExecutor`]): a memory cgroup can then limit exactly the
//! workload, and if the kernel kills it at the limit, this process survives
//! to record why and to clean up. Tests replace the executor and the
//! progress display with fakes.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use fslab_record::protocol::ChildMessage;
use fslab_record::{
    CellInfo, CellRunInfo, ExperimentInfo, ExperimentRecorder, ImageHostFacts, PhaseResult,
    RunStatus,
};

use crate::backend::{setup, DeviceConsent, Versions};
use crate::image_host::{self, HostFs};
use crate::machine::{read_sysctl, write_sysctl, MemCgroup, SysctlLock};
use crate::plan::{missing_tools, mount_options, schedule, workload_argv};
use crate::spec::{Cell, Device, Experiment, ImageHost};
use crate::state::{Journal, Resource};
use crate::summary::{Direction, Sample};

/// Shows the run's progress (a terminal display, or nothing in tests).
pub trait Progress {
    /// Run `k` of `total` starts: repetition `rep` of `cell`.
    fn cell_start(&mut self, k: usize, total: usize, cell: &Cell, rep: u32, reps: u32);
    /// A setup or teardown step.
    fn step(&mut self, what: &str);
    /// The workload's current phase and rate.
    fn rate(&mut self, phase: &str, ops_per_s: f64, total: u64);
    /// The run ended; `message` says how.
    fn cell_end(&mut self, ok: bool, message: &str);
    /// Something about the whole experiment (outside any cell).
    fn note(&mut self, _what: &str) {}
    /// The workload's memory pressure now (None: none, or it is gone).
    fn pressure(&mut self, _now: Option<&str>) {}
}

/// A [`Progress`] that shows nothing.
pub struct NoProgress;

impl Progress for NoProgress {
    fn cell_start(&mut self, _: usize, _: usize, _: &Cell, _: u32, _: u32) {}
    fn step(&mut self, _: &str) {}
    fn rate(&mut self, _: &str, _: f64, _: u64) {}
    fn cell_end(&mut self, _: bool, _: &str) {}
}

/// What one workload run produced.
#[derive(Debug, Clone, Default)]
pub struct WorkloadOutcome {
    pub run_id: Option<i64>,
    pub status: Option<RunStatus>,
    pub error: Option<String>,
    pub phases: Vec<PhaseResult>,
    /// The tool's own numbers.
    pub metrics: Vec<fslab_record::Metric>,
    /// The signal that killed the workload, if one did.
    pub signal: Option<i32>,
    /// What the workload said on stderr (not progress lines).
    pub stderr: String,
    /// What the probes beside the workload recorded, for its run.
    pub probe_points: Vec<fslab_record::ProbePoint>,
    pub probe_notes: Vec<fslab_record::ProbeNote>,
    /// The probes' own metrics (guest against backend IO).
    pub probe_metrics: Vec<fslab_record::Metric>,
    /// Why it was stopped from outside (a second signal, its time limit).
    pub ended_by: Option<crate::deadline::Ending>,
    /// The memory pressure it ran under, if it hit its limit.
    pub pressure: Option<String>,
}

/// The probes `fslab run` runs beside a workload, outside its cgroup: they
/// find the filesystem and its device from `dir`, and watch the workload's
/// process and `memory_cgroup`.
#[derive(Debug, Clone)]
pub struct Watch {
    pub kinds: Vec<fslab_probe::Kind>,
    pub dir: PathBuf,
    /// The user named the probes (so one that does not apply says why).
    pub explicit: bool,
    pub memory_cgroup: Option<fslab_probe::cgroup::MemoryCgroup>,
}

/// Runs a workload command line in a cell.
pub trait Executor {
    /// Runs `argv` in `cgroup`, with the probes of `watch` beside it,
    /// stopping it past `limit`.
    fn run(
        &mut self,
        argv: &[String],
        cgroup: Option<&Path>,
        watch: Option<&Watch>,
        limit: Option<Duration>,
        stop: &AtomicBool,
        progress: &mut dyn Progress,
    ) -> WorkloadOutcome;
}

/// Runs `EXE --db DB ARGV... --json --progress [--cgroup PATH]` as a child,
/// under `mpirun -np RANKS` when `ranks` is more than 1. The child tells how
/// it goes in [`ChildMessage`] lines on its stderr.
pub struct ProcessExecutor {
    pub exe: PathBuf,
    pub db: PathBuf,
    pub ranks: u32,
}

impl ProcessExecutor {
    /// `EXE --db DB ARGV --json --progress --die-with-parent [--cgroup CG]
    /// [--phase-acks]`, under mpirun for several ranks.
    fn command(&self, argv: &[String], cgroup: Option<&Path>, acks: bool) -> Command {
        let mut cmd = match crate::plan::mpirun_prefix(self.ranks) {
            Some(prefix) => {
                let mut c = Command::new(&prefix[0]);
                c.args(&prefix[1..]).arg(&self.exe);
                // mpirun is not fslab: it is told to die with this process
                // here, and its ranks die with it (--die-with-parent).
                fslab_sys::die_with_parent(&mut c);
                c
            }
            None => Command::new(&self.exe),
        };
        let mut args = argv.to_vec();
        args.extend(["--json", "--progress", "--die-with-parent"].map(String::from));
        if let Some(cg) = cgroup {
            args.extend(["--cgroup".into(), cg.display().to_string()]);
        }
        if acks {
            args.push("--phase-acks".into());
        }
        cmd.arg("--db")
            .arg(&self.db)
            .args(crate::plan::child_args(args));
        // The workload journals what it sets up (its tracefs instance) as
        // this run's child, so this run can undo it if the workload is killed.
        cmd.env(
            fslab_record::journal::PARENT_ENV,
            fslab_record::journal::parent_env_value(),
        );
        // A process group of its own: Ctrl-C on the terminal reaches this
        // process alone, which passes one SIGINT on (two would make the
        // workload exit at once instead of finishing its partial loop).
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        // With probes beside it, the workload waits at each phase boundary
        // for this process to answer on its stdin.
        if acks {
            cmd.stdin(Stdio::piped());
        } else {
            cmd.stdin(Stdio::null());
        }
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
        cmd
    }
}

/// Why a workload that sent no end message ended: its signal or status,
/// and the last thing it said.
fn why_it_ended(status: Option<std::process::ExitStatus>, said: &[String]) -> String {
    use std::os::unix::process::ExitStatusExt;
    let why = match (
        status.and_then(|s| s.signal()),
        status.and_then(|s| s.code()),
    ) {
        (Some(sig), _) => format!("the workload was killed by signal {sig}"),
        (None, Some(code)) => format!("the workload exited with status {code}"),
        _ => "the workload ended without a report".into(),
    };
    match said.iter().rev().find(|l| !l.trim().is_empty()) {
        Some(last) => format!("{why}: {last}"),
        None => why,
    }
}

impl Executor for ProcessExecutor {
    fn run(
        &mut self,
        argv: &[String],
        cgroup: Option<&Path>,
        watch: Option<&Watch>,
        limit: Option<Duration>,
        stop: &AtomicBool,
        progress: &mut dyn Progress,
    ) -> WorkloadOutcome {
        let mut out = WorkloadOutcome::default();
        let mut cmd = self.command(argv, cgroup, watch.is_some());
        // The probes start first, in this process: outside the workload's
        // memory cgroup, and ready for its first phase.
        let mut probes = watch.map(|w| {
            fslab_probe::ProbeSet::start(&w.kinds, &w.dir, &fslab_probe::scratch_dir(), w.explicit)
        });
        let said: Vec<String> = probes
            .iter()
            .flat_map(|p| p.problems.iter().map(|e| format!("fslab: {e}")))
            .collect();
        let mut child = match cmd.spawn() {
            Ok(c) => c,
            Err(e) => {
                out.error = Some(format!("cannot start {}: {e}", self.exe.display()));
                return out;
            }
        };
        if let (Some(p), Some(w)) = (probes.as_mut(), watch) {
            p.watch(fslab_probe::Watched {
                pid: child.id(),
                memory_cgroup: w.memory_cgroup.clone(),
            });
        }
        let acks = child.stdin.take();
        let mut stdout = child.stdout.take().expect("piped");
        let stderr = child.stderr.take().expect("piped");
        let reader = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = stdout.read_to_string(&mut s);
            s
        });
        let (tx, rx) = mpsc::channel::<String>();
        let err_reader = std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut side = Beside { probes, acks, said };
        let mut handle = |line: String, out: &mut WorkloadOutcome, progress: &mut dyn Progress| {
            side.handle(line, out, progress);
        };
        let mut guard = crate::deadline::Guard::new(child.id(), limit);
        let mut pressure = cgroup.and_then(crate::pressure::Watcher::new);
        let status = loop {
            match rx.recv_timeout(Duration::from_millis(100)) {
                Ok(line) => handle(line, &mut out, progress),
                Err(mpsc::RecvTimeoutError::Timeout)
                | Err(mpsc::RecvTimeoutError::Disconnected) => {}
            }
            guard.check(stop, crate::signals::hurry());
            if let Some(now) = pressure.as_mut().and_then(crate::pressure::Watcher::poll) {
                progress.pressure(now.map(|p| p.to_string()).as_deref());
            }
            match child.try_wait() {
                Ok(Some(st)) => break Some(st),
                Ok(None) => {}
                Err(_) => break None,
            }
        };
        out.ended_by = guard.ended_by();
        out.pressure = pressure.and_then(|p| p.summary());
        let _ = err_reader.join();
        while let Ok(line) = rx.try_recv() {
            handle(line, &mut out, progress);
        }
        let Beside { probes, said, .. } = side;
        if let Some(mut p) = probes {
            use fslab_record::Monitor;
            out.probe_points.extend(p.drain());
            out.probe_notes.extend(p.finish());
            out.probe_points.extend(p.drain());
            out.probe_metrics.extend(p.metrics());
        }
        out.stderr = said.join("\n");
        // The workload's --json report is for people; its end came as a message.
        let _ = reader.join();
        use std::os::unix::process::ExitStatusExt;
        out.signal = status.and_then(|s| s.signal());
        if out.status.is_none() {
            out.error = Some(why_it_ended(status, &said));
        }
        // What a killed workload could not undo itself.
        for l in crate::state::cleanup_children(
            &crate::state::state_dir(),
            fslab_record::process::ProcessId::current(),
        ) {
            out.stderr
                .push_str(&format!("\nfslab: after the workload: {l}"));
        }
        out
    }
}

/// What `fslab run` keeps beside a running workload: its probes, the pipe
/// it answers phase messages on, and what the workload said.
struct Beside {
    probes: Option<fslab_probe::ProbeSet>,
    acks: Option<std::process::ChildStdin>,
    said: Vec<String>,
}

impl Beside {
    /// One stderr line of the workload: a message, or something it said.
    fn handle(&mut self, line: String, out: &mut WorkloadOutcome, progress: &mut dyn Progress) {
        match ChildMessage::parse(&line) {
            Some(ChildMessage::PhaseStart {
                index,
                phase,
                mono_ns,
            }) => {
                if let Some(p) = self.probes.as_mut() {
                    use fslab_record::Monitor;
                    p.phase_start(index, &phase, fslab_probe::instant_of_mono(mono_ns));
                }
                ack(&mut self.acks);
            }
            Some(ChildMessage::PhaseEnd { index, phase }) => {
                if let Some(p) = self.probes.as_mut() {
                    use fslab_record::Monitor;
                    out.probe_notes.extend(p.phase_end(index, &phase));
                    out.probe_points.extend(p.drain());
                    out.probe_metrics.extend(p.metrics());
                }
                ack(&mut self.acks);
            }
            Some(ChildMessage::Progress {
                phase,
                ops_per_s,
                total,
            }) => progress.rate(&phase, ops_per_s, total),
            Some(ChildMessage::RunStarted { run_id }) => out.run_id = Some(run_id),
            // Under MPI every rank ends with one; rank 0's names the run.
            Some(ChildMessage::Finished {
                run_id,
                status,
                error,
                phases,
                metrics,
            }) if run_id.is_some() || out.status.is_none() => {
                out.run_id = run_id.or(out.run_id);
                out.status = Some(status);
                out.error = error;
                out.phases = phases;
                out.metrics = metrics;
            }
            Some(_) => {}
            None => self.said.push(line),
        }
    }
}

/// Answers a workload's phase message (see `--phase-acks`); a workload that
/// is gone is not waited for.
fn ack(to: &mut Option<std::process::ChildStdin>) {
    use std::io::Write;
    if let Some(w) = to.as_mut() {
        if w.write_all(b"ok\n").and_then(|_| w.flush()).is_err() {
            *to = None;
        }
    }
}

/// How `fslab run` was asked to run.
#[derive(Debug, Clone)]
pub struct RunConfig {
    pub scale: f64,
    pub consent: DeviceConsent,
    /// Where the experiment came from, and its text.
    pub file: String,
    pub text: String,
    pub command_line: Vec<String>,
    /// `--resume`: carry on an earlier run of this experiment.
    pub resume: Option<Resume>,
}

/// What an earlier, interrupted or partly failed run of the experiment
/// already has (`fslab run --resume ID`): its completed repetitions are
/// kept and not run again; the others run and are recorded in the same
/// experiment.
#[derive(Debug, Clone, Default)]
pub struct Resume {
    pub experiment_id: i64,
    /// The completed (cell, repetition) runs, as measured then.
    pub done: Vec<RepOutcome>,
}

/// One repetition of one cell, as it went.
#[derive(Debug, Clone)]
pub struct RepOutcome {
    pub cell: u32,
    pub repetition: u32,
    pub ok: bool,
    pub error: Option<String>,
    pub run_id: Option<i64>,
    pub phases: Vec<PhaseResult>,
    /// The tool's own numbers.
    pub metrics: Vec<fslab_record::Metric>,
    pub unmount_s: Option<f64>,
    pub remount_s: Option<f64>,
    /// The image's extents on the host after the run.
    pub image_extents: Option<u64>,
    /// What the workload printed (its original's tables, in its form).
    pub output: String,
    /// What its probes give the findings (wait stacks, jbd2 commits).
    pub evidence: crate::findings::Evidence,
}

/// The whole run.
#[derive(Debug, Clone)]
pub struct ExperimentOutcome {
    pub experiment_id: i64,
    pub runs: Vec<RepOutcome>,
    pub interrupted: bool,
    /// Problems met while undoing (normally empty).
    pub teardown_problems: Vec<String>,
    /// With `until_resolved`: how many repetitions it took, or what is
    /// still unresolved.
    pub resolution: Option<String>,
    /// The experiment's stated findings, evaluated.
    pub findings: Vec<fslab_record::FindingResult>,
}

impl ExperimentOutcome {
    /// Each cell's last completed repetition's output: (cell, repetition, text).
    pub fn outputs(&self) -> Vec<(u32, u32, &str)> {
        let mut v: Vec<(u32, u32, &str)> = Vec::new();
        for r in self.runs.iter().filter(|r| r.ok && !r.output.is_empty()) {
            match v.iter_mut().find(|x| x.0 == r.cell) {
                Some(x) if x.1 < r.repetition => *x = (r.cell, r.repetition, &r.output),
                Some(_) => {}
                None => v.push((r.cell, r.repetition, &r.output)),
            }
        }
        v.sort_by_key(|x| x.0);
        v
    }

    /// The samples findings read: the summary's and compare's family
    /// (`summary::family`), and each phase's median jbd2 commit logging
    /// time from the journal probe.
    pub fn finding_samples(&self) -> Vec<Sample> {
        let mut v = crate::summary::family(self);
        for r in self.runs.iter().filter(|r| r.ok) {
            for (metric, value) in r.evidence.commit_medians() {
                v.push(Sample {
                    cell: r.cell,
                    repetition: r.repetition,
                    metric,
                    direction: Direction::Time,
                    value,
                    headline: false,
                    exact: false,
                });
            }
        }
        v
    }
}

/// For `until_resolved`: the cells to run once more (the first cell, the
/// baseline, with every cell whose headline comparison with it is
/// unresolved), and what to say about it after `reps` repetitions.
fn resolution(exp: &Experiment, o: &ExperimentOutcome, reps: u32, max: u32) -> (Vec<u32>, String) {
    use fslab_stats::verdict::Verdict;
    // Every metric of every cell is one family, as in the summary and
    // `fslab compare`; this look tests at its sequential level.
    let cells: Vec<(u32, String)> = exp
        .cells
        .iter()
        .map(|c| (c.index, c.label.clone()))
        .collect();
    let samples = crate::summary::family(o);
    let (_, rows) =
        crate::summary::compared(&cells, &samples, crate::summary::policy_at(exp, reps));
    let headline: Vec<&str> = samples
        .iter()
        .filter(|s| s.headline)
        .map(|s| s.metric.as_str())
        .collect();
    let labels: Vec<String> = cells.into_iter().map(|c| c.1).collect();
    let mut open: Vec<u32> = Vec::new();
    let mut unresolved = Vec::new();
    for r in rows
        .iter()
        .filter(|r| r.verdict == Some(Verdict::Unresolved) && headline.contains(&r.metric.as_str()))
    {
        let cell = labels.iter().position(|l| *l == r.group).unwrap_or(0) as u32;
        // More runs cannot settle some (a ratio at the threshold, a
        // baseline of 0): no repetition is spent on those.
        let hopeless = r
            .note
            .as_deref()
            .is_some_and(|n| n.starts_with(fslab_stats::compare::NO_MORE_RUNS));
        if !open.contains(&cell) && !hopeless {
            open.push(cell);
        }
        unresolved.push(format!("{}: {}", r.group, r.metric));
    }
    if unresolved.is_empty() {
        return (
            Vec::new(),
            format!(
                "until resolved: every headline comparison is resolved after {reps} repetitions"
            ),
        );
    }
    let said = format!(
        "until resolved: after {reps} repetitions {} headline comparison(s) unresolved ({}){}",
        unresolved.len(),
        unresolved.join("; "),
        if reps >= max {
            format!("; stopped at the maximum, {max}")
        } else if open.is_empty() {
            format!("; stopped: {}", fslab_stats::compare::NO_MORE_RUNS)
        } else {
            String::new()
        }
    );
    if reps >= max || open.is_empty() {
        return (Vec::new(), said);
    }
    open.sort_unstable();
    let mut more = vec![0];
    more.extend(open.into_iter().filter(|c| *c != 0));
    (more, said)
}

/// How a tool's number compares: rates up are faster, times up slower,
/// anything else more or less.
pub fn direction_of(m: &fslab_record::Metric) -> Direction {
    use fslab_record::Better;
    if m.unit.is_rate() && m.better == Better::Higher {
        Direction::Rate
    } else if m.unit.is_time() && m.better == Better::Lower {
        Direction::Time
    } else {
        Direction::Cost
    }
}

/// Why an experiment cannot start here, found before anything is touched.
#[derive(Debug, thiserror::Error)]
pub enum Preflight {
    /// The experiment asks for what is not there: an image directory that
    /// does not exist, an image its directory's filesystem cannot hold, a
    /// sysctl this kernel does not have. Bad input: the binary exits 2.
    #[error("{0}")]
    Input(String),
    /// This machine or user cannot run it: a missing tool, not root, a
    /// filesystem that cannot be asked its limits.
    #[error("{0}")]
    Machine(String),
}

impl Preflight {
    pub fn is_usage(&self) -> bool {
        matches!(self, Preflight::Input(_))
    }
}

/// Checks what can be checked before anything is touched.
pub fn preflight(exp: &Experiment) -> Result<(), Preflight> {
    preflight_as(exp, rustix::process::geteuid().is_root())
}

/// [`preflight`] as a user who is root or not: the dry run checks
/// everything else as the run (as root) would.
pub fn preflight_as(exp: &Experiment, root: bool) -> Result<(), Preflight> {
    let missing = missing_tools(exp);
    if !missing.is_empty() {
        return Err(Preflight::Machine(missing.join("; ")));
    }
    if !matches!(exp.device, Device::Directory { .. }) && !root {
        return Err(Preflight::Machine(
            "fslab run makes filesystems (loop devices, mkfs, mount): run it as root".into(),
        ));
    }
    if let Device::Image {
        size, dir, host, ..
    } = &exp.device
    {
        if !dir.is_dir() {
            return Err(Preflight::Input(format!(
                "device.image_dir {} does not exist",
                dir.display()
            )));
        }
        crate::safety::writable(dir, root)?;
        if image_host::needed(&exp.device).map_err(Preflight::Machine)? {
            image_host::preflight(dir)?;
        } else if !fslab_lab::image::fits(dir, *size)
            .map_err(|e| Preflight::Machine(e.to_string()))?
        {
            // The host cannot hold a sparse file this large at all.
            let why = fslab_lab::image::too_large(dir, *size);
            return Err(Preflight::Input(match host {
                ImageHost::None => format!("{why} (or set device.image_host = \"auto\")"),
                _ => why,
            }));
        }
    }
    if (exp.machine.memory_limit.is_some()
        || !exp.cells.iter().all(|c| c.sysctl.is_empty())
        || exp.machine.drop_caches
        || exp.machine.drop_caches_once)
        && !root
    {
        return Err(Preflight::Machine(
            "sysctls, drop_caches and memory limits need root".into(),
        ));
    }
    for c in &exp.cells {
        for name in c.sysctl.keys() {
            read_sysctl(name).map_err(|e| Preflight::Input(format!("cell {:?}: {e}", c.label)))?;
        }
    }
    Ok(())
}

fn now() -> String {
    fslab_record::time::now()
}

/// What the scheduler works with: the workload's runner, the store, the
/// display, the stop flag and the journal.
struct RunEnv<'a> {
    exec: &'a mut dyn Executor,
    rec: &'a mut dyn ExperimentRecorder,
    progress: &'a mut dyn Progress,
    stop: &'a AtomicBool,
    journal: &'a mut Journal,
}

/// Runs the experiment. Cells that fail are recorded and the others go on;
/// the stop flag ends the run after tearing down the current cell.
pub fn run(
    exp: &Experiment,
    cfg: &RunConfig,
    exec: &mut dyn Executor,
    rec: &mut dyn ExperimentRecorder,
    progress: &mut dyn Progress,
    stop: &AtomicBool,
    journal: &mut Journal,
) -> Result<ExperimentOutcome, String> {
    let host = match &exp.device {
        Device::Image { dir, .. } if image_host::needed(&exp.device)? => {
            HostFs::make(dir, journal, cfg.consent.keep_images).map_err(|e| e.to_string())?
        }
        _ => {
            let mut env = RunEnv {
                exec,
                rec,
                progress,
                stop,
                journal,
            };
            return run_cells(exp, None, cfg, &mut env);
        }
    };
    progress.note(&host.describe());
    let hosted = host.hosting(exp);
    let facts = host.facts().clone();
    let r = run_cells(
        &hosted,
        Some(&facts),
        cfg,
        &mut RunEnv {
            exec,
            rec,
            progress: &mut *progress,
            stop,
            journal: &mut *journal,
        },
    );
    let torn = host.teardown(journal);
    if cfg.consent.keep_images {
        let img = &facts.image;
        progress.note(&format!(
            "kept the image host {img}: the kept images are inside it (mount -o loop {img} DIR)"
        ));
    }
    match (r, torn) {
        (Ok(mut o), Err(e)) => {
            o.teardown_problems.push(format!("image host: {e}"));
            Ok(o)
        }
        (r, _) => r,
    }
}

fn run_cells(
    exp: &Experiment,
    image_host: Option<&ImageHostFacts>,
    cfg: &RunConfig,
    env: &mut RunEnv,
) -> Result<ExperimentOutcome, String> {
    let exp_id = begin(exp, image_host, cfg, env.rec)?;

    let done = cfg
        .resume
        .as_ref()
        .map(|r| r.done.clone())
        .unwrap_or_default();
    let mut queue: std::collections::VecDeque<(u32, u32)> = schedule(exp)
        .into_iter()
        .filter(|(c, r)| !done.iter().any(|d| d.cell == *c && d.repetition == *r))
        .collect();
    let mut total = queue.len();
    let mut outcome = ExperimentOutcome {
        experiment_id: exp_id,
        runs: done,
        interrupted: false,
        teardown_problems: Vec::new(),
        resolution: None,
        findings: Vec::new(),
    };
    let mut next_rep = exp.repetitions + 1;
    let mut k = 0;
    loop {
        let Some((ci, rep)) = queue.pop_front() else {
            // `until_resolved`: one more repetition of the baseline and of
            // every cell with an unresolved headline comparison, interleaved.
            let Some(max) = exp.until_resolved else { break };
            let (more, said) = resolution(exp, &outcome, next_rep - 1, max);
            outcome.resolution = Some(said);
            if more.is_empty() || next_rep > max || env.stop.load(Ordering::Relaxed) {
                break;
            }
            total += more.len();
            queue.extend(more.into_iter().map(|c| (c, next_rep)));
            next_rep += 1;
            continue;
        };
        let (ci, rep) = (&ci, &rep);
        if env.stop.load(Ordering::Relaxed) {
            outcome.interrupted = true;
            break;
        }
        let cell = &exp.cells[*ci as usize];
        env.progress
            .cell_start(k, total, cell, *rep, exp.repetitions.max(*rep));
        k += 1;
        let mut info = CellRunInfo {
            cell: cell.index,
            repetition: *rep,
            started_at: now(),
            ..Default::default()
        };
        let r = run_cell(
            exp,
            cell,
            *rep,
            cfg,
            env,
            &mut info,
            &mut outcome.teardown_problems,
        );
        let ok = r.error.is_none() && info.status == Some(RunStatus::Complete);
        if info.error.is_none() {
            info.error = r.error.clone();
        }
        if info.status.is_none() {
            info.status = Some(RunStatus::Failed);
        }
        env.rec
            .record_cell_run(exp_id, &info)
            .map_err(|e| format!("results store: {e}"))?;
        let msg = match (&info.error, info.status) {
            (Some(e), _) => e.clone(),
            (None, Some(s)) => s.as_str().to_string(),
            (None, None) => String::new(),
        };
        env.progress.cell_end(ok, &msg);
        outcome.runs.push(RepOutcome {
            cell: cell.index,
            repetition: *rep,
            ok,
            error: info.error.clone(),
            run_id: info.run_id,
            phases: r.phases,
            metrics: r.metrics,
            unmount_s: info.unmount_s,
            image_extents: info.image_extents,
            output: info.output.clone(),
            remount_s: info.remount_s,
            evidence: r.evidence,
        });
        if info.status == Some(RunStatus::Interrupted) || env.stop.load(Ordering::Relaxed) {
            outcome.interrupted = true;
            break;
        }
    }
    finish(exp, exp_id, &mut outcome, env.rec)?;
    Ok(outcome)
}

/// Starts the experiment's record (or reopens a resumed one) and records
/// its cells.
fn begin(
    exp: &Experiment,
    image_host: Option<&ImageHostFacts>,
    cfg: &RunConfig,
    rec: &mut dyn ExperimentRecorder,
) -> Result<i64, String> {
    let (kernel, hostname) = fslab_record::host_facts();
    let exp_id = match &cfg.resume {
        Some(r) => {
            rec.reopen_experiment(r.experiment_id, exp.repetitions)
                .map_err(|e| format!("results store: {e}"))?;
            r.experiment_id
        }
        None => rec
            .begin_experiment(&ExperimentInfo {
                name: exp.name.clone(),
                file: cfg.file.clone(),
                text: cfg.text.clone(),
                scale: cfg.scale,
                repetitions: exp.repetitions,
                command_line: cfg.command_line.clone(),
                fslab_version: env!("CARGO_PKG_VERSION").into(),
                kernel,
                hostname,
                started_at: now(),
            })
            .map_err(|e| format!("results store: {e}"))?,
    };
    let mut versions = Versions::default();
    let placeholder = Path::new("MNT");
    for c in &exp.cells {
        let info = CellInfo {
            index: c.index,
            label: c.label.clone(),
            fs_type: c
                .fs
                .as_ref()
                .map(|f| f.name().to_string())
                .unwrap_or_else(|| "directory".into()),
            mkfs_argv: c
                .fs
                .as_ref()
                .map(|f| fslab_lab::mkfs::mkfs_argv(f, &c.mkfs_options, Path::new("DEVICE")))
                .unwrap_or_default(),
            mkfs_version: c.fs.as_ref().map(|f| versions.of(f)).unwrap_or_default(),
            mount_options: mount_options(c),
            sysctl: c.sysctl.clone(),
            drop_caches: exp.machine.drop_caches,
            memory_limit_bytes: exp.machine.memory_limit,
            workload: exp.workload.kind.name().into(),
            workload_argv: workload_argv(exp, c, placeholder),
            device: {
                let mut d = serde_json::to_value(&exp.device).unwrap_or_default();
                if let (Some(h), Some(m)) = (image_host, d.as_object_mut()) {
                    m.insert(
                        "image_host_fs".into(),
                        serde_json::to_value(h).unwrap_or_default(),
                    );
                }
                d
            },
        };
        rec.record_cell(exp_id, &info)
            .map_err(|e| format!("results store: {e}"))?;
    }
    Ok(exp_id)
}

/// Evaluates the stated findings over every completed run and closes the
/// experiment's record.
fn finish(
    exp: &Experiment,
    exp_id: i64,
    outcome: &mut ExperimentOutcome,
    rec: &mut dyn ExperimentRecorder,
) -> Result<(), String> {
    // The stated findings, over every completed run.
    let labels: Vec<String> = exp.cells.iter().map(|c| c.label.clone()).collect();
    let samples = outcome.finding_samples();
    let evidence: Vec<(u32, u32, &crate::findings::Evidence)> = outcome
        .runs
        .iter()
        .filter(|r| r.ok)
        .map(|r| (r.cell, r.repetition, &r.evidence))
        .collect();
    let runs = crate::findings::Runs {
        labels: &labels,
        samples: &samples,
        evidence: &evidence,
    };
    let results = crate::findings::evaluate_all(&exp.findings, &runs);
    for (seq, r) in results.iter().enumerate() {
        rec.record_finding(exp_id, seq as u32, r)
            .map_err(|e| format!("results store: {e}"))?;
    }
    outcome.findings = results;
    let status = if outcome.interrupted {
        RunStatus::Interrupted
    } else if outcome.runs.iter().all(|r| r.ok) {
        RunStatus::Complete
    } else {
        RunStatus::Failed
    };
    rec.finish_experiment(exp_id, status)
        .map_err(|e| format!("results store: {e}"))?;
    Ok(())
}

/// The machine-wide settings a cell holds while it runs: its sysctls
/// (each locked against other fslab runs, journalled with its original
/// value, then set) and its memory cgroup.
#[derive(Default)]
struct MachineHeld {
    sysctls: Vec<(u64, String, String)>,
    locks: Vec<SysctlLock>,
    cgroup: Option<(MemCgroup, u64)>,
}

impl MachineHeld {
    fn apply(
        &mut self,
        exp: &Experiment,
        cell: &Cell,
        rep: u32,
        env: &mut RunEnv,
        info: &mut CellRunInfo,
    ) -> Result<(), String> {
        let state = env
            .journal
            .path()
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(crate::state::state_dir);
        // In name order, so that two runs never wait for each other.
        for (name, value) in &cell.sysctl {
            let lock = SysctlLock::acquire(&crate::machine::lock_dir(), name, env.stop, &mut |m| {
                env.progress.note(&m);
            })
            .map_err(|e| e.to_string())?;
            self.locks.push(lock);
            if let Some(pid) = crate::state::sysctl_left_by_dead_run(&state, name) {
                return Err(format!(
                    "sysctl {name} was left changed by a killed fslab run (pid {pid}): \
                     run `fslab cleanup` first"
                ));
            }
            let orig = read_sysctl(name).map_err(|e| e.to_string())?;
            info.sysctl_before.insert(name.clone(), orig.clone());
            let id = env
                .journal
                .add(Resource::Sysctl {
                    name: name.clone(),
                    original: orig.clone(),
                })
                .map_err(|e| e.to_string())?;
            self.sysctls.push((id, name.clone(), orig));
            write_sysctl(name, value).map_err(|e| e.to_string())?;
            let now = read_sysctl(name).map_err(|e| e.to_string())?;
            info.sysctl_during.insert(name.clone(), now);
        }
        if let Some(limit) = exp.machine.memory_limit {
            let name = format!("fslab-{}-c{}-r{}", std::process::id(), cell.index, rep);
            let path = MemCgroup::path_for(&name).map_err(|e| e.to_string())?;
            let id = env
                .journal
                .add(Resource::Cgroup { path })
                .map_err(|e| e.to_string())?;
            match MemCgroup::create(&name, limit) {
                Ok(cg) => {
                    info.cgroup = Some(cg.path().display().to_string());
                    self.cgroup = Some((cg, id));
                }
                Err(e) => {
                    env.journal.done(id);
                    return Err(e.to_string());
                }
            }
        }
        Ok(())
    }

    /// Restores the sysctls (last set, first restored), then lets other
    /// runs have them.
    fn restore(mut self, journal: &mut Journal, problems: &mut Vec<String>) {
        for (id, name, orig) in self.sysctls.drain(..).rev() {
            match write_sysctl(&name, &orig) {
                Ok(()) => journal.done(id),
                Err(e) => problems.push(e.to_string()),
            }
        }
        drop(self.locks);
    }
}

impl Watch {
    /// The probes `fslab run` runs beside the workload of `exp` working in
    /// `dir` (None: none, or the workload's MPI ranks run their own).
    fn of(exp: &Experiment, dir: &Path, cgroup: Option<&MemCgroup>) -> Option<Watch> {
        crate::plan::probes_beside(exp)
            .filter(|k| !k.is_empty())
            .map(|kinds| Watch {
                kinds,
                dir: dir.to_path_buf(),
                explicit: exp.workload.probes.is_some(),
                memory_cgroup: cgroup.map(MemCgroup::watched),
            })
    }
}

/// Keeps what the probes beside a workload recorded, with its run.
fn record_probes(
    rec: &mut dyn ExperimentRecorder,
    w: &WorkloadOutcome,
) -> Result<(), fslab_record::RecordError> {
    let Some(id) = w.run_id else {
        return Ok(());
    };
    rec.record_probe_points(id, &w.probe_points)?;
    rec.record_metrics(id, &w.probe_metrics)?;
    w.probe_notes
        .iter()
        .try_for_each(|n| rec.record_probe_note(id, n))
}

/// What the findings read from a workload's probes.
fn evidence_of(w: &WorkloadOutcome) -> crate::findings::Evidence {
    let phases: Vec<String> = w.phases.iter().map(|p| p.phase.clone()).collect();
    crate::findings::Evidence::of(
        &phases,
        w.probe_notes
            .iter()
            .map(|n| (n.phase_index, n.probe.as_str(), n.key.as_str(), &n.value)),
        w.probe_points
            .iter()
            .map(|p| (p.phase_index, p.probe.as_str(), p.metric.as_str(), p.value)),
    )
}

struct CellResult {
    error: Option<String>,
    phases: Vec<PhaseResult>,
    metrics: Vec<fslab_record::Metric>,
    evidence: crate::findings::Evidence,
}

fn run_cell(
    exp: &Experiment,
    cell: &Cell,
    rep: u32,
    cfg: &RunConfig,
    env: &mut RunEnv,
    info: &mut CellRunInfo,
    problems: &mut Vec<String>,
) -> CellResult {
    let mut res = CellResult {
        error: None,
        phases: Vec::new(),
        metrics: Vec::new(),
        evidence: crate::findings::Evidence::default(),
    };
    // Machine settings first, each journalled before it is changed.
    let mut held = MachineHeld::default();
    if let Err(e) = held.apply(exp, cell, rep, env, info) {
        res.error = Some(e);
    }
    let cgroup = held.cgroup.take();

    if res.error.is_none() {
        env.progress.step(match &exp.device {
            Device::Directory { .. } => "making a fresh directory",
            _ => "mkfs and mount",
        });
        match setup(exp, cell, rep, &cfg.consent, env.journal, info) {
            Err(e) => res.error = Some(e.to_string()),
            Ok(prepared) => {
                let mut argv = workload_argv(exp, cell, prepared.workdir());
                let log = env.journal.mount_base().with_file_name(format!(
                    "log-{}-c{}-r{}.txt",
                    std::process::id(),
                    cell.index,
                    rep
                ));
                // The workload's text goes to a file and is stored with the cell.
                argv.push("--text-to".into());
                argv.push(log.display().to_string());
                for d in crate::plan::workload_dirs(exp, prepared.workdir()) {
                    let _ = std::fs::create_dir_all(d);
                }
                if exp.machine.drop_caches {
                    argv.push("--drop-caches".into());
                } else if exp.machine.drop_caches_once {
                    argv.push("--drop-caches-once".into());
                }
                // The workload directories must be on the new filesystem.
                let check = std::fs::create_dir_all(prepared.workdir())
                    .map_err(|e| e.to_string())
                    .and_then(|_| {
                        prepared
                            .verify(prepared.workdir())
                            .map_err(|e| e.to_string())
                    });
                match check {
                    Err(e) => res.error = Some(e),
                    Ok(()) => {
                        env.progress.step("workload");
                        let log_id = match env.journal.add(Resource::File { path: log.clone() }) {
                            Ok(id) => id,
                            Err(e) => {
                                res.error = Some(e.to_string());
                                return res;
                            }
                        };
                        let watch =
                            Watch::of(exp, prepared.workdir(), cgroup.as_ref().map(|c| &c.0));
                        let w = env.exec.run(
                            &argv,
                            cgroup.as_ref().map(|c| c.0.path()),
                            watch.as_ref(),
                            exp.time_limit,
                            env.stop,
                            env.progress,
                        );
                        if let Err(e) = record_probes(env.rec, &w) {
                            problems.push(format!("results store: the probes' records: {e}"));
                        }
                        info.run_id = w.run_id;
                        info.status = w.status;
                        info.output = std::fs::read_to_string(&log).unwrap_or_default();
                        let _ = std::fs::remove_file(&log);
                        env.journal.done(log_id);
                        if let Some((cg, _)) = &cgroup {
                            info.memory_max_usage_bytes = cg.max_usage();
                            info.memory_failcnt = cg.failcnt();
                        }
                        res.error = crate::deadline::cell_error(exp, &w, info, env.rec);
                        res.evidence = evidence_of(&w);
                        res.phases = w.phases;
                        res.metrics = w.metrics;
                        res.metrics.extend(w.probe_metrics);
                        // Measured on the filesystem after the workload (htree levels).
                        let after = prepared.after_workload(exp, cell);
                        if let (Some(id), false) = (w.run_id, after.is_empty()) {
                            if let Err(e) = env.rec.record_metrics(id, &after) {
                                problems.push(format!("results store: {e}"));
                            }
                        }
                        res.metrics.extend(after);
                    }
                }
                // After a second signal: no remount to time, only undoing.
                let torn = if crate::signals::hurry() {
                    env.progress.step("teardown (second signal)");
                    let mut prepared = prepared;
                    prepared.teardown_quietly(env.journal, info)
                } else {
                    env.progress.step("unmount, remount, teardown");
                    prepared.teardown(env.journal, info)
                };
                if let Err(e) = torn {
                    problems.push(e.to_string());
                    res.error.get_or_insert(e.to_string());
                }
            }
        }
    }

    if let Some((cg, id)) = cgroup {
        match cg.remove() {
            Ok(()) => env.journal.done(id),
            Err(e) => problems.push(e.to_string()),
        }
    }
    held.restore(env.journal, problems);
    res
}

#[cfg(test)]
mod tests {
    use super::*;
    use fslab_record::MemRecorder;

    /// Answers every workload with a completed run and notes which
    /// (cell, repetition) it ran, from the directory's `-cC-rR` tag; asks
    /// the scheduler to stop after `stop_after` runs.
    struct FakeExecutor {
        ran: Vec<(u32, u32)>,
        stop_after: Option<usize>,
    }

    impl Executor for FakeExecutor {
        fn run(
            &mut self,
            argv: &[String],
            _cgroup: Option<&Path>,
            _watch: Option<&Watch>,
            _limit: Option<Duration>,
            stop: &AtomicBool,
            _progress: &mut dyn Progress,
        ) -> WorkloadOutcome {
            let tag = argv
                .iter()
                .find_map(|a| a.split_once("-c").map(|(_, t)| t.to_string()))
                .unwrap_or_default();
            let (c, r) = tag.split_once("-r").unwrap_or(("?", "?"));
            let r: String = r.chars().take_while(char::is_ascii_digit).collect();
            self.ran.push((c.parse().unwrap(), r.parse().unwrap()));
            if self.stop_after == Some(self.ran.len()) {
                stop.store(true, Ordering::Relaxed);
            }
            let k = self.ran.len() as f64;
            WorkloadOutcome {
                run_id: Some(self.ran.len() as i64),
                status: Some(RunStatus::Complete),
                phases: vec![PhaseResult {
                    phase: "create".into(),
                    ops: 100,
                    elapsed_s: k,
                    ops_per_s: 100.0 / k,
                    ..Default::default()
                }],
                ..Default::default()
            }
        }
    }

    fn config(resume: Option<Resume>) -> RunConfig {
        RunConfig {
            scale: 1.0,
            consent: DeviceConsent::default(),
            file: "t.toml".into(),
            text: String::new(),
            command_line: vec!["fslab".into(), "run".into()],
            resume,
        }
    }

    #[test]
    fn an_interrupted_experiment_resumes_with_only_what_did_not_complete() {
        let d = tempfile::tempdir().unwrap();
        let text = format!(
            "name = \"t\"\nrepetitions = 2\norder = \"sequential\"\n[device]\nkind = \"directory\"\npath = \"{}\"\n[workload]\nkind = \"createmany\"\nargs = [\"-o\", \"{{dir}}/f\", \"10\"]\n",
            d.path().display()
        );
        let mut exp = crate::spec::parse("t.toml", &text, &Default::default()).unwrap();
        // Two cells of the same directory, as two variants would give.
        let mut second = exp.cells[0].clone();
        second.index = 1;
        second.label = "again".into();
        exp.cells.push(second);
        let mut journal = Journal::create(&d.path().join("state"), "run", vec![]).unwrap();
        let mut rec = MemRecorder::default();

        // The first run is stopped after its second repetition.
        let stop = AtomicBool::new(false);
        let mut exec = FakeExecutor {
            ran: Vec::new(),
            stop_after: Some(2),
        };
        let cfg = config(None);
        let first = run(
            &exp,
            &cfg,
            &mut exec,
            &mut rec,
            &mut NoProgress,
            &stop,
            &mut journal,
        )
        .unwrap();
        assert!(first.interrupted);
        assert_eq!(exec.ran, [(0, 1), (0, 2)]);
        assert_eq!(rec.experiment_status, Some(RunStatus::Interrupted));

        // The resumed run does the other cell only, in the same experiment,
        // and its outcome (the summary) holds all four.
        let stop = AtomicBool::new(false);
        let mut exec = FakeExecutor {
            ran: Vec::new(),
            stop_after: None,
        };
        let cfg = config(Some(Resume {
            experiment_id: first.experiment_id,
            done: first.runs.clone(),
        }));
        let second = run(
            &exp,
            &cfg,
            &mut exec,
            &mut rec,
            &mut NoProgress,
            &stop,
            &mut journal,
        )
        .unwrap();
        assert_eq!(exec.ran, [(1, 1), (1, 2)]);
        assert_eq!(second.experiment_id, first.experiment_id);
        assert_eq!(rec.experiments.len(), 1, "no new experiment");
        assert_eq!(second.runs.len(), 4);
        assert!(second.runs.iter().all(|r| r.ok) && !second.interrupted);
        assert_eq!(rec.experiment_status, Some(RunStatus::Complete));
        let cells: Vec<u32> = crate::summary::family(&second)
            .iter()
            .map(|s| s.cell)
            .collect();
        assert!(cells.contains(&0) && cells.contains(&1));
        // Each directory was made fresh and removed again.
        assert_eq!(
            std::fs::read_dir(d.path())
                .unwrap()
                .flatten()
                .filter(|e| e.file_name() != crate::safety::DIRECTORY_MARKER)
                .count(),
            1,
            "only the state directory (and fslab's marker) is left"
        );
        assert!(journal.resources().is_empty());
    }

    /// Answers each (cell, repetition) with a create rate from `rate`.
    struct RateExecutor {
        ran: Vec<(u32, u32)>,
        rate: fn(u32, u32) -> f64,
    }

    impl Executor for RateExecutor {
        fn run(
            &mut self,
            argv: &[String],
            cgroup: Option<&Path>,
            watch: Option<&Watch>,
            limit: Option<Duration>,
            stop: &AtomicBool,
            progress: &mut dyn Progress,
        ) -> WorkloadOutcome {
            let mut fake = FakeExecutor {
                ran: Vec::new(),
                stop_after: None,
            };
            let mut o = fake.run(argv, cgroup, watch, limit, stop, progress);
            let (c, r) = fake.ran[0];
            self.ran.push((c, r));
            let rate = (self.rate)(c, r);
            o.run_id = Some(self.ran.len() as i64);
            o.phases[0].ops_per_s = rate;
            o.phases[0].elapsed_s = 100.0 / rate;
            o
        }
    }

    fn two_cells(dir: &Path, until: u32) -> Experiment {
        let text = format!(
            "name = \"t\"\nrepetitions = 3\nuntil_resolved = {until}\n[device]\nkind = \"directory\"\npath = \"{}\"\n[workload]\nkind = \"createmany\"\nargs = [\"-o\", \"{{dir}}/f\", \"10\"]\n",
            dir.display()
        );
        let mut exp = crate::spec::parse("t.toml", &text, &Default::default()).unwrap();
        let mut second = exp.cells[0].clone();
        second.index = 1;
        second.label = "b".into();
        exp.cells.push(second);
        exp
    }

    fn run_until(
        exp: &Experiment,
        dir: &Path,
        rate: fn(u32, u32) -> f64,
    ) -> (Vec<(u32, u32)>, ExperimentOutcome) {
        let mut journal = Journal::create(&dir.join("state"), "run", vec![]).unwrap();
        let mut exec = RateExecutor {
            ran: Vec::new(),
            rate,
        };
        let o = run(
            exp,
            &config(None),
            &mut exec,
            &mut MemRecorder::default(),
            &mut NoProgress,
            &AtomicBool::new(false),
            &mut journal,
        )
        .unwrap();
        (exec.ran, o)
    }

    #[test]
    fn until_resolved_adds_interleaved_repetitions_while_a_comparison_is_open() {
        let d = tempfile::tempdir().unwrap();
        // A clear 30% difference: resolved at 3, nothing added.
        let exp = two_cells(d.path(), 10);
        let (ran, o) = run_until(&exp, d.path(), |c, r| {
            100.0 * if c == 1 { 1.3 } else { 1.0 } + f64::from(r % 2)
        });
        assert_eq!(ran.len(), 6, "{ran:?}");
        assert_eq!(
            o.resolution.as_deref(),
            Some("until resolved: every headline comparison is resolved after 3 repetitions")
        );

        // A 20% difference under noise that settles: more repetitions,
        // the baseline and the open cell in turn, until it is resolved.
        let noisy = |c: u32, r: u32| {
            let noise = [10.0, -10.0, 6.0, -6.0, 2.0, -2.0];
            let base = if c == 1 { 120.0 } else { 100.0 };
            base + noise
                .get(r as usize - 1)
                .copied()
                .unwrap_or(if r.is_multiple_of(2) { 0.5 } else { -0.5 })
        };
        let (ran, o) = run_until(&exp, d.path(), noisy);
        let extra = &ran[6..];
        assert!(!extra.is_empty(), "{ran:?}");
        for (i, pair) in extra.chunks(2).enumerate() {
            let rep = 4 + i as u32;
            assert_eq!(pair, [(0, rep), (1, rep)], "interleaved: {ran:?}");
        }
        let said = o.resolution.unwrap();
        let reps = 3 + extra.len() / 2;
        assert_eq!(
            said,
            format!(
                "until resolved: every headline comparison is resolved after {reps} repetitions"
            )
        );
        assert_eq!(o.runs.len(), ran.len());

        // The same at a maximum of 4: it stops there and says what is open.
        let exp = two_cells(d.path(), 4);
        let (ran, o) = run_until(&exp, d.path(), noisy);
        assert_eq!(ran.len(), 8, "{ran:?}");
        let said = o.resolution.unwrap();
        assert!(
            said.starts_with("until resolved: after 4 repetitions 1 headline comparison(s) unresolved (b: create rate (ops/s))")
                && said.ends_with("stopped at the maximum, 4"),
            "{said}"
        );
    }
}
