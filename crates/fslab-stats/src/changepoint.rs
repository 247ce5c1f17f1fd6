//! Change points in a sequence of experiments: E-Divisive means
//! (Matteson and James 2014, "A nonparametric approach for multiple change
//! point analysis of multivariate data"), the method Apache Otava (formerly
//! Hunter) runs over MongoDB's performance history.
//!
//! Each point is one experiment's estimate (the mean of the logs of its
//! runs: the log of its geometric mean), so that every experiment counts
//! once, whatever its number of runs, and the noise between experiments
//! (another day, another boot) is part of what a change must stand out
//! from. For a segment x_0..x_L and a split at tau (left m = tau, right
//! n = L - tau points, each at least [`MIN_SIZE`]) the divergence is
//!
//! Q(tau) = m n / (m + n) * (2/(m n) sum |x_i - y_j| - sum_{i<k} |x_i -
//! x_k| / C(m,2) - sum_{j<k} |y_j - y_k| / C(n,2)),
//!
//! the split is the tau of the largest Q, and its significance is a
//! permutation test: the share of orderings of the segment (all of them up
//! to [`EXACT_UP_TO`] points, else seeded random ones) whose largest Q is
//! at least the observed one. A change is kept when that p-value is below
//! alpha; then the segments on either side are searched the same way
//! (hierarchically: the most divergent segment first), until no split is
//! significant. On a sequence with no change the first test errs with
//! probability alpha (the permutation test is exact for exchangeable
//! points); validated by simulation in this module's tests.

use crate::rng::SplitMix64;

/// The fewest points on either side of a split.
pub const MIN_SIZE: usize = 2;

/// Segments of at most this many points are tested over every ordering.
pub const EXACT_UP_TO: usize = 8;

/// A change found.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    /// The first point after the change.
    pub at: usize,
    /// The permutation p-value of the split.
    pub p_value: f64,
}

/// How to search.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Search {
    pub alpha: f64,
    /// Random orderings per test (segments longer than [`EXACT_UP_TO`]).
    pub permutations: usize,
    pub seed: u64,
}

impl Default for Search {
    fn default() -> Self {
        Search {
            alpha: 0.05,
            permutations: 999,
            seed: 1,
        }
    }
}

/// The largest divergence over the splits of `x`: (tau, Q); None when no
/// split leaves [`MIN_SIZE`] on each side.
pub fn best_split(x: &[f64]) -> Option<(usize, f64)> {
    let l = x.len();
    if l < 2 * MIN_SIZE {
        return None;
    }
    let d = |i: usize, j: usize| (x[i] - x[j]).abs();
    let total: f64 = (0..l)
        .flat_map(|i| (i + 1..l).map(move |j| (i, j)))
        .map(|(i, j)| d(i, j))
        .sum();
    // within the left part, between the parts; the right is the rest.
    let (mut within_left, mut between) = (0.0, 0.0);
    let mut best: Option<(usize, f64)> = None;
    for tau in 1..l {
        // Point tau - 1 moves from the right part to the left.
        let p = tau - 1;
        let to_left: f64 = (0..p).map(|i| d(i, p)).sum();
        let to_right: f64 = (tau..l).map(|j| d(p, j)).sum();
        within_left += to_left;
        between += to_right - to_left;
        let within_right = total - within_left - between;
        let (m, n) = (tau as f64, (l - tau) as f64);
        if tau < MIN_SIZE || l - tau < MIN_SIZE {
            continue;
        }
        let pairs = |k: f64| k * (k - 1.0) / 2.0;
        let e = 2.0 * between / (m * n) - within_left / pairs(m) - within_right / pairs(n);
        let q = m * n / (m + n) * e;
        if best.is_none_or(|(_, b)| q > b) {
            best = Some((tau, q));
        }
    }
    best
}

/// The permutation p-value of the best split of `x` (observed divergence
/// `q`).
fn p_value(x: &[f64], q: f64, search: &Search, rng: &mut SplitMix64) -> f64 {
    let at_least = |v: &[f64]| best_split(v).is_some_and(|(_, b)| b >= q - 1e-12 * q.abs());
    let mut v = x.to_vec();
    if x.len() <= EXACT_UP_TO {
        // Every ordering (Heap's algorithm).
        let (mut count, mut total) = (0u64, 0u64);
        let n = v.len();
        let mut c = vec![0usize; n];
        count += u64::from(at_least(&v));
        total += 1;
        let mut i = 0;
        while i < n {
            if c[i] < i {
                if i % 2 == 0 {
                    v.swap(0, i);
                } else {
                    v.swap(c[i], i);
                }
                count += u64::from(at_least(&v));
                total += 1;
                c[i] += 1;
                i = 0;
            } else {
                c[i] = 0;
                i += 1;
            }
        }
        return count as f64 / total as f64;
    }
    let mut count = 1usize;
    for _ in 0..search.permutations {
        rng.shuffle(&mut v);
        count += usize::from(at_least(&v));
    }
    count as f64 / (search.permutations + 1) as f64
}

