//! Statistics for comparing repetitions.
//!
//! Methods:
//! - sample standard deviation with n - 1 (Bessel);
//! - harmonic mean for rates (the mean rate of runs doing equal work);
//! - Welch's unequal-variance t-test (Welch 1947) with the
//!   Welch-Satterthwaite degrees of freedom, two-sided p-value from
//!   Student's t distribution;
//! - intervals of a ratio with the coverage they state (`interval`:
//!   Welch's t on logs, paired t on log ratios, Fieller's, exact), their
//!   coverage simulated in `coverage`; the verdicts on them (`verdict`,
//!   `compare`) and the sequential levels of `--until-resolved`
//!   (`sequential`); the smallest difference a planned comparison can
//!   resolve at 80% power (`power`);
//! - a percentile bootstrap (Efron 1979) of the ratio of means, resampling
//!   each group with replacement, from a fixed seed so results repeat (it
//!   under-covers at small n: `coverage` shows it; comparisons no longer
//!   use it);
//! - Tukey's fences (1977) for outliers: values below Q1 - 1.5 IQR or above
//!   Q3 + 1.5 IQR (quartiles by linear interpolation).

pub mod calibrate;
pub mod changepoint;
pub mod columns;
pub mod compare;
pub mod coverage;
pub mod interval;
pub mod power;
pub mod rng;
pub mod sequential;
pub mod verdict;

use serde::Serialize;
use statrs::distribution::{ContinuousCDF, StudentsT};

/// Describes a sample.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Summary {
    pub n: usize,
    pub mean: f64,
    /// Sample standard deviation (0 when n = 1).
    pub sd: f64,
    pub median: f64,
    pub min: f64,
    pub max: f64,
    /// Harmonic mean (NaN if any value is not positive).
    pub hmean: f64,
    /// Coefficient of variation, sd / mean, in percent (the unit every
    /// output shows it in).
    pub cv_pct: f64,
}

/// The quantile `q` of sorted values, by linear interpolation (type 7).
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let h = (sorted.len() - 1) as f64 * q;
    let lo = h.floor() as usize;
    let hi = h.ceil() as usize;
    sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo])
}

