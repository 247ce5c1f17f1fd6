//! `fslab alloctest`.

use std::path::{Path, PathBuf};

use fslab_workload::alloctest::{self, AllocArgs};

use super::rank::Rank;

use crate::Failure;

pub fn run(mut args: AllocArgs, db: &Path, rank: &Rank) -> Result<(), Failure> {
    let kinds = super::workload::prepare("alloctest", &args.common)?;
    args.file = rank.file("alloctest", &args.file)?;
    let opts = args
        .validate()
        .map_err(|e| super::workload_failure("alloctest", e))?;
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
        rank,
        |stop, out, store, hooks| alloctest::run(&opts, &argv, stop, out, store, hooks),
    )
}
