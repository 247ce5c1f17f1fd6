//! What a workload started by `fslab run` tells it, one message per line on
//! its stderr: the type both ends use, defined once.

use serde::{Deserialize, Serialize};

use crate::{PhaseResult, RunStatus};

/// What starts every message line, so the workload's own stderr lines are
/// told apart.
pub const PREFIX: &str = "fslab-msg ";

/// A message from a workload to the `fslab run` that started it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "msg", rename_all = "snake_case")]
pub enum ChildMessage {
    /// The run is in the store under this id.
    RunStarted { run_id: i64 },
    /// A phase starts: `mono_ns` is the CLOCK_MONOTONIC time its series
    /// counts from, so the probes of `fslab run` sample on the workload's
    /// clock.
    PhaseStart {
        index: u32,
        phase: String,
        mono_ns: u64,
    },
    /// The phase's operations are done.
    PhaseEnd { index: u32, phase: String },
    /// Once a second: the phase, its rate over the second and its total.
    Progress {
        phase: String,
        ops_per_s: f64,
        total: u64,
    },
    /// The run ended.
    Finished {
        run_id: Option<i64>,
        status: RunStatus,
        error: Option<String>,
        phases: Vec<PhaseResult>,
        /// The tool's own numbers.
        #[serde(default)]
        metrics: Vec<crate::Metric>,
    },
}

impl ChildMessage {
    /// The message as one stderr line (without the newline).
    pub fn line(&self) -> String {
        format!(
            "{PREFIX}{}",
            serde_json::to_string(self).unwrap_or_default()
        )
    }

    /// The message of a stderr line, if the line is one.
    pub fn parse(line: &str) -> Option<ChildMessage> {
        serde_json::from_str(line.strip_prefix(PREFIX)?).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_round_trip_as_lines() {
        for m in [
            ChildMessage::RunStarted { run_id: 7 },
            ChildMessage::PhaseStart {
                index: 1,
                phase: "create".into(),
                mono_ns: 123_456_789,
            },
            ChildMessage::PhaseEnd {
                index: 1,
                phase: "create".into(),
            },
            ChildMessage::Progress {
                phase: "create".into(),
                ops_per_s: 1234.5,
                total: 99,
            },
            ChildMessage::Finished {
                run_id: Some(7),
                status: RunStatus::Interrupted,
                error: None,
                phases: vec![],
                metrics: vec![],
            },
        ] {
            let l = m.line();
            assert!(l.starts_with(PREFIX) && !l.contains('\n'));
            assert_eq!(ChildMessage::parse(&l), Some(m));
        }
        assert_eq!(ChildMessage::parse("fslab: an ordinary line"), None);
    }
}
