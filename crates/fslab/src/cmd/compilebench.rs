//! `fslab compilebench`.

use std::path::Path;

use fslab_workload::compilebench::{self, CompileArgs};

use super::rank::Rank;

use crate::Failure;

pub fn run(mut args: CompileArgs, db: &Path, rank: &Rank) -> Result<(), Failure> {
    let kinds = super::workload::prepare("compilebench", &args.common)?;
    args.dir = rank.dir("compilebench", &args.dir)?;
    let opts = args
        .validate()
        .map_err(|e| super::workload_failure("compilebench", e))?;
    let argv: Vec<String> = std::env::args().collect();
    super::workload::run(
        "compilebench",
        &args.common,
        &kinds,
        db,
        &opts.dir,
        rank,
        |stop, out, store, hooks| compilebench::run(&opts, &argv, stop, out, store, hooks),
    )
}
