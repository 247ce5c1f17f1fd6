//! `fslab compare`: the cells of an experiment (or groups of runs), metric by
//! metric, with statistics: the analysis (fslab-analysis) in the format asked
//! for (one of fslab-present's exporters), optionally written to a file.

use std::path::Path;

use crate::Failure;
use fslab_present::select_args::CompareArgs;

pub fn run(args: CompareArgs, db: &Path) -> Result<(), Failure> {
    super::check_output(args.output.as_deref())?;
    let store = super::open_store_read(db)?;
    // A comparison of nothing is said, not printed as an empty table.
    let choice = fslab_analysis::Choice {
        refuse_empty: true,
        ..args.select.choice(fslab_explain::EXPLAINERS)
    };
    let a = fslab_analysis::from_store(&store, &choice).map_err(super::analysis_failure)?;
    for w in &a.warnings {
        remark!("fslab: compare: {w}");
    }
    for n in &a.notes {
        remark!("fslab: compare: note: {n}");
    }
    let kernels = fslab_analysis::kernels::lines(
        &fslab_analysis::kernels::group_kernels(&store, &a.labels, &a.runs)
            .map_err(super::analysis_failure)?,
    );
    // Which kernels the groups ran on, when that is a difference, leads a
    // table for people; beside a format for programs on the terminal it is
    // a remark.
    let format = args.format.as_deref();
    if args.output.is_none() && !fslab_present::export::for_people(format.unwrap_or("text")) {
        for l in &kernels {
            remark!("fslab: compare: {l}");
        }
    }
    super::emit(format, args.output.as_deref(), "text", |name| {
        fslab_present::export::export_as(name, &a, &store, &kernels).map_err(super::results_failure)
    })
}
