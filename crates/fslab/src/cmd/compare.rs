//! `fslab compare`: the cells of an experiment (or groups of runs), metric by
//! metric, with statistics (selection in fslab-results, numbers in fslab-stats).

use std::path::Path;

use fslab_results::comparison;
use fslab_results::select;
use fslab_stats::compare;

use crate::cli::{CompareArgs, CompareFormat};
use crate::Failure;

pub fn run(args: CompareArgs, db: &Path) -> Result<(), Failure> {
    let store = super::open_store_read(db)?;
    let g = select::select(&store, &args.experiment, &args.runs).map_err(super::results_failure)?;
    for w in select::complete_runs(&g).map_err(super::results_failure)? {
        remark!("fslab: compare: {w}");
    }
    for n in select::check_mix(&store, &g).map_err(super::results_failure)? {
        remark!("fslab: compare: note: {n}");
    }
    let base = select::baseline_of(&g, args.baseline.as_deref()).map_err(super::results_failure)?;
    let m = select::metrics(&store, &g).map_err(super::results_failure)?;
    let policy = args.correction.policy_at(args.delta, args.alpha);
    let calibrated = if args.delta.is_some() {
        Vec::new()
    } else {
        fslab_results::calibration::thresholds(&store, &g, &m, args.calibration)
            .map_err(super::results_failure)?
    };
    let rows = compare::compare_calibrated(&g.labels, &m, base, policy, &calibrated);
    let kernels = fslab_results::kernels::lines(
        &fslab_results::kernels::group_kernels(&store, &g).map_err(super::results_failure)?,
    );
    let text = match args.format {
        // The experiments' stated findings follow the table; which kernels
        // the groups ran on, when that is a difference, leads it.
        CompareFormat::Text => {
            let mut t: String = kernels.iter().map(|l| format!("{l}\n\n")).collect();
            t.push_str(&comparison::text(&rows));
            for id in &g.experiments {
                let e = store
                    .experiment(*id)
                    .map_err(|e| super::results_failure(e.into()))?;
                t.push_str(&fslab_experiment::findings::text(&e.findings));
            }
            t
        }
        CompareFormat::Markdown => {
            let mut t: String = kernels.iter().map(|l| format!("{l}\n\n")).collect();
            t.push_str(&comparison::markdown(&rows));
            t
        }
        CompareFormat::Csv => comparison::csv(&rows),
        CompareFormat::Json => select::json(&g.labels, base, &rows),
    };
    if matches!(args.format, CompareFormat::Csv | CompareFormat::Json) {
        for l in &kernels {
            eprintln!("fslab: compare: {l}");
        }
    }
    super::print_all(text.as_bytes())
}
