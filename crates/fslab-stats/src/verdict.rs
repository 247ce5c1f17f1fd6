//! When is a difference real: a verdict per metric and comparison.
//!
//! For each metric, a group is compared with the baseline by
//! - the 95% interval of the ratio (`crate::interval`: Welch's t on the
//!   logs, whole runs as the units, each a fresh filesystem; exact for a
//!   count that does not vary; Fieller's for values not all positive);
//! - the test that goes with it (`crate::interval::ratio_p`), its p-values
//!   corrected over the whole comparison, every cell and every metric
//!   together (one family): by default with Benjamini and Hochberg's step-up
//!   method (1995), which holds the false discovery rate (the expected
//!   share of chance findings among the differences called real) at alpha;
//!   or with Holm's step-down method (1979), which holds the family-wise
//!   error rate (the chance of any chance finding) at alpha;
//! - a noise threshold delta: given (`--delta PCT`), or calibrated from
//!   A/A comparisons: every cell's runs split at random into two halves,
//!   the 95th percentile of |mean(half 1) / mean(half 2) - 1| over the
//!   splits of all cells, scaled by 1/sqrt(2) to means of whole cells
//!   (at least 0.5% and at most 5%: a noisier metric is not declared the
//!   same within a wide threshold, it needs more runs; 2% when no cell has
//!   two runs).
//!
//! The verdict:
//! - **exact**: a count with no variance on either side (one run a side
//!   is enough): equal values are the same, different values a difference,
//!   said to be deterministic;
//! - **faster / slower** (more / less for costs): adjusted p < alpha, the
//!   interval excludes 0 and the difference is at least delta;
//! - **same**: the whole interval lies within +-delta ("no difference
//!   within delta");
//! - **unresolved**: anything else, or fewer than 2 runs in a group. Then
//!   `needed_n` estimates the runs per group that would settle it (see
//!   [`needed_n`]), at least one more than the runs there are, or says
//!   that more runs cannot (the difference sits at delta).

use serde::Serialize;

/// Which way is better, and the words for a difference: the model's
/// ([`fslab_model::Direction`]; `compare` re-exports it as
/// `compare::Direction`).
pub use fslab_model::Direction;

/// The rules a verdict follows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Policy {
    /// The error rate the correction holds (0.05).
    pub alpha: f64,
    pub correction: Correction,
    /// The noise threshold in percent; None: calibrated from A/A splits.
    pub delta_pct: Option<f64>,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            alpha: 0.05,
            correction: Correction::BenjaminiHochberg,
            delta_pct: None,
        }
    }
}

/// How p-values are corrected across the metrics of a comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Correction {
    /// Benjamini-Hochberg: the false discovery rate.
    BenjaminiHochberg,
    /// Holm: the family-wise error rate.
    Holm,
}

impl Correction {
    /// Adjusted p-values, in the order given.
    pub fn adjust(self, p: &[f64]) -> Vec<f64> {
        match self {
            Correction::BenjaminiHochberg => benjamini_hochberg(p),
            Correction::Holm => holm(p),
        }
    }

    /// Its short name, as the tables print it.
    pub fn name(self) -> &'static str {
        match self {
            Correction::BenjaminiHochberg => "BH",
            Correction::Holm => "Holm",
        }
    }
}

/// Benjamini-Hochberg adjusted p-values, in the order given.
pub fn benjamini_hochberg(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|a, b| p[*b].total_cmp(&p[*a]));
    let mut adj = vec![0.0; m];
    let mut running: f64 = 1.0;
    for (k, &i) in order.iter().enumerate() {
        let rank = m - k;
        let v = (p[i] * m as f64 / rank as f64).min(1.0);
        running = running.min(v);
        adj[i] = running;
    }
    adj
}

/// The threshold when nothing can be calibrated.
pub const DEFAULT_DELTA_PCT: f64 = 2.0;
/// The least calibrated threshold.
pub const MIN_DELTA_PCT: f64 = 0.5;
/// The largest calibrated threshold.
pub const MAX_DELTA_PCT: f64 = 5.0;

/// What a comparison says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Faster,
    Slower,
    More,
    Less,
    /// No difference larger than delta.
    Same,
    /// Not enough evidence either way.
    Unresolved,
}

