//! What one rank measured, kept whole so rank 0 can merge it.

use fslab_model::{
    LatencyHistogram, LoopRow, PhaseResult, ProbeNote, ProbePoint, RecordResult, Recorder, RunInfo,
    RunStatus, SeriesPoint,
};
use serde::{Deserialize, Serialize};

/// A latency histogram of one (phase, call), in HDR's V2 form.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RankHist {
    pub phase: String,
    pub op: String,
    pub v2: Vec<u8>,
    pub min_ns: u64,
    pub sum_ns: u128,
    pub max_ns: u64,
}

impl RankHist {
    pub fn of(phase: &str, op: &str, h: &LatencyHistogram) -> Self {
        RankHist {
            phase: phase.into(),
            op: op.into(),
            v2: h.to_v2_bytes(),
            min_ns: h.min_ns(),
            sum_ns: h.sum_ns(),
            max_ns: h.max_ns(),
        }
    }

    pub fn histogram(&self) -> Result<LatencyHistogram, fslab_model::BadHistogram> {
        LatencyHistogram::from_v2_bytes(&self.v2, self.min_ns, self.sum_ns, self.max_ns)
    }
}

/// Everything one rank's run recorded.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RankRun {
    pub rank: usize,
    pub host: String,
    pub info: Option<RunInfo>,
    pub loops: Vec<LoopRow>,
    pub series: Vec<SeriesPoint>,
    pub phases: Vec<PhaseResult>,
    pub latency: Vec<RankHist>,
    pub probe_points: Vec<ProbePoint>,
    /// Kept by rank 0 only (it alone runs the probes); their binary parts
    /// do not travel.
    pub probe_notes: Vec<ProbeNote>,
    pub status: RunStatus,
    pub error: Option<String>,
    /// This rank's timeline on its own host's clock: each phase's span, as
    /// the rank recorded it; put onto rank 0's clock by the merge.
    #[serde(default)]
    pub spans: Vec<Span>,
    /// The numbers this rank recorded as the run's (its probes', or a
    /// workload's summary of all ranks, as mdtest's); see
    /// [`crate::merge`] for which the merged run keeps.
    #[serde(default)]
    pub metrics: Vec<fslab_model::Metric>,
    /// What the probes of this rank's host recorded, on the one rank of
    /// each host that runs them (its first); empty on the others. Kept
    /// apart from [`RankRun::metrics`] so that every host's probes reach
    /// the merged run (see [`crate::HostFacts::probes`]).
    #[serde(default)]
    pub probe_metrics: Vec<fslab_model::Metric>,
    /// This rank's host's facts (see [`fslab_model::facts`]): every rank
    /// reads them, the merged run keeps each host's first rank's.
    #[serde(default)]
    pub facts: Option<fslab_model::MachineFacts>,
    /// What a program this rank ran printed (`fslab exec` on each rank):
    /// (stream, bytes); the merged run keeps rank 0's.
    #[serde(default)]
    pub outputs: Vec<(String, Vec<u8>)>,
}

/// A named stretch of a rank's run: Unix times in nanoseconds.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Span {
    pub name: String,
    pub start_ns: i64,
    pub end_ns: i64,
}

impl RankRun {
    pub fn new(rank: usize, host: &str) -> Self {
        RankRun {
            rank,
            host: host.into(),
            info: None,
            loops: Vec::new(),
            series: Vec::new(),
            phases: Vec::new(),
            latency: Vec::new(),
            probe_points: Vec::new(),
            probe_notes: Vec::new(),
            status: RunStatus::Running,
            error: None,
            spans: Vec::new(),
            metrics: Vec::new(),
            probe_metrics: Vec::new(),
            facts: None,
            outputs: Vec::new(),
        }
    }

    /// Moves the metrics of the named probes out of [`RankRun::metrics`]
    /// into [`RankRun::probe_metrics`]: they are this host's, not the
    /// rank's (a workload's own metrics have the workload as source).
    pub fn set_probes_apart(&mut self, probes: &[&str]) {
        let (theirs, own): (Vec<_>, Vec<_>) = std::mem::take(&mut self.metrics)
            .into_iter()
            .partition(|m| probes.contains(&m.source.as_str()));
        self.metrics = own;
        self.probe_metrics.extend(theirs);
    }

    /// A rank whose workload could not start at all.
    pub fn failed(rank: usize, host: &str, error: String) -> Self {
        RankRun {
            status: RunStatus::Failed,
            error: Some(error),
            ..RankRun::new(rank, host)
        }
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("a rank's run always serialises")
    }