pub fn summarize(v: &[f64]) -> Summary {
    let n = v.len();
    if n == 0 {
        return Summary {
            n,
            mean: f64::NAN,
            sd: f64::NAN,
            median: f64::NAN,
            min: f64::NAN,
            max: f64::NAN,
            hmean: f64::NAN,
            cv_pct: f64::NAN,
        };
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let mean = v.iter().sum::<f64>() / n as f64;
    let sd = if n > 1 {
        (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
    } else {
        0.0
    };
    let hmean = if v.iter().all(|x| *x > 0.0) {
        n as f64 / v.iter().map(|x| 1.0 / x).sum::<f64>()
    } else {
        f64::NAN
    };
    Summary {
        n,
        mean,
        sd,
        median: quantile(&s, 0.5),
        min: s[0],
        max: s[n - 1],
        hmean,
        cv_pct: if mean != 0.0 {
            sd / mean * 100.0
        } else {
            f64::NAN
        },
    }
}

/// Welch's t-test of the means of `a` and `b`: (t, degrees of freedom,
/// two-sided p). None when a group has fewer than 2 values or no variance.
pub fn welch(a: &[f64], b: &[f64]) -> Option<(f64, f64, f64)> {
    let (sa, sb) = (summarize(a), summarize(b));
    if sa.n < 2 || sb.n < 2 {
        return None;
    }
    let (va, vb) = (sa.sd.powi(2) / sa.n as f64, sb.sd.powi(2) / sb.n as f64);
    if va + vb == 0.0 {
        return None;
    }
    let t = (sb.mean - sa.mean) / (va + vb).sqrt();
    let df = (va + vb).powi(2) / (va.powi(2) / (sa.n - 1) as f64 + vb.powi(2) / (sb.n - 1) as f64);
    let dist = StudentsT::new(0.0, 1.0, df).ok()?;
    let p = 2.0 * (1.0 - dist.cdf(t.abs()));
    Some((t, df, p))
}

/// Student's t interval of the mean at `level` (e.g. 0.95); None with
/// fewer than 2 values.
pub fn mean_interval(v: &[f64], level: f64) -> Option<(f64, f64)> {
    let s = summarize(v);
    if s.n < 2 {
        return None;
    }
    let t = StudentsT::new(0.0, 1.0, (s.n - 1) as f64)
        .ok()?
        .inverse_cdf(1.0 - (1.0 - level) / 2.0);
    let half = t * s.sd / (s.n as f64).sqrt();
    Some((s.mean - half, s.mean + half))
}

/// Percentile bootstrap interval of mean(b) / mean(a) at `level` (e.g. 0.95).
pub fn bootstrap_ratio(
    a: &[f64],
    b: &[f64],
    iterations: usize,
    level: f64,
    seed: u64,
) -> Option<(f64, f64)> {
    if a.is_empty() || b.is_empty() {
        return None;
    }
    let mut rng = rng::SplitMix64(seed);
    let mut pick = |v: &[f64]| v[rng.below(v.len() as u64) as usize];
    let mut ratios = Vec::with_capacity(iterations);
    for _ in 0..iterations {
        let ma = (0..a.len()).map(|_| pick(a)).sum::<f64>() / a.len() as f64;
        let mb = (0..b.len()).map(|_| pick(b)).sum::<f64>() / b.len() as f64;
        if ma != 0.0 {
            ratios.push(mb / ma);
        }
    }
    if ratios.is_empty() {
        return None;
    }
    ratios.sort_by(f64::total_cmp);
    let tail = (1.0 - level) / 2.0;
    Some((quantile(&ratios, tail), quantile(&ratios, 1.0 - tail)))
}

/// The values inside Tukey's fences (Q1 - 1.5 IQR, Q3 + 1.5 IQR).
pub fn trim_outliers(v: &[f64]) -> Vec<f64> {
    if v.len() < 4 {
        return v.to_vec();
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let (q1, q3) = (quantile(&s, 0.25), quantile(&s, 0.75));
    let iqr = q3 - q1;
    v.iter()
        .copied()
        .filter(|x| *x >= q1 - 1.5 * iqr && *x <= q3 + 1.5 * iqr)
        .collect()
}

/// A measured number for a table: whole above 100000, one decimal above
/// 100, three above 1, four below; "-" for none (NaN).
pub fn fmt_num(x: f64) -> String {
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

/// `x` to `digits` significant digits in plain notation, never with an
/// exponent (0.000128, 3190, 1.52): what a person reads in a sentence.
pub fn fmt_sig(x: f64, digits: usize) -> String {
    if x == 0.0 || !x.is_finite() {
        return fmt_g(x, digits);
    }
    let exp = x.abs().log10().floor() as i64;
    let decimals = (digits.max(1) as i64 - 1 - exp).clamp(0, 12) as usize;
    let s = format!("{x:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// C's `%g` (6 significant digits) and `%.Pg`.
pub fn fmt_g(x: f64, precision: usize) -> String {
    if x == 0.0 || !x.is_finite() {
        return if x.is_nan() {
            "nan".into()
        } else if x.is_infinite() {
            if x > 0.0 {
                "inf".into()
            } else {
                "-inf".into()
            }
        } else {
            "0".into()
        };
    }
    let p = precision.max(1);
    let exp = x.abs().log10().floor() as i32;
    let strip = |s: String| {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    // Round first: the exponent may change (9.99e5 -> 1e+06).
    let e = format!("{:.*e}", p - 1, x);
    let (mant, ex) = e.split_once('e').expect("exponent form");
    let exp_r: i32 = ex.parse().unwrap_or(exp);
    if exp_r < -4 || exp_r >= p as i32 {
        format!(
            "{}e{}{:02}",
            strip(mant.to_string()),
            if exp_r < 0 { '-' } else { '+' },
            exp_r.abs()
        )
    } else {
        strip(format!("{:.*}", (p as i32 - 1 - exp_r).max(0) as usize, x))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn significant_digits_in_plain_notation() {
        assert_eq!(fmt_sig(0.000128, 3), "0.000128");
        assert_eq!(fmt_sig(3190.4, 3), "3190");
        assert_eq!(fmt_sig(1.5234, 3), "1.52");
        assert_eq!(fmt_sig(0.274, 3), "0.274");
        assert_eq!(fmt_sig(2.0, 3), "2");
        assert_eq!(fmt_sig(-0.0693, 3), "-0.0693");
        assert_eq!(fmt_sig(1.67e7, 3), "16700000");
    }

    #[test]
    fn textbook_summary() {
        let s = summarize(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]);
        assert_eq!(
            (s.n, s.mean, s.median, s.min, s.max),
            (8, 5.0, 4.5, 2.0, 9.0)
        );
        assert!((s.sd - 2.138_089_935_299_395).abs() < 1e-12);
        // Harmonic mean of 40 and 60 km/h over equal distances is 48.
        assert!((summarize(&[40.0, 60.0]).hmean - 48.0).abs() < 1e-12);
        assert!(summarize(&[1.0, -1.0]).hmean.is_nan());
    }

    #[test]
    fn welch_matches_a_known_result() {
        // Example 1 of Wikipedia's "Welch's t-test": t = 2.46, df = 25.0, p = 0.021.
        let a = [
            27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0, 21.7,
            21.4,
        ];
        let b = [
            27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9, 20.5,
            24.4,
        ];
        let (t, df, p) = welch(&a, &b).unwrap();
        assert!((t - 2.46).abs() < 0.01, "{t}");
        assert!((df - 25.0).abs() < 0.1, "{df}");
        assert!((p - 0.021).abs() < 0.001, "{p}");
        assert!(welch(&[1.0], &[2.0, 3.0]).is_none());
    }

    #[test]
    fn the_t_interval_of_a_mean() {
        // n = 4, mean 10, sd 2: t(0.975, 3) = 3.182, half-width 3.182.
        let (lo, hi) = mean_interval(&[8.0, 10.0, 10.0, 12.0], 0.95).unwrap();
        let half = 3.182_446 * (8.0f64 / 3.0).sqrt() / 2.0;
        assert!((lo - (10.0 - half)).abs() < 1e-3 && (hi - (10.0 + half)).abs() < 1e-3);
        assert_eq!(mean_interval(&[1.0], 0.95), None);
    }

    #[test]
    fn bootstrap_repeats_with_its_seed_and_brackets_the_ratio() {
        let a = [100.0, 102.0, 98.0, 101.0, 99.0];
        let b = [110.0, 111.0, 109.0, 112.0, 108.0];
        let one = bootstrap_ratio(&a, &b, 2000, 0.95, 7).unwrap();
        assert_eq!(one, bootstrap_ratio(&a, &b, 2000, 0.95, 7).unwrap());
        assert!(
            one.0 < 1.1 && one.1 > 1.1 && one.0 > 1.05 && one.1 < 1.15,
            "{one:?}"
        );
    }

    #[test]
    fn tukey_fences_drop_the_far_ones() {
        assert_eq!(
            trim_outliers(&[10.0, 11.0, 12.0, 11.5, 10.5, 100.0]),
            vec![10.0, 11.0, 12.0, 11.5, 10.5]
        );
        assert_eq!(trim_outliers(&[1.0, 100.0]), vec![1.0, 100.0]);
    }

    #[test]
    fn printf_g() {
        assert_eq!(fmt_g(3_200_000.0, 6), "3.2e+06");
        assert_eq!(fmt_g(23016.4, 6), "23016.4");
        assert_eq!(fmt_g(8_494_630.0, 6), "8.49463e+06");
        assert_eq!(fmt_g(1.1e6, 2), "1.1e+06");
        assert_eq!(fmt_g(5.0e5, 2), "5e+05");
        assert_eq!(fmt_g(0.000123, 2), "0.00012");
        assert_eq!(fmt_g(999_999.5, 6), "1e+06");
    }
}
