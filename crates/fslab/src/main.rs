//! The `fslab` binary: parses the command line, then hands over to `cmd`.

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

/// How a command ended, as an exit status.
#[derive(Debug)]
pub enum Failure {
    /// Bad input: status 2.
    Usage(String),
    /// The work failed: status 1.
    Failed(String),
    /// Stopped by SIGINT or SIGTERM: status 130.
    Interrupted,
}

fn main() -> ExitCode {
    std::panic::set_hook(Box::new(|info| {
        let msg = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_default();
        // A reader that stopped reading (`fslab results list | head -1`):
        // the output was wanted no further, so end quietly, as Unix tools
        // do. (Anything to undo was undone before the output was printed.)
        if msg.starts_with("failed printing to std") && msg.contains("Broken pipe") {
            std::process::exit(0);
        }
        let at = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        eprintln!(
            "fslab: internal error: {}{at} (please report this)",
            msg.replace('\n', " ")
        );
    }));
    let parsed = cli::command()
        .try_get_matches()
        .and_then(|m| <cli::Cli as clap::FromArgMatches>::from_arg_matches(&m));
    let cli = match parsed {
        Ok(cli) => cli,
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
    match cmd::dispatch(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Usage(m)) => {
            eprintln!("fslab: {m}");
            ExitCode::from(2)
        }
        Err(Failure::Failed(m)) => {
            eprintln!("fslab: {m}");
            ExitCode::from(1)
        }
        Err(Failure::Interrupted) => ExitCode::from(130),
    }
}
