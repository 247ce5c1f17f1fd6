//! `fslab createmany`.

use std::path::Path;

use fslab_workload::createmany::{self, CreateManyArgs};

use fslab_cluster::Cluster;

use crate::Failure;

pub fn run(mut args: CreateManyArgs, db: &Path, cluster: &dyn Cluster) -> Result<(), Failure> {
    let kinds = super::workload::prepare("createmany", &args.common)?;
    // Each rank's names go in a directory of its own; a -l target is shared.
    let ranked = |f: &str| {
        super::workload::rank_file("createmany", cluster, Path::new(f))
            .map(|p| p.to_string_lossy().into_owned())
    };
    args.fmt = ranked(&args.fmt)?;
    if let Some(u) = args.unlink_fmt.take() {
        args.unlink_fmt = Some(ranked(&u)?);
    }
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
        cluster,
        |stop, out, store, hooks| createmany::run(&opts, &argv, stop, out, store, hooks),
    )
}
