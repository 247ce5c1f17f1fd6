//! Comparing groups (the cells of an experiment) metric by metric.

use serde::Serialize;

use crate::interval::{self, Method};
pub use crate::verdict::Direction;
use crate::verdict::{self, Policy, Verdict};
use crate::{summarize, Summary};

/// One metric's values in each group.
#[derive(Debug, Clone)]
pub struct Metric {
    pub name: String,
    pub direction: Direction,
    /// Per group, in group order.
    pub values: Vec<Vec<f64>>,
    /// Declared exact by construction by the workload that records it
    /// (`fslab_model::Metric::exact`): a count its options fix, judged from
    /// one run a side when it does not vary.
    pub exact: bool,
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
    /// The 95% interval of the same difference, in percent.
    pub ci_low_pct: Option<f64>,
    pub ci_high_pct: Option<f64>,
    /// How the interval was made ([`crate::interval::Method::name`]).
    pub interval: Option<&'static str>,
    /// The p-value of the test that goes with the interval, against the
    /// baseline (none for exact counts: they carry no chance error).
    pub p_value: Option<f64>,
    /// The p-value corrected over the whole comparison: every cell and
    /// metric tested (see `correction`).
    pub p_adjusted: Option<f64>,
    /// How: "BH" (Benjamini-Hochberg) or "Holm".
    pub correction: Option<&'static str>,
    /// The verdict (see [`crate::verdict`]); None for the baseline.
    pub verdict: Option<Verdict>,
    /// The noise threshold the verdict used, in percent.
    pub delta_pct: Option<f64>,
    /// Where it came from: "--delta", "calibration ID (...)", "A/A splits
    /// of these runs", or the default.
    pub delta_from: Option<String>,
    /// For an unresolved difference: runs per group that would settle it.
    pub needed_n: Option<usize>,
    /// Why a difference carries no confidence, when it does not.
    pub note: Option<String>,
    /// What the verdict must be read with, said before it: the machines
    /// differ, or (with `replaces_verdict`) the CPU clock moved at least as
    /// much as the difference (set by fslab-explain; None otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub caveat: Option<Caveat>,
}

/// Words a verdict must be read with (see [`Row::caveat`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Caveat {
    pub words: String,
    /// "faster"/"slower" give way to the words (`confounded: ...`).
    pub replaces_verdict: bool,
}

/// Builds the rows: every metric, every group, against group `baseline`,
/// with the default [`Policy`] (alpha 0.05, delta calibrated from A/A splits).
pub fn compare(groups: &[String], metrics: &[Metric], baseline: usize) -> Vec<Row> {
    compare_with(groups, metrics, baseline, Policy::default())
}

/// How a note begins when more runs would not settle a comparison.
pub const NO_MORE_RUNS: &str = "more runs cannot settle it";

/// The stated coverage of every interval a comparison prints.
pub const LEVEL: f64 = 0.95;

/// A count: a metric named without a unit (`fslab_model`'s rule: counts
/// carry none), such as "image extents".
pub fn counted(name: &str) -> bool {
    !name.trim_end().ends_with(')')
}

/// Whether a metric's values are exact: a count that does not vary in any
/// group, and either declared exact by construction by its workload (its
/// options fix it: fs_mark's files created) or seen not to vary in two runs
/// or more of every group that has values. One run a side is no evidence
/// that an undeclared count does not vary (extents, IOs and limit hits vary
/// from run to run).
fn exact(m: &Metric) -> bool {
    let constant = m.values.iter().all(|v| v.windows(2).all(|w| w[0] == w[1]));
    let seen = m.values.iter().all(|v| v.is_empty() || v.len() >= 2);
    counted(&m.name) && constant && (m.exact || seen)
}

fn blank_row(m: &Metric, group: &str, summary: Summary) -> Row {
    Row {
        metric: m.name.clone(),
        group: group.to_string(),
        summary,
        diff_pct: None,
        direction: None,
        ci_low_pct: None,
        ci_high_pct: None,
        interval: None,
        p_value: None,
        p_adjusted: None,
        correction: None,
        verdict: None,
        delta_pct: None,
        delta_from: None,
        needed_n: None,
        note: None,
        caveat: None,
    }
}

/// [`compare`] with a chosen policy.
pub fn compare_with(
    groups: &[String],
    metrics: &[Metric],
    baseline: usize,
    policy: Policy,
) -> Vec<Row> {
    compare_calibrated(groups, metrics, baseline, policy, &[])
}

