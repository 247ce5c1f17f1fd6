//! The `fslab` command line as a library: [`main_with`] parses the
//! command line and hands over to `cmd`. The workload subcommands come
//! from the registry ([`fslab_workload::plugin::all`]) and run through
//! [`fslab_runtime`]; `main.rs` calls [`main_with`] with no workloads of
//! its own, and a test binary with one it registers (`tests/plugin_workload.rs`).

/// A remark on stderr: what fslab says that is neither a result, a
/// warning nor an error; `--quiet` leaves it out.
macro_rules! remark {
    ($($t:tt)*) => {
        if !$crate::cmd::quiet() {
            eprintln!($($t)*);
        }
    };
}

mod cli;
mod cmd;

use std::process::ExitCode;

use fslab_workload::plugin::AnyWorkload;

use fslab_model::ErrorKind;

/// How a command ended other than well: its one line, and its kind, which
/// is its exit status ([`ErrorKind::exit_code`]).
#[derive(Debug)]
pub enum Failure {
    /// Bad input: status 2.
    Usage(String),
    /// The work failed: status 1.
    Failed(String),
    /// Stopped by SIGINT or SIGTERM (said already): status 130.
    Interrupted,
    /// The reader of the output went away: status 0, nothing said.
    Closed,
}

impl Failure {
    /// A failure of kind `kind` saying `message`.
    pub fn of(kind: ErrorKind, message: String) -> Failure {
        match kind {
            ErrorKind::Usage => Failure::Usage(message),
            ErrorKind::Failed => Failure::Failed(message),
            ErrorKind::Interrupted => Failure::Interrupted,
            ErrorKind::Closed => Failure::Closed,
        }
    }

    /// Bad input when `usage`, else a failure, saying `line`.
    pub fn usage_if(usage: bool, line: String) -> Failure {
        match usage {
            true => Failure::Usage(line),
            false => Failure::Failed(line),
        }
    }

    pub fn kind(&self) -> ErrorKind {
        match self {
            Failure::Usage(_) => ErrorKind::Usage,
            Failure::Failed(_) => ErrorKind::Failed,
            Failure::Interrupted => ErrorKind::Interrupted,
            Failure::Closed => ErrorKind::Closed,
        }
    }

    /// Its one line, if it says one.
    fn line(&self) -> Option<&str> {
        match self {
            Failure::Usage(m) | Failure::Failed(m) => Some(m),
            Failure::Interrupted | Failure::Closed => None,
        }
    }
}

impl From<fslab_experiment::launch::Refusal> for Failure {
    fn from(e: fslab_experiment::launch::Refusal) -> Failure {
        Failure::of(e.kind(), e.to_string())
    }
}

impl From<fslab_runtime::Error> for Failure {
    fn from(e: fslab_runtime::Error) -> Failure {
        Failure::of(e.kind(), e.to_string())
    }
}

/// fslab with `extra` workloads registered beside the built-in ones (a
/// test's own): parses this process's command line and runs it. The
/// children `fslab run` starts are this same executable, so a test binary
/// that calls this when given fslab's arguments is their fslab too.
pub fn main_with(extra: &[&'static dyn AnyWorkload]) -> ExitCode {
    for w in extra {
        let refused = if cli::is_own_command(w.name()) {
            Err(format!(
                "workload {:?}: the name of a command of fslab's own",
                w.name()
            ))
        } else {
            fslab_workload::plugin::register(*w).map_err(|e| e.to_string())
        };
        if let Err(e) = refused {
            eprintln!("fslab: {e}");
            return ExitCode::from(2);
        }
    }
    std::panic::set_hook(Box::new(|info| {
        let msg = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_default();
        let at = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        eprintln!(
            "fslab: internal error: {}{at} (please report this)",
            msg.replace('\n', " ")
        );
    }));
    let matches = match cli::command().try_get_matches() {
        Ok(m) => m,
        Err(e) => {
            use clap::error::ErrorKind::*;
            if matches!(
                e.kind(),
                DisplayHelp | DisplayVersion | DisplayHelpOnMissingArgumentOrSubcommand
            ) {
                let _ = e.print();
                return ExitCode::from(if e.kind() == DisplayHelpOnMissingArgumentOrSubcommand {
                    2
                } else {
                    0
                });
            }
            eprintln!("fslab: {}", fslab_workload::args::clap_error_line(&e));
            return ExitCode::from(2);
        }
    };
    match cmd::dispatch(&matches) {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            if let Some(m) = f.line() {
                eprintln!("fslab: {m}");
            }
            ExitCode::from(f.kind().exit_code())
        }
    }
}

/// The whole command line as clap knows it (every registered workload's
/// subcommand included): what the guide's commands are checked against.
pub fn cli_command() -> clap::Command {
    cli::command()
}
