//! `fslab compare`: the cells of an experiment (or groups of runs), metric by
//! metric, with statistics: the analysis (fslab-analysis) in the format asked
//! for (one of fslab-present's exporters).

use std::path::Path;

use crate::Failure;
use fslab_present::select_args::CompareArgs;

pub fn run(args: CompareArgs, db: &Path) -> Result<(), Failure> {
    let exporter = fslab_present::export::of(&args.format).ok_or_else(|| {
        Failure::Usage(format!(
            "--format {}: no such format (formats: {})",
            args.format,
            fslab_present::export::names().join(", ")
        ))
    })?;
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
    let text = exporter
        .export(&a, &store)
        .map_err(super::results_failure)?;
    // Which kernels the groups ran on, when that is a difference, leads a
    // table for people; beside a format for programs it is a remark.
    let text = if matches!(args.format.as_str(), "text" | "markdown") {
        kernels
            .iter()
            .map(|l| format!("{l}\n\n"))
            .collect::<String>()
            + &text
    } else {
        for l in &kernels {
            eprintln!("fslab: compare: {l}");
        }
        text
    };
    super::print_all(text.as_bytes())
}
