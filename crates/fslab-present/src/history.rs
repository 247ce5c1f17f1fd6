//! `fslab history`'s text: each headline metric of each cell, experiment
//! by experiment, with kernel and fslab version, each experiment's n, mean
//! ± sd and 95% interval, and the change points marked (the numbers are
//! `fslab_analysis::history`'s).

use std::fmt::Write as _;

use fslab_analysis::history::{Change, History};
use fslab_model::table::{Align, Table};
use fslab_stats::verdict::Policy;

use crate::format::Sheet;

/// The history as printed.
pub fn text(h: &History, policy: Policy) -> String {
    let mut s = format!(
        "history of experiment {:?}: {} stored run(s) of it; change points by E-Divisive means \
         over the experiments' estimates (permutation test, alpha {})\n",
        h.name,
        h.experiments,
        fslab_stats::fmt_g(policy.alpha, 3)
    );
    if h.experiments < h.fewest {
        let _ = writeln!(
            s,
            "note: with fewer than {} experiments no change can be significant at alpha {}",
            h.fewest,
            fslab_stats::fmt_g(policy.alpha, 3)
        );
    }
    for series in &h.series {
        let _ = writeln!(s, "\n{}: {}", series.cell, series.metric);
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
        for (p, change) in series.points.iter().zip(&series.changes) {
            let sum = fslab_stats::summarize(&p.values);
            let sd = if sum.sd >= 10.0 {
                format!("{:.0}", sum.sd)
            } else {
                fslab_stats::fmt_g(sum.sd, 2)
            };
            let mean = format!("{} ± {sd}", fslab_stats::fmt_g(sum.mean, 6));
            let ci = p
                .interval()
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
                change.as_ref().map(change_text).unwrap_or_default(),
            ]);
        }
        s.push_str(&table.render());
    }
    s
}

/// The history as one table (`--format json|csv|markdown`): a row per
/// cell, metric and experiment, each number in a column of its own.
pub fn sheet(h: &History) -> Sheet {
    let mut s = Sheet::new(&[
        ("cell", Align::Left),
        ("metric", Align::Left),
        ("experiment", Align::Right),
        ("date", Align::Left),
        ("kernel", Align::Left),
        ("fslab", Align::Left),
        ("n", Align::Right),
        ("mean", Align::Right),
        ("sd", Align::Right),
        ("ci_low", Align::Right),
        ("ci_high", Align::Right),
        ("change", Align::Left),
    ]);
    let num = |x: f64| {
        serde_json::Number::from_f64(x).map_or(serde_json::Value::Null, serde_json::Value::Number)
    };
    for series in &h.series {
        for (p, change) in series.points.iter().zip(&series.changes) {
            let sum = fslab_stats::summarize(&p.values);
            let ci = p.interval();
            s.row(vec![
                series.cell.clone().into(),
                series.metric.clone().into(),
                p.experiment.into(),
                p.date.clone().into(),
                p.kernel.clone().into(),
                p.fslab.clone().into(),
                sum.n.into(),
                num(sum.mean),
                num(sum.sd),
                ci.map_or(serde_json::Value::Null, |c| num(c.0)),
                ci.map_or(serde_json::Value::Null, |c| num(c.1)),
                change.as_ref().map(change_text).unwrap_or_default().into(),
            ]);
        }
    }
    s
}

/// A change as its column says it: "CHANGE: ..." when it is marked, the
/// shift and δ when it is smaller than `--delta`.
fn change_text(c: &Change) -> String {
    let since: Vec<String> = c.since.iter().map(i64::to_string).collect();
    let mut text = match c.within {
        Some(d) => format!(
            "shift {:+.1}% (p={:.3}), within \u{3b4} = {d:.1}%",
            c.pct, c.p_value
        ),
        None => format!(
            "CHANGE: {:+.1}% {} than exp {} (p={:.3})",
            c.pct,
            c.verdict.name(),
            since.join(","),
            c.p_value
        ),
    };
    if let Some((lo, hi)) = c.interval {
        let _ = write!(text, " 95% CI [{lo:+.1}%, {hi:+.1}%]");
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use fslab_stats::verdict::Verdict;

    #[test]
    fn a_change_is_spelled_with_its_size_direction_and_interval() {
        let c = Change {
            pct: -40.2,
            verdict: Verdict::Slower,
            since: vec![1, 2, 3],
            p_value: 0.004,
            within: None,
            interval: Some((-44.1, -36.0)),
        };
        assert_eq!(
            change_text(&c),
            "CHANGE: -40.2% slower than exp 1,2,3 (p=0.004) 95% CI [-44.1%, -36.0%]"
        );
        let small = Change {
            within: Some(50.0),
            interval: None,
            ..c
        };
        assert_eq!(
            change_text(&small),
            "shift -40.2% (p=0.004), within \u{3b4} = 50.0%"
        );
    }
}