/// A noise threshold from an A/A calibration: (percent, where it came from).
pub type Calibrated = Option<(f64, String)>;

/// Where a metric's threshold comes from: `--delta`, else its calibration
/// (`calibrated[i]`, when there is one), else the A/A splits of the runs
/// compared, else the default.
fn threshold(m: &Metric, policy: Policy, calibrated: Option<&Calibrated>) -> (f64, String) {
    if let Some(d) = policy.delta_pct {
        return (d, "--delta".into());
    }
    if let Some(Some((d, from))) = calibrated {
        return (*d, from.clone());
    }
    match verdict::aa_delta_pct(&m.values, 11) {
        Some(d) => (d, "A/A splits of these runs".into()),
        None => (
            verdict::DEFAULT_DELTA_PCT,
            "the default (no cell has two runs to split)".into(),
        ),
    }
}

/// [`compare_with`] with each metric's noise threshold from its A/A
/// calibration where one fits (`calibrated`, in metric order; shorter or
/// empty: the rest from the A/A splits of the runs compared).
pub fn compare_calibrated(
    groups: &[String],
    metrics: &[Metric],
    baseline: usize,
    policy: Policy,
    calibrated: &[Calibrated],
) -> Vec<Row> {
    let mut rows = Vec::new();
    for (mi, m) in metrics.iter().enumerate() {
        let base = &m.values[baseline];
        let bs = summarize(base);
        let (delta, delta_from) = threshold(m, policy, calibrated.get(mi));
        let exact = exact(m);
        for (g, vals) in m.values.iter().enumerate() {
            let mut summary = summarize(vals);
            if m.direction != Direction::Rate {
                summary.hmean = f64::NAN;
            }
            let mut row = blank_row(m, &groups[g], summary);
            if g != baseline && summary.n > 0 && bs.n > 0 {
                row.delta_pct = Some(delta);
                row.delta_from = Some(delta_from.clone());
                fill(&mut row, base, vals, exact);
            }
            rows.push(row);
        }
    }
    judge_rows(&mut rows, metrics, groups, baseline, policy);
    rows
}

/// A compared row's difference, interval, p-value and note.
fn fill(row: &mut Row, base: &[f64], vals: &[f64], exact: bool) {
    let (bs, s) = (summarize(base), summarize(vals));
    let constant = |v: &[f64]| v.windows(2).all(|w| w[0] == w[1]);
    // Equal values and no variance in two runs or more a side: the same,
    // whatever the values (0 and 0 included).
    if (exact || (bs.n >= 2 && s.n >= 2)) && constant(base) && constant(vals) && base[0] == vals[0]
    {
        row.diff_pct = Some(0.0);
        row.ci_low_pct = Some(0.0);
        row.ci_high_pct = Some(0.0);
        row.interval = Some(Method::Deterministic.name());
        return;
    }
    if bs.mean != 0.0 {
        row.diff_pct = Some((s.mean / bs.mean - 1.0) * 100.0);
    }
    let Some(ci) = interval::ratio(base, vals, LEVEL, exact) else {
        row.note = Some(if s.n < 2 || bs.n < 2 {
            format!(
                "too few repetitions (n={} vs {}) for confidence: use 3 or more",
                s.n, bs.n
            )
        } else if bs.mean == 0.0 || (constant(base) && base[0] == 0.0) {
            format!("{NO_MORE_RUNS}: the baseline is 0, so there is no ratio to it")
        } else {
            "the baseline's mean is too close to 0 for a bounded interval of the ratio".into()
        });
        return;
    };
    // The difference stays the ratio of the means the table shows; the
    // interval is of the same ratio, estimated on the log scale (where a
    // run's noise is a factor), and holds it at its stated coverage when
    // the cells differ by a factor (validated in `crate::coverage`).
    if ci.method == Method::Deterministic {
        row.diff_pct = Some((ci.ratio - 1.0) * 100.0);
    }
    row.ci_low_pct = Some((ci.low - 1.0) * 100.0);
    row.ci_high_pct = Some((ci.high - 1.0) * 100.0);
    row.interval = Some(ci.method.name());
    if ci.method == Method::Deterministic {
        return;
    }
    row.p_value = interval::ratio_p(base, vals, exact);
    if s.n < 3 || bs.n < 3 {
        row.note = Some(format!(
            "too few repetitions (n={} vs {}) for confidence: use 3 or more",
            s.n, bs.n
        ));
    }
}

