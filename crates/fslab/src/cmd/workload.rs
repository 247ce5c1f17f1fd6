//! What every workload command does around its workload: the options
//! `fslab run` passes (die with the parent, join a cgroup, drop caches),
//! signals, the store, the probes, progress lines, the JSON report and the
//! exit status.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use fslab_cluster::Cluster;
use fslab_record::protocol::ChildMessage;
use fslab_record::{Recorder, RunStatus, SeriesPoint, WorkloadKind};
use fslab_workload::{CommonArgs, Hooks, Report};

use crate::Failure;

/// Checks made before the workload's own options: the hidden `fslab run`
/// options that must act first, and the probe list.
pub fn prepare(name: &str, common: &CommonArgs) -> Result<Vec<fslab_probe::Kind>, Failure> {
    if common.die_with_parent {
        let parent = rustix::process::getppid();
        let _ =
            rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL));
        // The parent may have died before the request took effect.
        if rustix::process::getppid() != parent || parent.is_none() {
            return Err(Failure::Failed(format!(
                "{name}: the parent fslab run is gone"
            )));
        }
    }
    fslab_probe::parse_list(&common.probes).map_err(|e| Failure::Usage(format!("{name}: {e}")))
}

/// A workload's body: given the stop flag, where its text goes, the
/// recorder and the hooks, it runs and returns its report.
pub trait Body<R>:
    FnOnce(&AtomicBool, &mut dyn Write, &mut dyn Recorder, &mut Hooks) -> Result<R, String>
{
}
impl<R, F> Body<R> for F where
    F: FnOnce(&AtomicBool, &mut dyn Write, &mut dyn Recorder, &mut Hooks) -> Result<R, String>
{
}

/// Under MPI, the directory of this rank under `dir` (`DIR/rankNNNN`, made
/// here); `dir` itself in a one-process run.
pub fn rank_dir(name: &str, cluster: &dyn Cluster, dir: &Path) -> Result<PathBuf, Failure> {
    if cluster.size() == 1 {
        return Ok(dir.to_path_buf());
    }
    let d = fslab_cluster::rank_dir(dir, cluster.rank());
    std::fs::create_dir_all(&d)
        .map_err(|e| Failure::Failed(format!("{name}: cannot make {}: {e}", d.display())))?;
    super::ranks::made(&d);
    Ok(d)
}

/// Under MPI, `path` moved into this rank's directory (`DIR/rankNNNN/NAME`,
/// the directory made here); `path` itself in a one-process run.
pub fn rank_file(name: &str, cluster: &dyn Cluster, path: &Path) -> Result<PathBuf, Failure> {
    if cluster.size() == 1 {
        return Ok(path.to_path_buf());
    }
    let p = fslab_cluster::rank_path(path, cluster.rank());
    if let Some(d) = p.parent() {
        std::fs::create_dir_all(d)
            .map_err(|e| Failure::Failed(format!("{name}: cannot make {}: {e}", d.display())))?;
        super::ranks::made(d);
    }
    Ok(p)
}

