//! What runs around a workload, in one process or on MPI ranks, as its
//! [`Harness`] asks: caches dropped between phases, the phase messages and progress
//! lines `fslab run` reads, the phase's line on a terminal, the probes, and the
//! closing words and exit status.

use std::path::Path;

use fslab_model::protocol::ChildMessage;
use fslab_model::{RunStatus, SeriesPoint};

use crate::{Error, Harness, Result};

/// The command's result for a run that ended with `status`: an interrupted
/// or failed run says what went wrong and where what it measured is `kept`.
pub fn ending(name: &str, status: RunStatus, error: Option<&str>, kept: &str) -> Result<()> {
    match status {
        RunStatus::Complete | RunStatus::Running => Ok(()),
        RunStatus::Interrupted => {
            eprintln!(
                "fslab: {name}: interrupted; what was measured is printed above and kept as {kept}"
            );
            Err(Error::Interrupted { name: name.into() })
        }
        RunStatus::Failed => Err(Error::Stopped {
            name: name.into(),
            error: error.unwrap_or("unknown error").into(),
            kept: kept.into(),
        }),
    }
}

/// Caches dropped before each phase ([`fslab_model::protocol::DropCaches::EachPhase`]): drops the caches on every call but
/// the first (the first phase's were dropped before the run started).
pub fn cache_dropper(who: String) -> impl FnMut() {
    let mut first_phase = true;
    move || {
        if !std::mem::take(&mut first_phase) {
            if let Err(e) = fslab_lab::vm::drop_caches() {
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
    phases: &[fslab_model::PhaseResult],
    metrics: &[fslab_model::Metric],
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
pub struct PhaseMessages<'a> {
    pub inner: Option<&'a mut dyn fslab_model::Monitor>,
    /// Send the messages ([`Harness::progress`]).
    pub messages: bool,
    /// Wait for `fslab run`'s answer after each message ([`Harness::acks`]).
    pub acks: bool,
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

impl fslab_model::Monitor for PhaseMessages<'_> {
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

    fn drain(&mut self) -> Vec<fslab_model::ProbePoint> {
        self.inner.as_mut().map(|i| i.drain()).unwrap_or_default()
    }

    fn phase_end(&mut self, index: u32, phase: &str) -> Vec<fslab_model::ProbeNote> {
        self.say(ChildMessage::PhaseEnd {
            index,
            phase: phase.into(),
        });
        self.inner
            .as_mut()
            .map(|i| i.phase_end(index, phase))
            .unwrap_or_default()
    }

    fn finish(&mut self) -> Vec<fslab_model::ProbeNote> {
        self.inner.as_mut().map(|i| i.finish()).unwrap_or_default()
    }

    /// Said without waiting for an answer: the program already runs.
    fn program_watch(&mut self) -> Option<fslab_model::ProgramWatch> {
        let inner = self.inner.as_mut().and_then(|i| i.program_watch());
        let messages = self.messages;
        (messages || inner.is_some()).then(|| {
            Box::new(move |pid| {
                if messages {
                    eprintln!("{}", ChildMessage::ProgramStarted { pid }.line());
                }
                if let Some(i) = &inner {
                    i(pid);
                }
            }) as fslab_model::ProgramWatch
        })
    }

    fn metrics(&mut self) -> Vec<fslab_model::Metric> {
        self.inner.as_mut().map(|i| i.metrics()).unwrap_or_default()
    }
}

/// The phase's line on a terminal ([`fslab_workload::live::PhaseBar`]):
/// none when stderr is not a terminal, `fslab run` reads the progress
/// (it draws its own), or the output is JSON or quiet.
pub fn phase_bar(harness: &Harness, quiet: bool) -> Option<fslab_workload::live::PhaseBar> {
    if harness.progress || harness.json || quiet {
        return None;
    }
    fslab_workload::live::PhaseBar::on_stderr()
}

/// The progress messages `fslab run` reads, once a second: the phase,
/// its rate over the second, its operations so far and the count it will
/// make when known.
#[derive(Default)]
pub struct ProgressLines {
    expected: Option<u64>,
    last_t: f64,
}

impl fslab_workload::PhaseWatch for ProgressLines {
    fn start(&mut self, _phase: &str, total: Option<u64>) {
        *self = ProgressLines {
            expected: total,
            last_t: 0.0,
        };
    }
    fn second(&mut self, phase: &str, p: &SeriesPoint) {
        let dt = p.t_s - self.last_t;
        self.last_t = p.t_s;
        let m = ChildMessage::Progress {
            phase: phase.to_string(),
            ops_per_s: if dt > 0.0 { p.ops as f64 / dt } else { 0.0 },
            total: p.total_ops,
            expected: self.expected,
        };
        eprintln!("{}", m.line());
    }
    fn end(&mut self, _phase: &str) {}
}

/// Starts the probes asked for, reporting on stderr those that cannot
/// start; with none asked for, the machine's own measurements alone (each
/// phase's clock, page cache and pressure: part of the run's facts).
/// None under `fslab run` (`--phase-acks`): its process runs them beside
/// this one.
pub fn start_probes(
    name: &str,
    harness: &Harness,
    kinds: &[fslab_probe::ProbeRef],
    dir: &Path,
) -> Option<fslab_probe::ProbeSet> {
    // `--probes none`: no instrument, and no look at the filesystem either
    // (the parity tests count every call a run makes on its directory).
    if harness.acks || kinds.is_empty() {
        return None;
    }
    // The workload may make its directory only when it starts: the
    // filesystem is the one of its nearest existing ancestor.
    let existing = dir.ancestors().find(|a| a.exists()).unwrap_or(dir);
    let probes = fslab_probe::ProbeSet::start(
        kinds,
        existing,
        &fslab_probe::scratch_dir(),
        harness.probes_named(),
    );
    for problem in &probes.problems {
        eprintln!("fslab: {name}: {problem}");
    }
    Some(probes)
}

/// `--output FILE`: the run's document, CSV when FILE ends in `.csv`,
/// else JSON (as `results export` writes them).
pub(crate) fn write_output(
    name: &str,
    harness: &Harness,
    store: &fslab_store::Store,
    id: i64,
) -> Result<()> {
    let Some(file) = &harness.output else {
        return Ok(());
    };
    let csv = file
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("csv"));
    let doc = if csv {
        store.run_document(id, &[]).map(|d| d.to_csv())
    } else {
        store.run_json(id)
    }
    .map_err(|source| Error::ReadBack {
        name: name.into(),
        source,
    })?;
    std::fs::write(file, doc).map_err(|source| Error::Io {
        name: name.into(),
        what: format!("--output {}", file.display()),
        source,
    })
}