/// Corrects the p-values of the whole comparison, every compared cell and
/// metric together (one family), and gives every compared row its verdict.
fn judge_rows(
    rows: &mut [Row],
    metrics: &[Metric],
    groups: &[String],
    baseline: usize,
    policy: Policy,
) {
    let n_groups = groups.len();
    let tested: Vec<usize> = (0..rows.len())
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
    // Rows are metric-major: row (metric i, group g) is i * n_groups + g.
    for (r, row) in rows.iter_mut().enumerate() {
        let (i, g) = (r / n_groups, r % n_groups);
        let Some(delta) = row.delta_pct.filter(|_| g != baseline) else {
            continue;
        };
        let Some(pct) = row.diff_pct else {
            // Compared, with no ratio (a baseline of 0): nothing resolves it.
            row.verdict = Some(Verdict::Unresolved);
            continue;
        };
        let evidence = verdict::Evidence {
            pct,
            ci: row.ci_low_pct.zip(row.ci_high_pct),
            p_adj: row.p_adjusted,
            exact: row.interval == Some(Method::Deterministic.name()),
        };
        let v = verdict::judge(metrics[i].direction, evidence, delta, policy.alpha);
        let base = &metrics[i].values[baseline];
        let sd_log = pooled_sd_log(base, &metrics[i].values[g]);
        let base_n = base.len();
        row.verdict = Some(v);
        if v.differs() {
            row.direction = Some(metrics[i].direction.word(pct));
        }
        if v == Verdict::Unresolved {
            let have = base_n.max(row.summary.n);
            row.needed_n = sd_log
                .and_then(|sd| verdict::needed_n(sd, 1.0 + pct / 100.0, delta))
                .map(|n| n.max(have + 1));
            if row.needed_n.is_none() && sd_log.is_some() && row.note.is_none() {
                row.note = Some(format!(
                    "{NO_MORE_RUNS}: the difference sits at the threshold δ = {delta:.1}%"
                ));
            }
        }
    }
}

