//! `fslab compilebench`.

use std::path::Path;

use fslab_workload::compilebench::{self, CompileArgs};

use fslab_cluster::Cluster;

use crate::Failure;

pub fn run(mut args: CompileArgs, db: &Path, cluster: &dyn Cluster) -> Result<(), Failure> {
    let kinds = super::workload::prepare("compilebench", &args.common)?;
    args.dir = super::workload::rank_dir("compilebench", cluster, &args.dir)?;
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
        cluster,
        |stop, out, store, hooks| compilebench::run(&opts, &argv, stop, out, store, hooks),
    )
}
