//! `fslab alloctest`.

use std::path::{Path, PathBuf};

use fslab_workload::alloctest::{self, AllocArgs};

use crate::Failure;

pub fn run(args: AllocArgs, db: &Path) -> Result<(), Failure> {
    let kinds = super::workload::prepare("alloctest", &args.common)?;
    let opts = args
        .validate()
        .map_err(|e| Failure::Usage(format!("alloctest: {e}")))?;
    let dir = opts
        .file
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("."));
    let argv: Vec<String> = std::env::args().collect();
    super::workload::run(
        "alloctest",
        &args.common,
        &kinds,
        db,
        &dir,
        |stop, out, store, hooks| alloctest::run(&opts, &argv, stop, out, store, hooks),
    )
}
