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
    let mut rows = compare::compare_calibrated(&g.labels, &m, base, policy, &calibrated);
    let explained = explanation(&store, &g, base)?;
    fslab_explain::mark(&mut rows, &explained);
    let text = match args.format {
        // The machines are checked before the verdicts; what limited each
        // phase follows them, then the experiments' stated findings.
        CompareFormat::Text => {
            let mut t = fslab_explain::text::confounders(&explained);
            t.push('\n');
            t.push_str(&comparison::text(&rows));
            let after = fslab_explain::text::after_verdicts(&explained);
            if !after.is_empty() {
                t.push('\n');
                t.push_str(&after);
            }
            for id in &g.experiments {
                let e = store
                    .experiment(*id)
                    .map_err(|e| super::results_failure(e.into()))?;
                t.push_str(&fslab_experiment::findings::text(&e.findings));
            }
            t
        }
        CompareFormat::Markdown => comparison::markdown(&rows),
        CompareFormat::Csv => comparison::csv(&rows),
        CompareFormat::Json => select::json(&g.labels, base, &rows, Some(&explained)),
    };
    super::print_all(text.as_bytes())
}

/// The groups explained: their machines, each phase's limiter (wait
/// stacks classed with the experiments' own `[[wait_class]]` entries
/// first), differential profiles, operation shares.
fn explanation(
    store: &fslab_store::Store,
    g: &select::Groups,
    base: usize,
) -> Result<fslab_explain::Explanation, Failure> {
    let mut entries = Vec::new();
    for id in &g.experiments {
        let e = store
            .experiment(*id)
            .map_err(|e| super::results_failure(e.into()))?;
        entries.extend(fslab_experiment::spec::wait_classes_of(&e.text));
    }
    // Checked when the experiment was read; a table that no longer passes
    // (an older fslab's) falls back to the built-in one.
    let waits = fslab_explain::WaitTable::with(&entries)
        .unwrap_or_else(|_| fslab_explain::WaitTable::builtin());
    let ids: Vec<Vec<i64>> = g
        .runs
        .iter()
        .map(|rs| rs.iter().map(|r| r.id).collect())
        .collect();
    fslab_explain::stored::explain_stored(store, &g.labels, &ids, base, &waits)
        .map_err(|e| super::results_failure(e.into()))
}
