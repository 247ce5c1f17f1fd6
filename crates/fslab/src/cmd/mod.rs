//! One module per subcommand.

mod bisect;
mod calibrate;
mod cleanup;
mod compare;
mod frag;
mod guest;
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
use fslab_workload::Kind;

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
        check_db_option(db)?;
    }
    let db = db.unwrap_or_else(fslab_store::default_path);
    if let Some(kind) = Kind::of(name) {
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
            Kind::names()
        )));
    }
    match cli.command {
        Command::Results(r) => results::run(r, &db),
        Command::Run(r) => run::run(r, &db),
        Command::Job { json } => jobs::from_json(&json, &db),
        Command::Rescue { dir } => fslab_runtime::ranks::rescue(&db, &dir).map_err(Failure::from),
        Command::Cleanup => cleanup::run(&db),
        Command::Bisect(b) => bisect::run(b, &db),
        Command::GuestCell { job } => guest::run(&job),
        Command::HostLab { action, json } => host_lab(&action, &json),
        Command::Crc32c { chunks } => crc32c(chunks),
        Command::Compare(c) => compare::run(c, &db),
        Command::Stats { trim_outliers } => stats::run(trim_outliers),
        Command::Report { select, output } => report::run(select, &output, &db),
        Command::History { name, delta, alpha } => history::run(name.as_deref(), delta, alpha, &db),
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
    let r =
        fslab_experiment::host_lab::run(action, json).map_err(|e| Failure::Usage(e.to_string()))?;
    println!(
        "{}",
        serde_json::to_string(&r).map_err(|e| Failure::Failed(e.to_string()))?
    );
    if r.ok {
        Ok(())
    } else {
        Err(Failure::Failed(format!(
            "host-lab {action} on {}: {}",
            r.host,
            r.error.unwrap_or_default()
        )))
    }
}

/// Writes `bytes` to stdout; a reader that stopped reading ends it quietly.
fn print_all(bytes: &[u8]) -> Result<(), Failure> {
    use std::io::Write;
    match std::io::stdout().write_all(bytes) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(Failure::Failed(format!("cannot write to stdout: {e}")))
        }
        _ => Ok(()),
    }
}

/// A rendering error as an exit status: a bad selection is bad input.
fn results_failure(e: fslab_present::Error) -> Failure {
    if e.is_usage() {
        Failure::Usage(e.to_string())
    } else {
        Failure::Failed(e.to_string())
    }
}

/// An analysis error as an exit status: a bad selection is bad input.
fn analysis_failure(e: fslab_analysis::Error) -> Failure {
    results_failure(e.into())
}

/// Opens the results store to write, or explains why not.
fn open_store(db: &Path) -> Result<fslab_store::Store, Failure> {
    fslab_store::Store::open(db).map_err(|e| match e {
        e @ fslab_store::StoreError::Inconsistent { .. } => Failure::Usage(e.to_string()),
        e => Failure::Failed(format!("results store {e}")),
    })
}

/// Opens the results store to read only (it writes nothing into it).
fn open_store_read(db: &Path) -> Result<fslab_store::Store, Failure> {
    fslab_store::Store::open_read(db).map_err(|e| match e {
        e @ (fslab_store::StoreError::Missing(_)
        | fslab_store::StoreError::NotAStore(_)
        | fslab_store::StoreError::Inconsistent { .. }) => Failure::Usage(e.to_string()),
        e => Failure::Failed(format!("results store {e}")),
    })
}

/// `--db PATH` names a file in an existing directory: fslab makes the
/// directories of its default store only, never ones a typo names.
fn check_db_option(db: &Path) -> Result<(), Failure> {
    let dir = db.parent().filter(|d| !d.as_os_str().is_empty());
    match dir {
        Some(d) if !d.is_dir() => Err(Failure::Usage(format!(
            "--db {}: directory {} does not exist",
            db.display(),
            d.display()
        ))),
        _ if db.is_dir() => Err(Failure::Usage(format!(
            "--db {}: is a directory; give a file (results.sqlite)",
            db.display()
        ))),
        _ => Ok(()),
    }
}

/// `fslab crc32c`: the self-test line for each implementation.
fn crc32c(chunks: usize) -> Result<(), Failure> {
    if chunks == 0 {
        return Err(Failure::Usage(
            "crc32c: --chunks 0: must be at least 1".into(),
        ));
    }
    let results = fslab_workload::crc32c::selftest(chunks)
        .map_err(|e| Failure::Failed(format!("crc32c: tests FAILED: {e}")))?;
    for r in &results {
        println!(
            "crc32c: tests passed, {} bytes in {:.0} usec ({}: {:.0} MB/s)",
            r.bytes, r.usec, r.name, r.mb_per_s
        );
    }
    Ok(())
}
