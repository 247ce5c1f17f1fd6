//! `fslab WORKLOAD ...` and `fslab job JSON`: a registered workload's job
//! with its harness, from its subcommand's arguments or as `fslab run`
//! serialized it, run with everything around it by [`fslab_runtime`].

use std::path::Path;

use clap::ArgMatches;
use fslab_workload::{ChildSpec, WorkloadRef};

use crate::Failure;

/// `fslab WORKLOAD ARGS`: the workload's job from its arguments, its
/// harness from what was typed.
pub fn run(kind: WorkloadRef, m: &ArgMatches, db: &Path) -> Result<(), Failure> {
    let job = kind
        .workload()
        .job_of_matches(m)
        .map_err(|e| Failure::of(e.kind(), format!("{}: {e}", kind.name())))?;
    let harness = job.common().harness(std::env::args().collect());
    launch(ChildSpec { job, harness }, db)
}

/// `fslab job JSON`: the [`ChildSpec`] `fslab run` serialized
/// (`{"job": {"workload": NAME, "options": {...}}, "harness": {...}}`),
/// run exactly as the workload's own subcommand runs it.
pub fn from_json(text: &str, db: &Path) -> Result<(), Failure> {
    let spec: ChildSpec = serde_json::from_str(text)
        .map_err(|e| Failure::Usage(format!("job: {e}: not a child spec ({text:.80})")))?;
    launch(spec, db)
}

fn launch(spec: ChildSpec, db: &Path) -> Result<(), Failure> {
    let cx = fslab_runtime::Context {
        db,
        quiet: super::quiet(),
    };
    fslab_runtime::run(spec, &cx).map_err(Failure::from)
}
