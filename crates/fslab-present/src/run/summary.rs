//! The end-of-run table: for each cell, the mean, sample standard
//! deviation and count of each metric over its successful repetitions,
//! and the difference of each cell's mean from the first cell's with its
//! verdict: "+5.2% slower" only when the difference is real, "no
//! difference within δ" within the noise threshold, "unresolved" otherwise (the analysis is
//! `fslab_experiment::summary::analysis`'s). `fslab compare` gives the full
//! statistics (intervals, corrected p-values, runs needed); this is the
//! quick look. Then what each cell's tool printed.

use std::fmt::Write as _;

use fslab_analysis::Analysis;
use fslab_model::table::{Align, Table};
use fslab_stats::fmt_num;
use fslab_stats::verdict::Verdict;

/// The table of an analysis: one row per metric (in first-seen order), one
/// column per cell.
pub fn table(a: &Analysis) -> String {
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut unresolved = false;
    for (mi, m) in a.metrics.iter().enumerate() {
        let mut row = vec![m.name.clone()];
        let base = crate::headline::baseline_mean(a.rows_of(mi));
        for r in a.rows_of(mi) {
            let fslab_stats::Summary { n, mean, sd, .. } = r.summary;
            if n == 0 {
                row.push("-".into());
                continue;
            }
            let mut cell = if n > 1 {
                format!("{} ±{} (n={n})", fmt_num(mean), fmt_num(sd))
            } else {
                format!("{} (n=1)", fmt_num(mean))
            };
            if let (Some(change), Some(v)) = (crate::headline::change(r, base), r.verdict) {
                unresolved |= v == Verdict::Unresolved;
                let delta = r
                    .delta_pct
                    .unwrap_or(fslab_stats::verdict::DEFAULT_DELTA_PCT);
                let word = match (v, &r.caveat) {
                    // The machines first; a confounding clock takes the
                    // verdict's place.
                    (Verdict::Faster | Verdict::Slower, Some(c)) if c.replaces_verdict => {
                        c.words.clone()
                    }
                    (v, _) => v.words(delta),
                };
                if let Some(c) = r.caveat.as_ref().filter(|c| !c.replaces_verdict) {
                    let _ = write!(cell, " [{}]", c.words);
                }
                let _ = write!(cell, " {change} {word}");
                if r.interval == Some(fslab_stats::interval::Method::Deterministic.name()) {
                    cell.push_str(" (exact)");
                }
            }
            row.push(cell);
        }
        rows.push(row);
    }
    let mut columns = vec![("", Align::Left)];
    columns.extend(a.labels.iter().map(|label| (label.as_str(), Align::Left)));
    let mut table = Table::new(&columns);
    for r in rows {
        table.row(r);
    }
    let mut s = table.render();
    let tested = a.rows.iter().filter(|r| r.p_value.is_some()).count();
    if tested > 0 {
        let _ = writeln!(
            s,
            "verdicts: {tested} comparison(s) corrected together ({}) at alpha {}",
            a.policy.correction.name(),
            fslab_stats::fmt_g(a.policy.alpha, 3)
        );
    }
    if unresolved {
        s.push_str("unresolved: not enough runs to tell (fslab compare says how many would)\n");
    }
    s
}

/// What each cell's tool printed, in its original's form (fs_mark's loop
/// table, tiotest's two tables, alloctest's and filefrag's lines, ...):
/// the last completed repetition of each cell, a long output cut to its
/// first 10 and last 30 lines.
pub fn outputs(cells: &[(u32, String)], outs: &[(u32, u32, &str)]) -> String {
    let mut s = String::new();
    if outs.is_empty() {
        return s;
    }
    s.push_str("\nwhat the tools printed (each cell's last completed repetition):\n");
    for (cell, rep, text) in outs {
        let label = cells
            .iter()
            .find(|c| c.0 == *cell)
            .map(|c| c.1.as_str())
            .unwrap_or("?");
        let _ = writeln!(s, "\n== {label} (repetition {rep})");
        let lines: Vec<&str> = text.lines().collect();
        // fs_mark's table gets seed 000's `stats --trim-outliers | tail -1`.
        let stats = text
            .contains("FSUse%")
            .then(|| fslab_stats::columns::stats_line(text, true))
            .flatten();
        if lines.len() <= 45 {
            for l in &lines {
                let _ = writeln!(s, "{l}");
            }
        } else {
            for l in &lines[..10] {
                let _ = writeln!(s, "{l}");
            }
            let _ = writeln!(s, "... ({} lines left out)", lines.len() - 40);
            for l in &lines[lines.len() - 30..] {
                let _ = writeln!(s, "{l}");
            }
        }
        if let Some(line) = stats {
            let _ = writeln!(s, "stats --trim-outliers:\n{line}");
        }
    }
    s
}

