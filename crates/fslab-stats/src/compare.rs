//! Comparing groups (the cells of an experiment) metric by metric.

use std::fmt::Write as _;

use serde::Serialize;

use crate::{bootstrap_ratio, summarize, welch, Summary};

/// Which way is better, and the words for a difference.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// A time: more is slower.
    Time,
    /// A rate: more is faster (its groups also get a harmonic mean).
    Rate,
    /// A cost: more is more.
    Cost,
}

impl Direction {
    pub fn word(self, pct: f64) -> &'static str {
        match (self, pct > 0.0) {
            (Direction::Time, true) | (Direction::Rate, false) => "slower",
            (Direction::Time, false) | (Direction::Rate, true) => "faster",
            (Direction::Cost, true) => "more",
            (Direction::Cost, false) => "less",
        }
    }
}

/// One metric's values in each group.
#[derive(Debug, Clone)]
pub struct Metric {
    pub name: String,
    pub direction: Direction,
    /// Per group, in group order.
    pub values: Vec<Vec<f64>>,
}

/// One line of a comparison: a metric in a group.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub metric: String,
    pub group: String,
    #[serde(flatten)]
    pub summary: Summary,
    /// (mean / baseline mean - 1) * 100; None for the baseline itself.
    pub diff_pct: Option<f64>,
    /// "slower", "faster", "more", "less".
    pub direction: Option<&'static str>,
    /// 95% bootstrap interval of the same difference, in percent.
    pub ci_low_pct: Option<f64>,
    pub ci_high_pct: Option<f64>,
    /// Welch's t-test p-value against the baseline.
    pub p_value: Option<f64>,
    /// Why a difference carries no confidence, when it does not.
    pub note: Option<String>,
}

/// Builds the rows: every metric, every group, against group `baseline`.
pub fn compare(groups: &[String], metrics: &[Metric], baseline: usize) -> Vec<Row> {
    let mut rows = Vec::new();
    for m in metrics {
        let base = &m.values[baseline];
        let bs = summarize(base);
        for (g, vals) in m.values.iter().enumerate() {
            let mut summary = summarize(vals);
            if m.direction != Direction::Rate {
                summary.hmean = f64::NAN;
            }
            let mut row = Row {
                metric: m.name.clone(),
                group: groups[g].clone(),
                summary,
                diff_pct: None,
                direction: None,
                ci_low_pct: None,
                ci_high_pct: None,
                p_value: None,
                note: None,
            };
            if g != baseline && summary.n > 0 && bs.n > 0 && bs.mean != 0.0 {
                let pct = (summary.mean / bs.mean - 1.0) * 100.0;
                row.diff_pct = Some(pct);
                row.direction = Some(m.direction.word(pct));
                if summary.n < 3 || bs.n < 3 {
                    row.note = Some(format!(
                        "too few repetitions (n={} vs {}) for confidence: use 3 or more",
                        summary.n, bs.n
                    ));
                } else {
                    if let Some((lo, hi)) = bootstrap_ratio(base, vals, 2000, 0.95, 1) {
                        row.ci_low_pct = Some((lo - 1.0) * 100.0);
                        row.ci_high_pct = Some((hi - 1.0) * 100.0);
                    }
                    row.p_value = welch(base, vals).map(|w| w.2);
                }
            }
            rows.push(row);
        }
    }
    rows
}

fn num(x: f64) -> String {
    if x.is_nan() {
        return "-".into();
    }
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

fn diff(r: &Row) -> String {
    match (r.diff_pct, r.direction) {
        (None, _) => "baseline".into(),
        (Some(p), Some(w)) => {
            let mut s = format!("{p:+.1}% ({w})");
            if let (Some(lo), Some(hi)) = (r.ci_low_pct, r.ci_high_pct) {
                let _ = write!(s, " 95% CI [{lo:+.1}%, {hi:+.1}%]");
            }
            if let Some(p) = r.p_value {
                let _ = write!(s, " p={p:.3}");
            }
            if r.note.is_some() {
                s.push_str(" (n too small)");
            }
            s
        }
        _ => String::new(),
    }
}

/// A text table, one block per metric.
pub fn text(rows: &[Row]) -> String {
    let gw = rows
        .iter()
        .map(|r| r.group.len().max(r.metric.len()))
        .max()
        .unwrap_or(5)
        .max(5);
    let mut s = String::new();
    let mut last = "";
    for r in rows {
        if r.metric != last {
            if !last.is_empty() {
                s.push('\n');
            }
            let _ = writeln!(
                s,
                "{:<gw$}  {:>3} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>7}  difference",
                r.metric, "n", "mean", "sd", "median", "min", "max", "hmean", "cv"
            );
            last = &r.metric;
        }
        let c = columns(r);
        let line = format!(
            "{:<gw$}  {:>3} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>7}  {}",
            r.group, c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8]
        );
        let _ = writeln!(s, "{}", line.trim_end());
    }
    let notes: Vec<&str> = rows.iter().filter_map(|r| r.note.as_deref()).collect();
    if let Some(n) = notes.first() {
        let _ = writeln!(s, "\nwarning: {n}");
    }
    s
}

/// A Markdown table.
pub fn markdown(rows: &[Row]) -> String {
    let mut s = format!(
        "| {} |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n",
        COLUMNS.join(" | ")
    );
    for cells in table(rows) {
        let _ = writeln!(s, "| {} |", cells.join(" | "));
    }
    s
}

