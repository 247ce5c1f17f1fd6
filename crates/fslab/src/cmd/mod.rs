//! One module per subcommand.

mod bisect;
mod cleanup;
mod compare;
mod frag;
mod history;
mod jobs;
mod man;
mod power;
mod report;
mod results;
mod run;
mod stats;
mod trace;

use std::path::{Path, PathBuf};

use clap::{ArgMatches, FromArgMatches};
use fslab_workload::WorkloadRef;

use crate::cli::{Cli, Command};
use crate::Failure;

/// `--quiet`: no progress display and no remarks (see [`remark!`]).
static QUIET: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether `--quiet` was given.
pub fn quiet() -> bool {
    QUIET.load(std::sync::atomic::Ordering::Relaxed)
}

/// Runs the chosen subcommand: a registered workload's through the
/// runtime, the others' by their module.
pub fn dispatch(m: &ArgMatches) -> Result<(), Failure> {
    let Some((name, sub)) = m.subcommand() else {
        return Err(Failure::Usage("no command given (see fslab --help)".into()));
    };
    let global_flag = |id: &str| {
        [sub, m]
            .iter()
            .any(|x| x.try_get_one::<bool>(id).ok().flatten() == Some(&true))
    };
    QUIET.store(global_flag("quiet"), std::sync::atomic::Ordering::Relaxed);
    let db = [sub, m]
        .iter()
        .find_map(|x| x.try_get_one::<PathBuf>("db").ok().flatten().cloned());
    if let Some(db) = &db {
        fslab_store::check_path(db).map_err(store_failure)?;
    }
    let db = db.unwrap_or_else(fslab_store::default_path);
    if let Some(kind) = WorkloadRef::of(name) {
        return jobs::run(kind, sub, &db);
    }
    let cli = Cli::from_arg_matches(m)
        .map_err(|e| Failure::Usage(fslab_workload::args::clap_error_line(&e)))?;
    // A host's lab runs once on each host, under the cluster's launcher.
    let workload = matches!(cli.command, Command::Job { .. } | Command::HostLab { .. });
    if let (false, Some(n @ 2..)) = (workload, fslab_cluster::launched_ranks()) {
        // Several `fslab run`s at once would format and mount side by side.
        return Err(Failure::Usage(format!(
            "started as one of {n} MPI ranks, but only the workload commands ({}) run on MPI \
             ranks: start this command once",
            WorkloadRef::names()
        )));
    }
    match cli.command {
        Command::Results(r) => results::run(r, &db),
        Command::Run(r) => run::run(r, &db),
        Command::Job { json } => jobs::from_json(&json, &db),
        Command::Rescue { dir } => fslab_runtime::ranks::rescue(&db, &dir).map_err(Failure::from),
        Command::Cleanup => cleanup::run(&db),
        Command::Bisect(b) => bisect::run(b, &db),
        Command::GuestCell { job } => {
            let display = || fslab_present::run::display::Display::new(quiet());
            Ok(fslab_experiment::guest_cell::run(&job, display)?)
        }
        Command::HostLab { action, json } => host_lab(&action, &json),
        Command::Crc32c { chunks } => {
            let lines = fslab_workload::crc32c::report(chunks)
                .map_err(|e| Failure::of(e.kind(), e.to_string()))?;
            say(lines)
        }
        Command::Compare(c) => compare::run(c, &db),
        Command::Stats { trim_outliers } => stats::run(trim_outliers),
        Command::Report { select, output } => report::run(select, &output, &db),
        Command::History {
            name,
            out,
            delta,
            alpha,
        } => history::run(name.as_deref(), &out, delta, alpha, &db),
        Command::Frag { verbose, files } => frag::run(&files, verbose),
        Command::Trace(t) => trace::run(t, &db),
        Command::Completions { shell } => {
            let mut cmd = crate::cli::command();
            let mut text = Vec::new();
            clap_complete::generate(shell, &mut cmd, "fslab", &mut text);
            print_all(&text)
        }
        Command::Man { command, dir } => man::run(&command, dir.as_deref()),
    }
}

