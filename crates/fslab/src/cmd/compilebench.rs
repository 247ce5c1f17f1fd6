//! `fslab compilebench`.

use std::path::Path;

use fslab_workload::compilebench::{self, CompileArgs};

use crate::Failure;

pub fn run(args: CompileArgs, db: &Path) -> Result<(), Failure> {
    let kinds = super::workload::prepare("compilebench", &args.common)?;
    let opts = args
        .validate()
        .map_err(|e| Failure::Usage(format!("compilebench: {e}")))?;
    let argv: Vec<String> = std::env::args().collect();
    super::workload::run(
        "compilebench",
        &args.common,
        &kinds,
        db,
        &opts.dir,
        |stop, out, store, hooks| compilebench::run(&opts, &argv, stop, out, store, hooks),
    )
}
