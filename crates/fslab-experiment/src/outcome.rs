//! What a run produced: one workload's run ([`WorkloadOutcome`]), one
//! repetition of one cell ([`RepOutcome`]) and the whole experiment
//! ([`ExperimentOutcome`]). Which way each number is better is the
//! metric catalogue's (`fslab_model::catalogue::direction_of`).

use fslab_model::{PhaseResult, RunStatus};

use crate::deadline::Ending;
use crate::evidence::Evidence;

/// What one workload run produced.
#[derive(Debug, Clone, Default)]
pub struct WorkloadOutcome {
    pub run_id: Option<i64>,
    pub status: Option<RunStatus>,
    pub error: Option<String>,
    pub phases: Vec<PhaseResult>,
    /// The tool's own numbers.
    pub metrics: Vec<fslab_model::Metric>,
    /// The signal that killed the workload, if one did.
    pub signal: Option<i32>,
    /// What the workload said on stderr (not progress lines).
    pub stderr: String,
    /// What the probes beside the workload recorded, for its run.
    pub probe_points: Vec<fslab_model::ProbePoint>,
    pub probe_notes: Vec<fslab_model::ProbeNote>,
    /// The probes' own metrics (guest against backend IO).
    pub probe_metrics: Vec<fslab_model::Metric>,
    /// Why it was stopped from outside (a second signal, its time limit).
    pub ended_by: Option<Ending>,
    /// The memory pressure it ran under, if it hit its limit.
    pub pressure: Option<String>,
}

/// One repetition of one cell, as it went.
#[derive(Debug, Clone)]
pub struct RepOutcome {
    pub cell: u32,
    pub repetition: u32,
    pub ok: bool,
    pub error: Option<String>,
    pub run_id: Option<i64>,
    pub phases: Vec<PhaseResult>,
    /// The tool's own numbers.
    pub metrics: Vec<fslab_model::Metric>,
    pub unmount_s: Option<f64>,
    pub remount_s: Option<f64>,
    /// The image's extents on the host after the run.
    pub image_extents: Option<u64>,
    /// What the workload printed (its original's tables, in its form).
    pub output: String,
    /// What its probes give the findings (wait stacks, jbd2 commits).
    pub evidence: Evidence,
    /// The accelerator of the guest it ran in (`kvm`, `tcg`), for a cell
    /// on another kernel.
    pub guest_accel: Option<String>,
}

/// The whole run.
#[derive(Debug, Clone)]
pub struct ExperimentOutcome {
    pub experiment_id: i64,
    pub runs: Vec<RepOutcome>,
    pub interrupted: bool,
    /// Problems met while undoing (normally empty).
    pub teardown_problems: Vec<String>,
    /// With `until_resolved`: how many repetitions it took, or what is
    /// still unresolved.
    pub resolution: Option<String>,
    /// The experiment's stated findings, evaluated.
    pub findings: Vec<fslab_model::FindingResult>,
}

impl ExperimentOutcome {
    /// Each cell's last completed repetition's output: (cell, repetition, text).
    pub fn outputs(&self) -> Vec<(u32, u32, &str)> {
        let mut v: Vec<(u32, u32, &str)> = Vec::new();
        for r in self.runs.iter().filter(|r| r.ok && !r.output.is_empty()) {
            match v.iter_mut().find(|x| x.0 == r.cell) {
                Some(x) if x.1 < r.repetition => *x = (r.cell, r.repetition, &r.output),
                Some(_) => {}
                None => v.push((r.cell, r.repetition, &r.output)),
            }
        }
        v.sort_by_key(|x| x.0);
        v
    }
}
