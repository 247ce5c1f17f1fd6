//! Launching the scheduler from a command (`fslab run`, `bisect`,
//! `guest-cell`): the checks before anything is made (preflight, MPI,
//! cost), the executor (this fslab as the child, across the cluster's
//! hosts), and the run itself under its journal, which is undone whatever
//! happens in it.

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use fslab_model::ErrorKind;

use crate::cost::Estimate;
use crate::run_args::{Planned, ResumeNotice, RunArgs};
use crate::runner::{self, ExperimentOutcome, Preflight, ProcessExecutor, Progress};
use crate::runner::{RunConfig, RunError};
use crate::spec::Experiment;
use fslab_lab::undo::Journal;

/// Why a command could not start (or finish) its run: one line, and its
/// kind, which is the exit status (bad input, or a failure).
#[derive(Debug, thiserror::Error)]
#[error("{line}")]
pub struct Refusal {
    kind: ErrorKind,
    line: String,
}

impl Refusal {
    /// Bad input saying `line` (exit status 2).
    pub fn usage(line: String) -> Refusal {
        Refusal {
            kind: ErrorKind::Usage,
            line,
        }
    }

    /// A failure saying `line` (exit status 1).
    pub fn failed(line: String) -> Refusal {
        Refusal {
            kind: ErrorKind::Failed,
            line,
        }
    }

    /// A results store's error: its kind, and a failure says it is the
    /// store's.
    pub fn store(e: fslab_store::StoreError) -> Refusal {
        match e.kind() {
            ErrorKind::Failed => Refusal::failed(format!("results store {e}")),
            kind => Refusal {
                kind,
                line: e.to_string(),
            },
        }
    }

    pub fn kind(&self) -> ErrorKind {
        self.kind
    }
}

/// A preflight refusal: what the experiment asks for that is not there is
/// bad input; what this machine lacks, a failure.
fn refused(e: Preflight) -> Refusal {
    let line = format!("run: {e}");
    if e.is_usage() {
        Refusal::usage(line)
    } else {
        Refusal::failed(line)
    }
}

/// What `fslab run` found before making anything.
pub enum Prepared {
    /// A `--resume` with nothing left to run: what to say.
    NothingLeft(String),
    /// The run, checked.
    Ready(Box<Ready>),
}

/// A run checked and ready to start.
pub struct Ready {
    pub planned: Planned,
    /// The earlier experiment's runs, for `--resume`.
    pub resume: Option<crate::runner::Resume>,
    /// What the safety check allowed (the dry run lists it).
    pub allowed: Vec<String>,
    pub cost: Estimate,
    /// Whether fslab runs as root.
    pub root: bool,
}

