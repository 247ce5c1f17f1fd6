//! The merged run kept in the store and shown to the user.

use fslab_model::{RecordResult, Recorder, RunInfo};

use crate::merge::{MergedRun, MpiParams};

impl MergedRun {
    /// The merged run's own numbers as it records them: the ranks' loop
    /// rows added up loop by loop, as detail metrics of `workload`.
    pub fn metrics(&self, workload: &str) -> Vec<fslab_model::Metric> {
        self.run
            .loops
            .iter()
            .flat_map(|l| l.metrics(workload))
            .collect()
    }

    /// The hosts as `NAME` or `NAME (N ranks)`, comma-separated.
    pub fn host_list(&self) -> String {
        self.hosts
            .iter()
            .map(|(h, n)| {
                if *n == 1 {
                    h.clone()
                } else {
                    format!("{h} ({n} ranks)")
                }
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Records the merged run as one run: rank 0's run information, with
    /// every host and, under `params.mpi`, the ranks, hosts and per-rank
    /// rates. Returns the new run's id; None when no rank got as far as
    /// starting its run.
    pub fn record(&self, rec: &mut dyn Recorder) -> RecordResult<Option<i64>> {
        let Some(base) = &self.run.info else {
            return Ok(None);
        };
        let mut info: RunInfo = base.clone();
        info.hostname = self.run.host.clone();
        let mpi = serde_json::to_value(MpiParams {
            ranks: self.ranks,
            hosts: self.hosts.clone(),
            rates: self.rates.clone(),
            rank_status: self.rank_status.clone(),
            host_facts: self.host_facts.clone(),
            timelines: self.timelines.clone(),
            latency_counts: self.latency_counts.clone(),
        })
        .unwrap_or_default();
        match &mut info.params {
            serde_json::Value::Object(m) => {
                m.insert("mpi".into(), mpi);
            }
            other => {
                *other = serde_json::json!({ "workload": other.clone(), "mpi": mpi });
            }
        }
        let id = rec.begin_run(&info)?;
        for m in self.host_facts.iter().filter_map(|h| h.machine.as_ref()) {
            rec.record_facts(id, m)?;
        }
        let loops = self.metrics(&info.workload);
        if !loops.is_empty() {
            rec.record_metrics(id, &loops)?;
        }
        for p in &self.run.series {
            rec.record_series(id, p)?;
        }
        for p in &self.run.phases {
            rec.record_phase(id, p)?;
        }
        for h in &self.run.latency {
            if let Ok(hist) = h.histogram() {
                rec.record_latency(id, &h.phase, &h.op, &hist)?;
            }
        }
        rec.record_probe_points(id, &self.run.probe_points)?;
        rec.record_metrics(id, &self.run.metrics)?;
        for n in &self.run.probe_notes {
            rec.record_probe_note(id, n)?;
        }
        for (stream, bytes) in &self.run.outputs {
            rec.record_output(id, stream, bytes)?;
        }
        rec.finish_run(id, self.run.status, self.run.error.as_deref())?;
        Ok(Some(id))
    }

    /// The text rank 0 prints: the aggregate and per-rank rates of each
    /// phase (in mdtest's SUMMARY layout), MB/s where the phase moved
    /// data, latency percentiles, and every rank that did not complete.
    pub fn summary(&self, workload: &str) -> String {
        let mut s = format!(
            "fslab {workload}: {} MPI ranks on {} host{}: {}\n",
            self.ranks,
            self.hosts.len(),
            if self.hosts.len() == 1 { "" } else { "s" },
            self.host_list()
        );
        s += &format!(
            "SUMMARY rate (ops/s)   {:>14} {:>14} {:>14} {:>14} {:>14} {:>10}\n",
            "aggregate",
            "max",
            "min",
            "mean",
            "std dev",
            fslab_model::Unit::MibPerSec.symbol()
        );
        for (r, p) in self.rates.iter().zip(&self.run.phases) {
            let mbs = if p.bytes > 0 && p.elapsed_s > 0.0 {
                format!("{:.2}", p.bytes as f64 / (1u64 << 20) as f64 / p.elapsed_s)
            } else {
                "-".into()
            };
            let ranks = if r.ranks == self.ranks {
                String::new()
            } else {
                format!("  ({} of {} ranks)", r.ranks, self.ranks)
            };
            s += &format!(
                "   {:<18} : {:>14.2} {:>14.2} {:>14.2} {:>14.2} {:>14.2} {:>10}{ranks}\n",
                r.phase, r.aggregate, r.max, r.min, r.mean, r.sd, mbs
            );
        }
        if !self.run.latency.is_empty() {
            s += &format!(
                "SUMMARY latency (us)   {:>14} {:>14} {:>14} {:>14} {:>14}\n",
                "count", "p50", "p99", "p99.9", "max"
            );
            for h in &self.run.latency {
                let Ok(hist) = h.histogram() else { continue };
                let sum = hist.summary();
                let us = |ns: u64| ns as f64 / 1000.0;
                s += &format!(
                    "   {:<18} : {:>14} {:>14.2} {:>14.2} {:>14.2} {:>14.2}\n",
                    format!("{} {}", h.phase, h.op),
                    hist.count(),
                    us(sum.p50_ns),
                    us(sum.p99_ns),
                    us(sum.p999_ns),
                    us(sum.max_ns)
                );
            }
        }
        for (rank, status, error) in &self.rank_status {
            if *status != fslab_model::RunStatus::Complete {
                s += &format!(
                    "rank {rank}: {}{}\n",
                    status.as_str(),
                    error
                        .as_deref()
                        .map(|e| format!(": {e}"))
                        .unwrap_or_default()
                );
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use fslab_model::{LatencyHistogram, MemRecorder, PhaseResult, RunStatus, TargetInfo};

    use crate::{merge, MpiParams, RankHist, RankRun};

    fn rank(r: usize, ops: u64, secs: f64, status: RunStatus) -> RankRun {
        let mut run = RankRun::new(r, "node1");
        run.status = status;
        run.info = Some(fslab_model::RunInfo {
            workload: "fsmark".into(),
            command_line: vec!["fslab".into(), "fsmark".into()],
            fslab_version: "0".into(),
            kernel: "6".into(),
            hostname: "node1".into(),
            started_at: "now".into(),
            target: TargetInfo::default(),
            params: serde_json::json!({ "files": 10 }),
        });
        run.phases.push(PhaseResult {
            phase: "create".into(),
            ops,
            elapsed_s: secs,
            ops_per_s: ops as f64 / secs,
            bytes: ops * 4096,
            complete: status == RunStatus::Complete,
            ..Default::default()
        });
        let mut h = LatencyHistogram::new();
        h.record(2_000);
        h.record(4_000);
        run.latency.push(RankHist::of("create", "creat", &h));
        run
    }

    #[test]
    fn the_merged_run_is_recorded_as_one_run_with_its_ranks() {
        let m = merge(vec![
            rank(0, 100, 1.0, RunStatus::Complete),
            rank(1, 100, 2.0, RunStatus::Complete),
        ]);
        let mut rec = MemRecorder::default();
        assert_eq!(m.record(&mut rec).unwrap(), Some(1));
        assert_eq!(rec.runs.len(), 1);
        let p = &rec.runs[0].params;
        assert_eq!(p["files"], 10);
        let mpi = MpiParams::of(p).expect("the MPI facts are kept");
        assert_eq!(mpi.ranks, 2);
        assert_eq!(mpi.rates[0].aggregate, 100.0);
        assert_eq!(mpi.hosts, m.hosts);
        assert_eq!(mpi.rank_status.len(), 2);
        assert_eq!(rec.phases[0].ops, 200);
        assert_eq!(rec.latencies[0].2.count, 4);
        assert_eq!(rec.finished, Some((RunStatus::Complete, None)));
    }

    #[test]
    fn every_hosts_facts_are_recorded_once_from_its_first_rank() {
        let facts = |host: &str, cpus: &str| fslab_model::MachineFacts {
            host: host.into(),
            facts: vec![fslab_model::Fact::known("cpus", cpus, "/proc/cpuinfo")],
        };
        let mut ranks = Vec::new();
        for (r, host, cpus) in [(0, "a", "2"), (1, "a", "2"), (2, "b", "8")] {
            let mut run = rank(r, 100, 1.0, RunStatus::Complete);
            run.host = host.into();
            run.facts = Some(facts(host, cpus));
            ranks.push(run);
        }
        let m = merge(ranks);
        let mut rec = MemRecorder::default();
        m.record(&mut rec).unwrap();
        assert_eq!(rec.facts, vec![facts("a", "2"), facts("b", "8")]);
        // Kept in the facts, not again in the run's parameters.
        assert!(!rec.runs[0].params.to_string().contains("/proc/cpuinfo"));
    }

    #[test]
    fn nothing_is_recorded_when_no_rank_started() {
        let m = merge(vec![RankRun::failed(0, "n", "bad".into())]);
        let mut rec = MemRecorder::default();
        assert_eq!(m.record(&mut rec).unwrap(), None);
        assert!(rec.runs.is_empty());
    }

    #[test]
    fn the_summary_shows_rates_latency_and_ranks_that_failed() {
        let mut bad = rank(1, 50, 1.0, RunStatus::Failed);
        bad.error = Some("mknod(x) error: No space left on device".into());
        let m = merge(vec![rank(0, 100, 1.0, RunStatus::Complete), bad]);
        let s = m.summary("createmany");
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(
            lines[0],
            "fslab createmany: 2 MPI ranks on 1 host: node1 (2 ranks)"
        );
        assert!(lines[1].starts_with("SUMMARY rate (ops/s)"));
        let row: Vec<&str> = lines[2].split_whitespace().collect();
        assert_eq!(
            row,
            ["create", ":", "150.00", "100.00", "50.00", "75.00", "35.36", "0.59"]
        );
        assert!(lines[3].starts_with("SUMMARY latency (us)"));
        let lat: Vec<&str> = lines[4].split_whitespace().collect();
        assert_eq!(&lat[..4], ["create", "creat", ":", "4"]);
        assert_eq!(
            lines[5],
            "rank 1: failed: mknod(x) error: No space left on device"
        );
    }
}
