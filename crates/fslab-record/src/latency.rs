//! Latency distributions: an HDR histogram plus exact min, sum and max.
//!
//! Method: Gil Tene's HdrHistogram (bucketed by magnitude, sub-bucketed
//! linearly) with two significant digits, so every recorded value is kept
//! within 1% of its true value from 1 ns to one hour, in about 36 KiB.
//! Values above one hour are clamped and counted in `clamped`.

use hdrhistogram::serialization::{Deserializer, Serializer, V2Serializer};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

const HIGHEST_NS: u64 = 3_600_000_000_000;

/// Latencies of one operation, in nanoseconds.
#[derive(Debug, Clone)]
pub struct LatencyHistogram {
    hist: Histogram<u64>,
    min_ns: u64,
    max_ns: u64,
    sum_ns: u128,
    clamped: u64,
}

/// Percentiles of a [`LatencyHistogram`], in nanoseconds.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
pub struct LatencySummary {
    pub count: u64,
    pub min_ns: u64,
    pub mean_ns: f64,
    pub p50_ns: u64,
    pub p90_ns: u64,
    pub p99_ns: u64,
    pub p999_ns: u64,
    pub max_ns: u64,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl LatencyHistogram {
    pub fn new() -> Self {
        LatencyHistogram {
            hist: Histogram::new_with_bounds(1, HIGHEST_NS, 2).expect("constant bounds are valid"),
            min_ns: u64::MAX,
            max_ns: 0,
            sum_ns: 0,
            clamped: 0,
        }
    }

    /// Records one latency.
    #[inline]
    pub fn record(&mut self, ns: u64) {
        let ns = ns.max(1);
        if ns > HIGHEST_NS {
            self.clamped += 1;
        }
        self.hist.saturating_record(ns.min(HIGHEST_NS));
        self.min_ns = self.min_ns.min(ns);
        self.max_ns = self.max_ns.max(ns);
        self.sum_ns += ns as u128;
    }

    /// Records `count` latencies of `ns` each (a bin of another tool's
    /// histogram: fio's json+ `bins`); the exact sum grows by `ns` times
    /// `count`.
    pub fn record_n(&mut self, ns: u64, count: u64) {
        if count == 0 {
            return;
        }
        let ns = ns.max(1);
        if ns > HIGHEST_NS {
            self.clamped += count;
        }
        self.hist.saturating_record_n(ns.min(HIGHEST_NS), count);
        self.min_ns = self.min_ns.min(ns);
        self.max_ns = self.max_ns.max(ns);
        self.sum_ns += u128::from(ns) * u128::from(count);
    }

    /// Another tool's histogram: `bins` of (latency, count), with its own
    /// exact minimum, maximum and mean where it reports them (its bins
    /// stand for ranges, so theirs are closer than the bins'). The
    /// percentiles come from the bins, within HDR's 1% of each bin's value.
    pub fn of_bins(bins: &[(u64, u64)], exact: Option<(u64, u64, f64)>) -> LatencyHistogram {
        let mut h = LatencyHistogram::new();
        for &(ns, n) in bins {
            h.record_n(ns, n);
        }
        if let (Some((min, max, mean)), true) = (exact, h.count() > 0) {
            h.min_ns = min.max(1);
            h.max_ns = max.max(h.min_ns);
            h.sum_ns = (mean.max(0.0) * h.count() as f64).round() as u128;
        }
        h
    }

    pub fn count(&self) -> u64 {
        self.hist.len()
    }

    /// Exact minimum, or 0 when empty.
    pub fn min_ns(&self) -> u64 {
        if self.count() == 0 {
            0
        } else {
            self.min_ns
        }
    }

    /// Exact maximum.
    pub fn max_ns(&self) -> u64 {
        self.max_ns
    }

    /// Exact sum of all recorded values.
    pub fn sum_ns(&self) -> u128 {
        self.sum_ns
    }

    /// Values above one hour that were clamped.
    pub fn clamped(&self) -> u64 {
        self.clamped
    }

    /// Value at quantile `q` in [0, 1] (within 1%).
    pub fn quantile_ns(&self, q: f64) -> u64 {
        if self.count() == 0 {
            return 0;
        }
        self.hist
            .value_at_quantile(q)
            .clamp(self.min_ns, self.max_ns)
    }

    /// Adds another histogram's values to this one.
    pub fn merge(&mut self, other: &LatencyHistogram) {
        if other.count() == 0 {
            return;
        }
        self.hist.add(&other.hist).expect("histograms share bounds");
        self.min_ns = self.min_ns.min(other.min_ns);
        self.max_ns = self.max_ns.max(other.max_ns);
        self.sum_ns += other.sum_ns;
        self.clamped += other.clamped;
    }

    pub fn summary(&self) -> LatencySummary {
        let count = self.count();
        LatencySummary {
            count,
            min_ns: self.min_ns(),
            mean_ns: if count == 0 {
                0.0
            } else {
                self.sum_ns as f64 / count as f64
            },
            p50_ns: self.quantile_ns(0.50),
            p90_ns: self.quantile_ns(0.90),
            p99_ns: self.quantile_ns(0.99),
            p999_ns: self.quantile_ns(0.999),
            max_ns: self.max_ns,
        }
    }

    /// The histogram in HDR's V2 binary format (counts only; min/sum/max are
    /// stored beside it by the store).
    pub fn to_v2_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        V2Serializer::new()
            .serialize(&self.hist, &mut out)
            .expect("writing to a Vec cannot fail");
        out
    }

