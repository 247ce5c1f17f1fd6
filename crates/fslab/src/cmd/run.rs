//! `fslab run EXPERIMENT`.

use std::path::Path;
use std::sync::atomic::Ordering;

use fslab_experiment::backend::DeviceConsent;
use fslab_experiment::resume::ResumeError;
use fslab_experiment::runner::{self, ProcessExecutor, RunConfig};
use fslab_experiment::spec;
use fslab_experiment::state::{state_dir, Journal};

use crate::Failure;
use fslab_experiment::run_args::{ending, Ending, Planned, ResumeNotice, RunArgs};

/// A preflight refusal: what the experiment asks for that is not there is
/// bad input (2); what this machine lacks, a failure (1).
fn refused(e: runner::Preflight) -> Failure {
    let m = format!("run: {e}");
    if e.is_usage() {
        Failure::Usage(m)
    } else {
        Failure::Failed(m)
    }
}

pub fn run(args: RunArgs, db: &Path) -> Result<(), Failure> {
    if args.list {
        return super::say(fslab_experiment::builtin::list());
    }
    args.check_scale()
        .map_err(|e| Failure::Usage(e.to_string()))?;
    let earlier = match args.resume {
        Some(id) => Some(
            fslab_experiment::resume::checked(db, id, args.scale, &state_dir()).map_err(
                |e| match e {
                    ResumeError::Store(e) => super::store_failure(e),
                    e => Failure::Usage(e.to_string()),
                },
            )?,
        ),
        None => None,
    };
    let Planned {
        file,
        text,
        scale,
        exp,
        base,
    } = args
        .planned(earlier.as_ref())
        .map_err(|e| Failure::Usage(e.to_string()))?;
    // A prefix chose a built-in: say which.
    if let (None, Some(asked)) = (&earlier, args.experiment.as_deref()) {
        if file.strip_prefix("builtin:").is_some_and(|n| n != asked) {
            remark!(
                "fslab: run: {asked:?} is the built-in experiment {}",
                &file["builtin:".len()..]
            );
        }
    }
    let resume = earlier.map(|e| e.resume);
    if let Some(r) = &resume {
        match fslab_experiment::run_args::resume_notice(&exp, r, scale) {
            ResumeNotice::NothingLeft(nothing) => return super::say(nothing + "\n"),
            ResumeNotice::Resuming(resuming) => remark!("fslab: {resuming}"),
        }
    }
    let perms = fslab_experiment::safety::Permissions {
        allow_sysctl: args.allow_sysctl.clone(),
        allow_command: args.allow_command.clone(),
        force: args.force,
    };
    let allowed = fslab_experiment::safety::check(&exp, &perms)
        .map_err(|e| Failure::Usage(format!("{file}: {e}")))?;
    // The dry run refuses what the run refuses before it makes anything
    // (as root: a user may look at what root would run).
    let root = rustix::process::geteuid().is_root();
    let cost = checked(&args, (&exp, &base, scale), db, root)?;
    if args.dry_run {
        super::say(runner::dry_run(&exp, scale, &allowed, root))?;
        super::say(cost.describe())?;
        super::power::say(&exp, (db, &file, &text, scale), true);
        return Ok(());
    }
    super::power::say(&exp, (db, &file, &text, scale), false);
    let mut exec = executor(&exp, db, &file)?;
    let mut store = super::open_store(db)?;
    let stop =
        fslab_experiment::signals::install(state_dir(), fslab_experiment::signals::TEARDOWN_BOUND)
            .map_err(|e| Failure::Failed(format!("cannot install signal handlers: {e}")))?;
    let argv: Vec<String> = std::env::args().collect();
    let journal = Journal::create(&state_dir(), "run", argv.clone()).map_err(|e| {
        Failure::Failed(format!(
            "run: cannot write the state journal in {}: {e}",
            state_dir().display()
        ))
    })?;
    let cfg = RunConfig {
        scale,
        resume,
        consent: DeviceConsent {
            format_device: args.format_device.clone(),
            force: args.force,
            keep_images: args.keep_images,
        },
        file,
        text,
        command_line: argv,
    };
    let result = scheduled(&exp, &cfg, &mut exec, &mut store, &stop, journal, "run");
    let outcome = match result {
        Ok(Ok(o)) => o,
        Ok(Err(e)) if stop.load(Ordering::Relaxed) => {
            // Ctrl-C before the first cell (while the image host was made).
            eprintln!(
                "fslab: run: interrupted before any cell ran ({e}); everything set up was undone"
            );
            return Err(Failure::Interrupted);
        }
        Ok(Err(e)) => return Err(Failure::Failed(format!("run: {e}"))),
        Err(_) => {
            return Err(Failure::Failed(
                "run: internal error (see above); everything set up was undone".into(),
            ))
        }
    };

    super::say(fslab_present::run::closing::text(
        &exp,
        &outcome,
        args.scale,
        Some((&store, fslab_explain::EXPLAINERS)),
    ))?;
    if args.calibrate.is_some() {
        let kept = fslab_experiment::aa::record(&mut store, &exp, &outcome)
            .map_err(|e| Failure::Failed(e.to_string()))?;
        super::say(kept)?;
    }
    for p in &outcome.teardown_problems {
        eprintln!("fslab: run: teardown: {p}");
    }
    match ending(&outcome, stop.load(Ordering::Relaxed)) {
        Ending::Complete => Ok(()),
        Ending::Interrupted(line) => {
            eprintln!("fslab: {line}");
            Err(Failure::Interrupted)
        }
        Ending::Failed(line) => Err(Failure::Failed(line)),
    }
}

