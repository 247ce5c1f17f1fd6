//! One number as a tool reports it: its name (the original tool's word for
//! it), the phase or item it belongs to, its value, its unit and which way
//! is better. Workloads record their originals' headline numbers as
//! metrics; the store keeps them as rows, and `results`, `compare` and the
//! JSON show them with the same name and unit.

use serde::{Deserialize, Serialize};

/// The unit of a metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// Files per second (fs_mark's Files/sec).
    FilesPerSec,
    /// Operations per second.
    OpsPerSec,
    /// Thousands of operations per second: IO500's "kIOPS", the unit of its
    /// metadata phases and of its MD score (`fslab io500md`).
    KiloOpsPerSec,
    /// MiB (2^20 bytes) per second, which tiotest, compilebench and the
    /// seed's alloctest print as "MB/s".
    MibPerSec,
    /// MB (10^6 bytes) per second, as dbench counts them.
    MbPerSec,
    /// GiB (2^30 bytes) per second: IO500's bandwidth phases and BW score.
    GibPerSec,
    Seconds,
    Milliseconds,
    Microseconds,
    /// A percentage (of a CPU, of operations).
    Percent,
    /// A plain count (extents, runs, operations).
    #[default]
    Count,
    /// MiB (2^20 bytes): memory used or written back.
    Mib,
    /// KiB (2^10 bytes): a mean IO size.
    Kib,
    /// Bytes: a file's size.
    Bytes,
}

impl Unit {
    /// How the unit is written after a number.
    pub fn symbol(self) -> &'static str {
        match self {
            Unit::FilesPerSec => "files/s",
            Unit::OpsPerSec => "ops/s",
            Unit::KiloOpsPerSec => "kIOPS",
            Unit::MibPerSec => "MiB/s",
            Unit::MbPerSec => "MB/s",
            Unit::GibPerSec => "GiB/s",
            Unit::Seconds => "s",
            Unit::Milliseconds => "ms",
            Unit::Microseconds => "us",
            Unit::Percent => "%",
            Unit::Count => "count",
            Unit::Mib => "MiB",
            Unit::Kib => "KiB",
            Unit::Bytes => "bytes",
        }
    }

    /// Whether the unit is a rate (more is faster).
    pub fn is_rate(self) -> bool {
        matches!(
            self,
            Unit::FilesPerSec
                | Unit::OpsPerSec
                | Unit::KiloOpsPerSec
                | Unit::MibPerSec
                | Unit::MbPerSec
                | Unit::GibPerSec
        )
    }

    /// Every unit.
    pub const ALL: [Unit; 14] = [
        Unit::FilesPerSec,
        Unit::OpsPerSec,
        Unit::KiloOpsPerSec,
        Unit::MibPerSec,
        Unit::MbPerSec,
        Unit::GibPerSec,
        Unit::Seconds,
        Unit::Milliseconds,
        Unit::Microseconds,
        Unit::Percent,
        Unit::Count,
        Unit::Mib,
        Unit::Kib,
        Unit::Bytes,
    ];

    /// The unit written as `symbol` (`MiB/s`, `us`; `IOPS` is ops/s, a
    /// bare word or `count` a count), for numbers people name themselves
    /// (the generic output parser's).
    pub fn of_symbol(symbol: &str) -> Option<Unit> {
        match symbol {
            "IOPS" => Some(Unit::OpsPerSec),
            "" => Some(Unit::Count),
            s => Unit::ALL.into_iter().find(|u| u.symbol() == s),
        }
    }

    /// Every symbol [`Unit::of_symbol`] takes, for error messages.
    pub fn symbols() -> &'static str {
        "files/s, ops/s (IOPS), kIOPS, MiB/s, MB/s, GiB/s, s, ms, us, %, count, MiB, KiB, bytes"
    }

    /// Whether the unit is a time (more is slower).
    pub fn is_time(self) -> bool {
        matches!(
            self,
            Unit::Seconds | Unit::Milliseconds | Unit::Microseconds
        )
    }
}

/// Which way is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Better {
    Higher,
    Lower,
    /// Neither: a count that describes rather than scores.
    Neither,
}

/// One reported number.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Metric {
    /// What produced it: a workload (`tiotest`) or a probe (`blockio`).
    pub source: String,
    /// The phase or item it belongs to (`Write`, `NTCreateX`, `loop 3`), if any.
    pub phase: Option<String>,
    /// The original tool's name for it (`Rate`, `Throughput`, `Files/sec`).
    pub name: String,
    pub value: f64,
    pub unit: Unit,
    pub better: Better,
    /// A breakdown row (one operation of dbench's table, one fs_mark loop):
    /// shown by `results show` and the exports, left out of summaries and
    /// comparisons, where the run's own totals stand for it.
    #[serde(default)]
    pub detail: bool,
    /// Exact by construction: the workload's options fix the count (fs_mark's
    /// files created = threads x files x loops), so it cannot vary from run
    /// to run and `compare` judges it from one run a side. Only the workload
    /// that records a count can know this; no name or value shows it.
    #[serde(default)]
    pub exact: bool,
}

