//! The messages a workload child sends on its stderr ([`ChildMessage`]):
//! each phase boundary is passed to the probes beside it and answered,
//! progress goes to the display, the end message fills its outcome, and
//! anything else is what it said.

use fslab_model::protocol::ChildMessage;

use super::progress::Progress;
use crate::outcome::WorkloadOutcome;

/// What `fslab run` keeps beside a running workload: its probes, the pipe
/// it answers phase messages on, and what the workload said.
pub(super) struct Beside {
    pub(super) probes: Option<fslab_probe::ProbeSet>,
    pub(super) acks: Option<std::process::ChildStdin>,
    pub(super) said: Vec<String>,
}

impl Beside {
    /// One stderr line of the workload: a message, or something it said.
    pub(super) fn handle(
        &mut self,
        line: String,
        out: &mut WorkloadOutcome,
        progress: &mut dyn Progress,
    ) {
        match ChildMessage::parse(&line) {
            Some(ChildMessage::PhaseStart {
                index,
                phase,
                mono_ns,
            }) => {
                if let Some(p) = self.probes.as_mut() {
                    use fslab_model::Monitor;
                    p.phase_start(index, &phase, fslab_probe::instant_of_mono(mono_ns));
                }
                ack(&mut self.acks);
            }
            Some(ChildMessage::PhaseEnd { index, phase }) => {
                if let Some(p) = self.probes.as_mut() {
                    use fslab_model::Monitor;
                    out.probe_notes.extend(p.phase_end(index, &phase));
                    out.probe_points.extend(p.drain());
                    out.probe_metrics.extend(p.metrics());
                }
                ack(&mut self.acks);
            }
            Some(ChildMessage::ProgramStarted { pid }) => {
                if let Some(p) = self.probes.as_mut() {
                    use fslab_model::Monitor;
                    if let Some(watch) = p.program_watch() {
                        watch(pid);
                    }
                }
            }
            Some(ChildMessage::Progress {
                phase,
                ops_per_s,
                total,
                expected,
            }) => progress.rate(&phase, ops_per_s, total, expected),
            Some(ChildMessage::RunStarted { run_id }) => out.run_id = Some(run_id),
            // Under MPI every rank ends with one; rank 0's names the run.
            Some(ChildMessage::Finished {
                run_id,
                status,
                error,
                phases,
                metrics,
            }) if run_id.is_some() || out.status.is_none() => {
                out.run_id = run_id.or(out.run_id);
                out.status = Some(status);
                out.error = error;
                out.phases = phases;
                out.metrics = metrics;
            }
            Some(_) => {}
            None => self.said.push(line),
        }
    }
}

/// Answers a workload's phase message (see `--phase-acks`); a workload that
/// is gone is not waited for.
fn ack(to: &mut Option<std::process::ChildStdin>) {
    use std::io::Write;
    if let Some(w) = to.as_mut() {
        if w.write_all(b"ok\n").and_then(|_| w.flush()).is_err() {
            *to = None;
        }
    }
}
