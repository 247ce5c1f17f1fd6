//! Intervals of a ratio, with the coverage they state at the numbers of
//! runs fslab uses.
//!
//! - Two independent groups (two cells): the ratio of geometric means,
//!   `exp(mean(ln b) - mean(ln a))`, with Welch's t interval of the
//!   difference of mean logs (Welch-Satterthwaite degrees of freedom),
//!   exponentiated. Rates, times and counts are positive and their noise
//!   is multiplicative, so the log scale is where a t interval holds.
//! - Two metrics of the same runs (one cell: its last tenth against its
//!   first): paired, the t interval of the mean of `ln b_i - ln a_i` with
//!   n - 1 degrees of freedom.
//! - No variance on either side (a deterministic metric): the ratio is
//!   exact and the interval is that point, said to be deterministic.
//!
//! - A value that is not positive on a side (a count that can be 0, like
//!   "guest IOs"): no logarithm, so Fieller's interval of the ratio of
//!   means (Fieller 1954) with Welch's degrees of freedom; it is bounded
//!   only when the baseline's mean is itself clearly away from 0.
//!
//! `None` when there is nothing to say: an empty side, a baseline mean too
//! close to 0 for a bounded ratio, or one value a side with no declared
//! determinism to stand in for the missing variance.
//!
//! [`ratio_p`] is the test that goes with [`ratio`]: the two-sided p-value
//! of "the ratio is 1", so that the interval excludes 1 at level 1 - alpha
//! exactly when p < alpha. Coverage is checked by simulation in
//! `crate::sim`'s tests.

use serde::Serialize;
use statrs::distribution::{ContinuousCDF, StudentsT};

/// How an interval was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// Welch's t interval of the difference of mean logs.
    WelchLog,
    /// The t interval of the mean paired log ratio.
    PairedLog,
    /// No variance on either side: the exact ratio.
    Deterministic,
    /// Fieller's interval of the ratio of means (values not all positive).
    Fieller,
}

impl Method {
    /// Its name as outputs print it.
    pub fn name(self) -> &'static str {
        match self {
            Method::WelchLog => "Welch t on logs",
            Method::PairedLog => "paired t on logs",
            Method::Deterministic => "deterministic",
            Method::Fieller => "Fieller",
        }
    }
}

/// An interval of the ratio b / a.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RatioInterval {
    /// The point estimate: the ratio of geometric means (or, paired, the
    /// geometric mean of the run-by-run ratios).
    pub ratio: f64,
    pub low: f64,
    pub high: f64,
    /// The stated coverage (0.95).
    pub level: f64,
    /// The degrees of freedom of the t quantile (infinite when deterministic).
    pub df: f64,
    pub method: Method,
}

impl RatioInterval {
    /// The exact ratio `r` of sides with no variance: the interval is that point.
    pub fn exact(r: f64, level: f64) -> RatioInterval {
        RatioInterval {
            ratio: r,
            low: r,
            high: r,
            level,
            df: f64::INFINITY,
            method: Method::Deterministic,
        }
    }

    /// True when the whole interval lies above `bound`.
    pub fn above(&self, bound: f64) -> bool {
        self.low > bound
    }

    /// True when the whole interval lies below `bound`.
    pub fn below(&self, bound: f64) -> bool {
        self.high < bound
    }
}

fn logs(v: &[f64]) -> Option<Vec<f64>> {
    v.iter()
        .all(|x| *x > 0.0 && x.is_finite())
        .then(|| v.iter().map(|x| x.ln()).collect())
}

fn mean_var(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let m = v.iter().sum::<f64>() / n;
    let var = if v.len() > 1 {
        v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0)
    } else {
        0.0
    };
    (m, var)
}

pub(crate) fn t_quantile(df: f64, level: f64) -> Option<f64> {
    Some(
        StudentsT::new(0.0, 1.0, df)
            .ok()?
            .inverse_cdf(1.0 - (1.0 - level) / 2.0),
    )
}

/// All values equal (no variance at all, not merely a small one).
fn constant(v: &[f64]) -> bool {
    v.windows(2).all(|w| w[0] == w[1])
}

/// The interval of mean-ratio b / a for two independent groups, at
/// `level` (0.95). Both sides constant (including one value a side when
/// `deterministic` declares the metric exact): the exact ratio.
pub fn ratio(a: &[f64], b: &[f64], level: f64, deterministic: bool) -> Option<RatioInterval> {
    if a.is_empty() || b.is_empty() {
        return None;
    }
    let exact = constant(a) && constant(b) && (deterministic || (a.len() >= 2 && b.len() >= 2));
    if exact {
        if a[0] == 0.0 {
            return None;
        }
        return Some(RatioInterval::exact(b[0] / a[0], level));
    }
    // One value on a side: its variance is unknown, unless that side is
    // declared exact.
    if (a.len() < 2 || b.len() < 2) && !deterministic {
        return None;
    }
    let (Some(la), Some(lb)) = (logs(a), logs(b)) else {
        return fieller(a, b, level);
    };
    let w = welch_parts(&la, &lb)?;
    let t = t_quantile(w.df, level)?;
    let (d, half, df) = (w.diff, t * w.se, w.df);
    Some(RatioInterval {
        ratio: d.exp(),
        low: (d - half).exp(),
        high: (d + half).exp(),
        level,
        df,
        method: Method::WelchLog,
    })
}

