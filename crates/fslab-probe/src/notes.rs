//! The typed values of the probes' notes: what the sampler writes to the
//! store and what `results show`, `trace show` and the report read back.
//!
//! Every note is one of these types, named by its probe and key
//! ([`Note::PROBE`], [`Note::KEY`]). Field names are the stored JSON keys,
//! so runs recorded before these types existed read back unchanged; a value
//! that does not decode (an older or foreign shape) gives the type's
//! defaults instead of failing a report.

use crate::names;
use std::collections::BTreeMap;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// One kind of probe note.
pub trait Note: Serialize + DeserializeOwned + Default {
    /// The probe that writes it (`cpu`).
    const PROBE: &'static str;
    /// Its key among that probe's notes (`summary`).
    const KEY: &'static str;

    /// The note of a stored value (defaults when it does not decode).
    fn from_value(v: &serde_json::Value) -> Self {
        Self::deserialize(v).unwrap_or_default()
    }

    /// The value to store.
    fn to_value(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }

    /// Whether a stored note (`probe`, `key`) is one of these.
    fn is(probe: &str, key: &str) -> bool {
        probe == Self::PROBE && key == Self::KEY
    }
}

impl Note for fslab_model::PhaseFacts {
    const PROBE: &'static str = fslab_model::facts::PHASE_PROBE;
    const KEY: &'static str = fslab_model::facts::PHASE_KEY;
}

impl Note for crate::TargetsNote {
    const PROBE: &'static str = "probes";
    const KEY: &'static str = "targets";
}

/// `cpu`/`summary`, per phase: CPU time as a share of one CPU, averaged over
/// the phase, and the filesystem kernel threads that used the most.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CpuSummary {
    /// The machine's, from /proc/stat (other processes' load included).
    pub mean: CpuShares,
    /// The workload's own process (None in runs recorded before it was kept).
    pub workload: Option<ProcessCpu>,
    /// Busiest first, at most eight.
    pub fs_kthreads: Vec<ThreadCpu>,
    /// Every other process's CPU: the machine's busy share less the
    /// workload's and all the filesystem's kernel threads' (None before it
    /// was kept, or without the workload's process).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub others_pct: Option<f64>,
}

/// A process's CPU over a phase: seconds, and % of one CPU.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ProcessCpu {
    pub usr_s: f64,
    pub sys_s: f64,
    pub usr_pct: f64,
    pub sys_pct: f64,
}

impl Note for CpuSummary {
    const PROBE: &'static str = "cpu";
    const KEY: &'static str = "summary";
}

/// Percent of one CPU, by /proc/stat column (unit: %).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CpuShares {
    pub usr_pct: f64,
    pub sys_pct: f64,
    pub iowait_pct: f64,
    pub irq_pct: f64,
    pub softirq_pct: f64,
    pub steal_pct: f64,
    pub idle_pct: f64,
}

impl CpuShares {
    /// The shares of a phase from its `(column, percent × seconds)` samples.
    pub fn from_samples<'a>(samples: impl IntoIterator<Item = (&'a str, f64)>, secs: f64) -> Self {
        let mut s = CpuShares::default();
        for (name, v) in samples {
            let slot = match name {
                names::USR_PCT => &mut s.usr_pct,
                names::SYS_PCT => &mut s.sys_pct,
                names::IOWAIT_PCT => &mut s.iowait_pct,
                names::IRQ_PCT => &mut s.irq_pct,
                names::SOFTIRQ_PCT => &mut s.softirq_pct,
                names::STEAL_PCT => &mut s.steal_pct,
                names::IDLE_PCT => &mut s.idle_pct,
                _ => continue,
            };
            *slot += v / secs;
        }
        s
    }

    /// Percent of one CPU doing work (user, system and interrupts).
    pub fn busy_pct(&self) -> f64 {
        self.usr_pct + self.sys_pct + self.irq_pct + self.softirq_pct
    }
}

