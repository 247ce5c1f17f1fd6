//! Comparing groups (the cells of an experiment) metric by metric.

use serde::Serialize;

use crate::verdict::{self, Policy, Verdict};
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
    /// "slower", "faster", "more", "less": only when the verdict says the
    /// difference is real.
    pub direction: Option<&'static str>,
    /// 95% bootstrap interval of the same difference, in percent.
    pub ci_low_pct: Option<f64>,
    pub ci_high_pct: Option<f64>,
    /// Welch's t-test p-value against the baseline.
    pub p_value: Option<f64>,
    /// The p-value corrected across the metrics compared for this group
    /// (see `correction`).
    pub p_adjusted: Option<f64>,
    /// How: "BH" (Benjamini-Hochberg) or "Holm".
    pub correction: Option<&'static str>,
    /// The verdict (see [`crate::verdict`]); None for the baseline.
    pub verdict: Option<Verdict>,
    /// The noise threshold the verdict used, in percent.
    pub delta_pct: Option<f64>,
    /// For an unresolved difference: runs per group that would settle it.
    pub needed_n: Option<usize>,
    /// Why a difference carries no confidence, when it does not.
    pub note: Option<String>,
}

/// Builds the rows: every metric, every group, against group `baseline`,
/// with the default [`Policy`] (alpha 0.05, delta calibrated from A/A splits).
pub fn compare(groups: &[String], metrics: &[Metric], baseline: usize) -> Vec<Row> {
    compare_with(groups, metrics, baseline, Policy::default())
}

