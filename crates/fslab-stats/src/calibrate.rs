//! The noise of a cell against itself (A/A): two copies of one cell run
//! interleaved; per metric, how far apart the copies may lie.
//!
//! The threshold it gives is the farther end of the 95% interval of the
//! copies' ratio (`crate::interval::ratio`), in percent: the largest
//! difference between a cell and itself that the A/A runs allow, at
//! least [`crate::verdict::MIN_DELTA_PCT`]. A comparison then calls a
//! difference real only beyond it, and the same only within it.

use crate::interval::{ratio, Method};
use crate::verdict::MIN_DELTA_PCT;

/// One metric's A/A noise.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AaNoise {
    /// Runs per copy (the fewer of the two).
    pub n: usize,
    /// The pooled standard deviation of the runs' logs.
    pub sd_log: f64,
    /// Copy 2 over copy 1 (geometric means).
    pub ratio: f64,
    /// The noise threshold, in percent.
    pub delta_pct: f64,
}

/// The A/A noise of copies `a` and `b`; None with fewer than 2 runs a
/// copy or a value that is not positive.
pub fn aa_noise(a: &[f64], b: &[f64]) -> Option<AaNoise> {
    if a.len() < 2 || b.len() < 2 || a.iter().chain(b).any(|x| *x <= 0.0 || !x.is_finite()) {
        return None;
    }
    let r = ratio(a, b, 0.95, false)?;
    let mut ss = 0.0;
    for v in [a, b] {
        let l: Vec<f64> = v.iter().map(|x| x.ln()).collect();
        let m = l.iter().sum::<f64>() / l.len() as f64;
        ss += l.iter().map(|x| (x - m).powi(2)).sum::<f64>();
    }
    let sd_log = (ss / (a.len() + b.len() - 2) as f64).sqrt();
    let far = if r.method == Method::Deterministic {
        0.0
    } else {
        (r.low - 1.0).abs().max((r.high - 1.0).abs()) * 100.0
    };
    Some(AaNoise {
        n: a.len().min(b.len()),
        sd_log,
        ratio: r.ratio,
        delta_pct: far.max(MIN_DELTA_PCT),
    })
}

/// The share of `y`'s variance that a straight line in `x` accounts for
/// (r², from 0 to 1): how much of two identical runs' difference went with
/// something the runs recorded beside it (another process's CPU, the order).
/// A description of these runs, not a cause. None with fewer than 3 pairs,
/// or when `x` or `y` does not vary.
pub fn variance_share(x: &[f64], y: &[f64]) -> Option<f64> {
    let n = x.len().min(y.len());
    if n < 3 {
        return None;
    }
    let (x, y) = (&x[..n], &y[..n]);
    let mx = x.iter().sum::<f64>() / n as f64;
    let my = y.iter().sum::<f64>() / n as f64;
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (a, b) in x.iter().zip(y) {
        sxy += (a - mx) * (b - my);
        sxx += (a - mx).powi(2);
        syy += (b - my).powi(2);
    }
    let tiny = |s: f64, m: f64| s <= 1e-24 * (1.0 + m * m) * n as f64;
    if tiny(sxx, mx) || tiny(syy, my) || !(sxy.is_finite()) {
        return None;
    }
    Some((sxy * sxy / (sxx * syy)).clamp(0.0, 1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// By simulation: y = x + e with var(x) = var(e) leaves half of y's
    /// variance to x; y = e (x unrelated) none; x or y constant gives None.
    #[test]
    fn the_variance_share_finds_a_known_share() {
        let mut r = crate::rng::SplitMix64(36);
        let x: Vec<f64> = (0..20_000).map(|_| r.normal()).collect();
        let e: Vec<f64> = (0..20_000).map(|_| r.normal()).collect();
        let half: Vec<f64> = x.iter().zip(&e).map(|(a, b)| a + b).collect();
        let s = variance_share(&x, &half).unwrap();
        assert!((s - 0.5).abs() < 0.02, "share {s}");
        let none = variance_share(&x, &e).unwrap();
        assert!(none < 0.005, "share {none}");
        let all: Vec<f64> = x.iter().map(|a| 3.0 - 2.0 * a).collect();
        assert!((variance_share(&x, &all).unwrap() - 1.0).abs() < 1e-12);
        assert_eq!(variance_share(&[1.0; 5], &e[..5]), None);
        assert_eq!(variance_share(&x[..5], &[2.0; 5]), None);
        assert_eq!(variance_share(&x[..2], &e[..2]), None);
    }
    use crate::rng::SplitMix64;

    #[test]
    fn the_threshold_follows_the_noise() {
        let quiet = aa_noise(&[100.0, 100.4, 99.7, 100.1], &[100.2, 99.9, 100.3, 99.8]).unwrap();
        assert!(quiet.delta_pct < 1.0, "{quiet:?}");
        let noisy = aa_noise(&[100.0, 120.0, 85.0, 110.0], &[95.0, 125.0, 90.0, 105.0]).unwrap();
        assert!(noisy.delta_pct > 10.0 * quiet.delta_pct, "{noisy:?}");
        assert_eq!(aa_noise(&[1.0], &[1.0, 2.0]), None);
        let exact = aa_noise(&[9.0, 9.0], &[9.0, 9.0]).unwrap();
        assert_eq!(exact.delta_pct, MIN_DELTA_PCT);
    }

    /// By simulation: with a threshold calibrated on one A/A pair (5 runs a
    /// copy, 5% noise), a later A/A comparison of 5 runs a side is called
    /// "faster/slower" in well under 5% of 1000 trials, while a real 20%
    /// difference is called in most.
    #[test]
    fn a_calibrated_threshold_keeps_a_a_comparisons_quiet() {
        use crate::compare::{compare_calibrated, Direction, Metric};
        use crate::verdict::{Policy, Verdict};
        let mut rng = SplitMix64(41);
        let mut draw = |mean: f64, n: usize| -> Vec<f64> {
            (0..n).map(|_| mean * (0.05 * rng.normal()).exp()).collect()
        };
        let groups = vec!["a".to_string(), "b".to_string()];
        let (mut false_calls, mut true_calls) = (0u32, 0u32);
        let trials: u32 = 1000;
        for _ in 0..trials {
            let cal = aa_noise(&draw(100.0, 5), &draw(100.0, 5)).unwrap();
            let c = vec![Some((cal.delta_pct, "calibration".to_string()))];
            for (shift, calls) in [(1.0, &mut false_calls), (1.2, &mut true_calls)] {
                let m = vec![Metric {
                    name: "t (s)".into(),
                    direction: Direction::Time,
                    exact: false,
                    values: vec![draw(100.0, 5), draw(100.0 * shift, 5)],
                }];
                let r = compare_calibrated(&groups, &m, 0, Policy::default(), &c).remove(1);
                *calls += u32::from(r.verdict.is_some_and(Verdict::differs));
            }
        }
        let (f, t) = (
            f64::from(false_calls) / f64::from(trials),
            f64::from(true_calls) / f64::from(trials),
        );
        eprintln!("calibrated: A/A called different {f}, a 20% shift {t}");
        assert!(f <= 0.05 && t > 0.6, "{f} {t}");
    }
}
