//! A run's latency histograms as its JSON document carries them: every
//! bin that holds values, and percentiles (50, 90, 99, 99.9 unless others
//! are asked for: `results export --percentiles 50,99,99.99`).

use fslab_model::HistogramBin;
use serde::Serialize;

use crate::{RunRecord, Store, StoreError};

/// The percentiles a run's latencies are exported with unless others are
/// asked for (those the `latency` rows keep as columns too).
pub const DEFAULT_PERCENTILES: [f64; 4] = [50.0, 90.0, 99.0, 99.9];

/// One stored latency histogram as exported.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ExportedHistogram {
    pub phase: String,
    pub op: String,
    pub count: u64,
    pub min_ns: u64,
    pub max_ns: u64,
    /// Each percentile asked for, from the histogram (within 1%).
    pub percentiles: Vec<Percentile>,
    /// The bins that hold values, in order.
    pub bins: Vec<HistogramBin>,
}

/// A percentile of a histogram, in nanoseconds.
#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
pub struct Percentile {
    pub percentile: f64,
    pub ns: u64,
}

/// A run's document: its record and its histograms.
#[derive(Debug, Serialize)]
pub struct RunDocument {
    #[serde(flatten)]
    pub record: RunRecord,
    pub histograms: Vec<ExportedHistogram>,
}

impl Store {
    /// Run `id`'s stored histograms with `percentiles` (none: the
    /// defaults).
    pub fn exported_histograms(
        &self,
        id: i64,
        percentiles: &[f64],
    ) -> Result<Vec<ExportedHistogram>, StoreError> {
        let percentiles = if percentiles.is_empty() {
            &DEFAULT_PERCENTILES[..]
        } else {
            percentiles
        };
        Ok(self
            .latency_histograms(id)?
            .into_iter()
            .map(|h| {
                let hist = &h.histogram;
                ExportedHistogram {
                    count: hist.count(),
                    min_ns: hist.min_ns(),
                    max_ns: hist.max_ns(),
                    percentiles: percentiles
                        .iter()
                        .map(|&p| Percentile {
                            percentile: p,
                            ns: hist.quantile_ns(p / 100.0),
                        })
                        .collect(),
                    bins: hist.bins(),
                    phase: h.phase,
                    op: h.op,
                }
            })
            .collect())
    }

    /// Run `id`'s document, its histograms with `percentiles` (none: the
    /// defaults).
    pub fn run_document(&self, id: i64, percentiles: &[f64]) -> Result<RunDocument, StoreError> {
        Ok(RunDocument {
            record: self.run(id)?,
            histograms: self.exported_histograms(id, percentiles)?,
        })
    }
}

/// The name of percentile `p` as a CSV metric (`p99.99_ns`).
pub fn percentile_name(p: f64) -> String {
    let s = format!("{p}");
    format!("p{s}_ns")
}

impl RunDocument {
    /// The run as long-format CSV ([`RunRecord::to_csv`]), then each
    /// histogram's percentiles (table `percentile`) and bins (table
    /// `bin`: `low_ns`, `high_ns` and `count` of bin N).
    pub fn to_csv(&self) -> String {
        let mut out = self.record.to_csv();
        let mut w = csv::Writer::from_writer(Vec::new());
        let id = self.record.run.id.to_string();
        for h in &self.histograms {
            for p in &h.percentiles {
                let _ = w.write_record([
                    id.as_str(),
                    "percentile",
                    &h.phase,
                    &h.op,
                    "",
                    &percentile_name(p.percentile),
                    &p.ns.to_string(),
                ]);
            }
            for (i, b) in h.bins.iter().enumerate() {
                let i = i.to_string();
                for (m, v) in [
                    ("low_ns", b.low_ns),
                    ("high_ns", b.high_ns),
                    ("count", b.count),
                ] {
                    let _ = w.write_record([
                        id.as_str(),
                        "bin",
                        &h.phase,
                        &h.op,
                        &i,
                        m,
                        &v.to_string(),
                    ]);
                }
            }
        }
        out.push_str(&String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default());
        out
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_percentile_is_named_as_typed() {
        assert_eq!(super::percentile_name(99.99), "p99.99_ns");
        assert_eq!(super::percentile_name(50.0), "p50_ns");
    }
}