/// The checks before anything is made: the preflight (as root; the dry
/// run as root would), MPI, and the cost, refused past a threshold without
/// `--yes`; a refusal that a smaller scale lifts names it.
fn checked(
    args: &RunArgs,
    (exp, base, scale): (&spec::Experiment, &spec::Experiment, f64),
    db: &Path,
    root: bool,
) -> Result<fslab_experiment::cost::Estimate, Failure> {
    let store = fslab_store::Store::open_read(db).ok();
    let check = fslab_experiment::cost::Check {
        base,
        store: store.as_ref(),
        keep_images: args.keep_images,
        root: root || args.dry_run,
    };
    runner::preflight_as(exp, root || args.dry_run).map_err(|e| match e {
        runner::Preflight::Input(m) => Failure::Usage(format!("run: {m}{}", check.hint(scale))),
        e => refused(e),
    })?;
    runner::preflight_mpi(exp, cfg!(feature = "mpi")).map_err(refused)?;
    match check.refusal(scale, args.yes) {
        (_, Some(line)) => Err(Failure::Usage(format!("run: {line}"))),
        (cost, None) => Ok(cost),
    }
}

/// The scheduler run with the progress display; whatever happens in it,
/// even a panic, the journal is undone after (what it could not undo is
/// said as `fslab: WHO: cleaned up: ...`).
pub(super) fn scheduled(
    exp: &fslab_experiment::spec::Experiment,
    cfg: &RunConfig,
    exec: &mut ProcessExecutor,
    store: &mut fslab_store::Store,
    stop: &std::sync::atomic::AtomicBool,
    mut journal: Journal,
    who: &str,
) -> std::thread::Result<Result<runner::ExperimentOutcome, runner::RunError>> {
    let mut display = fslab_present::run::display::Display::new(super::quiet());
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        runner::run(exp, cfg, exec, store, &mut display, stop, &mut journal)
    }));
    display.bar.finish_and_clear();
    for l in fslab_experiment::state::close(journal) {
        eprintln!("fslab: {who}: cleaned up: {l}");
    }
    result
}

/// The workload's runner: this fslab as the child, across the cluster's
/// hosts when there is one, each of which must be reached and see its
/// shared directory (if any): bad input when not.
fn executor(exp: &spec::Experiment, db: &Path, file: &str) -> Result<ProcessExecutor, Failure> {
    let mut exec = ProcessExecutor::of(exp, db)
        .map_err(|e| Failure::Failed(format!("run: cannot find fslab itself: {e}")))?;
    if let Some(c) = &exp.cluster {
        runner::hosts::check_hosts(c, &mut exec).map_err(|e| match e {
            runner::hosts::HostsError::Hosts(m) => Failure::Usage(format!("run: {file}: {m}")),
            e => Failure::Failed(format!("run: {e}")),
        })?;
    }
    Ok(exec)
}
