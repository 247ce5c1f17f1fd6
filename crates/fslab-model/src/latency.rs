//! Latency distributions: an HDR histogram plus exact min, sum and max.
//!
//! Method: Gil Tene's HdrHistogram (bucketed by magnitude, sub-bucketed
//! linearly) with two significant digits, so every recorded value is kept
//! within 1% of its true value from 1 ns to one hour, in about 36 KiB.
//! Values above one hour are clamped and counted in `clamped`.
//!
//! A timed loop records every item, so [`LatencyHistogram::record`] is
//! written for it: the bucket's index in HdrHistogram's own layout in a
//! handful of instructions, inlined into the loop (the `hdrhistogram`
//! crate's `saturating_record`, a call of some 60 instructions an item,
//! was a third of alloctest's per-page cost under callgrind). The
//! `hdrhistogram` crate itself is used where a histogram is read, merged
//! or stored: [`LatencyHistogram::hdr`] builds it from the counts, bucket
//! for bucket the histogram recording each value there would have made.

use hdrhistogram::serialization::{Deserializer, Serializer, V2Serializer};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

const HIGHEST_NS: u64 = 3_600_000_000_000;

/// HdrHistogram's layout for values 1 ..= HIGHEST_NS at two significant
/// digits: 256 sub-buckets, the first bucket whole, each next one's upper
/// half (128 counts) a power of two wider; 36 buckets of 128.
const SUB_HALF_BITS: u32 = 7;
const COUNTS: usize = 36 << SUB_HALF_BITS;

/// The index in HdrHistogram's counts of value `v` (1 ..= HIGHEST_NS), as
/// the `hdrhistogram` crate computes it with lowest value 1 and two
/// significant digits (its `index_for`).
#[inline(always)]
fn index_of(v: u64) -> usize {
    // The bucket: how far v's top bit lies above the first bucket's 8 bits.
    let bucket = 56 - (v | 255).leading_zeros();
    ((bucket as usize) << SUB_HALF_BITS) + (v >> bucket) as usize
}

/// The lowest value whose index is `i` (the inverse of [`index_of`]).
fn value_at(i: usize) -> u64 {
    if i < 2 << SUB_HALF_BITS {
        return i as u64;
    }
    let bucket = (i >> SUB_HALF_BITS) - 1;
    let sub = (i & ((1 << SUB_HALF_BITS) - 1)) + (1 << SUB_HALF_BITS);
    (sub as u64) << bucket
}

/// Latencies of one operation, in nanoseconds.
#[derive(Debug, Clone)]
pub struct LatencyHistogram {
    /// HdrHistogram's counts, by [`index_of`].
    counts: Vec<u64>,
    count: u64,
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

/// One bin of a [`LatencyHistogram`]: the values from `low_ns` to
/// `high_ns` (both included) were recorded `count` times.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub struct HistogramBin {
    pub low_ns: u64,
    pub high_ns: u64,
    pub count: u64,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        Self::new()
    }
}

/// Bytes that are not a latency histogram in HDR's V2 format: what the
/// HDR decoder said.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad latency histogram: {0}")]
pub struct BadHistogram(pub String);

impl LatencyHistogram {
    pub fn new() -> Self {
        LatencyHistogram {
            counts: vec![0; COUNTS],
            count: 0,
            min_ns: u64::MAX,
            max_ns: 0,
            sum_ns: 0,
            clamped: 0,
        }
    }

    /// Writes every page of the counts, so that no record after it takes a
    /// page fault (a fresh zeroed allocation's pages are mapped on first
    /// write): for a timed region of a handful of calls, where one fault
    /// would be a large share of the time.
    pub fn touch(&mut self) {
        const PER_PAGE: usize = 4096 / std::mem::size_of::<u64>();
        for i in (0..self.counts.len()).step_by(PER_PAGE) {
            self.counts[i] = std::hint::black_box(self.counts[i]);
        }
    }

    /// Records one latency.
    #[inline(always)]
    pub fn record(&mut self, ns: u64) {
        let ns = ns.max(1);
        if ns > HIGHEST_NS {
            self.clamped += 1;
        }
        self.counts[index_of(ns.min(HIGHEST_NS))] += 1;
        self.count += 1;
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
        self.counts[index_of(ns.min(HIGHEST_NS))] += count;
        self.count += count;
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
        self.count
    }

    /// The counts as an `hdrhistogram` histogram (1 ns to one hour, two
    /// significant digits), each bucket's count recorded at its lowest value.
    pub fn hdr(&self) -> Histogram<u64> {
        let mut h =
            Histogram::new_with_bounds(1, HIGHEST_NS, 2).expect("constant bounds are valid");
        for (i, &n) in self.counts.iter().enumerate() {
            if n > 0 {
                h.saturating_record_n(value_at(i).max(1), n);
            }
        }
        h
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
        self.quantile_of(&self.hdr(), q)
    }

    fn quantile_of(&self, h: &Histogram<u64>, q: f64) -> u64 {
        if self.count() == 0 {
            return 0;
        }
        h.value_at_quantile(q).clamp(self.min_ns, self.max_ns)
    }

    /// Adds another histogram's values to this one.
    pub fn merge(&mut self, other: &LatencyHistogram) {
        if other.count() == 0 {
            return;
        }
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
        self.count += other.count;
        self.min_ns = self.min_ns.min(other.min_ns);
        self.max_ns = self.max_ns.max(other.max_ns);
        self.sum_ns += other.sum_ns;
        self.clamped += other.clamped;
    }

