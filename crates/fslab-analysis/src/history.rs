//! `fslab history`'s numbers: every stored run of one experiment (by name), each
//! headline metric of each cell experiment by experiment, with kernel and
//! fslab version, each experiment's estimate with its 95% interval (of its
//! geometric mean: the scale the change points are found on), and the
//! change points marked.
//!
//! Change points are found over the sequence of experiments, not runs
//! pooled across them (runs of different days and kernels are not
//! identically distributed: two equal tmpfs experiments have differed by a
//! third): each experiment is one point, its estimate (the mean of its
//! runs' logs), and E-Divisive means (`fslab_stats::changepoint`, the
//! method of Apache Otava) finds the splits whose permutation p-value is
//! below alpha. A change is marked with its size (the ratio of the
//! geometric means of the experiments on either side, up to the next
//! change), its p-value, and, when each side has two experiments or more,
//! the 95% Welch interval of that ratio with the experiments as the units.

use fslab_stats::changepoint;
use fslab_stats::compare::Direction;
use fslab_stats::verdict::{Policy, Verdict};
use fslab_store::Store;

use crate::analysis::{gather, input_of};
use crate::select::select;
use crate::{Error, Result};

/// One experiment of the history, as one cell saw it.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    pub experiment: i64,
    /// Its start date (YYYY-MM-DD).
    pub date: String,
    pub kernel: String,
    pub fslab: String,
    /// The metric's value in each of the cell's runs.
    pub values: Vec<f64>,
}

impl Point {
    /// The 95% interval of the experiment's estimate, on the values' scale:
    /// of the geometric mean (the t interval of the mean log,
    /// exponentiated), of the mean when a value is not positive.
    pub fn interval(&self) -> Option<(f64, f64)> {
        let values = &self.values;
        if values.iter().all(|v| *v > 0.0) {
            let logs: Vec<f64> = values.iter().map(|v| v.ln()).collect();
            fslab_stats::mean_interval(&logs, 0.95).map(|(lo, hi)| (lo.exp(), hi.exp()))
        } else {
            fslab_stats::mean_interval(values, 0.95)
        }
    }
}

/// A change point: where the experiments after it differ from those
/// before it (up to the next change).
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    /// The size, in percent of the experiments before it.
    pub pct: f64,
    /// Which way, for the metric's direction.
    pub verdict: Verdict,
    /// The experiments before it (since the previous change).
    pub since: Vec<i64>,
    /// Its permutation test's p-value.
    pub p_value: f64,
    /// `--delta`, when the shift is smaller than it (named, not marked).
    pub within: Option<f64>,
    /// The 95% Welch interval of the ratio, in percent, when each side has
    /// two experiments or more.
    pub interval: Option<(f64, f64)>,
}

/// One headline metric of one cell, experiment by experiment.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub cell: String,
    pub metric: String,
    pub direction: Direction,
    pub points: Vec<Point>,
    /// The change at each point, if one is found there.
    pub changes: Vec<Option<Change>>,
}

/// The history of one experiment's name.
#[derive(Debug, Clone, PartialEq)]
pub struct History {
    pub name: String,
    /// How many stored experiments have the name.
    pub experiments: usize,
    /// With fewer experiments than this, no change can be significant.
    pub fewest: usize,
    pub series: Vec<Series>,
}