#[cfg(test)]
mod tests {
    #[test]
    fn each_cells_output_is_shown_long_ones_cut() {
        let cells = vec![(0, "a".to_string()), (1, "b".to_string())];
        let long: String = (0..100).map(|i| format!("line {i}\n")).collect();
        let s = super::outputs(&cells, &[(0, 3, "FSUse% Count\n0 100\n"), (1, 2, &long)]);
        assert!(
            s.contains("\n== a (repetition 3)\nFSUse% Count\n0 100\n"),
            "{s}"
        );
        assert!(s.contains("line 9\n... (60 lines left out)\n"), "{s}");
        assert!(s.ends_with("line 99\n") && !s.contains("line 50\n"), "{s}");
        assert_eq!(super::outputs(&cells, &[]), "");
        // fs_mark's table: seed 000's stats line after it.
        let table = "FSUse%        Count         Size    Files/sec     App Overhead\n     0       800000            0      53498.9          7898900\n     0      1600000            0      11186.5          9409278\n";
        let s = super::outputs(&cells, &[(0, 1, table)]);
        assert!(s.ends_with("stats --trim-outliers:\n     0 800000-1600000(1.2e+06+/-5.7e+05)            0 11186.500000-53498.900000(32342.7+/-3e+04) 7898900-9409278(8.65409e+06+/-1.1e+06)\n"), "{s}");
    }

    use super::*;
    use fslab_analysis::{analyse, Input, RunSamples, Settings};
    use fslab_experiment::summary::{Direction, RepetitionValue};
    use fslab_model::catalogue;

    /// The table of samples, each its own run, under the default policy.
    fn table_of(cells: &[(u32, String)], samples: &[RepetitionValue]) -> String {
        let input = Input {
            labels: cells.iter().map(|c| c.1.clone()).collect(),
            runs: samples
                .iter()
                .map(|s| RunSamples {
                    group: cells.iter().position(|c| c.0 == s.cell).unwrap(),
                    run: None,
                    samples: vec![catalogue::Sample {
                        name: s.metric.clone(),
                        unit: fslab_model::Unit::Count,
                        direction: s.direction,
                        value: s.value,
                        role: catalogue::Role::Plain,
                        exact: s.exact,
                    }],
                })
                .collect(),
        };
        table(&analyse(&input, &Settings::default()))
    }

    #[test]
    fn differences_use_the_metrics_direction() {
        let s = |cell, metric: &str, direction, value| RepetitionValue {
            headline: true,
            exact: false,
            cell,
            repetition: 1,
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
        let t = table_of(&[(0, "no CRCs".into()), (1, "CRCs".into())], &samples);
        assert!(
            t.contains("+5.6% unresolved"),
            "one run each settles nothing: {t}"
        );
        assert!(t.contains("-3.7% unresolved"), "{t}");
        assert!(!t.contains("slower"), "no word without a verdict: {t}");
        assert!(t.lines().next().unwrap().contains("no CRCs"));
        // Three repetitions each: a clear difference has its word.
        let mut three = Vec::new();
        for (cell, v) in [(0, [10.0, 11.0, 12.0]), (1, [20.0, 21.0, 22.0])] {
            for x in v {
                three.push(s(cell, "create time (s)", Direction::Time, x));
            }
        }
        let t = table_of(&[(0, "a".into()), (1, "b".into())], &three);
        assert!(t.contains("+90.9% slower"), "{t}");
        assert!(
            t.contains("1 comparison(s) corrected together (BH) at alpha 0.05"),
            "{t}"
        );
        // A count seen not to vary (two runs a side): an exact verdict; one
        // run a side is no evidence that it does not vary.
        let extents = [
            s(0, "image extents", Direction::Cost, 9.0),
            s(1, "image extents", Direction::Cost, 128.0),
        ];
        let t = table_of(&[(0, "a".into()), (1, "b".into())], &extents);
        assert!(t.contains("+119 (from 9) unresolved"), "{t}");
        let twice: Vec<RepetitionValue> = extents.iter().chain(extents.iter()).cloned().collect();
        let t = table_of(&[(0, "a".into()), (1, "b".into())], &twice);
        assert!(t.contains("+119 (from 9) more (exact)"), "{t}");
        assert!(!t.contains("unresolved"), "{t}");
        assert!(
            t.lines().all(|l| l == l.trim_end()),
            "no trailing blanks: {t:?}"
        );
    }
}
