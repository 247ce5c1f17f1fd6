//! `fslab WORKLOAD ...` and `fslab job JSON`: a registered workload's job,
//! from its subcommand's arguments or serialized by `fslab run`, run with
//! everything around it by [`fslab_runtime`].

use std::path::Path;

use clap::ArgMatches;
use fslab_workload::{Job, Kind};

use crate::Failure;

/// `fslab WORKLOAD ARGS`: the workload's job from its arguments.
pub fn run(kind: Kind, m: &ArgMatches, db: &Path) -> Result<(), Failure> {
    let job = kind
        .workload()
        .job_of_matches(m)
        .map_err(|e| workload_failure(kind.name(), e))?;
    let argv: Vec<String> = std::env::args().collect();
    launch(job, db, &argv)
}

/// `fslab job JSON`: the job `fslab run` serialized
/// (`{"workload": NAME, "options": {...}, "argv": [...]}`), run exactly as
/// the workload's own subcommand runs it; `argv` is the command line
/// recorded (this one's when it is not given).
pub fn from_json(text: &str, db: &Path) -> Result<(), Failure> {
    let v: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| Failure::Usage(format!("job: {e}: not a serialized job ({text:.80})")))?;
    let job = Job::from_json(&v).map_err(|e| Failure::Usage(format!("job: {e}")))?;
    let argv = match v.get("argv") {
        None => std::env::args().collect(),
        Some(a) => serde_json::from_value::<Vec<String>>(a.clone()).map_err(|e| {
            Failure::Usage(format!("job: \"argv\": {e}: give the command line's words"))
        })?,
    };
    launch(job, db, &argv)
}

fn launch(job: Job, db: &Path, argv: &[String]) -> Result<(), Failure> {
    let cx = fslab_runtime::Context {
        db,
        quiet: super::quiet(),
        argv,
    };
    fslab_runtime::run(job, &cx).map_err(Failure::from)
}

/// A workload's error as the command's failure: bad options exit 2,
/// anything else 1.
fn workload_failure(name: &str, e: fslab_workload::Error) -> Failure {
    let m = format!("{name}: {e}");
    if e.is_usage() {
        Failure::Usage(m)
    } else {
        Failure::Failed(m)
    }
}
