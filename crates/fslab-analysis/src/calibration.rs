//! Which stored A/A calibration fits a comparison: per metric, one made on
//! the same machine and filesystem, with the same workload and options
//! (paths aside), as every group's runs (the newest), or the one named by
//! `--calibration ID`, which must fit.

use fslab_stats::compare::Calibrated;
use fslab_store::{Calibration, RunRow, Store};

use crate::{Error, Result};

/// What a group's runs were made on: (machine, filesystem, workload,
/// options).
type Where = (String, String, String, String);

/// The distinct (machine, filesystem, workload, options) of each group's
/// runs.
fn places(rows: &[Vec<RunRow>]) -> Vec<Vec<Where>> {
    let mut out = Vec::new();
    for runs in rows {
        let mut w: Vec<Where> = Vec::new();
        for run in runs {
            let options = crate::select::option_key(&run.params);
            let p = (
                run.hostname.clone(),
                run.fs_type.clone(),
                run.workload.clone(),
                options,
            );
            if !w.contains(&p) {
                w.push(p);
            }
        }
        out.push(w);
    }
    out
}

fn fits(c: &Calibration, w: &Where) -> bool {
    c.hostname == w.0 && c.fs_type == w.1 && c.workload == w.2 && c.options == w.3
}

/// The options in which two option lines differ, as `name A vs B`.
fn option_differences(a: &str, b: &str) -> String {
    let pairs = |s: &str| -> Vec<(String, String)> {
        s.split("; ")
            .filter_map(|kv| kv.split_once(" = "))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    };
    let (a, b) = (pairs(a), pairs(b));
    let value = |v: &[(String, String)], k: &str| {
        v.iter()
            .find(|(x, _)| x == k)
            .map_or("(none)".to_string(), |(_, v)| v.clone())
    };
    let mut keys: Vec<&String> = a.iter().chain(&b).map(|(k, _)| k).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter(|k| value(&a, k) != value(&b, k))
        .map(|k| format!("{k} {} vs {}", value(&a, k), value(&b, k)))
        .collect::<Vec<_>>()
        .join(", ")
}

fn source(c: &Calibration) -> String {
    format!(
        "calibration {} ({}, {}, {} runs a copy)",
        c.experiment_id, c.hostname, c.fs_type, c.n
    )
}

/// Each metric's calibrated threshold (in `metrics` order) for groups of
/// runs whose rows are `rows`: with `chosen`, that calibration (an error
/// when it does not exist or does not fit the runs compared); else, per
/// metric, the newest calibration that fits every group, the larger
/// threshold when the groups' filesystems differ.
pub fn thresholds(
    store: &Store,
    rows: &[Vec<RunRow>],
    metrics: &[&str],
    chosen: Option<i64>,
) -> Result<Vec<Calibrated>> {
    let all = store.calibrations()?;
    let places = places(rows);
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
                    let what = if (
                        first.hostname.as_str(),
                        first.fs_type.as_str(),
                        first.workload.as_str(),
                    ) == (w.0.as_str(), w.1.as_str(), w.2.as_str())
                    {
                        format!(
                            "other options ({})",
                            option_differences(&first.options, &w.3)
                        )
                    } else {
                        format!(
                            "{} on {} ({}), not {} on {} ({})",
                            first.workload, first.fs_type, first.hostname, w.2, w.1, w.0
                        )
                    };
                    return Err(Error::Selection(format!(
                        "--calibration {id}: made for {what}: it does not fit the runs compared"
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
                let c = pool.iter().find(|c| c.metric == *m && fits(c, w))?;
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

/// The newest stored calibration of each metric made for a cell: by an
/// A/A experiment named `aa_name` (`fslab run FILE --calibrate CELL`'s
/// `NAME A/A LABEL`), of the same experiment file's text at the same scale,
/// on machine `host` and filesystem `fs`; metric by metric in the store's
/// order. (A planned cell has no runs yet, so the options its runs will
/// record cannot be matched as `fslab compare` matches them: the A/A
/// experiment of the same file's cell stands for them.)
pub fn for_cell(
    store: &Store,
    host: &str,
    fs: &str,
    aa_name: &str,
    scale: f64,
    text: &str,
) -> Result<Vec<Calibration>> {
    let mut out: Vec<Calibration> = Vec::new();
    let mut seen: Vec<(i64, bool)> = Vec::new();
    for c in store.calibrations()? {
        if c.hostname != host || c.fs_type != fs || out.iter().any(|o| o.metric == c.metric) {
            continue;
        }
        let ok = match seen.iter().find(|s| s.0 == c.experiment_id) {
            Some(s) => s.1,
            None => {
                let e = store.experiment(c.experiment_id)?;
                let ok = e.name == aa_name && e.scale == scale && e.text == text;
                seen.push((c.experiment_id, ok));
                ok
            }
        };
        if ok {
            out.push(c);
        }
    }
    Ok(out)
}

/// What `n` repetitions a cell can resolve, by `c`'s noise: one line,
/// `METRIC: differences from X% up resolve with N repetitions a cell (80%
/// power, 5% two-sided, before correction over the comparison's family;
/// calibration ID: sd of the runs' logs S, δ D%)`; None when the power
/// cannot be computed (fewer than 2 repetitions).
pub fn resolvable_line(c: &Calibration, n: usize) -> Option<String> {
    let pct = fslab_stats::power::resolvable_pct(c.sd_log, n, c.delta_pct, 0.05)?;
    Some(format!(
        "{}: differences from {:.1}% up resolve with {n} repetitions a cell \
         (80% power, 5% two-sided, before correction over the comparison's family; \
         calibration {}: sd of the runs' logs {:.4}, \u{3b4} {:.1}%)",
        c.metric, pct, c.experiment_id, c.sd_log, c.delta_pct
    ))
}
