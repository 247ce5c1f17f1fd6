//! `fslab tiotest`.

use std::path::Path;

use fslab_workload::tiotest::{self, TioArgs};

use super::rank::Rank;

use crate::Failure;

pub fn run(mut args: TioArgs, db: &Path, rank: &Rank) -> Result<(), Failure> {
    args.common.drop_caches |= args.drop;
    let kinds = super::workload::prepare("tiotest", &args.common)?;
    for d in &mut args.dirs {
        *d = rank.dir("tiotest", d)?;
    }
    let opts = args
        .validate()
        .map_err(|e| super::workload_failure("tiotest", e))?;
    let argv: Vec<String> = std::env::args().collect();
    super::workload::run(
        "tiotest",
        &args.common,
        &kinds,
        db,
        &opts.dirs[0],
        rank,
        |stop, out, store, hooks| tiotest::run(&opts, &argv, stop, out, store, hooks),
    )
}
