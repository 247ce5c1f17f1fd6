//! `fslab dbench`.

use std::path::Path;

use fslab_workload::dbench::{self, DbenchArgs};

use super::rank::Rank;

use crate::Failure;

pub fn run(mut args: DbenchArgs, db: &Path, rank: &Rank) -> Result<(), Failure> {
    if args.print_loadfile {
        print!("{}", fslab_workload::dbench_load::model());
        return Ok(());
    }
    let kinds = super::workload::prepare("dbench", &args.common)?;
    args.dir = rank.dir("dbench", &args.dir)?;
    let opts = args
        .validate()
        .map_err(|e| super::workload_failure("dbench", e))?;
    let argv: Vec<String> = std::env::args().collect();
    super::workload::run(
        "dbench",
        &args.common,
        &kinds,
        db,
        &opts.dir,
        rank,
        |stop, out, store, hooks| dbench::run(&opts, &argv, stop, out, store, hooks),
    )
}