/// The difference of means of two samples, its standard error and
/// Welch-Satterthwaite degrees of freedom (a side of one value counts as
/// exact); None when neither side varies.
struct Welch {
    diff: f64,
    se: f64,
    df: f64,
}

fn welch_parts(a: &[f64], b: &[f64]) -> Option<Welch> {
    let ((ma, va), (mb, vb)) = (mean_var(a), mean_var(b));
    let (na, nb) = (a.len() as f64, b.len() as f64);
    let (sa, sb) = (va / na, vb / nb);
    let se2 = sa + sb;
    let mut df_den = 0.0;
    if a.len() > 1 {
        df_den += sa * sa / (na - 1.0);
    }
    if b.len() > 1 {
        df_den += sb * sb / (nb - 1.0);
    }
    (se2 > 0.0 && df_den > 0.0).then(|| Welch {
        diff: mb - ma,
        se: se2.sqrt(),
        df: se2 * se2 / df_den,
    })
}

/// Fieller's interval of mean(b) / mean(a) for independent groups: the
/// ratios r with (mean b - r mean a)^2 <= t^2 (var b / n_b + r^2 var a /
/// n_a), t at Welch's degrees of freedom for the estimated ratio. None
/// when the set is not a bounded interval (mean a not clearly away from 0).
pub(crate) fn fieller(a: &[f64], b: &[f64], level: f64) -> Option<RatioInterval> {
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    let ((ma, va), (mb, vb)) = (mean_var(a), mean_var(b));
    let (na, nb) = (a.len() as f64, b.len() as f64);
    if ma == 0.0 {
        return None;
    }
    let r = mb / ma;
    let (sa, sb) = (r * r * va / na, vb / nb);
    let se2 = sa + sb;
    if se2 == 0.0 {
        return None;
    }
    let df = se2 * se2 / (sa * sa / (na - 1.0) + sb * sb / (nb - 1.0));
    let t2 = t_quantile(df, level)?.powi(2);
    let (qa, qb) = (va / na, vb / nb);
    // (ma^2 - t^2 qa) r^2 - 2 ma mb r + (mb^2 - t^2 qb) <= 0
    let a2 = ma * ma - t2 * qa;
    let disc = (ma * mb).powi(2) - a2 * (mb * mb - t2 * qb);
    if a2 <= 0.0 || disc < 0.0 {
        return None;
    }
    let root = disc.sqrt();
    // Values that are never negative have a ratio that is never negative:
    // the part of the interval below 0 holds no possible truth.
    let floor = if a.iter().chain(b).all(|x| *x >= 0.0) {
        0.0
    } else {
        f64::NEG_INFINITY
    };
    Some(RatioInterval {
        ratio: r,
        low: ((ma * mb - root) / a2).max(floor),
        high: (ma * mb + root) / a2,
        level,
        df,
        method: Method::Fieller,
    })
}

/// The two-sided p-value of "the ratio b / a is 1" that goes with
/// [`ratio`]: Welch's t-test on the logs (on the values themselves when
/// one is not positive). Some(0.0) or Some(1.0) for exact (constant)
/// sides that differ or agree; None where `ratio` gives no interval.
pub fn ratio_p(a: &[f64], b: &[f64], deterministic: bool) -> Option<f64> {
    let r = ratio(a, b, 0.95, deterministic)?;
    if r.method == Method::Deterministic {
        return Some(if r.ratio == 1.0 { 1.0 } else { 0.0 });
    }
    let w = match (logs(a), logs(b)) {
        (Some(la), Some(lb)) => welch_parts(&la, &lb)?,
        _ => welch_parts(a, b)?,
    };
    let dist = StudentsT::new(0.0, 1.0, w.df).ok()?;
    Some((2.0 * dist.sf((w.diff / w.se).abs())).min(1.0))
}

/// The two-sided p-value of "the ratio is 1" that goes with
/// [`paired_ratio`] (the paired t-test on the log ratios).
pub fn paired_p(pairs: &[(f64, f64)]) -> Option<f64> {
    let r = paired_ratio(pairs, 0.95)?;
    if r.method == Method::Deterministic {
        return Some(if r.ratio == 1.0 { 1.0 } else { 0.0 });
    }
    let d: Vec<f64> = pairs.iter().map(|(a, b)| (b / a).ln()).collect();
    let (m, var) = mean_var(&d);
    let se = (var / d.len() as f64).sqrt();
    let dist = StudentsT::new(0.0, 1.0, r.df).ok()?;
    Some((2.0 * dist.sf((m / se).abs())).min(1.0))
}

