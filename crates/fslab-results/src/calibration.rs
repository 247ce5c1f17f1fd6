//! Which stored A/A calibration fits a comparison: per metric, one made on
//! the same machine, filesystem and workload as every group's runs (the
//! newest), or the one named by `--calibration ID`, which must fit.

use fslab_stats::compare::{Calibrated, Metric};
use fslab_store::{Calibration, Store};

use crate::select::Groups;
use crate::{Error, Result};

/// What a group's runs were made on: (machine, filesystem, workload).
type Where = (String, String, String);

/// The distinct (machine, filesystem, workload) of each group's runs.
fn places(store: &Store, g: &Groups) -> Result<Vec<Vec<Where>>> {
    let mut out = Vec::new();
    for runs in &g.runs {
        let mut w: Vec<Where> = Vec::new();
        for r in runs {
            let run = store.run(r.id)?.run;
            let p = (run.hostname, run.fs_type, run.workload);
            if !w.contains(&p) {
                w.push(p);
            }
        }
        out.push(w);
    }
    Ok(out)
}

fn fits(c: &Calibration, w: &Where) -> bool {
    c.hostname == w.0 && c.fs_type == w.1 && c.workload == w.2
}

fn source(c: &Calibration) -> String {
    format!(
        "calibration {} ({}, {}, {} runs a copy)",
        c.experiment_id, c.hostname, c.fs_type, c.n
    )
}

/// Each metric's calibrated threshold (in `metrics` order): with `chosen`,
/// that calibration (an error when it does not exist or does not fit the
/// runs compared); else, per metric, the newest calibration that fits
/// every group, the larger threshold when the groups' filesystems differ.
pub fn thresholds(
    store: &Store,
    g: &Groups,
    metrics: &[Metric],
    chosen: Option<i64>,
) -> Result<Vec<Calibrated>> {
    let all = store.calibrations()?;
    let places = places(store, g)?;
    let pool: Vec<&Calibration> = match chosen {
        Some(id) => {
            let mine: Vec<&Calibration> = all.iter().filter(|c| c.experiment_id == id).collect();
            let Some(first) = mine.first() else {
                return Err(Error::Selection(format!(
                    "--calibration {id}: the store has no calibration from experiment {id} \
                     (make one with fslab run EXPERIMENT --calibrate CELL)"
                )));
            };
            for w in places.iter().flatten() {
                if !fits(first, w) {
                    return Err(Error::Selection(format!(
                        "--calibration {id}: made for {} on {} ({}), but runs compared are {} on {} ({}): it does not fit",
                        first.workload, first.fs_type, first.hostname, w.2, w.1, w.0
                    )));
                }
            }
            mine
        }
        None => all.iter().collect(),
    };
    Ok(metrics
        .iter()
        .map(|m| {
            let mut found: Vec<&Calibration> = Vec::new();
            for w in places.iter().flatten() {
                let c = pool.iter().find(|c| c.metric == m.name && fits(c, w))?;
                if !found.iter().any(|f| f.experiment_id == c.experiment_id) {
                    found.push(c);
                }
            }
            let c = found
                .iter()
                .max_by(|a, b| a.delta_pct.total_cmp(&b.delta_pct))?;
            Some((c.delta_pct, source(c)))
        })
        .collect())
}
