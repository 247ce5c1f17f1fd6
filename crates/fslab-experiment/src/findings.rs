//! Findings as checks: an experiment file states what its seed's author
//! found as a ratio of two means against a bound, and fslab evaluates it
//! at the end of the run.
//!
//! ```toml
//! [[finding]]
//! says = "btrfs's image ends with 10x the extents of xfs's"
//! metric = "image extents"      # a metric as `fslab compare` names it
//! cell = "btrfs"
//! than = "xfs"                  # the other cell (default: the same cell)
//! than_metric = "..."           # the other metric (default: the same metric)
//! above = 10                    # mean(left) / mean(right) > 10 (or: below = 0.5)
//! ```
//!
//! The outcome is "reproduced" when the ratio of the means is on the
//! stated side of the bound, "not reproduced" when it is not (a result,
//! not a failure: the kernel may have changed), "not evaluated" when a side
//! has no value. With two repetitions or more on each side, the 95%
//! bootstrap interval of the ratio (resampling whole runs) says whether
//! the outcome is confident: the whole interval on the outcome's side.

use fslab_record::{FindingOutcome, FindingResult};

use crate::summary::Sample;

/// Which side of the bound the ratio must be.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Bound {
    Above(f64),
    Below(f64),
}

/// A stated finding.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Finding {
    pub says: String,
    pub metric: String,
    /// The left side's cell (by index).
    pub cell: u32,
    /// The right side: cell and metric.
    pub than_cell: u32,
    pub than_metric: String,
    pub bound: Bound,
}

fn fmt(x: f64) -> String {
    fslab_stats::fmt_g(x, 4)
}

/// Evaluates `f` over the experiment's samples; `labels` names the cells.
pub fn evaluate(f: &Finding, labels: &[String], samples: &[Sample]) -> FindingResult {
    let values = |cell: u32, metric: &str| -> Vec<f64> {
        samples
            .iter()
            .filter(|s| s.cell == cell && s.metric == metric)
            .map(|s| s.value)
            .collect()
    };
    let label = |c: u32| labels.get(c as usize).cloned().unwrap_or_default();
    let (left, right) = (
        values(f.cell, &f.metric),
        values(f.than_cell, &f.than_metric),
    );
    let mut r = FindingResult {
        says: f.says.clone(),
        outcome: FindingOutcome::NotEvaluated,
        ratio: None,
        ci: None,
        confident: false,
        detail: String::new(),
    };
    let missing: Vec<String> = [
        (&left, f.cell, &f.metric),
        (&right, f.than_cell, &f.than_metric),
    ]
    .iter()
    .filter(|(v, _, _)| v.is_empty())
    .map(|(_, c, m)| format!("{m:?} of {}", label(*c)))
    .collect();
    if !missing.is_empty() {
        r.detail = format!(
            "no value of {} (a failed cell, or a metric this run does not have)",
            missing.join(" or ")
        );
        return r;
    }
    let (l, rt) = (
        fslab_stats::summarize(&left),
        fslab_stats::summarize(&right),
    );
    if rt.mean == 0.0 {
        r.detail = format!("{} of {} is 0: no ratio", f.than_metric, label(f.than_cell));
        return r;
    }
    let ratio = l.mean / rt.mean;
    let (holds, word, bound) = match f.bound {
        Bound::Above(b) => (ratio > b, "above", b),
        Bound::Below(b) => (ratio < b, "below", b),
    };
    r.ratio = Some(ratio);
    r.outcome = if holds {
        FindingOutcome::Reproduced
    } else {
        FindingOutcome::NotReproduced
    };
    let side = |x: f64| match f.bound {
        Bound::Above(b) => x > b,
        Bound::Below(b) => x < b,
    };
    if l.n >= 2 && rt.n >= 2 {
        r.ci = fslab_stats::bootstrap_ratio(&right, &left, 2000, 0.95, 1);
        r.confident =
            r.ci.is_some_and(|(lo, hi)| side(lo) == holds && side(hi) == holds);
    }
    let left_name = format!("{} {}", label(f.cell), f.metric);
    let right_name = if f.than_cell == f.cell {
        f.than_metric.clone()
    } else if f.than_metric == f.metric {
        label(f.than_cell)
    } else {
        format!("{} {}", label(f.than_cell), f.than_metric)
    };
    let mut d = format!(
        "{left_name} {} (n={}) is {}x {right_name}'s {} (n={}); stated: {word} {}x",
        fmt(l.mean),
        l.n,
        fmt(ratio),
        fmt(rt.mean),
        rt.n,
        fmt(bound)
    );
    match (r.ci, r.confident) {
        (Some((lo, hi)), true) => d.push_str(&format!(
            "; 95% CI of the ratio [{}, {}]: confident",
            fmt(lo),
            fmt(hi)
        )),
        (Some((lo, hi)), false) => d.push_str(&format!(
            "; 95% CI of the ratio [{}, {}] crosses the bound: not confident",
            fmt(lo),
            fmt(hi)
        )),
        (None, _) => d.push_str("; one run a side: no confidence"),
    }
    r.detail = d;
    r
}

