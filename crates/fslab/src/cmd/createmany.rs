//! `fslab createmany`.

use std::path::Path;

use fslab_workload::createmany::{self, CreateManyArgs};

use super::rank::Rank;

use crate::Failure;

pub fn run(mut args: CreateManyArgs, db: &Path, rank: &Rank) -> Result<(), Failure> {
    let kinds = super::workload::prepare("createmany", &args.common)?;
    // Each rank's names go in a directory of its own; a -l target is shared.
    let ranked = |f: &str| {
        rank.file("createmany", Path::new(f))
            .map(|p| p.to_string_lossy().into_owned())
    };
    if !args.shared_dir {
        args.fmt = ranked(&args.fmt)?;
        if let Some(u) = args.unlink_fmt.take() {
            args.unlink_fmt = Some(ranked(&u)?);
        }
    }
    let mut opts = args
        .validate()
        .map_err(|e| super::workload_failure("createmany", e))?;
    if args.shared_dir && rank.size() > 1 {
        // One directory for all: each rank takes its own block of numbers.
        if args.numbers.is_empty() {
            return Err(Failure::Usage(
                "createmany: --shared-dir needs COUNT: rank R takes the numbers from START + R x COUNT"
                    .into(),
            ));
        }
        opts.start = i64::try_from(opts.count)
            .ok()
            .and_then(|c| c.checked_mul(rank.cluster().rank() as i64))
            .and_then(|off| opts.start.checked_add(off))
            .ok_or_else(|| {
                Failure::Usage(format!(
                    "createmany: --shared-dir: rank {}'s numbers would pass {}",
                    rank.cluster().rank(),
                    i64::MAX
                ))
            })?;
    }
    let argv: Vec<String> = std::env::args().collect();
    super::workload::run(
        "createmany",
        &args.common,
        &kinds,
        db,
        &opts.dir(),
        rank,
        |stop, out, store, hooks| createmany::run(&opts, &argv, stop, out, store, hooks),
    )
}
