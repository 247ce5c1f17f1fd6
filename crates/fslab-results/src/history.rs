//! `fslab history`: every stored run of one experiment (by name), each
//! headline metric of each cell experiment by experiment, with kernel and
//! fslab version, and the changes that pass the verdict marked.
//!
//! Change points, sequentially: the experiments since the last change form
//! a segment; each new experiment's runs are compared with all the
//! segment's runs pooled (the verdict of `fslab compare`: interval, test,
//! noise threshold). A real difference (faster, slower, more, less) marks
//! a change there and starts a new segment. Pooling makes a stable period
//! a better baseline the longer it lasts; a change shows against it
//! rather than against one noisy neighbour.

use std::fmt::Write as _;

use fslab_record::table::{Align, Table};
use fslab_stats::compare::{compare_with, Direction, Metric};
use fslab_stats::verdict::Policy;
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
    let mut s = format!(
        "history of experiment {name:?}: {} stored run(s) of it; a change is a verdict against the \
         runs since the last change\n",
        mine.len()
    );
    for ((cell, metric), direction, points) in &series {
        let _ = writeln!(s, "\n{cell}: {metric}");
        let mut table = Table::new(&[
            ("exp", Align::Right),
            ("date", Align::Left),
            ("kernel", Align::Left),
            ("fslab", Align::Left),
            ("n", Align::Right),
            ("mean ± sd", Align::Right),
            ("change", Align::Left),
        ])
        .indent(2);
        let changes = changes(metric, *direction, points, policy);
        for (p, change) in points.iter().zip(changes) {
            let sum = fslab_stats::summarize(&p.values);
            let sd = if sum.sd >= 10.0 {
                format!("{:.0}", sum.sd)
            } else {
                fslab_stats::fmt_g(sum.sd, 2)
            };
            let mean = format!("{} ± {sd}", fslab_stats::fmt_g(sum.mean, 6));
            table.row([
                p.experiment.to_string(),
                p.date.clone(),
                p.kernel.clone(),
                p.fslab.clone(),
                sum.n.to_string(),
                mean,
                change,
            ]);
        }
        s.push_str(&table.render());
    }
    Ok(s)
}

/// The change column of each experiment in `points`: each is judged
/// against the runs since the last change (none for the first); a verdict
/// that differs is a CHANGE and starts a new segment.
fn changes(metric: &str, direction: Direction, points: &[Point], policy: Policy) -> Vec<String> {
    let mut out = Vec::with_capacity(points.len());
    let mut segment: Vec<usize> = Vec::new();
    for (i, p) in points.iter().enumerate() {
        if segment.is_empty() {
            out.push(String::new());
            segment.push(i);
            continue;
        }
        let base: Vec<f64> = segment
            .iter()
            .flat_map(|&k| points[k].values.iter().copied())
            .collect();
        let m = Metric {
            name: metric.to_string(),
            direction,
            values: vec![base, p.values.clone()],
        };
        let labels = ["before".to_string(), "now".to_string()];
        let rows = compare_with(&labels, &[m], 0, policy);
        let r = &rows[1];
        let since: Vec<String> = segment
            .iter()
            .map(|&k| points[k].experiment.to_string())
            .collect();
        out.push(match (r.verdict, r.diff_pct) {
            (Some(v), Some(pct)) if v.differs() => {
                segment.clear();
                format!(
                    "CHANGE: {pct:+.1}% {} than exp {}",
                    v.name(),
                    since.join(",")
                )
            }
            (Some(v), Some(pct)) => format!(
                "{pct:+.1}% {} against exp {}",
                v.words(r.delta_pct.unwrap_or(0.0)),
                since.join(",")
            ),
            _ => String::new(),
        });
        segment.push(i);
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

    /// Two equal experiments, then a kernel 40% slower twice: the change is
    /// marked at the third and not before; the fourth is judged against the
    /// third alone.
    #[test]
    fn a_change_is_marked_where_it_happened_and_not_before() {
        let points = [
            point(1, &[100.0, 101.0, 99.0, 100.5]),
            point(2, &[100.2, 99.5, 100.8, 99.9]),
            point(3, &[60.0, 61.0, 59.5, 60.4]),
            point(4, &[60.3, 59.8, 60.9, 60.1]),
        ];
        let policy = Policy {
            delta_pct: Some(5.0),
            ..Policy::default()
        };
        let c = changes("create rate (ops/s)", Direction::Rate, &points, policy);
        assert_eq!(c[0], "");
        assert!(
            c[1].ends_with("no difference within 5.0% against exp 1"),
            "{c:?}"
        );
        assert!(
            c[2].starts_with("CHANGE: -") && c[2].ends_with("slower than exp 1,2"),
            "{c:?}"
        );
        assert!(
            !c[3].contains("CHANGE") && c[3].ends_with("against exp 3"),
            "{c:?}"
        );
    }
}