    pub fn summary(&self) -> LatencySummary {
        let count = self.count();
        let h = self.hdr();
        LatencySummary {
            count,
            min_ns: self.min_ns(),
            mean_ns: if count == 0 {
                0.0
            } else {
                self.sum_ns as f64 / count as f64
            },
            p50_ns: self.quantile_of(&h, 0.50),
            p90_ns: self.quantile_of(&h, 0.90),
            p99_ns: self.quantile_of(&h, 0.99),
            p999_ns: self.quantile_of(&h, 0.999),
            max_ns: self.max_ns,
        }
    }

    /// The histogram in HDR's V2 binary format (counts only; min/sum/max are
    /// stored beside it by the store).
    pub fn to_v2_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        V2Serializer::new()
            .serialize(&self.hdr(), &mut out)
            .expect("writing to a Vec cannot fail");
        out
    }

    /// Rebuilds a histogram from V2 bytes and its exact min, sum and max.
    pub fn from_v2_bytes(
        bytes: &[u8],
        min_ns: u64,
        sum_ns: u128,
        max_ns: u64,
    ) -> Result<Self, BadHistogram> {
        let stored: Histogram<u64> = Deserializer::new()
            .deserialize(&mut &bytes[..])
            .map_err(|e| BadHistogram(format!("{e:?}")))?;
        let mut h = LatencyHistogram::new();
        for v in stored.iter_recorded() {
            let at = v.value_iterated_to().clamp(1, HIGHEST_NS);
            h.counts[index_of(at)] += v.count_at_value();
            h.count += v.count_at_value();
        }
        h.min_ns = if h.count() == 0 { u64::MAX } else { min_ns };
        h.max_ns = max_ns;
        h.sum_ns = sum_ns;
        Ok(h)
    }

    /// The histogram's bins that hold values, in order: each one's lowest
    /// and highest value (ns, both included: every value recorded in the
    /// bin lies between them) and its count.
    pub fn bins(&self) -> Vec<HistogramBin> {
        self.counts
            .iter()
            .enumerate()
            .filter(|(_, &n)| n > 0)
            .map(|(i, &count)| HistogramBin {
                low_ns: value_at(i),
                // The next index's lowest value is one above this one's highest.
                high_ns: value_at(i + 1) - 1,
                count,
            })
            .collect()
    }

    /// (value, cumulative fraction) points for a CDF plot, one per
    /// non-empty bucket.
    pub fn cdf(&self) -> Vec<(u64, f64)> {
        let total = self.count() as f64;
        let mut acc = 0u64;
        self.hdr()
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

    #[test]
    fn touching_the_counts_changes_no_count() {
        let mut h = LatencyHistogram::new();
        h.record(1_000);
        h.record(5_000_000);
        let before = h.clone();
        h.touch();
        assert_eq!(h.counts, before.counts);
        assert_eq!(
            (h.count, h.min_ns, h.max_ns),
            (before.count, before.min_ns, before.max_ns)
        );
    }

    use super::*;

    #[test]
    fn the_bins_hold_every_value_once_each_inside_its_bounds() {
        let mut h = LatencyHistogram::new();
        for v in [5u64, 5, 1234, 1_000_000, 1_009_999] {
            h.record(v);
        }
        let bins = h.bins();
        assert_eq!(bins.iter().map(|b| b.count).sum::<u64>(), 5);
        assert_eq!(
            bins[0],
            HistogramBin {
                low_ns: 5,
                high_ns: 5,
                count: 2
            }
        );
        for (v, b) in [(1234, &bins[1]), (1_000_000, &bins[2])] {
            assert!(b.low_ns <= v && v <= b.high_ns, "{v} in {b:?}");
            assert!(b.high_ns - b.low_ns <= v / 100, "within 1%: {b:?}");
        }
        assert!(bins.windows(2).all(|w| w[0].high_ns < w[1].low_ns));
    }

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
    fn counts_sit_where_hdrhistogram_puts_each_value() {
        let mut ours = LatencyHistogram::new();
        let mut theirs = Histogram::<u64>::new_with_bounds(1, HIGHEST_NS, 2).unwrap();
        assert_eq!(theirs.distinct_values(), COUNTS, "the layout's size");
        let mut v = 1u64;
        while v <= HIGHEST_NS {
            for x in [v, v + 1, v * 3 / 2, (v * 2).saturating_sub(1)] {
                let x = x.min(HIGHEST_NS);
                ours.record(x);
                theirs.saturating_record(x);
                // Same bucket: the same lowest value stands for it.
                assert_eq!(
                    value_at(index_of(x)),
                    theirs.lowest_equivalent(x),
                    "value {x}"
                );
                assert!(index_of(x) < COUNTS, "value {x}");
            }
            v = v * 2 + 1;
        }
        let hdr = ours.hdr();
        assert_eq!(hdr.len(), theirs.len());
        for q in [0.0, 0.1, 0.5, 0.9, 0.99, 0.999, 1.0] {
            assert_eq!(
                hdr.value_at_quantile(q),
                theirs.value_at_quantile(q),
                "q {q}"
            );
        }
        let buckets = |h: &Histogram<u64>| -> Vec<(u64, u64)> {
            h.iter_recorded()
                .map(|x| (x.value_iterated_to(), x.count_at_value()))
                .collect()
        };
        assert_eq!(buckets(&hdr), buckets(&theirs));
    }

    #[test]
    fn empty_histogram_summary_is_zero() {
        assert_eq!(LatencyHistogram::new().summary(), LatencySummary::default());
    }
}
