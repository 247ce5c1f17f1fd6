//! One module per subcommand.

mod fsmark;
mod results;

use std::path::PathBuf;

use crate::cli::{Cli, Command};
use crate::Failure;

/// Runs the chosen subcommand.
pub fn dispatch(cli: Cli) -> Result<(), Failure> {
    let db = cli.db.unwrap_or_else(fslab_store::default_path);
    match cli.command {
        Command::FsMark(args) => fsmark::run(args, &db),
        Command::Results(r) => results::run(r, &db),
    }
}

/// Opens the results store, or explains why not.
fn open_store(db: &PathBuf) -> Result<fslab_store::Store, Failure> {
    fslab_store::Store::open(db).map_err(|e| Failure::Failed(format!("results store {e}")))
}
