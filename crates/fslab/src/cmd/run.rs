//! `fslab run EXPERIMENT`.

use std::path::Path;
use std::sync::atomic::Ordering;

use fslab_experiment::backend::DeviceConsent;
use fslab_experiment::resume::Earlier;
use fslab_experiment::runner::{self, ProcessExecutor, RunConfig};
use fslab_experiment::state::{state_dir, Journal};
use fslab_experiment::{plan, spec};

use crate::cli::RunArgs;
use crate::Failure;

/// Reads experiment `id` back (fslab-experiment's `resume`), checked
/// against the command line: it exists, it is not running now, its scale
/// is kept.
fn earlier_run(db: &Path, id: i64, args: &RunArgs) -> Result<Earlier, Failure> {
    if !db.exists() {
        return Err(Failure::Usage(format!(
            "--resume {id}: no results store at {} (give --db)",
            db.display()
        )));
    }
    let store = super::open_store_read(db)?;
    let e = fslab_experiment::resume::earlier(&store, id).map_err(|e| match e {
        fslab_store::StoreError::NoSuchExperiment(_) => Failure::Usage(format!(
            "--resume {id}: no such experiment in {}",
            db.display()
        )),
        e => Failure::Failed(format!("results store {e}")),
    })?;
    // Marked running: killed (then resumable), or running now.
    if e.status == "running" {
        if let Some((pid, argv)) = fslab_experiment::state::live_runs(&state_dir()).first() {
            return Err(Failure::Usage(format!(
                "--resume {id}: experiment {id} is marked running, and `{}` (pid {pid}) is running now: \
                 let it finish, or stop it first",
                argv.join(" ")
            )));
        }
    }
    if args.scale != 1.0 && args.scale != e.scale {
        return Err(Failure::Usage(format!(
            "--scale {}: experiment {id} ran at scale {}; a resumed experiment keeps its scale",
            args.scale, e.scale
        )));
    }
    Ok(e)
}

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

/// What `--dry-run` prints: the plan, what the command line allowed, and
/// whether the run needs root.
fn print_dry_run(
    exp: &fslab_experiment::spec::Experiment,
    scale: f64,
    allowed: &[String],
    root: bool,
) {
    print!("{}", plan::describe(exp, scale));
    for a in allowed {
        println!("allowed on the command line: {a}");
    }
    if !root && runner::preflight_as(exp, false).is_err() {
        println!("note: fslab run needs root for this experiment");
    }
}