impl Verdict {
    /// Its name in CSV and JSON.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
            Verdict::More => "more",
            Verdict::Less => "less",
            Verdict::Same => "same",
            Verdict::Unresolved => "unresolved",
        }
    }

    /// The words shown beside a difference.
    pub fn words(self, delta_pct: f64) -> String {
        match self {
            Verdict::Faster => "faster".into(),
            Verdict::Slower => "slower".into(),
            Verdict::More => "more".into(),
            Verdict::Less => "less".into(),
            Verdict::Same => format!("no difference within {delta_pct:.1}%"),
            Verdict::Unresolved => "unresolved".into(),
        }
    }

    /// A real difference (not same, not unresolved).
    pub fn differs(self) -> bool {
        !matches!(self, Verdict::Same | Verdict::Unresolved)
    }

    /// The verdict of a real difference of sign `pct` in `direction`.
    pub fn of_difference(direction: Direction, pct: f64) -> Verdict {
        match (direction, pct > 0.0) {
            (Direction::Time, true) | (Direction::Rate, false) => Verdict::Slower,
            (Direction::Time, false) | (Direction::Rate, true) => Verdict::Faster,
            (Direction::Cost, true) => Verdict::More,
            (Direction::Cost, false) => Verdict::Less,
        }
    }
}

/// Holm's step-down adjusted p-values, in the order given.
pub fn holm(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|a, b| p[*a].total_cmp(&p[*b]));
    let mut adj = vec![0.0; m];
    let mut running: f64 = 0.0;
    for (rank, &i) in order.iter().enumerate() {
        let v = ((m - rank) as f64 * p[i]).min(1.0);
        running = running.max(v);
        adj[i] = running;
    }
    adj
}

/// The A/A noise threshold of one metric, in percent, from its groups'
/// values (see the module's text); None when no group has two values.
pub fn aa_delta_pct(groups: &[Vec<f64>], seed: u64) -> Option<f64> {
    let mut rng = crate::rng::SplitMix64(seed);
    let mut diffs = Vec::new();
    for g in groups.iter().filter(|g| g.len() >= 2) {
        for _ in 0..200 {
            let mut idx: Vec<usize> = (0..g.len()).collect();
            // Fisher-Yates.
            for i in (1..idx.len()).rev() {
                let j = rng.below(i as u64 + 1) as usize;
                idx.swap(i, j);
            }
            let half = g.len() / 2;
            let mean = |ix: &[usize]| ix.iter().map(|&i| g[i]).sum::<f64>() / ix.len() as f64;
            let (a, b) = (mean(&idx[..half]), mean(&idx[half..]));
            if b != 0.0 {
                diffs.push((a / b - 1.0).abs() * 100.0);
            }
        }
    }
    if diffs.is_empty() {
        return None;
    }
    diffs.sort_by(f64::total_cmp);
    let p95 = crate::quantile(&diffs, 0.95);
    Some((p95 / std::f64::consts::SQRT_2).clamp(MIN_DELTA_PCT, MAX_DELTA_PCT))
}

/// The runs per group that would resolve a ratio `ratio` (b / a) whose
/// logs have the pooled standard deviation `sd_log`, against threshold
/// `delta_pct`: the n at which a two-sample test at 80% power (and 5%
/// two-sided) tells it, n = 2 (z_0.975 + z_0.8)^2 sd^2 / h^2 on the log
/// scale, where h is how far the ratio lies from what it must be told
/// from: from 1 (a difference) when |ln ratio| >= ln(1 + delta), from the
/// threshold (the same) when it is inside. None when the noise is unknown,
/// or when the ratio sits so close to the threshold that more than
/// [`MAX_NEEDED_RUNS`] would be needed: more runs cannot settle it.
pub fn needed_n(sd_log: f64, ratio: f64, delta_pct: f64) -> Option<usize> {
    if !sd_log.is_finite() || !ratio.is_finite() || ratio <= 0.0 {
        return None;
    }
    let (l, d) = (ratio.ln().abs(), (1.0 + delta_pct / 100.0).ln());
    let h = if l >= d { l } else { d - l };
    let z = 1.959_964 + 0.841_621;
    let n = 2.0 * z * z * sd_log * sd_log / (h * h);
    (n <= MAX_NEEDED_RUNS as f64).then(|| (n.ceil() as usize).max(2))
}

/// Beyond this many runs per cell, "more runs" is no answer.
pub const MAX_NEEDED_RUNS: usize = 1000;

/// What one comparison of a metric shows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Evidence {
    /// The difference, in percent (the interval's point estimate).
    pub pct: f64,
    /// Its interval, in percent.
    pub ci: Option<(f64, f64)>,
    /// The p-value corrected over the comparison's family.
    pub p_adj: Option<f64>,
    /// No variance on either side: the interval is the exact difference.
    pub exact: bool,
}

