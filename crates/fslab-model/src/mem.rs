//! An in-memory [`Recorder`], the fake used by tests.

use crate::*;

/// Keeps everything it is given in vectors.
#[derive(Debug, Default)]
pub struct MemRecorder {
    pub runs: Vec<RunInfo>,
    pub series: Vec<SeriesPoint>,
    pub phases: Vec<PhaseResult>,
    pub metrics: Vec<crate::Metric>,
    /// (phase, op, summary)
    pub latencies: Vec<(String, String, LatencySummary)>,
    pub finished: Option<(RunStatus, Option<String>)>,
    pub probe_points: Vec<ProbePoint>,
    pub probe_notes: Vec<ProbeNote>,
    pub experiments: Vec<ExperimentInfo>,
    pub cells: Vec<CellInfo>,
    pub cell_runs: Vec<CellRunInfo>,
    pub experiment_status: Option<RunStatus>,
    pub findings: Vec<FindingResult>,
    pub facts: Vec<MachineFacts>,
    /// (stream, bytes) of what a program the run started printed.
    pub outputs: Vec<(String, Vec<u8>)>,
}

impl ExperimentRecorder for MemRecorder {
    fn record_finding(
        &mut self,
        _experiment: i64,
        seq: u32,
        finding: &FindingResult,
    ) -> RecordResult<()> {
        self.findings.truncate(seq as usize);
        self.findings.push(finding.clone());
        Ok(())
    }
    fn begin_experiment(&mut self, info: &ExperimentInfo) -> RecordResult<i64> {
        self.experiments.push(info.clone());
        Ok(self.experiments.len() as i64)
    }
    fn record_cell(&mut self, _experiment: i64, cell: &CellInfo) -> RecordResult<()> {
        self.cells.push(cell.clone());
        Ok(())
    }
    fn record_cell_run(&mut self, _experiment: i64, run: &CellRunInfo) -> RecordResult<()> {
        self.cell_runs.push(run.clone());
        Ok(())
    }
    fn finish_experiment(&mut self, _experiment: i64, status: RunStatus) -> RecordResult<()> {
        self.experiment_status = Some(status);
        Ok(())
    }
    fn reopen_experiment(&mut self, experiment: i64, _repetitions: u32) -> RecordResult<()> {
        if experiment < 1 || experiment as usize > self.experiments.len() {
            return Err(RecordError::NoSuchExperiment(experiment));
        }
        self.experiment_status = Some(RunStatus::Running);
        Ok(())
    }
}

impl Recorder for MemRecorder {
    fn begin_run(&mut self, info: &RunInfo) -> RecordResult<i64> {
        self.runs.push(info.clone());
        Ok(self.runs.len() as i64)
    }
    fn record_series(&mut self, _run: i64, point: &SeriesPoint) -> RecordResult<()> {
        self.series.push(*point);
        Ok(())
    }
    fn record_phase(&mut self, _run: i64, phase: &PhaseResult) -> RecordResult<()> {
        self.phases.push(phase.clone());
        Ok(())
    }
    fn record_facts(&mut self, _run: i64, facts: &MachineFacts) -> RecordResult<()> {
        self.facts.push(facts.clone());
        Ok(())
    }
    fn record_metrics(&mut self, _run: i64, metrics: &[crate::Metric]) -> RecordResult<()> {
        self.metrics.extend_from_slice(metrics);
        Ok(())
    }
    fn record_output(&mut self, _run: i64, stream: &str, bytes: &[u8]) -> RecordResult<()> {
        self.outputs.retain(|(s, _)| s != stream);
        self.outputs.push((stream.to_string(), bytes.to_vec()));
        Ok(())
    }
    fn record_latency(
        &mut self,
        _run: i64,
        phase: &str,
        op: &str,
        hist: &LatencyHistogram,
    ) -> RecordResult<()> {
        self.latencies
            .push((phase.into(), op.into(), hist.summary()));
        Ok(())
    }
    fn record_probe_points(&mut self, _run: i64, points: &[ProbePoint]) -> RecordResult<()> {
        self.probe_points.extend_from_slice(points);
        Ok(())
    }
    fn record_probe_note(&mut self, _run: i64, note: &ProbeNote) -> RecordResult<()> {
        self.probe_notes.push(note.clone());
        Ok(())
    }
    fn finish_run(
        &mut self,
        _run: i64,
        status: RunStatus,
        error: Option<&str>,
    ) -> RecordResult<()> {
        self.finished = Some((status, error.map(String::from)));
        Ok(())
    }
}

/// A [`MemRecorder`] that a test reads while a run writes to it (from a
/// hook, between two phases): clones share one recorder.
#[derive(Debug, Default, Clone)]
pub struct SharedMem(pub std::rc::Rc<std::cell::RefCell<MemRecorder>>);

impl Recorder for SharedMem {
    fn begin_run(&mut self, info: &RunInfo) -> RecordResult<i64> {
        self.0.borrow_mut().begin_run(info)
    }
    fn record_series(&mut self, run: i64, point: &SeriesPoint) -> RecordResult<()> {
        self.0.borrow_mut().record_series(run, point)
    }
    fn record_phase(&mut self, run: i64, phase: &PhaseResult) -> RecordResult<()> {
        self.0.borrow_mut().record_phase(run, phase)
    }
    fn record_facts(&mut self, run: i64, facts: &MachineFacts) -> RecordResult<()> {
        self.0.borrow_mut().record_facts(run, facts)
    }
    fn record_metrics(&mut self, run: i64, metrics: &[crate::Metric]) -> RecordResult<()> {
        self.0.borrow_mut().record_metrics(run, metrics)
    }
    fn record_output(&mut self, run: i64, stream: &str, bytes: &[u8]) -> RecordResult<()> {
        self.0.borrow_mut().record_output(run, stream, bytes)
    }
    fn record_latency(
        &mut self,
        run: i64,
        phase: &str,
        op: &str,
        hist: &LatencyHistogram,
    ) -> RecordResult<()> {
        self.0.borrow_mut().record_latency(run, phase, op, hist)
    }
    fn record_probe_points(&mut self, run: i64, points: &[ProbePoint]) -> RecordResult<()> {
        self.0.borrow_mut().record_probe_points(run, points)
    }
    fn record_probe_note(&mut self, run: i64, note: &ProbeNote) -> RecordResult<()> {
        self.0.borrow_mut().record_probe_note(run, note)
    }
    fn finish_run(&mut self, run: i64, status: RunStatus, error: Option<&str>) -> RecordResult<()> {
        self.0.borrow_mut().finish_run(run, status, error)
    }
}
