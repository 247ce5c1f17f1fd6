//! `fslab createmany`.

use std::path::Path;

use fslab_workload::createmany::{self, CreateManyArgs};

use crate::Failure;

pub fn run(args: CreateManyArgs, db: &Path) -> Result<(), Failure> {
    let kinds = super::workload::prepare("createmany", &args.common)?;
    let opts = args
        .validate()
        .map_err(|e| Failure::Usage(format!("createmany: {e}")))?;
    let argv: Vec<String> = std::env::args().collect();
    super::workload::run(
        "createmany",
        &args.common,
        &kinds,
        db,
        &opts.dir(),
        |stop, out, store, hooks| createmany::run(&opts, &argv, stop, out, store, hooks),
    )
}
