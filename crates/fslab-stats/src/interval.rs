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
//! `None` when there is nothing to say: an empty side, a value that is
//! not positive (no logarithm), or one value a side with no declared
//! determinism to stand in for the missing variance.

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
}

impl Method {
    /// Its name as outputs print it.
    pub fn name(self) -> &'static str {
        match self {
            Method::WelchLog => "Welch t on logs",
            Method::PairedLog => "paired t on logs",
            Method::Deterministic => "deterministic",
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

fn t_quantile(df: f64, level: f64) -> Option<f64> {
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
        let r = b[0] / a[0];
        return Some(RatioInterval {
            ratio: r,
            low: r,
            high: r,
            level,
            df: f64::INFINITY,
            method: Method::Deterministic,
        });
    }
    let (la, lb) = (logs(a)?, logs(b)?);
    let ((ma, va), (mb, vb)) = (mean_var(&la), mean_var(&lb));
    let (na, nb) = (la.len() as f64, lb.len() as f64);
    // One value on a side: its variance is unknown, unless that side is
    // declared exact.
    let (sa, sb) = (va / na, vb / nb);
    if !deterministic && (la.len() < 2 || lb.len() < 2) {
        return None;
    }
    let se2 = sa + sb;
    let mut df_den = 0.0;
    if la.len() > 1 {
        df_den += sa * sa / (na - 1.0);
    }
    if lb.len() > 1 {
        df_den += sb * sb / (nb - 1.0);
    }
    let df = se2 * se2 / df_den;
    let t = t_quantile(df, level)?;
    let (d, half) = (mb - ma, t * se2.sqrt());
    Some(RatioInterval {
        ratio: d.exp(),
        low: (d - half).exp(),
        high: (d + half).exp(),
        level,
        df,
        method: Method::WelchLog,
    })
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
        let r = m.exp();
        return Some(RatioInterval {
            ratio: r,
            low: r,
            high: r,
            level,
            df: f64::INFINITY,
            method: Method::Deterministic,
        });
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
        // A value that is not positive: no logarithm.
        assert_eq!(ratio(&[0.0, 1.0], &[2.0, 3.0], 0.95, false), None);
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