/// `fslab host-lab ACTION JSON`: this host's report, one JSON line; a
/// failure to do it is in the report (status 1), bad JSON is status 2.
fn host_lab(action: &str, json: &str) -> Result<(), Failure> {
    let r = fslab_lab::host_lab::run(action, json).map_err(|e| Failure::Usage(e.to_string()))?;
    let line = serde_json::to_string(&r).map_err(|e| Failure::Failed(e.to_string()))?;
    say(line + "\n")?;
    r.failure(action)
        .map_or(Ok(()), |m| Err(Failure::Failed(m)))
}

/// Writes `bytes` to stdout, all of them; a reader that stopped reading
/// ends the command quietly ([`Failure::Closed`]).
fn print_all(bytes: &[u8]) -> Result<(), Failure> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    out.write_all(bytes)
        .and_then(|()| out.flush())
        .map_err(|e| match fslab_model::ErrorKind::of_output(&e) {
            fslab_model::ErrorKind::Closed => Failure::Closed,
            _ => Failure::Failed(format!("cannot write to stdout: {e}")),
        })
}

/// [`print_all`] of a text.
fn say(text: impl AsRef<str>) -> Result<(), Failure> {
    print_all(text.as_ref().as_bytes())
}

/// Prints what a command says: with `--output FILE`, the chosen format
/// ([`fslab_present::output::chosen`]) goes to FILE and the text to
/// stdout; without, the chosen format (else `default`) to stdout.
/// `render` makes the output in the format it is given by name.
fn emit(
    format: Option<&str>,
    output: Option<&Path>,
    default: &str,
    mut render: impl FnMut(&str) -> Result<String, Failure>,
) -> Result<(), Failure> {
    let Some(file) = output else {
        return print_all(render(format.unwrap_or(default))?.as_bytes());
    };
    let chosen = fslab_present::output::chosen(format, file, default);
    fslab_present::output::write(file, &render(&chosen)?).map_err(output_failure)?;
    print_all(render("text")?.as_bytes())?;
    remark!("fslab: wrote {} ({chosen})", file.display());
    Ok(())
}

/// `--output`'s or `--format`'s refusal as an exit status.
fn output_failure(e: fslab_present::output::OutputError) -> Failure {
    Failure::usage_if(e.is_usage(), e.to_string())
}

/// Checks that `--output FILE`'s directory exists before anything is read.
fn check_output(output: Option<&Path>) -> Result<(), Failure> {
    fslab_present::output::check_dir(output).map_err(output_failure)
}

/// A rendering error as an exit status: a bad selection is bad input.
fn results_failure(e: fslab_present::Error) -> Failure {
    Failure::usage_if(e.is_usage(), e.to_string())
}

/// The one stored run `text` names (`7`, `latest`, `latest~1`).
fn run_id(store: &fslab_store::Store, text: &str) -> Result<i64, Failure> {
    fslab_analysis::ids::resolve_one(store, text).map_err(analysis_failure)
}

/// An analysis error as an exit status: a bad selection is bad input.
fn analysis_failure(e: fslab_analysis::Error) -> Failure {
    results_failure(e.into())
}

/// A store's error as the command's ([`fslab_experiment::launch::Refusal::store`]).
fn store_failure(e: fslab_store::StoreError) -> Failure {
    fslab_experiment::launch::Refusal::store(e).into()
}

/// Opens the results store to write, or explains why not.
fn open_store(db: &Path) -> Result<fslab_store::Store, Failure> {
    fslab_store::Store::open(db).map_err(store_failure)
}

/// Opens the results store to read only (it writes nothing into it).
fn open_store_read(db: &Path) -> Result<fslab_store::Store, Failure> {
    fslab_store::Store::open_read(db).map_err(store_failure)
}
