//! `fslab history`: every stored run of one experiment (by name), each
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

use std::fmt::Write as _;

use fslab_record::table::{Align, Table};
use fslab_stats::changepoint;
use fslab_stats::compare::{Direction, Metric};
use fslab_stats::verdict::{Policy, Verdict};
use fslab_store::Store;

use crate::select::{headlines, metrics, select};
use crate::{Error, Result};

/// One experiment of the history, as one cell saw it.
struct Point {
    experiment: i64,
    date: String,
    kernel: String,
    fslab: String,
    values: Vec<f64>,
}

/// The history of experiment `name` (None: the latest experiment's name).
pub fn history(store: &Store, name: Option<&str>, policy: Policy) -> Result<String> {
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
    let series = headline_series(store, &mine)?;
    let fewest = changepoint::fewest_points(policy.alpha);
    let mut s = format!(
        "history of experiment {name:?}: {} stored run(s) of it; change points by E-Divisive means \
         over the experiments' estimates (permutation test, alpha {})\n",
        mine.len(),
        fslab_stats::fmt_g(policy.alpha, 3)
    );
    if mine.len() < fewest {
        let _ = writeln!(
            s,
            "note: with fewer than {fewest} experiments no change can be significant at alpha {}",
            fslab_stats::fmt_g(policy.alpha, 3)
        );
    }
    for ((cell, metric), direction, points) in &series {
        let _ = writeln!(s, "\n{cell}: {metric}");
        let mut table = Table::new(&[
            ("exp", Align::Right),
            ("date", Align::Left),
            ("kernel", Align::Left),
            ("fslab", Align::Left),
            ("n", Align::Right),
            ("mean ± sd", Align::Right),
            ("95% CI", Align::Right),
            ("change", Align::Left),
        ])
        .indent(2);
        let changes = changes(*direction, points, policy);
        for (p, change) in points.iter().zip(changes) {
            let sum = fslab_stats::summarize(&p.values);
            let sd = if sum.sd >= 10.0 {
                format!("{:.0}", sum.sd)
            } else {
                fslab_stats::fmt_g(sum.sd, 2)
            };
            let mean = format!("{} ± {sd}", fslab_stats::fmt_g(sum.mean, 6));
            let ci = point_interval(&p.values)
                .map(|(lo, hi)| {
                    format!(
                        "[{}, {}]",
                        fslab_stats::fmt_g(lo, 4),
                        fslab_stats::fmt_g(hi, 4)
                    )
                })
                .unwrap_or_else(|| "-".into());
            table.row([
                p.experiment.to_string(),
                p.date.clone(),
                p.kernel.clone(),
                p.fslab.clone(),
                sum.n.to_string(),
                mean,
                ci,
                change,
            ]);
        }
        s.push_str(&table.render());
    }
    Ok(s)
}

/// The 95% interval of an experiment's estimate, on the values' scale: of
/// the geometric mean (the t interval of the mean log, exponentiated), of
/// the mean when a value is not positive.
fn point_interval(values: &[f64]) -> Option<(f64, f64)> {
    if values.iter().all(|v| *v > 0.0) {
        let logs: Vec<f64> = values.iter().map(|v| v.ln()).collect();
        fslab_stats::mean_interval(&logs, 0.95).map(|(lo, hi)| (lo.exp(), hi.exp()))
    } else {
        fslab_stats::mean_interval(values, 0.95)
    }
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

/// The change column of each experiment in `points`: "CHANGE: ..." at the
/// first experiment after each change point, empty elsewhere. With a
/// `--delta`, a significant shift smaller than it is named but not marked.
fn changes(direction: Direction, points: &[Point], policy: Policy) -> Vec<String> {
    let mut out = vec![String::new(); points.len()];
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
        let word = Verdict::of_difference(direction, pct).name();
        let since: Vec<String> = points[bounds[k]..c.at]
            .iter()
            .map(|p| p.experiment.to_string())
            .collect();
        let mut text = match policy.delta_pct {
            Some(d) if pct.abs() < d => format!(
                "shift {pct:+.1}% (p={:.3}), within \u{3b4} = {d:.1}%",
                c.p_value
            ),
            _ => format!(
                "CHANGE: {pct:+.1}% {word} than exp {} (p={:.3})",
                since.join(","),
                c.p_value
            ),
        };
        if logs {
            if let Some(r) = fslab_stats::interval::ratio(
                &before.iter().map(|v| v.exp()).collect::<Vec<_>>(),
                &after.iter().map(|v| v.exp()).collect::<Vec<_>>(),
                0.95,
                false,
            ) {
                let _ = write!(
                    text,
                    " 95% CI [{:+.1}%, {:+.1}%]",
                    (r.low - 1.0) * 100.0,
                    (r.high - 1.0) * 100.0
                );
            }
        }
        out[c.at] = text;
    }
    out
}

/// Per (cell label, headline metric): the direction and the experiments in order.
type Series = ((String, String), Direction, Vec<Point>);

/// The headline metrics of experiments `mine`, cell by cell, in order.
fn headline_series(store: &Store, mine: &[&fslab_store::ExperimentRow]) -> Result<Vec<Series>> {
    let mut series: Vec<Series> = Vec::new();
    for e in mine {
        let rec = store.experiment(e.id)?;
        let g = select(store, &[e.id], &[])?;
        let heads = headlines(store, &g)?;
        let ms: Vec<Metric> = metrics(store, &g)?;
        let (mut fslab, mut kernel) = (String::new(), rec.kernel.clone());
        if let Some(crate::select::GroupRun { id, .. }) = g.runs.iter().flatten().next() {
            let r = store.run(*id)?.run;
            fslab = r.fslab_version;
            kernel = r.kernel;
        }
        for m in ms.iter().filter(|m| heads.contains(&m.name)) {
            for (label, values) in g.labels.iter().zip(&m.values) {
                if values.is_empty() {
                    continue;
                }
                let key = (label.clone(), m.name.clone());
                let point = Point {
                    experiment: e.id,
                    date: e.started_at.get(..10).unwrap_or(&e.started_at).to_string(),
                    kernel: kernel.clone(),
                    fslab: fslab.clone(),
                    values: values.clone(),
                };
                match series.iter_mut().find(|s| s.0 == key) {
                    Some(s) => s.2.push(point),
                    None => series.push((key, m.direction, vec![point])),
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
        assert!(c[..5].iter().all(String::is_empty), "{c:?}");
        assert!(
            c[5].starts_with("CHANGE: -40.") && c[5].contains("slower than exp 1,2,3,4,5 (p=0.0"),
            "{c:?}"
        );
        assert!(c[5].contains("95% CI [-4"), "{c:?}");
        assert!(c[6..].iter().all(String::is_empty), "{c:?}");
        // With a threshold above it, the shift is named but not a change.
        let wide = Policy {
            delta_pct: Some(50.0),
            ..Policy::default()
        };
        let c = changes(Direction::Rate, &points, wide);
        assert!(
            c[5].starts_with("shift -40.") && !c[5].contains("CHANGE"),
            "{c:?}"
        );
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
        assert!(c.iter().all(String::is_empty), "{c:?}");
    }
}
