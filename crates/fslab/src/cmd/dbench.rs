//! `fslab dbench`.

use std::path::Path;

use fslab_workload::dbench::{self, DbenchArgs};

use fslab_cluster::Cluster;

use crate::Failure;

pub fn run(mut args: DbenchArgs, db: &Path, cluster: &dyn Cluster) -> Result<(), Failure> {
    if args.print_loadfile {
        print!("{}", fslab_workload::dbench_load::model());
        return Ok(());
    }
    let kinds = super::workload::prepare("dbench", &args.common)?;
    args.dir = super::workload::rank_dir("dbench", cluster, &args.dir)?;
    let opts = args
        .validate()
        .map_err(|e| Failure::Usage(format!("dbench: {e}")))?;
    let argv: Vec<String> = std::env::args().collect();
    super::workload::run(
        "dbench",
        &args.common,
        &kinds,
        db,
        &opts.dir,
        cluster,
        |stop, out, store, hooks| dbench::run(&opts, &argv, stop, out, store, hooks),
    )
}
