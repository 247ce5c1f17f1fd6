//! The ranks' runs as one run.
//!
//! All ranks start a phase together (the [`crate::Gate`]), so a phase of the
//! merged run lasts as long as its slowest rank: its rate is every rank's
//! operations over that time, the aggregate rate IOR and mdtest report.
//! Beside it, [`RankRates`] shows how the ranks' own rates spread.

use fslab_model::{CallStats, LatencyHistogram, LoopRow, PhaseResult, RunStatus, SeriesPoint};
use serde::{Deserialize, Serialize};

use crate::hosts::{self, Clocks, HostFacts, LatencyCounts, RankTimeline};
use crate::record::{RankHist, RankRun};

/// One phase's rate across the ranks (operations per second).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct RankRates {
    pub phase: String,
    /// Ranks that ran the phase.
    pub ranks: usize,
    /// All ranks' operations over the slowest rank's time (the phase's
    /// own unit: compilebench's rates are bytes a second).
    pub aggregate: f64,
    pub max: f64,
    pub min: f64,
    pub mean: f64,
    /// Sample standard deviation of the ranks' rates.
    pub sd: f64,
}

/// What a merged run keeps under `params.mpi` in the store: the ranks,
/// hosts and per-rank rates (read back by `results show` and the report).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct MpiParams {
    pub ranks: usize,
    /// Each host and how many ranks ran on it.
    pub hosts: Vec<(String, usize)>,
    pub rates: Vec<RankRates>,
    /// Each rank's status and error.
    pub rank_status: Vec<(usize, RunStatus, Option<String>)>,
    /// Each host's filesystem and clock offset against rank 0.
    pub host_facts: Vec<HostFacts>,
    /// Each rank's phases on rank 0's clock.
    pub timelines: Vec<RankTimeline>,
    /// Each (phase, call)'s latency count per rank (the merged
    /// histogram's count is their sum).
    pub latency_counts: Vec<LatencyCounts>,
}

impl MpiParams {
    /// The MPI facts of a run's parameters; None for a run of one process.
    pub fn of(params: &serde_json::Value) -> Option<MpiParams> {
        /// The part of a run's parameters that merged ranks add.
        #[derive(Deserialize)]
        struct Params {
            mpi: Option<serde_json::Value>,
        }
        let p = Params::deserialize(params).ok()?;
        Some(MpiParams::deserialize(p.mpi?).unwrap_or_default())
    }

    /// What each host's probes recorded, a column per host: the header
    /// (`probe metric`, then the hosts) and a row per `SOURCE LABEL` (`-`
    /// where a host has no such number); None when no host has any.
    pub fn host_probes(&self) -> Option<(Vec<String>, Vec<Vec<String>>)> {
        let hosts: Vec<&HostFacts> = self
            .host_facts
            .iter()
            .filter(|h| !h.probes.is_empty())
            .collect();
        if hosts.is_empty() {
            return None;
        }
        let key = |m: &fslab_model::Metric| format!("{} {}", m.source, m.label());
        let mut labels: Vec<String> = Vec::new();
        for m in hosts.iter().flat_map(|h| &h.probes) {
            if !labels.contains(&key(m)) {
                labels.push(key(m));
            }
        }
        let mut header = vec!["probe metric".to_string()];
        header.extend(hosts.iter().map(|h| h.host.clone()));
        let rows = labels
            .into_iter()
            .map(|l| {
                let mut row = vec![l.clone()];
                row.extend(hosts.iter().map(|h| {
                    h.probes
                        .iter()
                        .find(|m| key(m) == l)
                        .map_or_else(|| "-".into(), |m| fslab_stats::fmt_g(m.value, 6))
                }));
                row
            })
            .collect();
        Some((header, rows))
    }