/// Everything `fslab run` checks before it makes anything (the dry run
/// too): the scale, `--resume`'s experiment, the file, safety, the
/// preflight, MPI (`mpi`: built in) and the cost. `remark` says which
/// built-in a prefix chose and what a resume runs.
pub fn prepare(
    args: &RunArgs,
    db: &Path,
    mpi: bool,
    remark: &dyn Fn(&str),
) -> Result<Prepared, Refusal> {
    args.check_scale()
        .map_err(|e| Refusal::usage(e.to_string()))?;
    let earlier = match args.resume {
        Some(id) => Some(
            crate::resume::checked(db, id, args.scale, &fslab_lab::undo::state_dir()).map_err(
                |e| match e {
                    crate::resume::ResumeError::Store(e) => Refusal::store(e),
                    e => Refusal::usage(e.to_string()),
                },
            )?,
        ),
        None => None,
    };
    let planned = args
        .planned(earlier.as_ref())
        .map_err(|e| Refusal::usage(e.to_string()))?;
    let (file, exp) = (&planned.file, &planned.exp);
    // A prefix chose a built-in: say which.
    if let (None, Some(asked)) = (&earlier, args.experiment.as_deref()) {
        if file.strip_prefix("builtin:").is_some_and(|n| n != asked) {
            let builtin = &file["builtin:".len()..];
            remark(&format!(
                "fslab: run: {asked:?} is the built-in experiment {builtin}"
            ));
        }
    }
    let resume = earlier.map(|e| e.resume);
    if let Some(r) = &resume {
        match crate::run_args::resume_notice(exp, r, planned.scale) {
            ResumeNotice::NothingLeft(nothing) => return Ok(Prepared::NothingLeft(nothing)),
            ResumeNotice::Resuming(resuming) => remark(&format!("fslab: {resuming}")),
        }
    }
    let perms = crate::safety::Permissions {
        allow_sysctl: args.allow_sysctl.clone(),
        allow_command: args.allow_command.clone(),
        force: args.force,
    };
    let allowed =
        crate::safety::check(exp, &perms).map_err(|e| Refusal::usage(format!("{file}: {e}")))?;
    // The dry run refuses what the run refuses before it makes anything
    // (as root: a user may look at what root would run).
    let root = rustix::process::geteuid().is_root();
    let at = (exp, &planned.base, planned.scale);
    let cost = checked(args, at, db, (root, mpi))?;
    Ok(Prepared::Ready(Box::new(Ready {
        planned,
        resume,
        allowed,
        cost,
        root,
    })))
}

/// The checks of `fslab run` before anything is made: the preflight (as
/// root; the dry run as root would), MPI (`mpi`: whether this fslab has it
/// built in), and the cost, refused past a threshold without `--yes`; a
/// refusal that a smaller scale lifts names it.
fn checked(
    args: &RunArgs,
    (exp, base, scale): (&Experiment, &Experiment, f64),
    db: &Path,
    (root, mpi): (bool, bool),
) -> Result<Estimate, Refusal> {
    let store = fslab_store::Store::open_read(db).ok();
    let check = crate::cost::Check {
        base,
        store: store.as_ref(),
        keep_images: args.keep_images,
        root: root || args.dry_run,
    };
    runner::preflight_as(exp, root || args.dry_run).map_err(|e| match e {
        Preflight::Input(m) => Refusal::usage(format!("run: {m}{}", check.hint(scale))),
        e => refused(e),
    })?;
    runner::preflight_mpi(exp, mpi).map_err(refused)?;
    match check.refusal(scale, args.yes) {
        (_, Some(line)) => Err(Refusal::usage(format!("run: {line}"))),
        (cost, None) => Ok(cost),
    }
}

/// The workload's runner: this fslab as the child, across the cluster's
/// hosts when there is one, each of which must be reached and see its
/// shared directory (if any): bad input when not.
pub fn executor(exp: &Experiment, db: &Path, file: &str) -> Result<ProcessExecutor, Refusal> {
    let mut exec = ProcessExecutor::of(exp, db)
        .map_err(|e| Refusal::failed(format!("run: cannot find fslab itself: {e}")))?;
    if let Some(c) = &exp.cluster {
        runner::hosts::check_hosts(c, &mut exec).map_err(|e| match e {
            runner::hosts::HostsError::Hosts(m) => Refusal::usage(format!("run: {file}: {m}")),
            e => Refusal::failed(format!("run: {e}")),
        })?;
    }
    Ok(exec)
}

/// A run's live display: a [`Progress`] that is cleared when the run ends.
pub trait Display: Progress {
    /// Clears what the display shows.
    fn clear(&mut self);
}

/// What a run gave: its outcome or error, or `Err` when it panicked.
pub type Scheduled = std::thread::Result<Result<ExperimentOutcome, RunError>>;