/// The pooled standard deviation of two groups' logs (None when neither
/// has two values). Where a value is not positive (no logarithm), the
/// lognormal's sd for the pooled coefficient of variation instead,
/// sqrt(ln(1 + cv^2)).
fn pooled_sd_log(a: &[f64], b: &[f64]) -> Option<f64> {
    let sides: Vec<&[f64]> = [a, b].into_iter().filter(|v| v.len() >= 2).collect();
    let df: usize = sides.iter().map(|v| v.len() - 1).sum();
    if df == 0 {
        return None;
    }
    let ss = |v: &[f64]| {
        let m = v.iter().sum::<f64>() / v.len() as f64;
        v.iter().map(|x| (x - m).powi(2)).sum::<f64>()
    };
    if sides.iter().all(|v| v.iter().all(|x| *x > 0.0)) {
        let logs = |v: &[f64]| v.iter().map(|x| x.ln()).collect::<Vec<f64>>();
        let total: f64 = sides.iter().map(|v| ss(&logs(v))).sum();
        return Some((total / df as f64).sqrt());
    }
    // The pooled CV: each side's variance over its squared mean.
    let mut cv2 = 0.0;
    for v in &sides {
        let m = v.iter().sum::<f64>() / v.len() as f64;
        if m <= 0.0 {
            return None;
        }
        cv2 += ss(v) / (m * m);
    }
    Some((1.0 + cv2 / df as f64).ln().sqrt())
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
            exact: false,
            values: vec![vec![483.0, 480.0, 486.0], vec![510.0, 508.0, 512.0]],
        },
        Metric {
            name: "create rate (ops/s)".into(),
            direction: Direction::Rate,
            exact: false,
            values: vec![
                vec![109000.0, 110000.0, 108000.0],
                vec![105000.0, 104000.0, 106000.0],
            ],
        },
        Metric {
            name: "unmount (s)".into(),
            direction: Direction::Time,
            exact: false,
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
            exact: false,
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
                exact: false,
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

    #[test]
    fn counts_seen_not_to_vary_get_an_exact_verdict_from_two_runs_a_side() {
        let groups = vec!["a".to_string(), "b".to_string()];
        let one = |a: Vec<f64>, b: Vec<f64>| {
            let m = vec![Metric {
                name: "image extents".into(),
                direction: Direction::Cost,
                exact: false,
                values: vec![a, b],
            }];
            compare(&groups, &m, 0).remove(1)
        };
        let extents = |a, b| one(a, b);
        // One run a side is no evidence that a count does not vary.
        let r = extents(vec![9.0], vec![128.0]);
        assert_eq!(r.verdict, Some(Verdict::Unresolved), "{r:?}");
        assert_ne!(r.interval, Some("deterministic"), "{r:?}");
        let r = extents(vec![9.0, 9.0], vec![128.0, 128.0]);
        assert_eq!(
            (r.verdict, r.interval),
            (Some(Verdict::More), Some("deterministic"))
        );
        let r = one(vec![9.0, 9.0], vec![9.0, 9.0]);
        assert_eq!((r.verdict, r.note), (Some(Verdict::Same), None));
        let r = one(vec![0.0, 0.0], vec![0.0, 0.0]);
        assert_eq!(r.verdict, Some(Verdict::Same), "{r:?}");
        // A time that reads 0 in every run of both cells: the same.
        let zero = vec![Metric {
            name: "remount (s)".into(),
            direction: Direction::Time,
            exact: false,
            values: vec![vec![0.0, 0.0], vec![0.0, 0.0]],
        }];
        assert_eq!(compare(&groups, &zero, 0)[1].verdict, Some(Verdict::Same));
        // A baseline of 0 against something: no ratio, and more runs cannot
        // give one; the row says so.
        let r = one(vec![0.0, 0.0], vec![3.0, 4.0]);
        assert_eq!(r.verdict, Some(Verdict::Unresolved), "{r:?}");
        assert!(r.note.unwrap().starts_with(NO_MORE_RUNS));
        // A count that varies is measured like any other number.
        let r = one(vec![9.0, 10.0, 9.0], vec![128.0, 127.0, 129.0]);
        assert_eq!(r.interval, Some("Welch t on logs"));
        // Not a count: one run a side settles nothing.
        let groups2 = groups.clone();
        let m = vec![Metric {
            name: "unmount (s)".into(),
            direction: Direction::Time,
            exact: false,
            values: vec![vec![1.0], vec![1.0]],
        }];
        assert_eq!(
            compare(&groups2, &m, 0)[1].verdict,
            Some(Verdict::Unresolved)
        );
    }

    #[test]
    fn a_count_declared_exact_gets_its_verdict_from_one_run_a_side() {
        let groups = vec!["a".to_string(), "b".to_string()];
        let files = |exact: bool, a: Vec<f64>, b: Vec<f64>| {
            let m = vec![Metric {
                name: "fsmark files created".into(),
                direction: Direction::Cost,
                exact,
                values: vec![a, b],
            }];
            compare(&groups, &m, 0).remove(1)
        };
        // Declared by its workload (its options fix it): one run a side.
        let r = files(true, vec![100.0], vec![200.0]);
        assert_eq!(
            (r.verdict, r.interval, r.direction),
            (Some(Verdict::More), Some("deterministic"), Some("more")),
            "{r:?}"
        );
        assert!(
            (r.ci_low_pct, r.ci_high_pct) == (Some(100.0), Some(100.0)),
            "{r:?}"
        );
        let r = files(true, vec![100.0], vec![100.0]);
        assert_eq!(r.verdict, Some(Verdict::Same), "{r:?}");
        // Undeclared, the same numbers: one run a side settles nothing.
        let r = files(false, vec![100.0], vec![200.0]);
        assert_eq!(r.verdict, Some(Verdict::Unresolved), "{r:?}");
        assert_ne!(r.interval, Some("deterministic"), "{r:?}");
        // Undeclared, two constant runs a side: exact.
        let r = files(false, vec![100.0, 100.0], vec![200.0, 200.0]);
        assert_eq!(
            (r.verdict, r.interval),
            (Some(Verdict::More), Some("deterministic")),
            "{r:?}"
        );
        // Declared but seen to vary: the declaration is wrong for these runs
        // and the values are measured like any other number.
        let r = files(true, vec![100.0, 101.0], vec![200.0, 200.0]);
        assert_ne!(r.interval, Some("deterministic"), "{r:?}");
        // ... and its one run on a side is not taken as exact either.
        let r = files(true, vec![100.0], vec![200.0, 201.0]);
        assert_eq!(
            (r.verdict, r.interval),
            (Some(Verdict::Unresolved), None),
            "{r:?}"
        );
        // Declared, but not a count (named with a unit): no exact verdict.
        let m = vec![Metric {
            name: "unmount (s)".into(),
            direction: Direction::Time,
            exact: true,
            values: vec![vec![1.0], vec![2.0]],
        }];
        assert_eq!(
            compare(&groups, &m, 0)[1].verdict,
            Some(Verdict::Unresolved)
        );
    }

    #[test]
    fn a_calibration_gives_the_threshold_and_says_so() {
        let groups = vec!["a".to_string(), "b".to_string()];
        let m = vec![
            Metric {
                name: "x (s)".into(),
                direction: Direction::Time,
                exact: false,
                values: vec![vec![100.0, 101.0, 99.0], vec![103.0, 104.0, 102.0]],
            },
            Metric {
                name: "y (s)".into(),
                direction: Direction::Time,
                exact: false,
                values: vec![vec![100.0, 101.0, 99.0], vec![103.0, 104.0, 102.0]],
            },
        ];
        let cal = vec![Some((4.0, "calibration 7".to_string()))];
        let rows = compare_calibrated(&groups, &m, 0, Policy::default(), &cal);
        assert_eq!(rows[1].delta_pct, Some(4.0));
        assert_eq!(rows[1].delta_from.as_deref(), Some("calibration 7"));
        // +3% is within the calibrated 4%: not a difference; the other
        // metric's threshold comes from its own runs' splits.
        assert_ne!(rows[1].verdict, Some(Verdict::Slower), "{:?}", rows[1]);
        assert_eq!(
            rows[3].delta_from.as_deref(),
            Some("A/A splits of these runs")
        );
        // --delta wins over both.
        let given = Policy {
            delta_pct: Some(1.0),
            ..Policy::default()
        };
        let rows = compare_calibrated(&groups, &m, 0, given, &cal);
        assert_eq!(rows[1].delta_from.as_deref(), Some("--delta"));
        assert_eq!(rows[1].verdict, Some(Verdict::Slower));
    }

    #[test]
    fn one_family_spans_every_cell_and_metric() {
        // Twenty cells of one metric: the borderline one is corrected
        // against all twenty, not alone.
        let groups: Vec<String> = (0..21).map(|i| format!("c{i}")).collect();
        let a = vec![100.0, 102.0, 98.0, 101.0];
        let mut values = vec![a.clone(), vec![103.0, 105.0, 101.0, 104.5]];
        values.extend((0..19).map(|_| a.clone()));
        let m = vec![Metric {
            name: "t (s)".into(),
            direction: Direction::Time,
            exact: false,
            values,
        }];
        let holm = Policy {
            delta_pct: Some(1.0),
            correction: verdict::Correction::Holm,
            ..Policy::default()
        };
        let rows = compare_with(&groups, &m, 0, holm);
        let r = &rows[1];
        assert!(
            r.p_value.unwrap() < 0.05 && r.p_adjusted.unwrap() >= 0.05,
            "{r:?}"
        );
        assert_ne!(r.verdict, Some(Verdict::Slower), "{r:?}");
    }

    /// A/A: three cells, four metrics, 5 runs each, all from one
    /// distribution; over 1000 comparisons the chance of any "faster/slower"
    /// (the family-wise error; under a true null also the FDR) stays at or
    /// below 5% with Holm and with Benjamini-Hochberg.
    #[test]
    fn under_a_a_the_whole_family_errs_at_most_alpha() {
        let mut rng = crate::rng::SplitMix64(27);
        let groups: Vec<String> = (0..3).map(|i| format!("c{i}")).collect();
        for correction in [
            verdict::Correction::Holm,
            verdict::Correction::BenjaminiHochberg,
        ] {
            let policy = Policy {
                delta_pct: Some(0.01),
                correction,
                ..Policy::default()
            };
            let trials = 1000;
            let mut errs = 0;
            for _ in 0..trials {
                let metrics: Vec<Metric> = (0..4)
                    .map(|i| Metric {
                        name: format!("m{i} (s)"),
                        direction: Direction::Time,
                        exact: false,
                        values: (0..3)
                            .map(|_| {
                                (0..5)
                                    .map(|_| 100.0 * (1.0 + 0.05 * rng.normal()))
                                    .collect()
                            })
                            .collect(),
                    })
                    .collect();
                let rows = compare_with(&groups, &metrics, 0, policy);
                errs += usize::from(rows.iter().any(|r| r.verdict.is_some_and(Verdict::differs)));
            }
            let rate = errs as f64 / f64::from(trials);
            eprintln!("A/A family error with {}: {rate}", correction.name());
            assert!(rate <= 0.06, "{}: {rate}", correction.name());
        }
    }
}