pub fn run(args: RunArgs, db: &Path) -> Result<(), Failure> {
    if args.list {
        print!("{}", fslab_experiment::builtin::list());
        return Ok(());
    }
    if !(args.scale > 0.0 && args.scale.is_finite()) {
        return Err(Failure::Usage(format!(
            "--scale {}: must be a number above 0",
            args.scale
        )));
    }
    let earlier = match args.resume {
        Some(id) => Some(earlier_run(db, id, &args)?),
        None => None,
    };
    let (file, text, scale) = match &earlier {
        Some(e) => (e.file.clone(), e.text.clone(), e.scale),
        None => {
            let (file, text) =
                fslab_experiment::builtin::load(args.experiment.as_deref().unwrap_or_default())
                    .map_err(|e| Failure::Usage(e.to_string()))?;
            (file, text, args.scale)
        }
    };
    let mut exp = spec::parse(&file, &text, &spec::Defaults::from_env())
        .map_err(|e| Failure::Usage(e.to_string()))?;
    apply_options(&mut exp, &args, earlier.as_ref())?;
    exp.workload.allowed.clone_from(&args.allow_command);
    let exp = plan::scaled(&exp, scale);
    let resume = earlier.map(|e| e.resume);
    if let Some(r) = &resume {
        if !resume_notice(&exp, r, scale) {
            return Ok(());
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
    runner::preflight_as(&exp, root || args.dry_run).map_err(refused)?;
    check_mpi(&exp)?;
    if args.dry_run {
        print_dry_run(&exp, scale, &allowed, root);
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

    print!(
        "{}",
        fslab_present::run::closing::text(
            &exp,
            &outcome,
            args.scale,
            Some((&store, fslab_explain::EXPLAINERS))
        )
    );
    if args.calibrate.is_some() {
        print!("{}", super::calibrate::record(&mut store, &exp, &outcome)?);
    }
    for p in &outcome.teardown_problems {
        eprintln!("fslab: run: teardown: {p}");
    }
    ending(&outcome, stop.load(Ordering::Relaxed))
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
fn executor(
    exp: &fslab_experiment::spec::Experiment,
    db: &Path,
    file: &str,
) -> Result<ProcessExecutor, Failure> {
    let exe = std::env::current_exe()
        .map_err(|e| Failure::Failed(format!("run: cannot find fslab itself: {e}")))?;
    let mut exec = ProcessExecutor {
        exe,
        db: db.to_path_buf(),
        ranks: exp.workload.ranks,
        cluster: exp.cluster.clone(),
        own_ranks: exp.workload.kind.launches_ranks(),
    };
    if let Some(c) = &exp.cluster {
        runner::hosts::check_hosts(c, &mut exec).map_err(|e| match e {
            runner::hosts::HostsError::Hosts(m) => Failure::Usage(format!("run: {file}: {m}")),
            e => Failure::Failed(format!("run: {e}")),
        })?;
    }
    Ok(exec)
}

/// Says what a resumed run will do; false when nothing is left to run.
fn resume_notice(exp: &fslab_experiment::spec::Experiment, r: &runner::Resume, scale: f64) -> bool {
    let total = exp.cells.len() * exp.repetitions as usize;
    if r.done.len() >= total {
        println!(
            "experiment {} ({}): all {total} runs completed already; nothing to resume \
             (add repetitions with --repetitions N)",
            r.experiment_id, exp.name
        );
        return false;
    }
    remark!(
        "fslab: resuming experiment {} ({}) at scale {scale}: {} of {total} runs completed before, {} to run",
        r.experiment_id,
        exp.name,
        r.done.len(),
        total - r.done.len()
    );
    true
}

/// How `fslab run` ends: interrupted, failed runs (exit 1), or success.
fn ending(outcome: &runner::ExperimentOutcome, stopped: bool) -> Result<(), Failure> {
    if fslab_experiment::signals::hurry() {
        eprintln!(
            "fslab: run: interrupted by a second signal; everything set up was undone; what was \
             measured is kept as experiment {}",
            outcome.experiment_id
        );
        return Err(Failure::Interrupted);
    }
    if outcome.interrupted || stopped {
        eprintln!(
            "fslab: run: interrupted; what was measured is kept as experiment {}",
            outcome.experiment_id
        );
        return Err(Failure::Interrupted);
    }
    let failed = outcome.runs.iter().filter(|r| !r.ok).count();
    if failed > 0 {
        return Err(Failure::Failed(format!(
            "run: {failed} of {} runs failed (see above); what was measured is kept as experiment {}",
            outcome.runs.len(),
            outcome.experiment_id
        )));
    }
    Ok(())
}

/// The command line's say over the experiment file: repetitions (never
/// fewer than a resumed experiment has), until-resolved, probes.
fn apply_options(
    exp: &mut fslab_experiment::spec::Experiment,
    args: &RunArgs,
    earlier: Option<&Earlier>,
) -> Result<(), Failure> {
    if let Some(e) = earlier {
        exp.repetitions = exp.repetitions.max(e.repetitions);
    }
    if let Some(r) = args.repetitions {
        if r == 0 {
            return Err(Failure::Usage("--repetitions 0: must be at least 1".into()));
        }
        if let Some(e) = earlier.filter(|e| r < e.repetitions) {
            return Err(Failure::Usage(format!(
                "--repetitions {r}: experiment {} already has {} repetitions (resume adds, never removes)",
                e.resume.experiment_id, e.repetitions
            )));
        }
        exp.repetitions = r;
    }
    if let Some(max) = args.until_resolved {
        if max < exp.repetitions {
            return Err(Failure::Usage(format!(
                "--until-resolved {max}: below the {} repetitions every cell has",
                exp.repetitions
            )));
        }
        exp.until_resolved = Some(max);
    }
    if let Some(cell) = args.calibrate {
        *exp = fslab_experiment::aa::of(exp, cell).map_err(|e| Failure::Usage(e.to_string()))?;
    }
    if let Some(p) = &args.probes {
        fslab_probe::parse_list(p).map_err(Failure::Usage)?;
        exp.workload.probes = Some(p.clone());
    }
    if let Some(t) = &args.cell_time_limit {
        exp.time_limit = Some(
            fslab_experiment::deadline::parse_duration(t)
                .map_err(|e| Failure::Usage(format!("--cell-time-limit {e}")))?,
        );
    }
    Ok(())
}

/// An experiment on several ranks needs MPI in this build and mpirun.
fn check_mpi(exp: &fslab_experiment::spec::Experiment) -> Result<(), Failure> {
    // A program that starts its own ranks needs mpirun, not fslab's MPI.
    let fslab_mpi = !exp.workload.kind.launches_ranks();
    if let Some(c) = &exp.cluster {
        if fslab_mpi && !cfg!(feature = "mpi") {
            return Err(Failure::Usage(format!(
                "run: [cluster] ({} hosts) needs MPI, and this fslab was built without it: \
                 build it with `cargo build --release -p fslab --features mpi`",
                c.hosts.len()
            )));
        }
        let launcher = c.workload_mpirun();
        if fslab_lab::mkfs::find_tool(&launcher[0]).is_none() {
            return Err(Failure::Usage(match launcher[0].as_str() {
                "srun" => {
                    "run: [cluster] launch = \"srun\" needs Slurm's srun: run fslab inside a \
                           Slurm job (sbatch or salloc) on a machine with Slurm's tools"
                        .into()
                }
                _ => "run: [cluster] needs mpirun: install Open MPI (apt-get install openmpi-bin)"
                    .into(),
            }));
        }
    }
    if exp.workload.ranks > 1 {
        if fslab_mpi && !cfg!(feature = "mpi") {
            return Err(Failure::Usage(format!(
                "run: workload.ranks = {} needs MPI, and this fslab was built without it: \
                 build it with `cargo build --release -p fslab --features mpi`",
                exp.workload.ranks
            )));
        }
        if fslab_lab::mkfs::find_tool("mpirun").is_none() {
            return Err(Failure::Usage(format!(
                "run: workload.ranks = {} needs mpirun: install Open MPI (apt-get install openmpi-bin)",
                exp.workload.ranks
            )));
        }
    }
    Ok(())
}