    pub fn from_bytes(b: &[u8]) -> Result<Self, UnreadableRun> {
        serde_json::from_slice(b).map_err(UnreadableRun)
    }
}

/// A rank's results that are not a serialized [`RankRun`].
#[derive(Debug, thiserror::Error)]
#[error("a rank's results could not be read: {0}")]
pub struct UnreadableRun(#[source] pub serde_json::Error);

/// A [`Recorder`] that keeps one rank's run in memory.
pub struct RankRecorder {
    pub run: RankRun,
}

impl RankRecorder {
    pub fn new(rank: usize, host: &str) -> Self {
        RankRecorder {
            run: RankRun::new(rank, host),
        }
    }
}

impl Recorder for RankRecorder {
    fn begin_run(&mut self, info: &RunInfo) -> RecordResult<i64> {
        self.run.info = Some(info.clone());
        Ok(self.run.rank as i64 + 1)
    }
    fn record_series(&mut self, _run: i64, point: &SeriesPoint) -> RecordResult<()> {
        self.run.series.push(*point);
        Ok(())
    }
    fn record_phase(&mut self, _run: i64, phase: &PhaseResult) -> RecordResult<()> {
        // The phase has just ended: its start is its end less its time.
        let end_ns = crate::clock::now_ns();
        self.run.spans.push(Span {
            name: phase.phase.clone(),
            start_ns: end_ns - (phase.elapsed_s * 1e9) as i64,
            end_ns,
        });
        self.run.phases.push(phase.clone());
        Ok(())
    }
    fn record_latency(
        &mut self,
        _run: i64,
        phase: &str,
        op: &str,
        hist: &LatencyHistogram,
    ) -> RecordResult<()> {
        self.run.latency.push(RankHist::of(phase, op, hist));
        Ok(())
    }
    fn record_probe_points(&mut self, _run: i64, points: &[ProbePoint]) -> RecordResult<()> {
        self.run.probe_points.extend_from_slice(points);
        Ok(())
    }
    fn record_probe_note(&mut self, _run: i64, note: &ProbeNote) -> RecordResult<()> {
        self.run.probe_notes.push(note.clone());
        Ok(())
    }
    fn record_facts(&mut self, _run: i64, facts: &fslab_model::MachineFacts) -> RecordResult<()> {
        self.run.facts = Some(facts.clone());
        Ok(())
    }
    /// A rank's own tool numbers (one rank's Throughput, say) do not add up
    /// into the merged run's; the merged run keeps its phases, latency and
    /// per-rank rates instead.
    fn record_metrics(&mut self, _run: i64, metrics: &[fslab_model::Metric]) -> RecordResult<()> {
        // A workload's loop rows come as metrics; the ranks' are added up
        // loop by loop (`merge`).
        self.run.loops.extend(LoopRow::from_metrics(metrics));
        self.run.metrics.extend_from_slice(metrics);
        Ok(())
    }
    fn record_output(&mut self, _run: i64, stream: &str, bytes: &[u8]) -> RecordResult<()> {
        self.run.outputs.retain(|(s, _)| s != stream);
        self.run.outputs.push((stream.to_string(), bytes.to_vec()));
        Ok(())
    }
    fn finish_run(
        &mut self,
        _run: i64,
        status: RunStatus,
        error: Option<&str>,
    ) -> RecordResult<()> {
        self.run.status = status;
        self.run.error = error.map(String::from);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rank_run_travels_as_bytes_with_its_histograms() {
        let mut r = RankRecorder::new(2, "node7");
        let mut h = LatencyHistogram::new();
        for ns in [1_000, 2_000, 3_000_000] {
            h.record(ns);
        }
        r.record_latency(1, "create", "creat", &h).unwrap();
        r.record_phase(
            1,
            &PhaseResult {
                phase: "create".into(),
                ops: 3,
                ..Default::default()
            },
        )
        .unwrap();
        r.finish_run(1, RunStatus::Complete, None).unwrap();
        let back = RankRun::from_bytes(&r.run.to_bytes()).unwrap();
        assert_eq!(back, r.run);
        let h2 = back.latency[0].histogram().unwrap();
        assert_eq!(h2.count(), 3);
        assert_eq!((h2.min_ns(), h2.max_ns()), (1_000, 3_000_000));
        assert!(RankRun::from_bytes(b"{")
            .unwrap_err()
            .to_string()
            .contains("could not be read"));
    }
}