/// Runs `body` as workload `name` working in `dir`, with everything around
/// it; under MPI as one of the ranks (see [`super::ranks`]).
pub fn run<R: Report>(
    name: &str,
    common: &CommonArgs,
    kinds: &[fslab_probe::Kind],
    db: &Path,
    dir: &Path,
    cluster: &dyn Cluster,
    body: impl Body<R>,
) -> Result<(), Failure> {
    if let Some(cg) = &common.cgroup {
        fslab_experiment::machine::MemCgroup::add_process(cg, std::process::id())
            .map_err(|e| Failure::Failed(format!("{name}: --cgroup: {e}")))?;
    }
    if common.drop_caches {
        fslab_experiment::machine::drop_caches()
            .map_err(|e| Failure::Failed(format!("{name}: --drop-caches: {e}")))?;
    }
    if cluster.size() > 1 {
        return super::ranks::run(name, common, kinds, db, dir, cluster, body);
    }
    let mut store = super::open_store(db)?;
    let stop = super::stop_on_signals()?;
    let stdout = std::io::stdout();
    let mut text_out: Box<dyn Write> = match (&common.text_to, common.json) {
        (Some(p), _) => Box::new(
            std::fs::File::create(p)
                .map_err(|e| Failure::Failed(format!("{name}: --text-to {}: {e}", p.display())))?,
        ),
        (None, true) => Box::new(std::io::sink()),
        (None, false) => Box::new(stdout.lock()),
    };
    let mut probes = start_probes(name, common, kinds, dir);
    let inner = probes.as_mut().map(|p| p as &mut dyn fslab_record::Monitor);
    let counting = silent_phases(name, common);
    let mut messages = PhaseMessages {
        inner,
        messages: common.progress,
        acks: common.phase_acks,
        erase: counting.is_some(),
    };
    let mut hooks = Hooks::default();
    if common.drop_caches {
        let mut drop_caches = cache_dropper(name.to_string());
        hooks.before_phase = Some(Box::new(move |_| drop_caches()));
    }
    if common.progress {
        hooks.run_started = Some(Box::new(|run_id| {
            eprintln!("{}", ChildMessage::RunStarted { run_id }.line())
        }));
        hooks.each_second = Some(progress_lines());
    }
    if let Some(kind) = counting {
        hooks.each_second = Some(terminal_progress(kind));
    }
    hooks.monitor = if messages.messages || messages.erase {
        Some(&mut messages)
    } else {
        messages.inner
    };
    let report = body(&stop, &mut *text_out, &mut store, &mut hooks)
        .map_err(|e| Failure::Failed(format!("{name}: {e}")))?;
    drop(text_out);
    if common.json {
        print!(
            "{}",
            fslab_record::json::Versioned::new(&report).to_pretty()
        );
    }
    for n in report.notes() {
        eprintln!("fslab: {name}: {n}");
    }
    if common.progress {
        finished(
            Some(report.run_id()),
            report.status(),
            report.error(),
            report.phases(),
            report.metrics(),
        );
    }
    let kept = format!("run {} in {}", report.run_id(), store.path().display());
    if report.status() == RunStatus::Complete && !common.progress {
        // Where to find it again (`fslab results show N`); on stderr, so
        // the tool's own output stays as its readers expect it.
        remark!("fslab: {name}: recorded as {kept}");
    }
    ending(name, report.status(), report.error(), &kept)
}

/// The command's result for a run that ended with `status`: an interrupted
/// or failed run says what went wrong and where what it measured is `kept`.
pub fn ending(
    name: &str,
    status: RunStatus,
    error: Option<&str>,
    kept: &str,
) -> Result<(), Failure> {
    match status {
        RunStatus::Complete | RunStatus::Running => Ok(()),
        RunStatus::Interrupted => {
            eprintln!(
                "fslab: {name}: interrupted; what was measured is printed above and kept as {kept}"
            );
            Err(Failure::Interrupted)
        }
        RunStatus::Failed => Err(Failure::Failed(format!(
            "{name}: stopped: {}; what was measured is printed above and kept as {kept}",
            error.unwrap_or("unknown error")
        ))),
    }
}

/// `--drop-caches` before each phase: drops the caches on every call but
/// the first (the first phase's were dropped before the run started).
pub fn cache_dropper(who: String) -> impl FnMut() {
    let mut first_phase = true;
    move || {
        if !std::mem::take(&mut first_phase) {
            if let Err(e) = fslab_experiment::machine::drop_caches() {
                eprintln!("fslab: {who}: --drop-caches: {e}");
            }
        }
    }
}

/// Tells `fslab run` how the run ended.
pub fn finished(
    run_id: Option<i64>,
    status: RunStatus,
    error: Option<&str>,
    phases: &[fslab_record::PhaseResult],
    metrics: &[fslab_record::Metric],
) {
    let m = ChildMessage::Finished {
        run_id,
        status,
        error: error.map(String::from),
        phases: phases.to_vec(),
        metrics: metrics.to_vec(),
    };
    eprintln!("{}", m.line());
}

/// Tells `fslab run` when each phase starts and ends, so that its probes,
/// which run beside this process, sample on this run's clock; passes each
/// call on to this process's own probes, if it has any.
struct PhaseMessages<'a> {
    inner: Option<&'a mut dyn fslab_record::Monitor>,
    /// Send the messages (`--progress`).
    messages: bool,
    /// Wait for `fslab run`'s answer after each message (`--phase-acks`).
    acks: bool,
    /// Erase the terminal's count line when a phase ends.
    erase: bool,
}

