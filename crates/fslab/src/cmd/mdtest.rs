//! `fslab mdtest`: its workload ([`fslab_workload::mdtest`]) run on this
//! process's MPI ranks, which work together within its phases (the
//! stonewall agreement, rank 0's SUMMARY of every rank).

use std::path::Path;

use fslab_workload::mdtest::MdtestArgs;

use super::rank::Rank;
use crate::Failure;

pub fn run(args: MdtestArgs, db: &Path, rank: &Rank) -> Result<(), Failure> {
    let kinds = super::workload::prepare("mdtest", &args.common)?;
    let opts = args
        .validate()
        .map_err(|e| super::workload_failure("mdtest", e))?;
    let argv: Vec<String> = std::env::args().collect();
    let cluster = rank.cluster();
    // Under MPI the runtime gives the ranks no text output; mdtest's is
    // rank 0's SUMMARY of every rank, so rank 0 prints it (before the
    // runtime's merged summary).
    let own_text = rank.size() > 1 && cluster.rank() == 0 && !args.common.json;
    super::workload::run(
        "mdtest",
        &args.common,
        &kinds,
        db,
        &opts.dir,
        rank,
        |stop, out, store, hooks| {
            let mut stdout = std::io::stdout();
            let out: &mut dyn std::io::Write = if own_text { &mut stdout } else { out };
            fslab_workload::mdtest::run(&opts, &argv, cluster, stop, out, store, hooks)
        },
    )
}
