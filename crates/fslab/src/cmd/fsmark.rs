//! `fslab fsmark`.

use std::path::Path;

use fslab_workload::fsmark;
use fslab_workload::fsmark::cli::FsMarkArgs;

use super::rank::Rank;

use crate::Failure;

pub fn run(args: FsMarkArgs, db: &Path, rank: &Rank) -> Result<(), Failure> {
    let kinds = super::workload::prepare("fsmark", &args.common)?;
    let mut raw = args.raw();
    for d in &mut raw.dirs {
        *d = rank.dir("fsmark", d)?;
    }
    let opts = raw
        .validate()
        .map_err(|e| super::workload_failure("fsmark", e.into()))?;
    // The -d directories must exist for the probes to find their filesystem.
    for d in &opts.dirs {
        let _ = std::fs::create_dir(d);
    }
    let argv: Vec<String> = std::env::args().collect();
    super::workload::run(
        "fsmark",
        &args.common,
        &kinds,
        db,
        &opts.dirs[0],
        rank,
        |stop, out, store, hooks| fsmark::run_with(&opts, &argv, stop, out, store, hooks),
    )
}
