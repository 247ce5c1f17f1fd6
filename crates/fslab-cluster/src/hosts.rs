//! What a merged run keeps per host and per rank beside the merged
//! numbers: each host's facts and clock offset, each rank's timeline on
//! rank 0's clock, and each rank's latency counts.

use serde::{Deserialize, Serialize};

use crate::clock::{to_rank0, ClockOffset};
use crate::record::RankRun;

/// One host of a merged run.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct HostFacts {
    pub host: String,
    /// The ranks that ran on it.
    pub ranks: Vec<usize>,
    pub kernel: String,
    /// The filesystem under its first rank's directory.
    pub fs_type: String,
    pub mount_source: String,
    pub mount_point: String,
    /// Its clock against rank 0's at the run's start and end (the rank of
    /// the host with the shortest round trip); None when not measured.
    pub clock_start: Option<ClockOffset>,
    pub clock_end: Option<ClockOffset>,
    /// What the probes on this host recorded beside its ranks (run by its
    /// first rank): the same metrics, under the same names, as a run on
    /// one host keeps. The merged run's own probe metrics are rank 0's
    /// host's.
    pub probes: Vec<fslab_model::Metric>,
    /// The host's machine facts, as its first rank read them: kept in
    /// the store's facts (not again under `params.mpi`).
    #[serde(skip)]
    pub machine: Option<fslab_model::MachineFacts>,
}

/// One rank's phases on rank 0's clock, in seconds from rank 0's start.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct RankTimeline {
    pub rank: usize,
    pub host: String,
    /// `(phase, start_s, end_s)`.
    pub spans: Vec<(String, f64, f64)>,
}

/// How many latencies of one (phase, call) each rank recorded; the merged
/// histogram's count is their sum.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct LatencyCounts {
    pub phase: String,
    pub op: String,
    /// Per rank, in rank order (0 for a rank without that call).
    pub per_rank: Vec<u64>,
}

/// The clock measurements of a run: every rank's offset at the start and
/// at the end (either may be empty when not measured).
#[derive(Debug, Clone, Default)]
pub struct Clocks {
    pub start: Vec<ClockOffset>,
    pub end: Vec<ClockOffset>,
}

fn best<'a>(offsets: &'a [ClockOffset], ranks: &[usize]) -> Option<&'a ClockOffset> {
    offsets
        .iter()
        .filter(|o| ranks.contains(&o.rank))
        .min_by_key(|o| o.rtt_ns)
}

/// Each host's facts, in order of first rank.
pub fn host_facts(ranks: &[RankRun], clocks: &Clocks) -> Vec<HostFacts> {
    let mut out: Vec<HostFacts> = Vec::new();
    for r in ranks {
        if let Some(h) = out.iter_mut().find(|h| h.host == r.host) {
            h.ranks.push(r.rank);
            continue;
        }
        // A host's first rank is the one that ran its probes.
        let mut h = HostFacts {
            host: r.host.clone(),
            ranks: vec![r.rank],
            probes: r.probe_metrics.clone(),
            machine: r.facts.clone(),
            ..Default::default()
        };
        if let Some(i) = &r.info {
            h.kernel.clone_from(&i.kernel);
            h.fs_type.clone_from(&i.target.fs_type);
            h.mount_source.clone_from(&i.target.source);
            h.mount_point.clone_from(&i.target.mount_point);
        }
        out.push(h);
    }
    for h in &mut out {
        // Ranks of a host share its clock: the measurement with the
        // shortest round trip speaks for all.
        h.clock_start = best(&clocks.start, &h.ranks).copied();
        h.clock_end = best(&clocks.end, &h.ranks).copied();
    }
    out
}

/// Every rank's spans on rank 0's clock, in seconds from `origin_ns` (rank
/// 0's start). A rank whose clock was not measured keeps its own clock.
pub fn timelines(ranks: &[RankRun], clocks: &Clocks, origin_ns: i64) -> Vec<RankTimeline> {
    let zero = ClockOffset::default();
    ranks
        .iter()
        .map(|r| {
            let start = clocks
                .start
                .iter()
                .find(|o| o.rank == r.rank)
                .unwrap_or(&zero);
            let end = clocks.end.iter().find(|o| o.rank == r.rank);
            let s = |t: i64| (to_rank0(t, start, end) - origin_ns) as f64 / 1e9;
            RankTimeline {
                rank: r.rank,
                host: r.host.clone(),
                spans: r
                    .spans
                    .iter()
                    .map(|p| (p.name.clone(), s(p.start_ns), s(p.end_ns)))
                    .collect(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Span;
    use fslab_model::{RunInfo, TargetInfo};

    fn rank(r: usize, host: &str, fs: &str, start_ns: i64) -> RankRun {
        let mut run = RankRun::new(r, host);
        run.info = Some(RunInfo {
            workload: "fsmark".into(),
            command_line: vec![],
            fslab_version: "0".into(),
            kernel: "6.1".into(),
            hostname: host.into(),
            started_at: String::new(),
            target: TargetInfo {
                fs_type: fs.into(),
                source: format!("/dev/{host}"),
                ..Default::default()
            },
            params: serde_json::Value::Null,
        });
        run.spans.push(Span {
            name: "create".into(),
            start_ns,
            end_ns: start_ns + 2_000_000_000,
        });
        run
    }

    fn off(rank: usize, offset_ns: i64, rtt_ns: i64) -> ClockOffset {
        ClockOffset {
            rank,
            offset_ns,
            rtt_ns,
            at_ns: 1_000,
        }
    }

    #[test]
    fn each_host_keeps_its_filesystem_and_its_best_measured_clock() {
        let ranks = vec![
            rank(0, "a", "ext4", 0),
            rank(1, "b", "xfs", 0),
            rank(2, "b", "xfs", 0),
        ];
        let clocks = Clocks {
            start: vec![off(0, 0, 0), off(1, 900, 50_000), off(2, 1_000, 20_000)],
            end: vec![],
        };
        let h = host_facts(&ranks, &clocks);
        assert_eq!(h.len(), 2);
        assert_eq!((h[0].host.as_str(), h[0].ranks.clone()), ("a", vec![0]));
        assert_eq!(
            (h[1].fs_type.as_str(), h[1].ranks.clone()),
            ("xfs", vec![1, 2])
        );
        assert_eq!(h[1].mount_source, "/dev/b");
        assert_eq!(
            h[1].clock_start.unwrap().offset_ns,
            1_000,
            "rank 2's shorter trip"
        );
        assert_eq!(h[1].clock_end, None);
    }

    #[test]
    fn a_ranks_phases_land_on_rank_0s_clock() {
        // Rank 1's clock is 3 s ahead: its phase, at 3.5 s on its clock,
        // began 0.5 s after rank 0's start.
        let ranks = vec![rank(0, "a", "ext4", 0), rank(1, "b", "ext4", 3_500_000_000)];
        let clocks = Clocks {
            start: vec![off(0, 0, 0), off(1, 3_000_000_000, 10)],
            end: vec![],
        };
        let t = timelines(&ranks, &clocks, 0);
        assert_eq!(t[1].spans, vec![("create".to_string(), 0.5, 2.5)]);
        assert_eq!(t[0].spans, vec![("create".to_string(), 0.0, 2.0)]);
    }
}
