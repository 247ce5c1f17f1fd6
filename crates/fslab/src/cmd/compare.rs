//! `fslab compare`: the cells of an experiment (or groups of runs), metric by
//! metric, with statistics: the analysis (fslab-analysis) in the format asked for.

use std::path::Path;

use fslab_results::comparison;

use crate::cli::{CompareArgs, CompareFormat};
use crate::Failure;

pub fn run(args: CompareArgs, db: &Path) -> Result<(), Failure> {
    let store = super::open_store_read(db)?;
    // A comparison of nothing is said, not printed as an empty table.
    let choice = fslab_analysis::Choice {
        refuse_empty: true,
        ..args.select.choice()
    };
    let a = fslab_analysis::from_store(&store, &choice).map_err(super::analysis_failure)?;
    for w in &a.warnings {
        remark!("fslab: compare: {w}");
    }
    for n in &a.notes {
        remark!("fslab: compare: note: {n}");
    }
    let text = match args.format {
        // The experiments' stated findings follow the table.
        CompareFormat::Text => {
            let mut t = comparison::text(&a.rows);
            for e in &a.experiments {
                t.push_str(&fslab_experiment::findings::text(&e.findings));
            }
            t
        }
        CompareFormat::Markdown => comparison::markdown(&a.rows),
        CompareFormat::Csv => comparison::csv(&a.rows),
        CompareFormat::Json => comparison::json(&a),
    };
    super::print_all(text.as_bytes())
}
