//! Simulated coverage of the intervals against a known truth: how often
//! an interval stated at 95% holds the true ratio, at the numbers of runs
//! fslab uses, on the kinds of data benchmarks give. The tests in this
//! module are the evidence behind docs/statistics.md; the
//! numbers they measured are printed (`cargo test -p fslab-stats coverage
//! -- --nocapture`).

use crate::interval::{paired_ratio, ratio};
use crate::rng::SplitMix64;

/// The noise a simulated run gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Noise {
    /// Normal, 5% CV (additive: value = mean (1 + 0.05 z)).
    Normal,
    /// Lognormal, sd 0.1 on the log scale.
    LogNormal,
    /// Heavy-tailed: Student's t with 3 degrees of freedom on the log
    /// scale, scale 0.05 (a run now and then far off).
    HeavyTailed,
}

impl Noise {
    /// One run of true mean `mean` (the mean, the median for the log-scale
    /// kinds: for those the ratio of two means is the ratio of medians).
    pub fn draw(self, rng: &mut SplitMix64, mean: f64) -> f64 {
        match self {
            Noise::Normal => mean * (1.0 + 0.05 * rng.normal()),
            Noise::LogNormal => mean * (0.1 * rng.normal()).exp(),
            Noise::HeavyTailed => mean * (0.05 * rng.student_t(3)).exp(),
        }
    }
}

/// The share of `trials` intervals of two independent groups of `n` runs
/// (true ratio 1.1, b over a) that hold the truth. The truth is
/// multiplicative (b's runs are a's distribution scaled by 1.1), so the
/// ratio of means, of medians and of geometric means are all 1.1.
pub fn two_group_coverage(noise: Noise, n: usize, trials: usize, seed: u64) -> f64 {
    let mut rng = SplitMix64(seed);
    let truth = 1.1;
    let mut hits = 0;
    for _ in 0..trials {
        let a: Vec<f64> = (0..n).map(|_| noise.draw(&mut rng, 100.0)).collect();
        let b: Vec<f64> = (0..n)
            .map(|_| noise.draw(&mut rng, 100.0 * truth))
            .collect();
        if let Some(r) = ratio(&a, &b, 0.95, false) {
            hits += usize::from(r.low <= truth && truth <= r.high);
        }
    }
    hits as f64 / trials as f64
}

/// The same for two metrics of the same `n` runs: each run's level varies
/// (a run-wide factor, sd 20% on the log scale, shared by both metrics),
/// and the second metric is the first times 0.5 with its own noise.
pub fn paired_coverage(noise: Noise, n: usize, trials: usize, seed: u64) -> f64 {
    let mut rng = SplitMix64(seed);
    let truth = 0.5;
    let mut hits = 0;
    for _ in 0..trials {
        let pairs: Vec<(f64, f64)> = (0..n)
            .map(|_| {
                let level = 100.0 * (0.2 * rng.normal()).exp();
                (
                    noise.draw(&mut rng, level),
                    noise.draw(&mut rng, level * truth),
                )
            })
            .collect();
        if let Some(r) = paired_ratio(&pairs, 0.95) {
            hits += usize::from(r.low <= truth && truth <= r.high);
        }
    }
    hits as f64 / trials as f64
}