/// CPU seconds one kernel thread (by name) used in a phase.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ThreadCpu {
    pub thread: String,
    pub cpu_s: f64,
}

/// `disk`/`summary`, per phase: /proc/diskstats deltas by device name.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct DiskSummary(pub BTreeMap<String, DiskPhase>);

impl Note for DiskSummary {
    const PROBE: &'static str = "disk";
    const KEY: &'static str = "summary";
}

/// One device's IO in a phase.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DiskPhase {
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub reads: u64,
    pub writes: u64,
    /// Time the device had IO in flight, % of the phase.
    pub util_pct: f64,
}

/// `blockio`/`summary`, per phase: traced block IO by device name.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct BlockioSummary {
    #[serde(flatten)]
    pub devices: BTreeMap<String, BlockioPhase>,
    /// Events the kernel dropped from the trace buffer so far.
    pub dropped_events: u64,
}

impl Note for BlockioSummary {
    const PROBE: &'static str = "blockio";
    const KEY: &'static str = "summary";
}

/// One device's traced IO in a phase.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct BlockioPhase {
    pub iops: f64,
    pub read_iops: f64,
    pub write_iops: f64,
    /// MB (10^6 bytes) per second.
    pub read_mb_s: f64,
    pub write_mb_s: f64,
    /// Mean request size, KiB.
    pub avg_io_kb: f64,
    pub sequential_pct: f64,
    pub latency_avg_us: f64,
    pub latency_max_us: f64,
    /// Mean requests in flight.
    pub queue_depth: f64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    /// Requests by size bucket (`io_4k`, …).
    #[serde(flatten)]
    pub sizes: BTreeMap<String, f64>,
}

impl BlockioPhase {
    /// The phase of [`crate::blockio::metrics`] and the byte counts.
    pub fn new(a: &crate::blockio::DevAcc, secs: f64) -> BlockioPhase {
        let mut p = BlockioPhase {
            read_bytes: a.read_bytes,
            write_bytes: a.write_bytes,
            ..Default::default()
        };
        for (name, v) in crate::blockio::metrics(a, secs) {
            let slot = match name.as_str() {
                names::IOPS => &mut p.iops,
                names::READ_IOPS => &mut p.read_iops,
                names::WRITE_IOPS => &mut p.write_iops,
                names::READ_MB_S => &mut p.read_mb_s,
                names::WRITE_MB_S => &mut p.write_mb_s,
                names::AVG_IO_KB => &mut p.avg_io_kb,
                names::SEQUENTIAL_PCT => &mut p.sequential_pct,
                names::LATENCY_AVG_US => &mut p.latency_avg_us,
                names::LATENCY_MAX_US => &mut p.latency_max_us,
                names::QUEUE_DEPTH => &mut p.queue_depth,
                _ => {
                    p.sizes.insert(name, v);
                    continue;
                }
            };
            *slot = v;
        }
        p
    }
}

/// `blockio`/`events`, per run: the kept completions (in the note's blob).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct BlockioEvents {
    pub kept: u64,
    pub not_kept: u64,
    pub dropped: u64,
    /// CLOCK_MONOTONIC of the first phase's start, ns: time zero of the trace.
    pub t0_mono_ns: u64,
    /// Bytes per completion in the blob.
    pub record_bytes: u64,
}

impl Note for BlockioEvents {
    const PROBE: &'static str = "blockio";
    const KEY: &'static str = "events";
}

/// `frag`/`final_map`, per run: the image's extents at the end (map in the blob).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct FragFinalMap {
    pub image: String,
    pub extents: u64,
}

impl Note for FragFinalMap {
    const PROBE: &'static str = "frag";
    const KEY: &'static str = "final_map";
}