/// The verdict on one comparison (see the module's text).
pub fn judge(direction: Direction, e: Evidence, delta_pct: f64, alpha: f64) -> Verdict {
    let Some((lo, hi)) = e.ci else {
        return Verdict::Unresolved;
    };
    if e.exact {
        return if e.pct == 0.0 {
            Verdict::Same
        } else {
            Verdict::of_difference(direction, e.pct)
        };
    }
    if lo >= -delta_pct && hi <= delta_pct {
        return Verdict::Same;
    }
    let excludes_zero = lo > 0.0 || hi < 0.0;
    match e.p_adj {
        Some(p) if p < alpha && excludes_zero && e.pct.abs() >= delta_pct => {
            Verdict::of_difference(direction, e.pct)
        }
        _ => Verdict::Unresolved,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holm_matches_the_textbook_example() {
        // Holm (1979)-style example: p = 0.01, 0.04, 0.03, 0.005 (m = 4).
        let adj = holm(&[0.01, 0.04, 0.03, 0.005]);
        let want = [0.03, 0.06, 0.06, 0.02];
        for (a, w) in adj.iter().zip(want) {
            assert!((a - w).abs() < 1e-12, "{adj:?}");
        }
        assert_eq!(holm(&[0.9, 0.8]), vec![1.0, 1.0]);
        assert_eq!(holm(&[0.3, 0.01]), vec![0.3, 0.02]);
        assert!(holm(&[]).is_empty());
    }

    #[test]
    fn benjamini_hochberg_matches_the_textbook_example() {
        // p = 0.01, 0.04, 0.03, 0.005 (m = 4): sorted 0.005 0.01 0.03 0.04
        // -> 0.02, 0.02, 0.04, 0.04.
        let adj = benjamini_hochberg(&[0.01, 0.04, 0.03, 0.005]);
        let want = [0.02, 0.04, 0.04, 0.02];
        for (a, w) in adj.iter().zip(want) {
            assert!((a - w).abs() < 1e-12, "{adj:?}");
        }
        // Never below the raw p, never above 1, and at most Holm's.
        let p = [0.001, 0.2, 0.5, 0.04, 0.9];
        let (bh, ho) = (benjamini_hochberg(&p), holm(&p));
        for i in 0..p.len() {
            assert!(bh[i] >= p[i] && bh[i] <= 1.0 && bh[i] <= ho[i] + 1e-12);
        }
    }

    #[test]
    fn aa_threshold_follows_the_noise() {
        let quiet = vec![vec![100.0, 100.5, 99.5, 100.2, 99.8, 100.1]];
        let noisy = vec![vec![100.0, 130.0, 80.0, 115.0, 90.0, 105.0]];
        let q = aa_delta_pct(&quiet, 1).unwrap();
        let n = aa_delta_pct(&noisy, 1).unwrap();
        assert!((MIN_DELTA_PCT..1.0).contains(&q), "{q}");
        assert!(n > 4.0 * q && n <= MAX_DELTA_PCT, "{n} vs {q}");
        assert_eq!(aa_delta_pct(&[vec![1.0]], 1), None);
    }

    #[test]
    fn needed_runs_grow_with_noise_and_shrink_with_the_effect() {
        // sd 0.1 on logs, a ratio of e^0.1: 2 * 2.8^2 = 15.7 -> 16 per group.
        assert_eq!(needed_n(0.1, 0.1f64.exp(), 2.0), Some(16));
        assert_eq!(needed_n(0.01, 1.1, 2.0), Some(2));
        assert!(needed_n(0.2, 1.05, 2.0).unwrap() > 100);
        assert_eq!(needed_n(f64::NAN, 1.05, 2.0), None);
        // Just inside the threshold: no number of runs tells it.
        assert_eq!(needed_n(0.05, 1.0199, 2.0), None);
        // Inside it: how far from the threshold counts.
        assert!(needed_n(0.01, 1.0, 2.0).unwrap() < needed_n(0.01, 1.015, 2.0).unwrap());
    }

    #[test]
    fn exact_differences_need_no_test() {
        let e = |pct: f64| Evidence {
            pct,
            ci: Some((pct, pct)),
            p_adj: None,
            exact: true,
        };
        assert_eq!(judge(Direction::Cost, e(0.0), 2.0, 0.05), Verdict::Same);
        assert_eq!(judge(Direction::Cost, e(1.0), 2.0, 0.05), Verdict::More);
        assert_eq!(judge(Direction::Time, e(-50.0), 2.0, 0.05), Verdict::Faster);
        let none = Evidence { ci: None, ..e(5.0) };
        assert_eq!(judge(Direction::Cost, none, 2.0, 0.05), Verdict::Unresolved);
    }
}