/// The findings as `fslab run` prints them after its summary.
pub fn text(results: &[FindingResult]) -> String {
    let mut s = String::new();
    if results.is_empty() {
        return s;
    }
    s.push_str("\nfindings:\n");
    for r in results {
        s.push_str(&format!(
            "  {}: {}\n    {}\n",
            r.outcome.words(),
            r.says,
            r.detail
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::summary::Direction;

    fn sample(cell: u32, metric: &str, value: f64) -> Sample {
        Sample {
            cell,
            metric: metric.into(),
            direction: Direction::Cost,
            value,
            headline: false,
        }
    }

    #[test]
    fn a_ratio_against_its_bound_with_confidence() {
        let labels = vec!["btrfs".to_string(), "xfs".to_string()];
        let ext = "image extents";
        let f = Finding {
            says: "btrfs 10x xfs".into(),
            metric: ext.into(),
            cell: 0,
            than_cell: 1,
            than_metric: ext.into(),
            bound: Bound::Above(10.0),
        };
        let s = vec![
            sample(0, ext, 19_000.0),
            sample(0, ext, 21_000.0),
            sample(1, ext, 110.0),
            sample(1, ext, 114.0),
        ];
        let r = evaluate(&f, &labels, &s);
        assert_eq!(r.outcome, FindingOutcome::Reproduced);
        assert!(r.confident, "{r:?}");
        assert!((r.ratio.unwrap() - 20_000.0 / 112.0).abs() < 1e-9);
        assert!(
            r.detail.starts_with(
                "btrfs image extents 2e+04 (n=2) is 178.6x xfs's 112 (n=2); stated: above 10x"
            ),
            "{}",
            r.detail
        );
        // The same numbers against a bound they miss: not reproduced, a result.
        let g = Finding {
            bound: Bound::Above(1000.0),
            ..f.clone()
        };
        assert_eq!(
            evaluate(&g, &labels, &s).outcome,
            FindingOutcome::NotReproduced
        );
        // One run a side: an outcome, no confidence.
        let r = evaluate(&f, &labels, &s[1..3]);
        assert_eq!(r.outcome, FindingOutcome::Reproduced);
        assert!(!r.confident && r.ci.is_none() && r.detail.ends_with("no confidence"));
        // A missing side: not evaluated, saying which.
        let r = evaluate(&f, &labels, &s[..2]);
        assert_eq!(r.outcome, FindingOutcome::NotEvaluated);
        assert!(
            r.detail.contains("\"image extents\" of xfs"),
            "{}",
            r.detail
        );
        // Within one cell: the last tenth's rate below the first tenth's.
        let h = Finding {
            says: "slower as it grows".into(),
            metric: "last".into(),
            cell: 0,
            than_cell: 0,
            than_metric: "first".into(),
            bound: Bound::Below(1.0),
        };
        let r = evaluate(
            &h,
            &labels,
            &[sample(0, "last", 50.0), sample(0, "first", 100.0)],
        );
        assert_eq!(r.outcome, FindingOutcome::Reproduced);
        assert!(
            r.detail
                .starts_with("btrfs last 50 (n=1) is 0.5x first's 100"),
            "{}",
            r.detail
        );
        assert!(text(&[r]).contains("  reproduced: slower as it grows\n"));
    }
}