/// The change points of `x`, in order.
pub fn e_divisive(x: &[f64], search: Search) -> Vec<Change> {
    let mut rng = SplitMix64(search.seed);
    let mut cuts: Vec<Change> = Vec::new();
    let mut open: Vec<(usize, usize)> = vec![(0, x.len())];
    loop {
        // The most divergent split among the segments still open.
        let best = open
            .iter()
            .enumerate()
            .filter_map(|(k, &(s, e))| best_split(&x[s..e]).map(|(t, q)| (k, s + t, q)))
            .max_by(|a, b| a.2.total_cmp(&b.2));
        let Some((k, at, q)) = best else { break };
        let (s, e) = open[k];
        let p = p_value(&x[s..e], q, &search, &mut rng);
        if p >= search.alpha {
            // Not significant: this segment is done; others may still split.
            open.remove(k);
            continue;
        }
        cuts.push(Change { at, p_value: p });
        open.remove(k);
        open.push((s, at));
        open.push((at, e));
    }
    cuts.sort_by_key(|c| c.at);
    cuts
}

/// The fewest points with which a change can be significant at `alpha`:
/// the best balanced split of L points is one of 2 / C(L, L/2) orderings.
pub fn fewest_points(alpha: f64) -> usize {
    (2 * MIN_SIZE..64)
        .find(|&l| {
            let k = l / 2;
            let c: f64 = (0..k).map(|i| (l - i) as f64 / (i + 1) as f64).product();
            2.0 / c < alpha
        })
        .unwrap_or(64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_divergence_is_largest_at_the_step() {
        let x = [1.0, 1.1, 0.9, 1.0, 2.0, 2.1, 1.9, 2.0];
        assert_eq!(best_split(&x).map(|b| b.0), Some(4));
        assert_eq!(best_split(&[1.0, 2.0, 3.0]), None);
    }

    /// A step of 30% (0.26 on the log scale) in noise of 3%: found where it
    /// is, with nothing else, on fixed numbers and on 50 seeded series.
    #[test]
    fn a_step_change_is_found_where_it_is() {
        let x = [
            0.01, -0.02, 0.03, 0.0, -0.01, 0.02, 0.27, 0.25, 0.29, 0.26, 0.24, 0.28,
        ];
        let c = e_divisive(&x, Search::default());
        assert_eq!(c.len(), 1, "{c:?}");
        assert_eq!(c[0].at, 6);
        assert!(c[0].p_value < 0.01, "{c:?}");
        // Eight points: tested over every ordering, p = 2/70 exactly.
        let c = e_divisive(&x[2..10], Search::default());
        assert_eq!(c.len(), 1, "{c:?}");
        assert_eq!(c[0].at, 4);
        assert!((c[0].p_value - 2.0 / 70.0).abs() < 1e-12, "{c:?}");
        let mut rng = SplitMix64(9);
        let mut found = 0;
        for _ in 0..50 {
            let x: Vec<f64> = (0..16)
                .map(|i| 0.03 * rng.normal() + if i >= 9 { 0.26 } else { 0.0 })
                .collect();
            let c = e_divisive(&x, Search::default());
            found += usize::from(c.iter().any(|c| c.at == 9));
        }
        assert!(found >= 48, "{found} of 50");
    }

    /// Pure noise, 400 seeded series of 12 experiments: a change is
    /// reported in at most alpha = 5% of them (within the simulation's
    /// error, 1.1 points: the bound is 7.5%), lognormal and heavy-tailed.
    #[test]
    fn pure_noise_raises_a_false_alarm_at_most_at_alpha() {
        let search = Search {
            permutations: 199,
            ..Search::default()
        };
        let mut rng = SplitMix64(31);
        for heavy in [false, true] {
            let trials = 400;
            let alarms = (0..trials)
                .filter(|_| {
                    let x: Vec<f64> = (0..12)
                        .map(|_| {
                            if heavy {
                                0.05 * rng.student_t(3)
                            } else {
                                0.05 * rng.normal()
                            }
                        })
                        .collect();
                    !e_divisive(&x, search).is_empty()
                })
                .count();
            let rate = alarms as f64 / f64::from(trials);
            eprintln!("false alarms (heavy tails: {heavy}): {rate}");
            assert!(rate <= 0.075, "{rate}");
        }
    }

    #[test]
    fn too_few_points_cannot_be_significant() {
        assert_eq!(fewest_points(0.05), 8);
        let c = e_divisive(&[0.0, 0.01, 1.0, 1.01], Search::default());
        assert!(c.is_empty(), "{c:?}");
    }
}
