//! The one rule that turns the author's number and fslab's into a verdict,
//! the same for every finding. [`RULE`] is its text, as the README and
//! `fslab run --help` print it; [`judge`] is its code.

use fslab_record::FindingOutcome;
use fslab_stats::interval::{Method, RatioInterval};

/// The rule, as `fslab run --help` and the README state it.
pub const RULE: &str = "\
How fslab judges a finding (one rule, the same for every finding):
  Each claim becomes a ratio R that the author measured too (A): two cells'
  means; two metrics of the same runs, paired run by run; or a metric per
  unit of work against a reference (another cell's, or the value of no
  effect). R's 95% interval is Welch's t on logs (paired: t on the
  run-by-run log ratios). On a log scale e = ln R / ln A is fslab's effect
  as a share of the author's (e = 1: the author's effect).
  - reproduced:     the whole interval on the author's side of 1, e >= 0.5;
  - weaker:         the whole interval on the author's side of 1, e < 0.5;
  - not reproduced: the interval reaches no effect (or beyond) and stays
                    below half the author's effect: absent or reversed;
  - unresolved:     the interval holds both no effect and half the
                    author's effect: more runs would tell;
  - below resolution: unresolved, and the author's effect is smaller than
                    what these runs resolve at their noise (80% power, from
                    the interval itself): they say nothing either way;
  - not judged:     fewer than 3 runs a side (unless every run of both sides
                    gave the same value: then the ratio is exact), a value
                    missing, a mechanism the claim rests on that did not
                    happen in this run (named), or a claim this machine
                    cannot test (why).
  A claim of no difference (A = 1, \"within noise\") is reproduced when the
  interval lies within 10% either way (0.909 to 1.1), not reproduced when it
  lies wholly outside, unresolved otherwise. A claim without a number (a
  wait stack) is reproduced when what it names is in the workload's top
  stacks in every run (3 runs or more), not reproduced when in none,
  unresolved otherwise. A mechanism check (000-m1, ...) happened when its
  metric met its threshold in every run of its cell.";

/// The fewest runs a side a verdict needs.
pub const MIN_RUNS: usize = 3;

/// The share of the author's effect (on a log scale) that reproduces it.
pub const HALF: f64 = 0.5;

/// The margin of a claim of no difference: 10% either way.
pub const NO_DIFFERENCE: f64 = 1.1;

/// What the rule is given: fslab's ratio with its interval and the runs
/// behind it, and the author's ratio.
#[derive(Debug, Clone, Copy)]
pub struct Estimate {
    pub interval: Option<RatioInterval>,
    /// Runs on each measured side (a constant reference counts as enough).
    pub n: (usize, usize),
    pub author_ratio: f64,
}

/// The verdict and the rule's reason for it.
pub fn judge(e: &Estimate) -> (FindingOutcome, String) {
    let exact = e
        .interval
        .is_some_and(|i| i.method == Method::Deterministic);
    let fewest = e.n.0.min(e.n.1);
    if fewest < MIN_RUNS && !exact {
        return (
            FindingOutcome::NotJudged,
            format!(
                "fewer than {MIN_RUNS} runs a side (n={} and {})",
                runs(e.n.0),
                runs(e.n.1)
            ),
        );
    }
    let Some(i) = e.interval else {
        return (
            FindingOutcome::NotJudged,
            "no interval: a value that is not positive, or no spread to estimate".into(),
        );
    };
    let a = e.author_ratio;
    if !(a > 0.0 && a.is_finite()) {
        return (
            FindingOutcome::NotJudged,
            format!("the author's ratio {a} is not a positive number"),
        );
    }
    if a == 1.0 {
        return no_difference(&i);
    }
    let la = a.ln();
    let share = |x: f64| x.ln() / la;
    let (mut lo, mut hi) = (share(i.low), share(i.high));
    if lo > hi {
        std::mem::swap(&mut lo, &mut hi);
    }
    let point = share(i.ratio);
    let f = |x: f64| fslab_stats::fmt_g(x, 2);
    let span = format!(
        "e = {} [{}, {}] of the author's effect",
        f(point),
        f(lo),
        f(hi)
    );
    if lo > 0.0 {
        if point >= HALF {
            (
                FindingOutcome::Reproduced,
                format!("{span}: on the author's side, at least half of it"),
            )
        } else {
            (
                FindingOutcome::Weaker,
                format!("{span}: on the author's side, less than half of it"),
            )
        }
    } else if hi < HALF {
        (
            FindingOutcome::NotReproduced,
            format!(
                "{span}: the interval reaches {} and stays below half the author's effect",
                if hi < 0.0 {
                    "the other side (reversed)"
                } else {
                    "no effect"
                }
            ),
        )
    } else {
        below_resolution(&i, la, e.n).unwrap_or_else(|| {
            (
                FindingOutcome::Unresolved,
                format!("{span}: the interval holds both no effect and half the author's effect"),
            )
        })
    }
}

/// An unresolved interval `i` whose runs cannot resolve the author's
/// effect `la` (log scale) at 80% power: below resolution, with what these
/// runs resolve and about how many a side the author's effect would need.
fn below_resolution(
    i: &RatioInterval,
    la: f64,
    n: (usize, usize),
) -> Option<(FindingOutcome, String)> {
    let r = fslab_stats::power::resolvable_log(i)?;
    if la.abs() >= r {
        return None;
    }
    let pct = |l: f64| l.exp_m1() * 100.0;
    // Runs a side scale the resolvable effect as 1/sqrt(n) (the t
    // quantiles shrink too: an estimate from above).
    let now = n.0.min(n.1);
    let need = if now == usize::MAX {
        String::new()
    } else {
        let k = ((r / la.abs()).powi(2) * now as f64).ceil();
        format!("; about {k} runs a side would resolve it")
    };
    Some((
        FindingOutcome::BelowResolution,
        format!(
            "the author's effect ({:.1}%) is below the {:.1}% these runs resolve (80% power, \
             from their own interval, {:.3} to {:.3}): at this noise they cannot tell it from none{need}",
            pct(la.abs()),
            pct(r),
            i.low,
            i.high
        ),
    ))
}

/// A side's runs (a constant reference: "constant").
fn runs(n: usize) -> String {
    if n == usize::MAX {
        "constant".into()
    } else {
        n.to_string()
    }
}

/// A claim of no difference: the interval within 10% either way.
fn no_difference(i: &RatioInterval) -> (FindingOutcome, String) {
    let (lo, hi) = (1.0 / NO_DIFFERENCE, NO_DIFFERENCE);
    let f = |x: f64| fslab_stats::fmt_g(x, 3);
    let span = format!(
        "a claim of no difference; the interval [{}, {}]",
        f(i.low),
        f(i.high)
    );
    if i.low >= lo && i.high <= hi {
        (
            FindingOutcome::Reproduced,
            format!("{span} lies within 10% either way"),
        )
    } else if i.low > hi || i.high < lo {
        (
            FindingOutcome::NotReproduced,
            format!("{span} lies wholly outside 10% either way"),
        )
    } else {
        (
            FindingOutcome::Unresolved,
            format!("{span} crosses the 10% margin"),
        )
    }
}

/// A claim without a number: in how many of `n` runs what it names showed.
pub fn judge_presence(shown: usize, n: usize) -> (FindingOutcome, String) {
    if n < MIN_RUNS {
        return (
            FindingOutcome::NotJudged,
            format!("fewer than {MIN_RUNS} runs (n={n})"),
        );
    }
    match shown {
        s if s == n => (
            FindingOutcome::Reproduced,
            format!("in the top stacks of every run ({s} of {n})"),
        ),
        0 => (
            FindingOutcome::NotReproduced,
            format!("in the top stacks of no run (0 of {n})"),
        ),
        s => (
            FindingOutcome::Unresolved,
            format!("in the top stacks of {s} of {n} runs"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fslab_stats::interval::ratio;

    fn est(a: &[f64], b: &[f64], author: f64) -> Estimate {
        Estimate {
            interval: ratio(a, b, 0.95, false),
            n: (a.len(), b.len()),
            author_ratio: author,
        }
    }

    #[test]
    fn at_least_half_the_authors_effect_with_confidence_reproduces() {
        // 128/9 = 14.2x against the author's 5,604x: e = 0.31, weaker.
        let (o, why) = judge(&est(
            &[9.0, 9.2, 8.9],
            &[128.0, 131.0, 125.0],
            50_435.0 / 9.0,
        ));
        assert_eq!(o, FindingOutcome::Weaker, "{why}");
        // 3,000/9 against 5,604x: e = 0.67, reproduced.
        let (o, why) = judge(&est(
            &[9.0, 9.2, 8.9],
            &[3000.0, 3100.0, 2950.0],
            50_435.0 / 9.0,
        ));
        assert_eq!(o, FindingOutcome::Reproduced, "{why}");
        assert!(why.contains("at least half"), "{why}");
        // The author's effect a slowdown (ratio below 1): the same rule.
        let (o, _) = judge(&est(
            &[100.0, 101.0, 99.0],
            &[70.0, 71.0, 69.5],
            339.0 / 494.0,
        ));
        assert_eq!(o, FindingOutcome::Reproduced);
        let (o, _) = judge(&est(
            &[100.0, 101.0, 99.0],
            &[96.0, 96.5, 95.5],
            339.0 / 494.0,
        ));
        assert_eq!(o, FindingOutcome::Weaker);
    }

    /// Seed 001-b's 3.8% in runs 5% apart: the interval holds no effect and
    /// half of it, and these runs could not resolve even all of it: below
    /// resolution, not "unresolved"; a 20% effect in the same runs stays
    /// unresolved (more runs would tell).
    #[test]
    fn an_author_effect_below_what_the_runs_resolve_says_so() {
        let a = [100.0, 110.0, 92.0, 104.0, 97.0];
        let b = [103.0, 95.0, 108.0, 99.0, 106.0];
        let (o, why) = judge(&est(&a, &b, 1.038));
        assert_eq!(o, FindingOutcome::BelowResolution, "{why}");
        assert!(
            why.contains("the author's effect (3.8%) is below the "),
            "{why}"
        );
        assert!(why.contains("runs a side would resolve it"), "{why}");
        let (o, why) = judge(&est(&a, &b, 1.2));
        assert_eq!(o, FindingOutcome::Unresolved, "{why}");
    }

    #[test]
    fn absent_or_reversed_is_not_reproduced_and_a_wide_interval_below_resolution() {
        // Reversed: the author's 2x, fslab's 0.5x, confidently.
        let (o, why) = judge(&est(&[100.0, 101.0, 99.0], &[50.0, 51.0, 49.0], 2.0));
        assert_eq!(o, FindingOutcome::NotReproduced, "{why}");
        assert!(why.contains("reversed"), "{why}");
        // Absent: about 1x, an interval narrow enough to rule out sqrt(2).
        let (o, why) = judge(&est(&[100.0, 101.0, 99.0], &[100.5, 99.5, 100.0], 2.0));
        assert_eq!(o, FindingOutcome::NotReproduced, "{why}");
        assert!(why.contains("no effect"), "{why}");
        // Wide: holds 1 and 2, so wide that three runs this noisy could
        // not resolve even the author's 2x: below resolution (see
        // an_author_effect_below_what_the_runs_resolve_says_so for one
        // that stays unresolved).
        let (o, why) = judge(&est(&[100.0, 150.0, 70.0], &[150.0, 90.0, 200.0], 2.0));
        assert_eq!(o, FindingOutcome::BelowResolution, "{why}");
    }

    #[test]
    fn fewer_than_three_runs_a_side_are_not_judged_unless_exact() {
        let (o, why) = judge(&est(&[9.0, 9.5], &[128.0, 120.0], 5000.0));
        assert_eq!(o, FindingOutcome::NotJudged);
        assert!(
            why.contains("fewer than 3 runs a side (n=2 and 2)"),
            "{why}"
        );
        // Every run gave the same value on both sides: exact from 2 a side.
        let (o, why) = judge(&est(&[9.0, 9.0], &[128.0, 128.0], 2.0));
        assert_eq!(o, FindingOutcome::Reproduced, "{why}");
        // One run a side: never.
        assert_eq!(
            judge(&est(&[9.0], &[128.0], 2.0)).0,
            FindingOutcome::NotJudged
        );
    }

    #[test]
    fn a_claim_of_no_difference_is_judged_within_ten_percent() {
        let same = est(&[90.0, 91.0, 89.0], &[92.0, 91.0, 92.5], 1.0);
        assert_eq!(judge(&same).0, FindingOutcome::Reproduced);
        let far = est(&[90.0, 91.0, 89.0], &[120.0, 121.0, 119.0], 1.0);
        assert_eq!(judge(&far).0, FindingOutcome::NotReproduced);
        let wide = est(&[90.0, 70.0, 110.0], &[92.0, 120.0, 80.0], 1.0);
        assert_eq!(judge(&wide).0, FindingOutcome::Unresolved);
    }

    /// Normal deviates (Box-Muller) from a fixed seed.
    fn normals(seed: u64) -> impl FnMut() -> f64 {
        let mut r = fslab_stats::rng::SplitMix64(seed);
        move || {
            let u = |r: &mut fslab_stats::rng::SplitMix64| {
                (r.next_u64() >> 11) as f64 / (1u64 << 53) as f64
            };
            let (a, b) = (u(&mut r).max(1e-300), u(&mut r));
            (-2.0 * a.ln()).sqrt() * (std::f64::consts::TAU * b).cos()
        }
    }

    /// The verdicts of `sims` simulated experiments: n runs a side with
    /// lognormal noise `sd`, the true ratio `truth`, the author's `author`.
    fn simulate(truth: f64, author: f64, n: usize, sd: f64, sims: usize) -> Vec<FindingOutcome> {
        let mut z = normals(7);
        (0..sims)
            .map(|_| {
                let a: Vec<f64> = (0..n).map(|_| 100.0 * (sd * z()).exp()).collect();
                let b: Vec<f64> = (0..n).map(|_| 100.0 * truth * (sd * z()).exp()).collect();
                judge(&est(&a, &b, author)).0
            })
            .collect()
    }

    fn share(v: &[FindingOutcome], o: &[FindingOutcome]) -> f64 {
        v.iter().filter(|x| o.contains(x)).count() as f64 / v.len() as f64
    }

    #[test]
    fn simulated_no_effect_is_rarely_called_an_effect_and_a_real_one_is_found() {
        use FindingOutcome::*;
        // No effect at all: the interval is on the author's side in about
        // 2.5% of experiments (a one-sided 95% interval), whatever n.
        for n in [3, 5, 10] {
            let v = simulate(1.0, 2.0, n, 0.1, 4000);
            let wrong = share(&v, &[Reproduced, Weaker]);
            assert!(wrong < 0.035, "n={n}: {wrong}");
        }
        // The author's effect exactly (2x, 10% noise, 3 runs): reproduced
        // nearly always.
        let v = simulate(2.0, 2.0, 3, 0.1, 4000);
        assert!(
            share(&v, &[Reproduced]) > 0.95,
            "{}",
            share(&v, &[Reproduced])
        );
        // A quarter of the author's effect on a log scale: never called
        // reproduced more than by chance, mostly weaker with enough runs.
        let v = simulate(2f64.powf(0.25), 2.0, 10, 0.05, 4000);
        assert!(
            share(&v, &[Reproduced]) < 0.035,
            "{}",
            share(&v, &[Reproduced])
        );
        assert!(share(&v, &[Weaker]) > 0.9, "{}", share(&v, &[Weaker]));
        // No difference against a claim of none (10% margin, 3% noise, 5 runs).
        let v = simulate(1.0, 1.0, 5, 0.03, 4000);
        assert!(
            share(&v, &[Reproduced]) > 0.9,
            "{}",
            share(&v, &[Reproduced])
        );
        let v = simulate(1.1, 1.0, 5, 0.03, 4000);
        assert!(
            share(&v, &[Reproduced]) < 0.035,
            "{}",
            share(&v, &[Reproduced])
        );
    }

    #[test]
    fn a_claim_without_a_number_needs_every_run() {
        assert_eq!(judge_presence(3, 3).0, FindingOutcome::Reproduced);
        assert_eq!(judge_presence(0, 3).0, FindingOutcome::NotReproduced);
        assert_eq!(judge_presence(2, 3).0, FindingOutcome::Unresolved);
        assert_eq!(judge_presence(2, 2).0, FindingOutcome::NotJudged);
    }
}
