//! One module per subcommand.

mod alloctest;
mod builtin;
mod cleanup;
mod compare;
mod compilebench;
mod createmany;
mod dbench;
mod frag;
mod fsmark;
mod report;
mod results;
mod run;
mod stats;
mod tiotest;
mod trace;
mod workload;

use std::path::Path;

use crate::cli::{Cli, Command};
use crate::Failure;

/// Runs the chosen subcommand.
pub fn dispatch(cli: Cli) -> Result<(), Failure> {
    let db = cli.db.unwrap_or_else(fslab_store::default_path);
    match cli.command {
        Command::FsMark(args) => fsmark::run(args, &db),
        Command::Results(r) => results::run(r, &db),
        Command::Run(r) => run::run(r, &db),
        Command::AllocTest(a) => alloctest::run(a, &db),
        Command::CreateMany(a) => createmany::run(a, &db),
        Command::Dbench(a) => dbench::run(a, &db),
        Command::CompileBench(a) => compilebench::run(a, &db),
        Command::TioTest(a) => tiotest::run(a, &db),
        Command::Cleanup => cleanup::run(),
        Command::Crc32c { chunks } => crc32c(chunks),
        Command::Compare(c) => compare::run(c, &db),
        Command::Stats { trim_outliers } => stats::run(trim_outliers),
        Command::Report { select, output } => report::run(select, &output, &db),
        Command::Frag { verbose, files } => frag::run(&files, verbose),
        Command::Trace(t) => trace::run(t, &db),
    }
}

/// A flag set by SIGINT or SIGTERM; a second signal exits at once (130).
fn stop_on_signals() -> Result<std::sync::Arc<std::sync::atomic::AtomicBool>, Failure> {
    use std::sync::{atomic::AtomicBool, Arc};
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register_conditional_shutdown(sig, 130, Arc::clone(&stop))
            .and_then(|_| signal_hook::flag::register(sig, Arc::clone(&stop)))
            .map_err(|e| Failure::Failed(format!("cannot install signal handlers: {e}")))?;
    }
    Ok(stop)
}

/// Opens the results store, or explains why not.
fn open_store(db: &Path) -> Result<fslab_store::Store, Failure> {
    fslab_store::Store::open(db).map_err(|e| Failure::Failed(format!("results store {e}")))
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