impl Metric {
    pub fn new(
        source: &str,
        phase: Option<&str>,
        name: &str,
        value: f64,
        unit: Unit,
        better: Better,
    ) -> Metric {
        Metric {
            source: source.into(),
            phase: phase.map(String::from),
            name: name.into(),
            value,
            unit,
            better,
            detail: false,
            exact: false,
        }
    }

    /// The same metric, marked as a breakdown row.
    pub fn detail(mut self) -> Metric {
        self.detail = true;
        self
    }

    /// The same metric, marked exact by construction (see [`Metric::exact`]):
    /// for a count the workload's options fix.
    pub fn exact(mut self) -> Metric {
        self.exact = true;
        self
    }

    /// `NAME (UNIT)` (a count has no unit to show).
    pub fn name_with_unit(&self) -> String {
        match self.unit {
            Unit::Count => self.name.clone(),
            u => format!("{} ({})", self.name, u.symbol()),
        }
    }

    /// `PHASE NAME (UNIT)`: the one way a metric is named in every listing.
    pub fn label(&self) -> String {
        match &self.phase {
            Some(p) => format!("{p} {}", self.name_with_unit()),
            None => self.name_with_unit(),
        }
    }
}

/// The number that stands for a run in one-line listings: the first rate
/// the tool reports for the whole run (dbench's Throughput, fs_mark's mean
/// Files/sec), else its first rate (tiotest's Write Rate); never a
/// breakdown row (one loop's Files/sec).
pub fn headline(metrics: &[Metric]) -> Option<&Metric> {
    let rate = |m: &&Metric| m.unit.is_rate() && m.better == Better::Higher && !m.detail;
    metrics
        .iter()
        .filter(rate)
        .find(|m| m.phase.is_none())
        .or_else(|| metrics.iter().find(rate))
}

/// Which way is better for a number, and the words for a difference: what
/// the catalogue gives each sample and the comparisons judge by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// A time: more is slower.
    Time,
    /// A rate: more is faster (its groups also get a harmonic mean).
    Rate,
    /// A cost: more is more.
    Cost,
}

impl Direction {
    pub fn word(self, pct: f64) -> &'static str {
        match (self, pct > 0.0) {
            (Direction::Time, true) | (Direction::Rate, false) => "slower",
            (Direction::Time, false) | (Direction::Rate, true) => "faster",
            (Direction::Cost, true) => "more",
            (Direction::Cost, false) => "less",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_headline_is_the_runs_own_rate() {
        let loop0 = Metric::new(
            "fsmark",
            Some("loop 0"),
            "Files/sec",
            1.0,
            Unit::FilesPerSec,
            Better::Higher,
        );
        let mean = Metric::new(
            "fsmark",
            None,
            "Files/sec (mean of loops)",
            2.0,
            Unit::FilesPerSec,
            Better::Higher,
        );
        let lat = Metric::new(
            "dbench",
            None,
            "max_latency",
            3.0,
            Unit::Milliseconds,
            Better::Lower,
        );
        assert_eq!(
            headline(&[lat.clone(), loop0.clone(), mean.clone()]),
            Some(&mean)
        );
        assert_eq!(headline(&[lat.clone(), loop0.clone()]), Some(&loop0));
        assert_eq!(headline(std::slice::from_ref(&lat)), None);
        let row = loop0.clone().detail();
        assert_eq!(headline(&[row.clone(), loop0.clone()]), Some(&loop0));
        assert_eq!(headline(&[lat, row]), None);
    }

    #[test]
    fn a_metric_is_named_with_its_phase_and_unit() {
        let m = Metric::new(
            "tiotest",
            Some("Write"),
            "Rate",
            275.0,
            Unit::MibPerSec,
            Better::Higher,
        );
        assert_eq!(m.label(), "Write Rate (MiB/s)");
        let c = Metric::new(
            "alloctest",
            None,
            "extents found",
            3.0,
            Unit::Count,
            Better::Lower,
        );
        assert_eq!(c.label(), "extents found");
        let j = serde_json::to_value(&m).unwrap();
        assert_eq!(j["unit"], "mib_per_sec");
        assert_eq!(serde_json::from_value::<Metric>(j).unwrap(), m);
    }

    #[test]
    fn a_metric_from_before_the_exact_flag_reads_back_as_not_exact() {
        let old = r#"{"source":"fsmark","phase":null,"name":"files created","value":100.0,
            "unit":"count","better":"neither","detail":false}"#;
        let m: Metric = serde_json::from_str(old).unwrap();
        assert!(!m.exact);
        let e = m.exact();
        assert!(e.exact);
        let j = serde_json::to_value(&e).unwrap();
        assert_eq!(j["exact"], true);
        assert_eq!(serde_json::from_value::<Metric>(j).unwrap(), e);
    }
}