/// Fieller's interval (what values that are not all positive get) on
/// additive normal noise of sd 3 around means 10 and 11 (so a run may be
/// 0 or below): the share of bounded intervals that hold 1.1, and the
/// share of trials that gave a bounded interval at all.
pub fn fieller_coverage(n: usize, trials: usize, seed: u64) -> (f64, f64) {
    let mut rng = SplitMix64(seed);
    let (mut hits, mut bounded) = (0, 0);
    for _ in 0..trials {
        let a: Vec<f64> = (0..n).map(|_| 10.0 + 3.0 * rng.normal()).collect();
        let b: Vec<f64> = (0..n).map(|_| 11.0 + 3.0 * rng.normal()).collect();
        if let Some(r) = crate::interval::fieller(&a, &b, 0.95) {
            bounded += 1;
            hits += usize::from(r.low <= 1.1 && 1.1 <= r.high);
        }
    }
    (
        hits as f64 / bounded.max(1) as f64,
        bounded as f64 / trials as f64,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const KINDS: [Noise; 3] = [Noise::Normal, Noise::LogNormal, Noise::HeavyTailed];

    /// The stated 95% holds within [93%, 97%] at n = 3, 5 and 10 for
    /// normal, lognormal and heavy-tailed runs (4000 trials each: the
    /// simulation's own error is 0.35 points), except heavy-tailed runs at
    /// n = 3, where Welch's interval over-covers (97.6% measured: wider
    /// than it need be, never narrower); the README says so. About 1 s in
    /// a debug build.
    #[test]
    fn two_group_intervals_cover_95_percent_at_3_5_and_10_runs() {
        for (k, noise) in KINDS.iter().enumerate() {
            for n in [3, 5, 10] {
                let c = two_group_coverage(*noise, n, 4000, 100 + k as u64 * 10 + n as u64);
                eprintln!("two groups, {noise:?}, n={n}: coverage {:.1}%", c * 100.0);
                let high = if *noise == Noise::HeavyTailed && n == 3 {
                    0.985
                } else {
                    0.97
                };
                assert!((0.93..=high).contains(&c), "{noise:?} n={n}: {c}");
            }
        }
    }

    #[test]
    fn paired_intervals_cover_95_percent_at_3_5_and_10_runs() {
        for (k, noise) in KINDS.iter().enumerate() {
            for n in [3, 5, 10] {
                let c = paired_coverage(*noise, n, 4000, 200 + k as u64 * 10 + n as u64);
                eprintln!("paired, {noise:?}, n={n}: coverage {:.1}%", c * 100.0);
                assert!((0.93..=0.97).contains(&c), "{noise:?} n={n}: {c}");
            }
        }
    }

    /// At n = 2 the interval still covers (Welch's degrees of freedom at
    /// 2 runs a side are 1 to 2: wide, but honest); what it measured is in
    /// the README. The percentile bootstrap it replaced covered 68% there.
    #[test]
    fn at_two_runs_the_coverage_is_measured_and_not_below_93_percent() {
        for (k, noise) in KINDS.iter().enumerate() {
            let c = two_group_coverage(*noise, 2, 4000, 300 + k as u64);
            eprintln!("two groups, {noise:?}, n=2: coverage {:.1}%", c * 100.0);
            assert!(c >= 0.93, "{noise:?}: {c}");
        }
    }

    #[test]
    fn fieller_intervals_cover_95_percent_at_3_5_and_10_runs() {
        for n in [3, 5, 10] {
            let (c, bounded) = fieller_coverage(n, 4000, 400 + n as u64);
            eprintln!(
                "Fieller, normal sd 3 around 10, n={n}: coverage {:.1}% of the {:.1}% bounded",
                c * 100.0,
                bounded * 100.0
            );
            assert!((0.93..=0.97).contains(&c), "n={n}: {c}");
        }
    }

    /// What the test guards: the percentile bootstrap of the ratio of
    /// means, which this replaced, misses the stated 95% at 3 runs.
    #[test]
    fn the_old_bootstrap_undercovers_at_three_runs() {
        let mut rng = SplitMix64(5);
        let mut hits = 0u32;
        let trials: u32 = 600;
        for i in 0..trials {
            let a: Vec<f64> = (0..3)
                .map(|_| Noise::Normal.draw(&mut rng, 100.0))
                .collect();
            let b: Vec<f64> = (0..3)
                .map(|_| Noise::Normal.draw(&mut rng, 110.0))
                .collect();
            if let Some((lo, hi)) = crate::bootstrap_ratio(&a, &b, 400, 0.95, i as u64) {
                hits += u32::from(lo <= 1.1 && 1.1 <= hi);
            }
        }
        let c = f64::from(hits) / f64::from(trials);
        assert!(c < 0.9, "{c}");
    }
}
