//! `fslab history`: the change points of one experiment's stored runs over
//! time (numbers in fslab-analysis and fslab-stats, text in fslab-present).

use std::path::Path;

use crate::Failure;

pub fn run(name: Option<&str>, delta: Option<f64>, alpha: f64, db: &Path) -> Result<(), Failure> {
    let store = super::open_store_read(db)?;
    let policy = fslab_stats::verdict::Policy {
        alpha,
        delta_pct: delta,
        ..Default::default()
    };
    let h =
        fslab_analysis::history::history(&store, name, policy).map_err(super::analysis_failure)?;
    super::print_all(fslab_present::history::text(&h, policy).as_bytes())
}