/// The scheduler run shown on `display`; whatever happens in it, even a
/// panic, the journal is undone after (what it could not undo is said as
/// `fslab: WHO: cleaned up: ...`).
pub fn scheduled<D: Display>(
    (exp, cfg): (&Experiment, &RunConfig),
    exec: &mut ProcessExecutor,
    store: &mut fslab_store::Store,
    (display, stop): (&mut D, &AtomicBool),
    mut journal: Journal,
    who: &str,
) -> Scheduled {
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        runner::run(exp, cfg, exec, store, display, stop, &mut journal)
    }));
    display.clear();
    for l in fslab_lab::undo::close(journal) {
        eprintln!("fslab: {who}: cleaned up: {l}");
    }
    result
}

/// `fslab run`'s start, once everything is checked: the signal handlers
/// (the stop flag they set), the run's journal and its configuration.
pub fn start(
    args: &RunArgs,
    (file, text, scale): (String, String, f64),
    resume: Option<crate::runner::Resume>,
) -> Result<(Arc<AtomicBool>, Journal, RunConfig), Refusal> {
    let state = fslab_lab::undo::state_dir();
    let stop = crate::signals::install(state.clone(), crate::signals::TEARDOWN_BOUND)
        .map_err(|e| Refusal::failed(format!("cannot install signal handlers: {e}")))?;
    let argv: Vec<String> = std::env::args().collect();
    let journal = Journal::create(&state, "run", argv.clone()).map_err(|e| {
        Refusal::failed(format!(
            "run: cannot write the state journal in {}: {e}",
            state.display()
        ))
    })?;
    let cfg = RunConfig {
        scale,
        resume,
        consent: crate::backend::DeviceConsent {
            format_device: args.format_device.clone(),
            force: args.force,
            keep_images: args.keep_images,
        },
        file,
        text,
        command_line: argv,
    };
    Ok((stop, journal, cfg))
}

/// `fslab run`'s outcome from what [`scheduled`] gave: an error before the
/// first cell is an interruption (said here) when a signal stopped it,
/// else a failure, as is a panic.
pub fn outcome(result: Scheduled, stop: &AtomicBool) -> Result<ExperimentOutcome, Refusal> {
    match result {
        Ok(Ok(o)) => Ok(o),
        Ok(Err(e)) if stop.load(std::sync::atomic::Ordering::Relaxed) => {
            // Ctrl-C before the first cell (while the image host was made).
            let line =
                format!("run: interrupted before any cell ran ({e}); everything set up was undone");
            eprintln!("fslab: {line}");
            Err(Refusal {
                kind: ErrorKind::Interrupted,
                line,
            })
        }
        Ok(Err(e)) => Err(Refusal::failed(format!("run: {e}"))),
        Err(_) => Err(Refusal::failed(
            "run: internal error (see above); everything set up was undone".into(),
        )),
    }
}

/// What stops [`one_host`] before its run: the executable or the journal.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error("cannot find fslab itself: {0}")]
    Exe(#[source] std::io::Error),
    #[error("the state journal: {0}")]
    Journal(#[source] fslab_lab::undo::JournalError),
}

/// A run of one cell on one host, as `bisect` and a guest make it: this
/// fslab as the child, one rank, the journal of this command line.
pub fn one_host(
    exp: &Experiment,
    db: &Path,
    scale: f64,
    (file, text): (&str, &str),
) -> Result<(ProcessExecutor, RunConfig, Journal), SetupError> {
    let exec = ProcessExecutor {
        exe: std::env::current_exe().map_err(SetupError::Exe)?,
        db: db.to_path_buf(),
        ranks: 1,
        cluster: None,
        own_ranks: exp.workload.kind.launches_ranks(),
    };
    let argv: Vec<String> = std::env::args().collect();
    let journal = Journal::create(&fslab_lab::undo::state_dir(), "run", argv.clone())
        .map_err(SetupError::Journal)?;
    let cfg = RunConfig {
        scale,
        resume: None,
        consent: crate::backend::DeviceConsent::default(),
        file: file.to_string(),
        text: text.to_string(),
        command_line: argv,
    };
    Ok((exec, cfg, journal))
}
