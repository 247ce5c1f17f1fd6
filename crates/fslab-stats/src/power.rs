//! Power before running: the smallest difference a planned comparison can
//! resolve, from the noise an A/A calibration measured (the pooled sd of
//! the runs' logs) or from an interval a comparison already made.
//!
//! A comparison of two cells of n runs each calls a difference when its
//! 95% interval (Welch's t on logs) excludes no difference and the
//! difference is at least the noise threshold delta ([`crate::verdict`]).
//! A true difference h (on the log scale) is called in 80% of such
//! comparisons when h - t_{0.8} SE reaches the larger of the interval's
//! half-width t_{0.975} SE and ln(1 + delta):
//!
//!   h = max(t_{0.975,df} SE, ln(1 + delta)) + t_{0.8,df} SE,
//!   SE = sd sqrt(2 / n), df = 2n - 2 (equal variances: A/A copies).
//!
//! The level is the comparison's own, before its correction over a family
//! of several cells and metrics (which asks more). Smaller true
//! differences are not "no difference": they are below what n runs at this
//! noise can tell apart from none.

use crate::interval::{t_quantile, RatioInterval};

/// The power the smallest resolvable difference is given at.
pub const POWER: f64 = 0.8;

/// The smallest true difference, in percent (|ratio - 1| on the side of an
/// increase), that a comparison of two cells of `n` runs each resolves in
/// 80% of comparisons at two-sided level `alpha`, with runs whose logs
/// have standard deviation `sd_log` and a noise threshold of `delta_pct`.
/// None for fewer than 2 runs a cell or a noise that is not a number.
pub fn resolvable_pct(sd_log: f64, n: usize, delta_pct: f64, alpha: f64) -> Option<f64> {
    if n < 2 || !sd_log.is_finite() || sd_log < 0.0 || !(alpha > 0.0 && alpha < 1.0) {
        return None;
    }
    let df = (2 * n - 2) as f64;
    let se = sd_log * (2.0 / n as f64).sqrt();
    let half = t_quantile(df, 1.0 - alpha)? * se;
    let beta = t_one_sided(df, POWER)? * se;
    let h = half.max((1.0 + delta_pct.max(0.0) / 100.0).ln()) + beta;
    Some(h.exp_m1() * 100.0)
}

/// The smallest true difference on the log scale that a comparison with
/// interval `i` (the same runs, the same noise) resolves in 80% of
/// comparisons: its half-width plus t_{0.8} of its standard error. None for
/// an exact interval (any difference at all is resolved) or one without a
/// spread.
pub fn resolvable_log(i: &RatioInterval) -> Option<f64> {
    if !(i.df.is_finite() && i.df > 0.0 && i.low > 0.0 && i.high > i.low) {
        return None;
    }
    let half = (i.high.ln() - i.low.ln()) / 2.0;
    let se = half / t_quantile(i.df, i.level)?;
    Some(half + t_one_sided(i.df, POWER)? * se)
}

/// The one-sided quantile t_p with `df` degrees of freedom.
fn t_one_sided(df: f64, p: f64) -> Option<f64> {
    // t_quantile(df, level) is the two-sided level's quantile t_{(1+level)/2}.
    t_quantile(df, 2.0 * p - 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SplitMix64;

    #[test]
    fn more_runs_and_less_noise_resolve_smaller_differences() {
        let five = resolvable_pct(0.05, 5, 0.5, 0.05).unwrap();
        let twenty = resolvable_pct(0.05, 20, 0.5, 0.05).unwrap();
        let quiet = resolvable_pct(0.01, 5, 0.5, 0.05).unwrap();
        assert!(twenty < five && quiet < five, "{five} {twenty} {quiet}");
        // 5 runs a cell at sd 0.05: (t_0.975,8 + t_0.8,8) 0.05 sqrt(2/5)
        // = (2.306 + 0.889) 0.0316 = 0.101 on the log scale, 10.6%.
        assert!((five - 10.6).abs() < 0.2, "{five}");
        // A threshold above the interval's half-width sets the floor.
        let wide = resolvable_pct(0.001, 5, 5.0, 0.05).unwrap();
        assert!(wide > 5.0 && wide < 5.3, "{wide}");
        assert_eq!(resolvable_pct(0.05, 1, 0.5, 0.05), None);
    }

    /// By simulation: differences of the resolvable size are called in
    /// about 80% of comparisons of 5 runs a side (log-normal noise of sd
    /// 0.05), and half of it far less often.
    #[test]
    fn the_resolvable_difference_is_called_four_times_in_five() {
        use crate::compare::{compare_with, Direction, Metric};
        use crate::verdict::{Policy, Verdict};
        let sd = 0.05;
        let h = resolvable_pct(sd, 5, 0.5, 0.05).unwrap() / 100.0;
        let mut rng = SplitMix64(7);
        let mut draw =
            |mean: f64| -> Vec<f64> { (0..5).map(|_| mean * (sd * rng.normal()).exp()).collect() };
        let groups = vec!["a".to_string(), "b".to_string()];
        let policy = Policy {
            delta_pct: Some(0.5),
            ..Policy::default()
        };
        let trials = 1000;
        let mut called = [0u32; 2];
        for _ in 0..trials {
            for (k, shift) in [1.0 + h, 1.0 + h / 2.0].into_iter().enumerate() {
                let m = vec![Metric {
                    name: "rate (ops/s)".into(),
                    direction: Direction::Rate,
                    exact: false,
                    values: vec![draw(100.0), draw(100.0 * shift)],
                }];
                let r = compare_with(&groups, &m, 0, policy).remove(1);
                called[k] += u32::from(r.verdict.is_some_and(Verdict::differs));
            }
        }
        let share = |c: u32| f64::from(c) / f64::from(trials);
        eprintln!(
            "resolvable {:.1}%: called {}, half of it {}",
            h * 100.0,
            share(called[0]),
            share(called[1])
        );
        assert!(
            (share(called[0]) - POWER).abs() < 0.06,
            "{}",
            share(called[0])
        );
        assert!(share(called[1]) < 0.45, "{}", share(called[1]));
    }

    #[test]
    fn an_interval_gives_what_its_runs_resolve() {
        let a = [100.0, 104.0, 97.0, 101.0, 99.0];
        let b = [103.0, 98.0, 105.0, 100.0, 102.0];
        let i = crate::interval::ratio(&a, &b, 0.95, false).unwrap();
        let h = resolvable_log(&i).unwrap();
        let half = (i.high.ln() - i.low.ln()) / 2.0;
        assert!(h > half && h < 1.6 * half, "{h} {half}");
        let exact = crate::interval::ratio(&[5.0, 5.0], &[6.0, 6.0], 0.95, true).unwrap();
        assert_eq!(resolvable_log(&exact), None);
    }
}