    /// Rebuilds a histogram from V2 bytes and its exact min, sum and max.
    pub fn from_v2_bytes(
        bytes: &[u8],
        min_ns: u64,
        sum_ns: u128,
        max_ns: u64,
    ) -> Result<Self, String> {
        let stored: Histogram<u64> = Deserializer::new()
            .deserialize(&mut &bytes[..])
            .map_err(|e| format!("bad latency histogram: {e:?}"))?;
        let mut h = LatencyHistogram::new();
        h.hist
            .add(&stored)
            .map_err(|e| format!("bad latency histogram: {e:?}"))?;
        h.min_ns = if h.count() == 0 { u64::MAX } else { min_ns };
        h.max_ns = max_ns;
        h.sum_ns = sum_ns;
        Ok(h)
    }

    /// (value, cumulative fraction) points for a CDF plot, one per
    /// non-empty bucket.
    pub fn cdf(&self) -> Vec<(u64, f64)> {
        let total = self.count() as f64;
        let mut acc = 0u64;
        self.hist
            .iter_recorded()
            .map(|v| {
                acc += v.count_at_value();
                (v.value_iterated_to(), acc as f64 / total)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn another_tools_bins_become_a_histogram_with_its_exact_extremes() {
        // fio's json+ bins: value (ns) and how many fell in its bin.
        let bins = [(2416, 1), (2448, 24), (2480, 59), (13760, 16)];
        let h = LatencyHistogram::of_bins(&bins, Some((2404, 11_725_785, 2900.5)));
        let s = h.summary();
        assert_eq!(s.count, 100);
        assert_eq!((s.min_ns, s.max_ns), (2404, 11_725_785));
        assert!((s.mean_ns - 2900.5).abs() < 0.01, "{}", s.mean_ns);
        let within = |got: u64, want: f64| ((got as f64 - want) / want).abs() < 0.01;
        assert!(within(s.p50_ns, 2480.0), "{}", s.p50_ns);
        assert!(within(s.p90_ns, 13760.0), "{}", s.p90_ns);
        // Without the tool's extremes the bins give them.
        let plain = LatencyHistogram::of_bins(&bins, None);
        assert_eq!(plain.min_ns(), 2416);
        assert_eq!(plain.max_ns(), 13760);
        assert_eq!(plain.sum_ns(), 2416 + 24 * 2448 + 59 * 2480 + 16 * 13760);
        assert_eq!(LatencyHistogram::of_bins(&[], Some((1, 2, 1.5))).count(), 0);
    }

    #[test]
    fn percentiles_of_a_uniform_run() {
        let mut h = LatencyHistogram::new();
        for v in 1..=10_000u64 {
            h.record(v * 1000);
        }
        let s = h.summary();
        assert_eq!(s.count, 10_000);
        assert_eq!(s.min_ns, 1000);
        assert_eq!(s.max_ns, 10_000_000);
        assert!((s.mean_ns - 5_000_500.0).abs() < 1.0);
        let within = |got: u64, want: f64| ((got as f64 - want) / want).abs() < 0.01;
        assert!(within(s.p50_ns, 5_000_000.0), "{}", s.p50_ns);
        assert!(within(s.p99_ns, 9_900_000.0), "{}", s.p99_ns);
    }

    #[test]
    fn merge_and_round_trip() {
        let mut a = LatencyHistogram::new();
        let mut b = LatencyHistogram::new();
        a.record(500);
        b.record(70_000);
        b.record(7_000_000_000_000); // above an hour: clamped
        a.merge(&b);
        assert_eq!(a.count(), 3);
        assert_eq!(a.clamped(), 1);
        let back =
            LatencyHistogram::from_v2_bytes(&a.to_v2_bytes(), a.min_ns(), a.sum_ns(), a.max_ns())
                .unwrap();
        assert_eq!(back.summary(), a.summary());
        assert_eq!(back.cdf().last().unwrap().1, 1.0);
    }

    #[test]
    fn empty_histogram_summary_is_zero() {
        assert_eq!(LatencyHistogram::new().summary(), LatencySummary::default());
    }
}
