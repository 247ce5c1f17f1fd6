//! `fslab tiotest`.

use std::path::Path;

use fslab_workload::tiotest::{self, TioArgs};

use crate::Failure;

pub fn run(mut args: TioArgs, db: &Path) -> Result<(), Failure> {
    args.common.drop_caches |= args.drop;
    let kinds = super::workload::prepare("tiotest", &args.common)?;
    let opts = args
        .validate()
        .map_err(|e| Failure::Usage(format!("tiotest: {e}")))?;
    let argv: Vec<String> = std::env::args().collect();
    super::workload::run(
        "tiotest",
        &args.common,
        &kinds,
        db,
        &opts.dirs[0],
        |stop, out, store, hooks| tiotest::run(&opts, &argv, stop, out, store, hooks),
    )
}