/// The columns of a comparison table ([`table`], Markdown, the report).
pub const COLUMNS: [&str; 11] = [
    "metric",
    "group",
    "n",
    "mean",
    "sd",
    "median",
    "min",
    "max",
    "hmean",
    "cv",
    "difference",
];

/// The comparison as table cells under [`COLUMNS`], one row per metric and group.
pub fn table(rows: &[Row]) -> Vec<Vec<String>> {
    rows.iter()
        .map(|r| {
            let mut v = vec![r.metric.clone(), r.group.clone()];
            v.extend(columns(r));
            v
        })
        .collect()
}

/// A row's n, mean, sd, median, min, max, hmean, cv and difference, as printed.
fn columns(r: &Row) -> [String; 9] {
    let m = &r.summary;
    let cv = if m.cv_pct.is_nan() {
        "-".into()
    } else {
        format!("{:.1}%", m.cv_pct)
    };
    [
        m.n.to_string(),
        num(m.mean),
        num(m.sd),
        num(m.median),
        num(m.min),
        num(m.max),
        num(m.hmean),
        cv,
        diff(r),
    ]
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// CSV, one line per metric and group.
pub fn csv(rows: &[Row]) -> String {
    let mut s = String::from("metric,group,n,mean,sd,median,min,max,hmean,cv_pct,diff_pct,direction,ci_low_pct,ci_high_pct,p_value,note\n");
    let o = |x: Option<f64>| x.map(|v| v.to_string()).unwrap_or_default();
    let f = |x: f64| {
        if x.is_nan() {
            String::new()
        } else {
            x.to_string()
        }
    };
    for r in rows {
        let _ = writeln!(
            s,
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            csv_field(&r.metric),
            csv_field(&r.group),
            r.summary.n,
            f(r.summary.mean),
            f(r.summary.sd),
            f(r.summary.median),
            f(r.summary.min),
            f(r.summary.max),
            f(r.summary.hmean),
            f(r.summary.cv_pct),
            o(r.diff_pct),
            r.direction.unwrap_or(""),
            o(r.ci_low_pct),
            o(r.ci_high_pct),
            o(r.p_value),
            csv_field(r.note.as_deref().unwrap_or(""))
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn fixture() -> (Vec<String>, Vec<Metric>) {
        let groups = vec!["no CRCs".to_string(), "CRCs".to_string()];
        let metrics = vec![
            Metric {
                name: "create time (s)".into(),
                direction: Direction::Time,
                values: vec![vec![483.0, 480.0, 486.0], vec![510.0, 508.0, 512.0]],
            },
            Metric {
                name: "create rate (ops/s)".into(),
                direction: Direction::Rate,
                values: vec![
                    vec![109000.0, 110000.0, 108000.0],
                    vec![105000.0, 104000.0, 106000.0],
                ],
            },
            Metric {
                name: "unmount (s)".into(),
                direction: Direction::Time,
                values: vec![vec![1.0], vec![1.2]],
            },
        ];
        (groups, metrics)
    }

    #[test]
    fn cv_is_a_percentage_in_every_format() {
        let groups = vec!["a".to_string()];
        let m = vec![Metric {
            name: "t (s)".into(),
            direction: Direction::Time,
            values: vec![vec![9.0, 10.0, 11.0]],
        }];
        let rows = compare(&groups, &m, 0);
        assert!((rows[0].summary.cv_pct - 10.0).abs() < 1e-9);
        assert!(text(&rows).contains(" 10.0% "), "{}", text(&rows));
        assert_eq!(table(&rows)[0][9], "10.0%");
        let j = serde_json::to_value(&rows[0]).unwrap();
        assert_eq!(j.get("cv_pct").and_then(|v| v.as_f64()), Some(10.0));
        assert!(csv(&rows).lines().nth(1).unwrap().contains(",10,"));
    }

    #[test]
    fn differences_carry_direction_confidence_and_warnings() {
        let (g, m) = fixture();
        let rows = compare(&g, &m, 0);
        assert_eq!(rows.len(), 6);
        let crc_time = &rows[1];
        assert!((crc_time.diff_pct.unwrap() - 5.59).abs() < 0.01);
        assert_eq!(crc_time.direction, Some("slower"));
        assert!(crc_time.p_value.unwrap() < 0.01);
        assert!(crc_time.ci_low_pct.unwrap() > 4.0 && crc_time.ci_high_pct.unwrap() < 7.0);
        assert_eq!(rows[3].direction, Some("slower"), "a lower rate is slower");
        assert!(rows[2].summary.hmean > 0.0 && rows[0].summary.hmean.is_nan());
        assert!(rows[5]
            .note
            .as_deref()
            .unwrap()
            .contains("too few repetitions"));
        assert!(rows[5].p_value.is_none());
    }

    #[test]
    fn text_markdown_and_csv_snapshots() {
        let (g, m) = fixture();
        let rows = compare(&g, &m, 0);
        insta::assert_snapshot!("compare_text", text(&rows));
        insta::assert_snapshot!("compare_markdown", markdown(&rows));
        insta::assert_snapshot!("compare_csv", csv(&rows));
        let c = csv(&rows);
        assert_eq!(c.lines().next().unwrap(), "metric,group,n,mean,sd,median,min,max,hmean,cv_pct,diff_pct,direction,ci_low_pct,ci_high_pct,p_value,note");
        assert_eq!(c.lines().count(), 7);
        assert!(c.lines().all(|l| l.split(',').count() >= 16));
    }
}