impl PhaseMessages<'_> {
    /// Says `m` and, with acks, waits (at most 10 s) for `fslab run` to
    /// answer on stdin: its probes then hold the phase's boundary, so no IO
    /// of one phase is counted in another. Outside the timed region.
    fn say(&self, m: ChildMessage) {
        if !self.messages {
            return;
        }
        eprintln!("{}", m.line());
        if !self.acks {
            return;
        }
        let stdin = std::io::stdin();
        let mut fds = [rustix::event::PollFd::new(
            &stdin,
            rustix::event::PollFlags::IN,
        )];
        let limit = rustix::time::Timespec {
            tv_sec: 10,
            tv_nsec: 0,
        };
        if matches!(rustix::event::poll(&mut fds, Some(&limit)), Ok(n) if n > 0) {
            let mut line = String::new();
            let _ = std::io::BufRead::read_line(&mut stdin.lock(), &mut line);
        }
    }
}

impl fslab_record::Monitor for PhaseMessages<'_> {
    fn phase_start(&mut self, index: u32, phase: &str, start: std::time::Instant) {
        self.say(ChildMessage::PhaseStart {
            index,
            phase: phase.into(),
            mono_ns: fslab_probe::mono_ns_of(start),
        });
        if let Some(i) = self.inner.as_mut() {
            i.phase_start(index, phase, start);
        }
    }

    fn drain(&mut self) -> Vec<fslab_record::ProbePoint> {
        self.inner.as_mut().map(|i| i.drain()).unwrap_or_default()
    }

    fn phase_end(&mut self, index: u32, phase: &str) -> Vec<fslab_record::ProbeNote> {
        if self.erase {
            eprint!("\r\x1b[K");
        }
        self.say(ChildMessage::PhaseEnd {
            index,
            phase: phase.into(),
        });
        self.inner
            .as_mut()
            .map(|i| i.phase_end(index, phase))
            .unwrap_or_default()
    }

    fn finish(&mut self) -> Vec<fslab_record::ProbeNote> {
        self.inner.as_mut().map(|i| i.finish()).unwrap_or_default()
    }

    fn metrics(&mut self) -> Vec<fslab_record::Metric> {
        self.inner.as_mut().map(|i| i.metrics()).unwrap_or_default()
    }
}

/// The workload whose silent phases show a count on a terminal (see
/// [`WorkloadKind::is_silent_during`]); none when stderr is not a terminal,
/// `fslab run` reads the progress, or the output is JSON or quiet.
fn silent_phases(name: &str, common: &CommonArgs) -> Option<WorkloadKind> {
    use std::io::IsTerminal;
    if common.progress || common.json || super::quiet() || !std::io::stderr().is_terminal() {
        return None;
    }
    WorkloadKind::of(name)
}

/// On a terminal, one line on stderr, rewritten once a second: the phase,
/// its operations so far and their rate over the last second.
fn terminal_progress<'a>(kind: WorkloadKind) -> fslab_workload::SecondHook<'a> {
    let mut rate_of = second_rates();
    Box::new(move |phase: &str, p: &SeriesPoint| {
        let rate = rate_of(p);
        if kind.is_silent_during(phase) {
            eprint!("\r\x1b[K{phase}: {} done, {rate:.0}/s", p.total_ops);
        }
    })
}

/// Each second's point's rate: its operations over the time since the
/// previous point (a new phase's series starts again at 0).
fn second_rates() -> impl FnMut(&SeriesPoint) -> f64 {
    let mut last_t = 0.0;
    move |p| {
        if p.t_s < last_t {
            last_t = 0.0;
        }
        let dt = p.t_s - last_t;
        last_t = p.t_s;
        if dt > 0.0 {
            p.ops as f64 / dt
        } else {
            0.0
        }
    }
}

/// The progress message `fslab run` reads, once a second.
pub fn progress_lines<'a>() -> fslab_workload::SecondHook<'a> {
    let mut rate_of = second_rates();
    Box::new(move |phase: &str, p: &SeriesPoint| {
        let rate = rate_of(p);
        let m = ChildMessage::Progress {
            phase: phase.to_string(),
            ops_per_s: rate,
            total: p.total_ops,
        };
        eprintln!("{}", m.line());
    })
}

/// Starts the probes asked for (none for an empty list), reporting on
/// stderr those that cannot start.
pub fn start_probes(
    name: &str,
    common: &CommonArgs,
    kinds: &[fslab_probe::Kind],
    dir: &Path,
) -> Option<fslab_probe::ProbeSet> {
    let probes = (!kinds.is_empty()).then(|| {
        fslab_probe::ProbeSet::start(
            kinds,
            dir,
            &fslab_probe::scratch_dir(),
            common.probes != "default",
        )
    });
    if let Some(p) = &probes {
        for problem in &p.problems {
            eprintln!("fslab: {name}: {problem}");
        }
    }
    probes
}
