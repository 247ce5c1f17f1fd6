//! `fslab history`: the change points of one experiment's stored runs over
//! time (numbers and detection in fslab-results and fslab-stats).

use std::path::Path;

use crate::Failure;

pub fn run(name: Option<&str>, delta: Option<f64>, alpha: f64, db: &Path) -> Result<(), Failure> {
    let store = super::open_store_read(db)?;
    let policy = fslab_stats::verdict::Policy {
        alpha,
        delta_pct: delta,
        ..Default::default()
    };
    let text =
        fslab_results::history::history(&store, name, policy).map_err(super::results_failure)?;
    super::print_all(text.as_bytes())
}