/// The history of experiment `name` (None: the latest experiment's name).
pub fn history(store: &Store, name: Option<&str>, policy: Policy) -> Result<History> {
    let all = store.list_experiments()?;
    let name = match name {
        Some(n) => n.to_string(),
        None => all
            .iter()
            .max_by_key(|e| e.id)
            .map(|e| e.name.clone())
            .ok_or_else(|| {
                Error::Selection(
                    "the results store has no experiment yet: run one (fslab run)".into(),
                )
            })?,
    };
    let mine: Vec<&fslab_store::ExperimentRow> = all.iter().filter(|e| e.name == name).collect();
    if mine.is_empty() {
        let mut names: Vec<&str> = all.iter().map(|e| e.name.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        return Err(Error::Selection(format!(
            "no experiment named {name:?} in the results store (there are: {})",
            names.join(", ")
        )));
    }
    let mut series = headline_series(store, &mine)?;
    for s in &mut series {
        s.changes = changes(s.direction, &s.points, policy);
    }
    Ok(History {
        name,
        experiments: mine.len(),
        fewest: changepoint::fewest_points(policy.alpha),
        series,
    })
}

/// An experiment's estimate: the mean of its runs' logs (of the values
/// when one is not positive).
fn estimate(values: &[f64]) -> f64 {
    if values.iter().all(|v| *v > 0.0) {
        values.iter().map(|v| v.ln()).sum::<f64>() / values.len() as f64
    } else {
        fslab_stats::summarize(values).mean
    }
}

/// The change found at each experiment of `points` (None elsewhere).
fn changes(direction: Direction, points: &[Point], policy: Policy) -> Vec<Option<Change>> {
    let mut out = vec![None; points.len()];
    let logs = points.iter().all(|p| p.values.iter().all(|v| *v > 0.0));
    let x: Vec<f64> = points.iter().map(|p| estimate(&p.values)).collect();
    let search = changepoint::Search {
        alpha: policy.alpha,
        ..changepoint::Search::default()
    };
    let cuts = changepoint::e_divisive(&x, search);
    let mut bounds: Vec<usize> = vec![0];
    bounds.extend(cuts.iter().map(|c| c.at));
    bounds.push(points.len());
    for (k, c) in cuts.iter().enumerate() {
        let (before, after) = (&x[bounds[k]..c.at], &x[c.at..bounds[k + 2]]);
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        let ratio = |d: f64| {
            if logs {
                d.exp()
            } else {
                1.0 + d / mean(before)
            }
        };
        let pct = (ratio(mean(after) - mean(before)) - 1.0) * 100.0;
        let interval = if logs {
            fslab_stats::interval::ratio(
                &before.iter().map(|v| v.exp()).collect::<Vec<_>>(),
                &after.iter().map(|v| v.exp()).collect::<Vec<_>>(),
                0.95,
                false,
            )
            .map(|r| ((r.low - 1.0) * 100.0, (r.high - 1.0) * 100.0))
        } else {
            None
        };
        out[c.at] = Some(Change {
            pct,
            verdict: Verdict::of_difference(direction, pct),
            since: points[bounds[k]..c.at]
                .iter()
                .map(|p| p.experiment)
                .collect(),
            p_value: c.p_value,
            within: policy.delta_pct.filter(|d| pct.abs() < *d),
            interval,
        });
    }
    out
}

/// The headline metrics of experiments `mine`, cell by cell, in order.
fn headline_series(store: &Store, mine: &[&fslab_store::ExperimentRow]) -> Result<Vec<Series>> {
    let mut series: Vec<Series> = Vec::new();
    for e in mine {
        let rec = store.experiment(e.id)?;
        let g = select(store, &[e.id], &[])?;
        let (metrics, heads) = gather(&input_of(store, &g)?);
        let (mut fslab, mut kernel) = (String::new(), rec.kernel.clone());
        if let Some(crate::select::GroupRun { id, .. }) = g.runs.iter().flatten().next() {
            let r = store.run_row(*id)?;
            fslab = r.fslab_version;
            kernel = r.kernel;
        }
        for m in metrics.iter().filter(|m| heads.contains(&m.name)) {
            for (label, values) in g.labels.iter().zip(&m.values) {
                if values.is_empty() {
                    continue;
                }
                let point = Point {
                    experiment: e.id,
                    date: e.started_at.get(..10).unwrap_or(&e.started_at).to_string(),
                    kernel: kernel.clone(),
                    fslab: fslab.clone(),
                    values: values.clone(),
                };
                match series
                    .iter_mut()
                    .find(|s| s.cell == *label && s.metric == m.name)
                {
                    Some(s) => s.points.push(point),
                    None => series.push(Series {
                        cell: label.clone(),
                        metric: m.name.clone(),
                        direction: m.direction,
                        points: vec![point],
                        changes: Vec::new(),
                    }),
                }
            }
        }
    }
    Ok(series)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(experiment: i64, values: &[f64]) -> Point {
        Point {
            experiment,
            date: "2026-11-24".into(),
            kernel: "6.18".into(),
            fslab: "0.1.0".into(),
            values: values.to_vec(),
        }
    }

    /// Five equal experiments (1% noise), then a kernel 40% slower five
    /// times: one change, marked at the sixth, with its size, p-value and
    /// interval; nothing before or after it.
    #[test]
    fn a_change_is_marked_where_it_happened_and_not_before() {
        let noise = [0.0, 0.01, -0.01, 0.005, -0.005];
        let mut points = Vec::new();
        for (i, level) in [
            100.0, 100.0, 100.0, 100.0, 100.0, 60.0, 60.0, 60.0, 60.0, 60.0,
        ]
        .iter()
        .enumerate()
        {
            let f = 1.0 + noise[i % 5];
            points.push(point(
                i as i64 + 1,
                &[level * f, level * f * 1.01, level * f * 0.99],
            ));
        }
        let c = changes(Direction::Rate, &points, Policy::default());
        assert!(c[..5].iter().all(Option::is_none), "{c:?}");
        let at = c[5].as_ref().unwrap();
        assert!((-41.0..-39.0).contains(&at.pct), "{at:?}");
        assert_eq!(at.verdict, Verdict::Slower);
        assert_eq!(at.since, [1, 2, 3, 4, 5]);
        assert!(at.p_value < 0.1 && at.within.is_none(), "{at:?}");
        let (lo, hi) = at.interval.unwrap();
        assert!(
            lo < at.pct && at.pct < hi && (-50.0..-40.0).contains(&lo),
            "{at:?}"
        );
        assert!(c[6..].iter().all(Option::is_none), "{c:?}");
        // With a threshold above it, the shift is named but not a change.
        let wide = Policy {
            delta_pct: Some(50.0),
            ..Policy::default()
        };
        let c = changes(Direction::Rate, &points, wide);
        assert_eq!(c[5].as_ref().unwrap().within, Some(50.0), "{c:?}");
    }

    /// Two equal tmpfs experiments that differ by a third, among others
    /// that scatter as much: no change (runs of different experiments are
    /// not pooled as if alike).
    #[test]
    fn experiments_that_scatter_are_not_a_change() {
        let levels = [100.0, 133.0, 95.0, 120.0, 105.0, 90.0, 128.0, 99.0];
        let points: Vec<Point> = levels
            .iter()
            .enumerate()
            .map(|(i, l)| point(i as i64 + 1, &[*l, l * 1.005, l * 0.995, l * 1.002]))
            .collect();
        let c = changes(Direction::Rate, &points, Policy::default());
        assert!(c.iter().all(Option::is_none), "{c:?}");
    }
}
