//! A comparison's cells as every format prints them (the text table,
//! Markdown, the report's table) and where its thresholds came from. The
//! numbers come from [`fslab_stats::compare`] through the analysis; the
//! formats are [`crate::export`]'s.

use std::fmt::Write as _;

use fslab_stats::compare::Row;
use fslab_stats::fmt_num;
use fslab_stats::interval::Method;
use fslab_stats::verdict::{self, Verdict};

fn diff(r: &Row, baseline: f64) -> String {
    let Some(change) = crate::headline::change(r, baseline) else {
        return if r.summary.n == 0 {
            "no runs".into()
        } else if r.delta_pct.is_some() {
            // Compared, but with no ratio to show (a baseline of 0).
            format!("no ratio: {}", r.note.as_deref().unwrap_or("baseline of 0"))
        } else {
            "baseline".into()
        };
    };
    let delta = r.delta_pct.unwrap_or(verdict::DEFAULT_DELTA_PCT);
    // A caveat comes first; a confounding clock takes faster/slower's place.
    let mut s = match &r.caveat {
        Some(c) if !c.replaces_verdict => format!("[{}] ", c.words),
        _ => String::new(),
    };
    s.push_str(&change);
    match (r.verdict, &r.caveat) {
        (Some(v), Some(c))
            if c.replaces_verdict && matches!(v, Verdict::Faster | Verdict::Slower) =>
        {
            let _ = write!(s, " {}", c.words);
        }
        (Some(v), _) => {
            let _ = write!(s, " {}", v.words(delta));
        }
        (None, _) => {}
    }
    if r.interval == Some(Method::Deterministic.name()) {
        s.push_str(" (exact: no variance)");
    } else if let Some(ci) = crate::headline::interval(r) {
        let _ = write!(s, " {ci}");
    }
    if let (Some(p), Some(c)) = (r.p_adjusted, r.correction) {
        let _ = write!(s, " p={p:.3} ({c})");
    }
    if r.verdict == Some(Verdict::Unresolved) {
        match r.needed_n {
            Some(n) => {
                let _ = write!(s, "; ~{n} runs per cell would settle it");
            }
            None if r
                .note
                .as_deref()
                .is_some_and(|n| n.starts_with("more runs cannot")) =>
            {
                s.push_str("; more runs cannot settle it");
            }
            None => s.push_str("; repeat each cell 3 or more times"),
        }
    }
    s
}

/// Where the thresholds came from and how the p-values were corrected:
/// one line each, naming the metrics when the sources differ.
pub fn provenance(rows: &[Row]) -> String {
    let mut s = String::new();
    let mut sources: Vec<(&str, Vec<&str>)> = Vec::new();
    for r in rows {
        let Some(from) = r.delta_from.as_deref() else {
            continue;
        };
        match sources.iter_mut().find(|(f, _)| *f == from) {
            Some((_, ms)) if !ms.contains(&r.metric.as_str()) => ms.push(&r.metric),
            Some(_) => {}
            None => sources.push((from, vec![&r.metric])),
        }
    }
    if sources.len() == 1 {
        let _ = writeln!(s, "\u{3b4} (noise threshold): from {}", sources[0].0);
    } else {
        for (from, ms) in &sources {
            let _ = writeln!(s, "\u{3b4} from {from}: {}", ms.join(", "));
        }
    }
    let tested = rows.iter().filter(|r| r.p_adjusted.is_some()).count();
    if let Some(c) = rows.iter().find_map(|r| r.correction) {
        let _ = writeln!(
            s,
            "p: {tested} comparisons of every cell and metric corrected together ({c})"
        );
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
            v.extend(columns(r, baseline_of(rows, r)));
            v
        })
        .collect()
}

/// The mean of the baseline `r` is compared with: the row of the same
/// metric without a difference.
pub(crate) fn baseline_of(rows: &[Row], r: &Row) -> f64 {
    rows.iter()
        .find(|b| b.metric == r.metric && b.diff_pct.is_none() && b.summary.n > 0)
        .map_or(f64::NAN, |b| b.summary.mean)
}

/// A row's n, mean, sd, median, min, max, hmean, cv and difference, as printed.
pub(crate) fn columns(r: &Row, baseline: f64) -> [String; 9] {
    let m = &r.summary;
    let cv = if m.cv_pct.is_nan() {
        "-".into()
    } else {
        format!("{:.1}%", m.cv_pct)
    };
    [
        m.n.to_string(),
        fmt_num(m.mean),
        fmt_num(m.sd),
        fmt_num(m.median),
        fmt_num(m.min),
        fmt_num(m.max),
        fmt_num(m.hmean),
        cv,
        diff(r, baseline),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::csv::csv;
    use crate::export::markdown::markdown;
    use crate::export::text::text;
    use fslab_stats::compare::{compare, compare_with, example, Direction, Metric};
    use fslab_stats::verdict::Policy;

    #[test]
    fn cv_is_a_percentage_in_every_format() {
        let groups = vec!["a".to_string()];
        let m = vec![Metric {
            name: "t (s)".into(),
            direction: Direction::Time,
            exact: false,
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
    fn text_markdown_and_csv_snapshots() {
        let (g, m) = example();
        let rows = compare(&g, &m, 0);
        insta::assert_snapshot!("compare_text", text(&rows));
        insta::assert_snapshot!("compare_markdown", markdown(&rows));
        insta::assert_snapshot!("compare_csv", csv(&rows));
        let c = csv(&rows);
        assert_eq!(c.lines().next().unwrap(), "metric,group,n,mean,sd,median,min,max,hmean,cv_pct,diff_pct,direction,ci_low_pct,ci_high_pct,p_value,note,p_adjusted,correction,verdict,delta_pct,needed_n,interval,delta_from,headline");
        assert_eq!(c.lines().count(), 7);
        assert!(c.lines().all(|l| l.split(',').count() >= 24));
    }

    #[test]
    fn a_verdict_is_spelled_out_with_what_would_settle_it() {
        let groups = vec!["a".to_string(), "b".to_string()];
        let policy = Policy {
            delta_pct: Some(2.0),
            ..Policy::default()
        };
        let one = |a: &[f64], b: &[f64]| {
            let m = vec![Metric {
                name: "create rate (ops/s)".into(),
                direction: Direction::Rate,
                exact: false,
                values: vec![a.to_vec(), b.to_vec()],
            }];
            text(&compare_with(&groups, &m, 0, policy)[1..])
        };
        let same = [100.0, 101.0, 99.0, 100.5, 99.5];
        let t = one(&same, &same);
        assert!(t.contains("no difference within 2.0%"), "{t}");
        let t = one(&[100.0, 130.0, 85.0], &[110.0, 90.0, 140.0]);
        assert!(
            t.contains("unresolved") && t.contains("runs per cell would settle it"),
            "{t}"
        );
    }

    #[test]
    fn a_long_group_name_or_a_large_value_keeps_the_columns_in_line() {
        let groups = vec!["a".to_string(), "a much longer group name".to_string()];
        let m = vec![Metric {
            name: "intial_create rate (bytes/s)".into(),
            direction: Direction::Rate,
            exact: false,
            values: vec![vec![4.7e11, 4.8e11, 4.6e11], vec![1.0, 2.0, 3.0]],
        }];
        let t = text(&compare(&groups, &m, 0));
        let lines: Vec<&str> = t.lines().collect();
        // The n column (right-aligned under its heading).
        let at = lines[0].find(" n ").unwrap() + 1;
        for l in &lines[1..3] {
            assert_eq!(l.as_bytes()[at], b'3', "{t}");
        }
    }
}
