//! The end-of-run table: for each cell, the mean, sample standard deviation
//! and count of each headline metric over its successful repetitions, and
//! the difference of each cell's mean from the first cell's, in the style
//! of seed 001 ("+5.2% (slower)"), with Welch's p when both cells have at
//! least three repetitions. `fslab compare` gives the full statistics
//! (confidence intervals, more columns); this is the quick look.

use std::fmt::Write as _;

pub use fslab_stats::compare::Direction;

/// One measured value of one repetition.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub cell: u32,
    pub metric: String,
    pub direction: Direction,
    pub value: f64,
}

fn fmt_num(x: f64) -> String {
    let a = x.abs();
    if a >= 1e5 {
        format!("{x:.0}")
    } else if a >= 100.0 {
        format!("{x:.1}")
    } else if a >= 1.0 {
        format!("{x:.3}")
    } else {
        format!("{x:.4}")
    }
}

/// The table: one row per metric (in first-seen order), one column per cell.
pub fn table(cells: &[(u32, String)], samples: &[Sample]) -> String {
    let mut metrics: Vec<(String, Direction)> = Vec::new();
    for s in samples {
        if !metrics.iter().any(|(m, _)| m == &s.metric) {
            metrics.push((s.metric.clone(), s.direction));
        }
    }
    let name_w = metrics
        .iter()
        .map(|(m, _)| m.len())
        .max()
        .unwrap_or(6)
        .max(6);
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut any_p = false;
    for (m, dir) in &metrics {
        let mut row = vec![m.clone()];
        let mut base: Option<(f64, Vec<f64>)> = None;
        for (ci, _) in cells {
            let v: Vec<f64> = samples
                .iter()
                .filter(|s| s.cell == *ci && &s.metric == m)
                .map(|s| s.value)
                .collect();
            let fslab_stats::Summary { n, mean, sd, .. } = fslab_stats::summarize(&v);
            if n == 0 {
                row.push("-".into());
                continue;
            }
            let mut cell = if n > 1 {
                format!("{} ±{} (n={n})", fmt_num(mean), fmt_num(sd))
            } else {
                format!("{} (n=1)", fmt_num(mean))
            };
            match &base {
                None => base = Some((mean, v)),
                Some((b, bv)) if *b != 0.0 => {
                    let pct = (mean - b) / b * 100.0;
                    let _ = write!(cell, " {pct:+.1}% ({})", dir.word(pct));
                    if let (true, Some((_, _, p))) =
                        (v.len() >= 3 && bv.len() >= 3, fslab_stats::welch(bv, &v))
                    {
                        let _ = write!(cell, " p={p:.3}");
                        any_p = true;
                    }
                }
                Some(_) => {}
            }
            row.push(cell);
        }
        rows.push(row);
    }
    let mut widths: Vec<usize> = vec![name_w];
    for (i, (_, label)) in cells.iter().enumerate() {
        let w = rows
            .iter()
            .map(|r| r[i + 1].len())
            .max()
            .unwrap_or(0)
            .max(label.len());
        widths.push(w);
    }
    let mut s = String::new();
    let _ = write!(s, "{:<w$}", "", w = widths[0]);
    for (i, (_, label)) in cells.iter().enumerate() {
        let _ = write!(s, "  {:<w$}", label, w = widths[i + 1]);
    }
    s.truncate(s.trim_end().len());
    s.push('\n');
    for r in rows {
        let _ = write!(s, "{:<w$}", r[0], w = widths[0]);
        for (i, c) in r[1..].iter().enumerate() {
            let _ = write!(s, "  {:<w$}", c, w = widths[i + 1]);
        }
        s.truncate(s.trim_end().len());
        s.push('\n');
    }
    if any_p {
        s.push_str(
            "p: Welch's t-test against the first cell (fslab compare gives confidence intervals)\n",
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn differences_use_the_metrics_direction() {
        let s = |cell, metric: &str, direction, value| Sample {
            cell,
            metric: metric.into(),
            direction,
            value,
        };
        let samples = vec![
            s(0, "create time (s)", Direction::Time, 483.0),
            s(1, "create time (s)", Direction::Time, 510.0),
            s(0, "create rate (ops/s)", Direction::Rate, 109.0),
            s(1, "create rate (ops/s)", Direction::Rate, 105.0),
        ];
        let t = table(&[(0, "no CRCs".into()), (1, "CRCs".into())], &samples);
        assert!(t.contains("+5.6% (slower)"), "{t}");
        assert!(t.contains("-3.7% (slower)"), "{t}");
        assert!(t.lines().next().unwrap().contains("no CRCs"));
        assert!(!t.contains("p="), "one repetition each: no test: {t}");
        // Three repetitions each: Welch's p, and a line saying what it is.
        let mut three = Vec::new();
        for (cell, v) in [(0, [10.0, 11.0, 12.0]), (1, [20.0, 21.0, 22.0])] {
            for x in v {
                three.push(s(cell, "create time (s)", Direction::Time, x));
            }
        }
        let t = table(&[(0, "a".into()), (1, "b".into())], &three);
        assert!(t.contains("+90.9% (slower) p=0.000"), "{t}");
        assert!(
            t.ends_with("(fslab compare gives confidence intervals)\n"),
            "{t}"
        );
        assert!(
            t.lines().all(|l| l == l.trim_end()),
            "no trailing blanks: {t:?}"
        );
    }
}