/// `stacks`/`top`, per phase: the most frequent kernel stacks of blocked threads.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct StacksTop {
    /// Sampling rounds in the phase.
    pub rounds: u64,
    /// Most frequent first.
    pub stacks: Vec<BlockedStack>,
    /// The workload's blocked samples, kept stacks or not (the
    /// denominator of wait-class shares).
    pub workload_blocked: u64,
    /// The workload's worker threads' samples by scheduler state (`R`
    /// running or runnable, `D` blocked, `S` sleeping, ...): where their
    /// time went. Empty in runs recorded before it was kept.
    pub worker_states: BTreeMap<String, u64>,
}

impl Note for StacksTop {
    const PROBE: &'static str = "stacks";
    const KEY: &'static str = "top";
}

/// One kernel stack where threads were found blocked.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct BlockedStack {
    /// `workload` or `kthread NAME`.
    pub thread: String,
    pub samples: u64,
    /// Share of all blocked-thread samples, %.
    pub share_pct: f64,
    /// Threads blocked here per sampling round.
    pub per_round: f64,
    /// Innermost first.
    pub frames: Vec<String>,
}

/// `perf`/`top`, per phase: the hottest symbols.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct PerfTop(pub Vec<PerfSymbol>);

impl Note for PerfTop {
    const PROBE: &'static str = "perf";
    const KEY: &'static str = "top";
}

/// One symbol of a profile.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct PerfSymbol {
    /// Share of samples, %.
    pub percent: f64,
    /// Its samples (0 in profiles recorded before they were counted).
    pub samples: u64,
    pub dso: String,
    pub kernel: bool,
    pub symbol: String,
}

impl PerfTop {
    /// The samples the shares are of (the workload's, not the machine's),
    /// from its most sampled symbol's count and share; None for a profile
    /// recorded without counts.
    pub fn samples(&self) -> Option<u64> {
        self.0
            .iter()
            .filter(|s| s.samples > 0 && s.percent > 0.0)
            .max_by_key(|s| s.samples)
            .map(|s| (s.samples as f64 * 100.0 / s.percent).round() as u64)
    }
}

/// `writeback`/`reasons`, per phase: writeback starts by reason.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct WritebackReasons(pub BTreeMap<String, u64>);

impl Note for WritebackReasons {
    const PROBE: &'static str = "writeback";
    const KEY: &'static str = "reasons";
}

/// `journal`/`jbd2_run_stats`, per phase: the raw jbd2 commit lines.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Jbd2Commits(pub Vec<String>);

impl Note for Jbd2Commits {
    const PROBE: &'static str = "journal";
    const KEY: &'static str = "jbd2_run_stats";
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blockio_summary_keeps_devices_and_drops_apart() {
        let mut s = BlockioSummary::default();
        let mut p = BlockioPhase {
            iops: 10.0,
            write_bytes: 4096,
            ..Default::default()
        };
        p.sizes.insert("io_4k".into(), 3.0);
        s.devices.insert("loop3".into(), p);
        s.dropped_events = 7;
        let v = s.to_value();
        assert_eq!(v.get("dropped_events"), Some(&serde_json::json!(7)));
        let back = BlockioSummary::from_value(&v);
        assert_eq!(back, s);
    }

    #[test]
    fn a_value_of_another_shape_reads_as_defaults() {
        assert_eq!(
            StacksTop::from_value(&serde_json::json!("not a note")),
            StacksTop::default()
        );
        // Missing fields take their defaults; known ones are kept.
        let c = CpuSummary::from_value(&serde_json::json!({"mean": {"usr_pct": 12.5}}));
        assert_eq!(c.mean.usr_pct, 12.5);
        assert!(c.fs_kthreads.is_empty());
    }

    #[test]
    fn cpu_shares_average_over_the_phase() {
        let s = CpuShares::from_samples(
            [
                ("usr_pct", 50.0),
                ("usr_pct", 50.0),
                ("sys_pct", 20.0),
                ("other", 9.0),
            ],
            2.0,
        );
        assert_eq!(s.usr_pct, 50.0);
        assert_eq!(s.sys_pct, 10.0);
        assert_eq!(s.busy_pct(), 60.0);
    }
}