    /// The hosts as `NAME xN`, comma-separated.
    pub fn host_counts(&self) -> String {
        self.hosts
            .iter()
            .map(|(h, n)| format!("{h} x{n}"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The merged run, and what it was merged from.
#[derive(Debug, Clone, Serialize)]
pub struct MergedRun {
    #[serde(flatten)]
    pub run: RankRun,
    pub ranks: usize,
    /// Each host and how many ranks ran on it, in rank order of first use.
    pub hosts: Vec<(String, usize)>,
    pub rates: Vec<RankRates>,
    /// Each rank's status and error.
    pub rank_status: Vec<(usize, RunStatus, Option<String>)>,
    pub host_facts: Vec<HostFacts>,
    pub timelines: Vec<RankTimeline>,
    pub latency_counts: Vec<LatencyCounts>,
}

fn worst(a: RunStatus, b: RunStatus) -> RunStatus {
    let rank = |s| match s {
        RunStatus::Complete => 0,
        RunStatus::Running => 1,
        RunStatus::Interrupted => 2,
        RunStatus::Failed => 3,
    };
    if rank(b) > rank(a) {
        b
    } else {
        a
    }
}

/// The metrics the merged run keeps: those rank 0 alone recorded (its
/// probes', or a workload's summary of every rank, as mdtest's SUMMARY and
/// stonewall numbers). A metric every rank recorded (fs_mark's Files/sec,
/// createmany's rate) is that rank's own view, not the run's: left out, as
/// the per-rank rates stand for it.
fn run_metrics(ranks: &[RankRun]) -> Vec<fslab_model::Metric> {
    let Some((first, others)) = ranks.split_first() else {
        return Vec::new();
    };
    let theirs: std::collections::HashSet<String> = others
        .iter()
        .flat_map(|r| r.metrics.iter().map(fslab_model::Metric::label))
        .collect();
    first
        .metrics
        .iter()
        .filter(|m| !theirs.contains(&m.label()))
        .cloned()
        .collect()
}

/// Merges the ranks' runs (in rank order; rank 0 first), their clocks not
/// measured.
pub fn merge(ranks: Vec<RankRun>) -> MergedRun {
    merge_clocked(ranks, &Clocks::default())
}

/// Merges the ranks' runs (in rank order; rank 0 first) with their clocks
/// against rank 0's: each host's offset is kept, and each rank's timeline
/// put on rank 0's clock.
pub fn merge_clocked(ranks: Vec<RankRun>, clocks: &Clocks) -> MergedRun {
    let mut hosts: Vec<(String, usize)> = Vec::new();
    for r in &ranks {
        match hosts.iter_mut().find(|(h, _)| *h == r.host) {
            Some((_, n)) => *n += 1,
            None => hosts.push((r.host.clone(), 1)),
        }
    }
    let status = ranks
        .iter()
        .fold(RunStatus::Complete, |s, r| worst(s, r.status));
    // The error of the first rank that failed; else the first one given.
    let error = ranks
        .iter()
        .find(|r| r.status == RunStatus::Failed && r.error.is_some())
        .or_else(|| ranks.iter().find(|r| r.error.is_some()))
        .map(|r| {
            format!(
                "rank {} ({}): {}",
                r.rank,
                r.host,
                r.error.as_deref().unwrap_or("")
            )
        });
    let first = ranks.first();
    let mut run = RankRun::new(
        0,
        &hosts
            .iter()
            .map(|(h, _)| h.as_str())
            .collect::<Vec<_>>()
            .join(","),
    );
    run.info = ranks.iter().find_map(|r| r.info.clone());
    run.status = status;
    run.error = error;
    run.probe_points = first.map(|r| r.probe_points.clone()).unwrap_or_default();
    run.probe_notes = first.map(|r| r.probe_notes.clone()).unwrap_or_default();
    run.outputs = first.map(|r| r.outputs.clone()).unwrap_or_default();
    run.metrics = run_metrics(&ranks);
    // The run's probe numbers are those of rank 0's host (as a run on one
    // host keeps them); every host's are in its facts.
    if let Some(f) = first {
        run.metrics.extend(f.probe_metrics.iter().cloned());
    }
    let (phases, rates) = merge_phases(&ranks);
    run.phases = phases;
    run.series = merge_series(&ranks);
    let (latency, latency_counts) = merge_latency(&ranks);
    run.latency = latency;
    run.loops = merge_loops(&ranks);
    // Rank 0's start is the timelines' zero.
    let origin = clocks
        .start
        .iter()
        .find(|o| o.rank == 0)
        .map(|o| o.at_ns)
        .or_else(|| {
            ranks
                .iter()
                .flat_map(|r| &r.spans)
                .map(|s| s.start_ns)
                .min()
        })
        .unwrap_or(0);
    MergedRun {
        host_facts: hosts::host_facts(&ranks, clocks),
        timelines: hosts::timelines(&ranks, clocks, origin),
        latency_counts,
        run,
        ranks: ranks.len(),
        hosts,
        rates,
        rank_status: ranks
            .iter()
            .map(|r| (r.rank, r.status, r.error.clone()))
            .collect(),
    }
}

fn merge_phases(ranks: &[RankRun]) -> (Vec<PhaseResult>, Vec<RankRates>) {
    let n = ranks.iter().map(|r| r.phases.len()).max().unwrap_or(0);
    let mut phases = Vec::new();
    let mut rates = Vec::new();
    for i in 0..n {
        let parts: Vec<&PhaseResult> = ranks.iter().filter_map(|r| r.phases.get(i)).collect();
        let name = parts[0].phase.clone();
        let ops: u64 = parts.iter().map(|p| p.ops).sum();
        let elapsed = parts.iter().map(|p| p.elapsed_s).fold(0.0, f64::max);
        // A phase's rate is in its workload's unit (operations a second for
        // most, bytes for compilebench): what each rank did in that unit,
        // over the slowest rank's time.
        let work: f64 = parts.iter().map(|p| p.ops_per_s * p.elapsed_s).sum();
        let aggregate = if elapsed > 0.0 { work / elapsed } else { 0.0 };
        phases.push(PhaseResult {
            phase: name.clone(),
            ops,
            elapsed_s: elapsed,
            ops_per_s: aggregate,
            usr_cpu_s: parts.iter().map(|p| p.usr_cpu_s).sum(),
            sys_cpu_s: parts.iter().map(|p| p.sys_cpu_s).sum(),
            bytes: parts.iter().map(|p| p.bytes).sum(),
            complete: parts.len() == ranks.len() && parts.iter().all(|p| p.complete),
            reported: parts.iter().any(|p| p.reported),
            counted: parts.iter().all(|p| p.counted),
        });
        let own: Vec<f64> = parts.iter().map(|p| p.ops_per_s).collect();
        let s = fslab_stats::summarize(&own);
        rates.push(RankRates {
            phase: name,
            ranks: parts.len(),
            aggregate,
            max: s.max,
            min: s.min,
            mean: s.mean,
            sd: s.sd,
        });
    }
    (phases, rates)
}

/// The k-th point of a phase of every rank falls in the same second (the
/// phases start together), so those points add up.
fn merge_series(ranks: &[RankRun]) -> Vec<SeriesPoint> {
    // Keyed by (phase, k): the k-th point of that phase.
    let mut out: std::collections::BTreeMap<(u32, usize), SeriesPoint> = Default::default();
    for r in ranks {
        let mut k = 0;
        let mut phase = None;
        for p in &r.series {
            if phase != Some(p.phase_index) {
                phase = Some(p.phase_index);
                k = 0;
            }
            out.entry((p.phase_index, k))
                .and_modify(|q| {
                    q.ops += p.ops;
                    q.total_ops += p.total_ops;
                    q.t_s = q.t_s.max(p.t_s);
                })
                .or_insert(*p);
            k += 1;
        }
    }
    out.into_values().collect()
}

/// The ranks' histograms added up per (phase, call), which is exact (HDR
/// histograms of the same bounds add bucket by bucket), and each rank's
/// count of each; every histogram is decoded once.
fn merge_latency(ranks: &[RankRun]) -> (Vec<RankHist>, Vec<LatencyCounts>) {
    let mut counts: Vec<LatencyCounts> = Vec::new();
    let mut hists: Vec<LatencyHistogram> = Vec::new();
    for (i, r) in ranks.iter().enumerate() {
        for h in &r.latency {
            let Ok(hist) = h.histogram() else { continue };
            match counts
                .iter()
                .position(|c| c.phase == h.phase && c.op == h.op)
            {
                Some(at) => {
                    counts[at].per_rank[i] += hist.count();
                    hists[at].merge(&hist);
                }
                None => {
                    let mut per_rank = vec![0; ranks.len()];
                    per_rank[i] = hist.count();
                    counts.push(LatencyCounts {
                        phase: h.phase.clone(),
                        op: h.op.clone(),
                        per_rank,
                    });
                    hists.push(hist);
                }
            }
        }
    }
    let merged = counts
        .iter()
        .zip(&hists)
        .map(|(c, h)| RankHist::of(&c.phase, &c.op, h))
        .collect();
    (merged, counts)
}

/// fs_mark's loop rows: counts and per-thread rates add up (ranks are more
/// threads), times are the slowest rank's, call times combine.
fn merge_loops(ranks: &[RankRun]) -> Vec<LoopRow> {
    let n = ranks.iter().map(|r| r.loops.len()).max().unwrap_or(0);
    (0..n)
        .map(|i| {
            let rows: Vec<&LoopRow> = ranks.iter().filter_map(|r| r.loops.get(i)).collect();
            let files: u64 = rows.iter().map(|r| r.files).sum();
            let wall_s = rows.iter().map(|r| r.wall_s).fold(0.0, f64::max);
            let mut calls: Vec<(String, CallStats, u64)> = Vec::new();
            for r in &rows {
                for (name, c) in &r.calls {
                    match calls.iter_mut().find(|(n, _, _)| n == name) {
                        Some((_, m, k)) => {
                            m.min_us = m.min_us.min(c.min_us);
                            m.max_us = m.max_us.max(c.max_us);
                            // Each rank made the same number of calls of a kind
                            // in a loop, so the mean of means is the mean.
                            m.avg_us = (m.avg_us * *k + c.avg_us) / (*k + 1);
                            *k += 1;
                        }
                        None => calls.push((name.clone(), *c, 1)),
                    }
                }
            }
            LoopRow {
                index: rows[0].index,
                fs_use_pct: rows.iter().map(|r| r.fs_use_pct).max().unwrap_or(0),
                count: rows.iter().map(|r| r.count).sum(),
                files,
                file_size: rows[0].file_size,
                files_per_sec: rows.iter().map(|r| r.files_per_sec).sum(),
                wall_files_per_sec: if wall_s > 0.0 {
                    files as f64 / wall_s
                } else {
                    0.0
                },
                wall_s,
                app_overhead_us: rows.iter().map(|r| r.app_overhead_us).sum(),
                calls: calls.into_iter().map(|(n, c, _)| (n, c)).collect(),
                complete: rows.len() == ranks.len() && rows.iter().all(|r| r.complete),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rank(r: usize, host: &str, phases: &[(&str, u64, f64)], lat: &[u64]) -> RankRun {
        let mut run = RankRun::new(r, host);
        run.status = RunStatus::Complete;
        for (i, (name, ops, secs)) in phases.iter().enumerate() {
            run.phases.push(PhaseResult {
                phase: (*name).into(),
                ops: *ops,
                elapsed_s: *secs,
                ops_per_s: *ops as f64 / secs,
                bytes: ops * 10,
                complete: true,
                ..Default::default()
            });
            for k in 0..2 {
                run.series.push(SeriesPoint {
                    phase_index: i as u32,
                    t_s: k as f64 + 1.0,
                    ops: ops / 2,
                    total_ops: (k + 1) * ops / 2,
                });
            }
        }
        let mut h = LatencyHistogram::new();
        for ns in lat {
            h.record(*ns);
        }
        run.latency.push(RankHist::of("create", "creat", &h));
        run
    }

    #[test]
    fn every_hosts_probes_are_kept_with_its_facts_and_rank_0s_host_speaks_for_the_run() {
        let hits = |v: f64| {
            fslab_model::Metric::new(
                "mem",
                Some("create"),
                "limit hits",
                v,
                fslab_model::Unit::Count,
                fslab_model::Better::Neither,
            )
        };
        let own = fslab_model::Metric::new(
            "fsmark",
            None,
            "Files/sec",
            10.0,
            fslab_model::Unit::FilesPerSec,
            fslab_model::Better::Higher,
        );
        let mut ranks: Vec<RankRun> = [(0, "a"), (1, "a"), (2, "b"), (3, "b")]
            .iter()
            .map(|(r, h)| rank(*r, h, &[("create", 100, 1.0)], &[1000]))
            .collect();
        for r in &mut ranks {
            r.metrics.push(own.clone());
        }
        // The first rank of each host ran its probes.
        ranks[0].metrics.push(hits(7.0));
        ranks[2].metrics.push(hits(9.0));
        for r in &mut ranks {
            r.set_probes_apart(&["mem"]);
        }
        assert_eq!(ranks[2].metrics, vec![own.clone()]);
        let m = merge(ranks);
        let probes: Vec<(String, Vec<f64>)> = m
            .host_facts
            .iter()
            .map(|h| (h.host.clone(), h.probes.iter().map(|p| p.value).collect()))
            .collect();
        assert_eq!(
            probes,
            vec![("a".to_string(), vec![7.0]), ("b".to_string(), vec![9.0])]
        );
        // The run keeps rank 0's host's probe numbers, not the ranks' own.
        assert_eq!(m.run.metrics, vec![hits(7.0)]);
        let params = MpiParams {
            host_facts: m.host_facts.clone(),
            ..Default::default()
        };
        let (header, rows) = params.host_probes().unwrap();
        assert_eq!(header, ["probe metric", "a", "b"]);
        assert_eq!(rows, [["mem create limit hits", "7", "9"]]);
    }

    #[test]
    fn phases_add_operations_over_the_slowest_ranks_time() {
        let m = merge(vec![
            rank(
                0,
                "a",
                &[("create", 1000, 1.0), ("unlink", 500, 0.5)],
                &[1000, 3000],
            ),
            rank(
                1,
                "b",
                &[("create", 1000, 2.0), ("unlink", 500, 0.25)],
                &[2000],
            ),
            rank(
                2,
                "a",
                &[("create", 1000, 1.0), ("unlink", 500, 0.5)],
                &[9000],
            ),
        ]);
        assert_eq!(m.ranks, 3);
        assert_eq!(m.hosts, vec![("a".to_string(), 2), ("b".to_string(), 1)]);
        assert_eq!(m.run.host, "a,b");
        let c = &m.run.phases[0];
        assert_eq!(
            (c.ops, c.elapsed_s, c.ops_per_s, c.bytes),
            (3000, 2.0, 1500.0, 30000)
        );
        assert!(c.complete);
        let r = &m.rates[0];
        assert_eq!(
            (r.ranks, r.aggregate, r.max, r.min),
            (3, 1500.0, 1000.0, 500.0)
        );
        assert!((r.mean - 833.333).abs() < 0.01);
        assert!((r.sd - 288.675).abs() < 0.01);
        assert_eq!(m.rates[1].aggregate, 3000.0);
        assert_eq!(m.run.status, RunStatus::Complete);
        assert!(m.run.error.is_none());
    }

    #[test]
    fn the_merged_run_keeps_the_metrics_rank_0_alone_recorded() {
        use fslab_model::{Better, Metric, Unit};
        let m = |name: &str, v: f64| {
            Metric::new(
                "w",
                Some("create"),
                name,
                v,
                Unit::OpsPerSec,
                Better::Higher,
            )
        };
        let mut r0 = rank(0, "a", &[("create", 10, 1.0)], &[5]);
        let mut r1 = rank(1, "a", &[("create", 10, 1.0)], &[5]);
        // Every rank's own rate (a rank's view), and rank 0's summary.
        r0.metrics = vec![m("rate", 10.0), m("stonewall rate", 20.0)];
        r1.metrics = vec![m("rate", 11.0)];
        r0.info = Some(fslab_model::RunInfo {
            workload: "w".into(),
            command_line: Vec::new(),
            fslab_version: "0".into(),
            kernel: "6".into(),
            hostname: "a".into(),
            started_at: "now".into(),
            target: Default::default(),
            params: serde_json::Value::Null,
        });
        let merged = merge(vec![r0, r1]);
        assert_eq!(merged.run.metrics, vec![m("stonewall rate", 20.0)]);
        let mut rec = fslab_model::MemRecorder::default();
        merged.record(&mut rec).unwrap();
        assert_eq!(rec.metrics.len(), 1, "{:?}", rec.metrics);
    }

    #[test]
    fn a_rate_in_another_unit_stays_in_it() {
        // compilebench: two runs of a phase, its rate in bytes a second.
        let mut a = rank(0, "a", &[("create", 2, 1.0)], &[1]);
        a.phases[0].ops_per_s = 1e9;
        let mut b = rank(1, "a", &[("create", 2, 2.0)], &[1]);
        b.phases[0].ops_per_s = 1e9;
        let m = merge(vec![a, b]);
        assert_eq!(m.run.phases[0].ops_per_s, 1.5e9);
        assert_eq!((m.rates[0].max, m.rates[0].min), (1e9, 1e9));
    }

    #[test]
    fn series_points_of_the_same_second_add_up() {
        let m = merge(vec![
            rank(0, "a", &[("create", 1000, 1.0)], &[1]),
            rank(1, "a", &[("create", 600, 1.0)], &[1]),
        ]);
        let s: Vec<(u32, u64, u64)> = m
            .run
            .series
            .iter()
            .map(|p| (p.phase_index, p.ops, p.total_ops))
            .collect();
        assert_eq!(s, vec![(0, 800, 800), (0, 800, 1600)]);
    }

    #[test]
    fn latency_histograms_merge_per_phase_and_call() {
        let m = merge(vec![
            rank(0, "a", &[("create", 1, 1.0)], &[1000, 3000]),
            rank(1, "a", &[("create", 1, 1.0)], &[2000]),
        ]);
        assert_eq!(m.run.latency.len(), 1);
        let h = m.run.latency[0].histogram().unwrap();
        assert_eq!((h.count(), h.min_ns(), h.max_ns()), (3, 1000, 3000));
    }

    #[test]
    fn a_failed_rank_fails_the_run_and_its_missing_phases_are_incomplete() {
        let mut bad = rank(1, "b", &[("create", 10, 1.0)], &[1]);
        bad.status = RunStatus::Failed;
        bad.error = Some("create(/x): No space left on device".into());
        let mut stopped = rank(0, "a", &[("create", 1000, 1.0), ("unlink", 0, 0.1)], &[1]);
        stopped.status = RunStatus::Interrupted;
        let m = merge(vec![stopped, bad]);
        assert_eq!(m.run.status, RunStatus::Failed);
        assert_eq!(
            m.run.error.as_deref(),
            Some("rank 1 (b): create(/x): No space left on device")
        );
        assert!(!m.run.phases[1].complete, "rank 1 never ran unlink");
        assert_eq!(m.rates[1].ranks, 1);
    }

    #[test]
    fn fsmark_loops_add_counts_and_rates() {
        let row = |files, secs, avg| LoopRow {
            index: 0,
            count: files,
            files,
            files_per_sec: files as f64 / secs,
            wall_s: secs,
            calls: vec![(
                "creat".into(),
                CallStats {
                    min_us: avg / 2,
                    avg_us: avg,
                    max_us: avg * 3,
                },
            )],
            ..Default::default()
        };
        let mut a = RankRun::new(0, "a");
        a.loops.push(row(100, 1.0, 10));
        let mut b = RankRun::new(1, "a");
        b.loops.push(row(100, 2.0, 30));
        let m = merge(vec![a, b]);
        let l = &m.run.loops[0];
        assert_eq!(
            (l.count, l.files, l.files_per_sec, l.wall_s),
            (200, 200, 150.0, 2.0)
        );
        assert_eq!(l.wall_files_per_sec, 100.0);
        assert_eq!(
            l.calls[0].1,
            CallStats {
                min_us: 5,
                avg_us: 20,
                max_us: 90
            }
        );
    }

    #[test]
    fn merged_percentiles_are_the_whole_runs_not_averages_of_the_ranks() {
        // Rank 0: 9 000 calls of 1..=9 000 us; rank 1, a straggler: 1 000
        // calls of 100 ms. The whole run's p50 is 5 000.5 us and its p95
        // 100 ms; the mean of the two ranks' p95s would be about 54 ms.
        let fast: Vec<u64> = (1..=9_000u64).map(|us| us * 1_000).collect();
        let slow = vec![100_000_000u64; 1_000];
        let a = rank(0, "a", &[("create", 9_000, 1.0)], &fast);
        let b = rank(1, "b", &[("create", 1_000, 1.0)], &slow);
        let m = merge(vec![a.clone(), b.clone()]);
        let merged = m.run.latency[0].histogram().unwrap();
        // One histogram of every call made directly: identical.
        let mut whole = LatencyHistogram::new();
        fast.iter().chain(&slow).for_each(|&v| whole.record(v));
        assert_eq!(merged.count(), 10_000);
        assert_eq!(merged.summary(), whole.summary());
        for q in [0.5, 0.9, 0.95, 0.99, 0.999] {
            assert_eq!(merged.quantile_ns(q), whole.quantile_ns(q), "q {q}");
        }
        // Against the exact order statistics, within HDR's 1%.
        let mut all: Vec<u64> = fast.iter().chain(&slow).copied().collect();
        all.sort_unstable();
        for q in [0.5, 0.89, 0.95, 0.99] {
            let exact = all[(q * all.len() as f64).ceil() as usize - 1] as f64;
            let got = merged.quantile_ns(q) as f64;
            assert!(
                (got - exact).abs() <= exact * 0.01,
                "q {q}: {got} against {exact}"
            );
        }
        let p95 = |r: &RankRun| r.latency[0].histogram().unwrap().quantile_ns(0.95) as f64;
        let averaged = (p95(&a) + p95(&b)) / 2.0;
        assert!((averaged - 54_275_000.0).abs() < 1e6, "{averaged}");
        assert!((merged.quantile_ns(0.95) as f64 - 1e8).abs() < 1e6);
        // Each rank's count is kept, and they add up to the merged count.
        assert_eq!(m.latency_counts[0].per_rank, vec![9_000, 1_000]);
    }
}