/// [`compare`] with a chosen policy.
pub fn compare_with(
    groups: &[String],
    metrics: &[Metric],
    baseline: usize,
    policy: Policy,
) -> Vec<Row> {
    let mut rows = Vec::new();
    for m in metrics {
        let base = &m.values[baseline];
        let bs = summarize(base);
        let delta = policy.delta_pct.unwrap_or_else(|| {
            verdict::aa_delta_pct(&m.values, 11).unwrap_or(verdict::DEFAULT_DELTA_PCT)
        });
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
                p_adjusted: None,
                correction: None,
                verdict: None,
                delta_pct: None,
                needed_n: None,
                note: None,
            };
            if g != baseline && summary.n > 0 && bs.n > 0 && bs.mean != 0.0 {
                row.diff_pct = Some((summary.mean / bs.mean - 1.0) * 100.0);
                row.delta_pct = Some(delta);
                if summary.n < 3 || bs.n < 3 {
                    row.note = Some(format!(
                        "too few repetitions (n={} vs {}) for confidence: use 3 or more",
                        summary.n, bs.n
                    ));
                }
                if summary.n >= 2 && bs.n >= 2 {
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
    judge_rows(&mut rows, metrics, groups, baseline, policy);
    rows
}

/// Corrects each group's p-values across its metrics (Holm) and gives every
/// compared row its verdict.
fn judge_rows(
    rows: &mut [Row],
    metrics: &[Metric],
    groups: &[String],
    baseline: usize,
    policy: Policy,
) {
    let n_groups = groups.len();
    for g in (0..n_groups).filter(|g| *g != baseline) {
        // Rows are metric-major: row (metric i, group g) is i * n_groups + g.
        let idx: Vec<usize> = (0..metrics.len()).map(|i| i * n_groups + g).collect();
        let tested: Vec<usize> = idx
            .iter()
            .copied()
            .filter(|&r| rows[r].p_value.is_some())
            .collect();
        let p: Vec<f64> = tested
            .iter()
            .map(|&r| rows[r].p_value.unwrap_or(1.0))
            .collect();
        for (&r, adj) in tested.iter().zip(policy.correction.adjust(&p)) {
            rows[r].p_adjusted = Some(adj);
            rows[r].correction = Some(policy.correction.name());
        }
        for (i, &r) in idx.iter().enumerate() {
            let (Some(pct), Some(delta)) = (rows[r].diff_pct, rows[r].delta_pct) else {
                continue;
            };
            let base_n = rows[i * n_groups + baseline].summary.n;
            let row = &rows[r];
            let ci = row.ci_low_pct.zip(row.ci_high_pct);
            let v = verdict::judge(
                metrics[i].direction,
                pct,
                ci,
                row.p_adjusted,
                (base_n, row.summary.n),
                delta,
                policy.alpha,
            );
            let cv = pooled_cv(&metrics[i].values[baseline], &metrics[i].values[g]);
            let row = &mut rows[r];
            row.verdict = Some(v);
            if v.differs() {
                row.direction = Some(metrics[i].direction.word(pct));
            }
            if v == Verdict::Unresolved {
                let have = base_n.max(row.summary.n);
                row.needed_n = cv
                    .and_then(|cv| verdict::needed_n(cv, pct, delta))
                    .map(|n| n.max(have + 1));
            }
        }
    }
}

/// The pooled coefficient of variation of two groups, in percent (None when
/// neither has two values).
fn pooled_cv(a: &[f64], b: &[f64]) -> Option<f64> {
    let parts: Vec<(f64, f64)> = [a, b]
        .iter()
        .filter(|v| v.len() >= 2)
        .map(|v| {
            let s = summarize(v);
            (s.cv_pct, (v.len() - 1) as f64)
        })
        .filter(|(cv, _)| cv.is_finite())
        .collect();
    let df: f64 = parts.iter().map(|p| p.1).sum();
    (df > 0.0).then(|| (parts.iter().map(|(cv, d)| cv * cv * d).sum::<f64>() / df).sqrt())
}

/// A comparison to show and test with: seed 000's CRC experiment as two
/// groups ("no CRCs", "CRCs") of three runs, with a time, a rate, and an
/// unmount measured once.
pub fn example() -> (Vec<String>, Vec<Metric>) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn differences_carry_direction_confidence_and_warnings() {
        let (g, m) = example();
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
        assert_eq!(rows[5].verdict, Some(Verdict::Unresolved));
        assert_eq!(rows[5].direction, None, "no word without a verdict");
    }

    /// One metric, two groups, a given delta: the verdict on `b` against `a`.
    fn verdict_of(a: &[f64], b: &[f64], delta: Option<f64>) -> Row {
        let groups = vec!["a".to_string(), "b".to_string()];
        let m = vec![Metric {
            name: "create rate (ops/s)".into(),
            direction: Direction::Rate,
            values: vec![a.to_vec(), b.to_vec()],
        }];
        let policy = Policy {
            delta_pct: delta,
            ..Policy::default()
        };
        compare_with(&groups, &m, 0, policy).remove(1)
    }

    #[test]
    fn verdicts_on_known_cases() {
        // Identical samples: no difference within delta.
        let same = [100.0, 101.0, 99.0, 100.5, 99.5];
        let r = verdict_of(&same, &same, Some(2.0));
        assert_eq!(r.verdict, Some(Verdict::Same), "{r:?}");
        assert_eq!(r.direction, None);
        // A clear 10% shift: faster, with the word.
        let up: Vec<f64> = same.iter().map(|x| x * 1.1).collect();
        let r = verdict_of(&same, &up, Some(2.0));
        assert_eq!(r.verdict, Some(Verdict::Faster), "{r:?}");
        assert_eq!(r.direction, Some("faster"));
        // Overlapping noisy samples: not resolved, and how many runs would do.
        let noisy_a = [100.0, 130.0, 85.0];
        let noisy_b = [110.0, 90.0, 140.0];
        let r = verdict_of(&noisy_a, &noisy_b, Some(2.0));
        assert_eq!(r.verdict, Some(Verdict::Unresolved), "{r:?}");
        assert_eq!(r.direction, None, "no 'faster' for an unresolved +11%");
        assert!(r.needed_n.unwrap() > 3, "{r:?}");
        // n = 1: unresolved, whatever the difference.
        let r = verdict_of(&[100.0], &[200.0], Some(2.0));
        assert_eq!(r.verdict, Some(Verdict::Unresolved));
        assert_eq!((r.p_value, r.ci_low_pct), (None, None));
        // The seeds' case: an interval that excludes 0 with p = 0.2 is not a
        // difference (the interval and the test must agree).
        let r = verdict_of(&[100.0, 101.0, 138.0], &[120.0, 121.0, 125.0], Some(2.0));
        assert!(r.p_value.unwrap() > 0.05, "{r:?}");
        assert_eq!(r.verdict, Some(Verdict::Unresolved), "{r:?}");
    }

    #[test]
    fn holm_corrects_across_a_groups_metrics() {
        // Twenty metrics: one shifted by a borderline amount; its raw p
        // passes 0.05, its corrected p does not.
        let groups = vec!["a".to_string(), "b".to_string()];
        let mut metrics = Vec::new();
        for i in 0..20 {
            let a = vec![100.0, 102.0, 98.0, 101.0];
            let b: Vec<f64> = if i == 0 {
                vec![103.0, 105.0, 101.0, 104.5]
            } else {
                a.clone()
            };
            metrics.push(Metric {
                name: format!("m{i} (s)"),
                direction: Direction::Time,
                values: vec![a, b],
            });
        }
        let holm = Policy {
            delta_pct: Some(1.0),
            correction: verdict::Correction::Holm,
            ..Policy::default()
        };
        let rows = compare_with(&groups, &metrics, 0, holm);
        let r = &rows[1];
        assert!(r.p_value.unwrap() < 0.05, "{r:?}");
        assert!(r.p_adjusted.unwrap() >= 0.05, "{r:?}");
        assert_eq!(r.correction, Some("Holm"));
        assert_ne!(r.verdict, Some(Verdict::Slower), "{r:?}");
        // With one metric alone it would be slower.
        let alone = compare_with(&groups, &metrics[..1], 0, holm);
        assert_eq!(alone[1].verdict, Some(Verdict::Slower), "{:?}", alone[1]);
    }
}