/// The interval of b_i / a_i over pairs measured in the same runs, at
/// `level`: the geometric mean ratio with the t interval of the paired
/// log differences (n - 1 degrees of freedom).
pub fn paired_ratio(pairs: &[(f64, f64)], level: f64) -> Option<RatioInterval> {
    if pairs.is_empty() {
        return None;
    }
    let d: Vec<f64> = pairs
        .iter()
        .map(|(a, b)| (*a > 0.0 && *b > 0.0).then(|| (b / a).ln()))
        .collect::<Option<_>>()?;
    let (m, var) = mean_var(&d);
    if constant(&d) && d.len() >= 2 {
        return Some(RatioInterval::exact(m.exp(), level));
    }
    if d.len() < 2 {
        return None;
    }
    let df = (d.len() - 1) as f64;
    let half = t_quantile(df, level)? * (var / d.len() as f64).sqrt();
    Some(RatioInterval {
        ratio: m.exp(),
        low: (m - half).exp(),
        high: (m + half).exp(),
        level,
        df,
        method: Method::PairedLog,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn welch_on_logs_brackets_a_known_ratio() {
        let a = [100.0, 102.0, 98.0, 101.0, 99.0];
        let b = [110.0, 111.0, 109.0, 112.0, 108.0];
        let r = ratio(&a, &b, 0.95, false).unwrap();
        assert_eq!(r.method, Method::WelchLog);
        assert!(
            r.low < 1.1 && r.high > 1.1 && r.low > 1.07 && r.high < 1.13,
            "{r:?}"
        );
        assert!(r.above(1.0) && !r.below(1.0));
        // One value a side, nothing declared: no interval.
        assert_eq!(ratio(&[1.0], &[2.0], 0.95, false), None);
        // A value that is not positive: Fieller's interval of the ratio of
        // means, unbounded (None) when the baseline's mean may be 0.
        assert_eq!(ratio(&[0.0, 1.0], &[2.0, 3.0], 0.95, false), None);
        let a = [0.0, 10.0, 10.5, 9.5, 10.0, 10.2, 9.8, 10.1];
        let f = ratio(&a, &[20.0, 21.0, 19.0, 20.5], 0.95, false).unwrap();
        assert_eq!(f.method, Method::Fieller);
        assert!(f.low < f.ratio && f.ratio < f.high && f.low > 1.0, "{f:?}");
    }

    #[test]
    fn the_p_value_agrees_with_the_interval() {
        let a = [100.0, 102.0, 98.0, 101.0];
        for shift in [1.0, 1.01, 1.02, 1.03, 1.05, 1.2] {
            let b: Vec<f64> = [99.0, 103.0, 100.0, 101.5]
                .iter()
                .map(|x| x * shift)
                .collect();
            let r = ratio(&a, &b, 0.95, false).unwrap();
            let p = ratio_p(&a, &b, false).unwrap();
            assert_eq!(p < 0.05, r.above(1.0) || r.below(1.0), "{shift}: {p} {r:?}");
        }
        assert_eq!(ratio_p(&[9.0], &[9.0], true), Some(1.0));
        assert_eq!(ratio_p(&[9.0], &[10.0], true), Some(0.0));
        assert_eq!(ratio_p(&[9.0], &[10.0], false), None);
        let p = [(100.0, 50.5), (200.0, 99.0), (150.0, 75.2)];
        assert!(paired_p(&p).unwrap() < 0.001);
    }

    #[test]
    fn constant_sides_are_exact() {
        let r = ratio(&[9.0, 9.0], &[128.0, 128.0], 0.95, false).unwrap();
        assert_eq!(
            (r.method, r.low, r.high),
            (Method::Deterministic, r.ratio, r.ratio)
        );
        assert!((r.ratio - 128.0 / 9.0).abs() < 1e-12);
        // One value a side of a metric declared exact.
        let r = ratio(&[9.0], &[9.0], 0.95, true).unwrap();
        assert_eq!((r.ratio, r.method), (1.0, Method::Deterministic));
    }

    #[test]
    fn paired_ratios_use_the_run_by_run_differences() {
        // Each run's second value is 0.5x its first, whatever the run.
        let p = [(100.0, 50.5), (200.0, 99.0), (150.0, 75.2)];
        let r = paired_ratio(&p, 0.95).unwrap();
        assert_eq!(r.method, Method::PairedLog);
        assert!(r.high < 0.52 && r.low > 0.48, "{r:?}");
        // Unpaired, the runs' spread swamps it.
        let (a, b): (Vec<f64>, Vec<f64>) = p.iter().copied().unzip();
        let u = ratio(&a, &b, 0.95, false).unwrap();
        assert!(u.high - u.low > 10.0 * (r.high - r.low), "{u:?}");
    }
}
