//! The child protocol, both ways, each a type both ends use, defined once:
//! what `fslab run` hands a workload child ([`ChildSpec`], serialized once
//! as the one argument of `fslab job JSON`), and what the child tells it,
//! one message per line on its stderr ([`ChildMessage`]).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::{PhaseResult, RunStatus};

/// A workload's process as `fslab run` starts it: the typed job (`J`, a
/// workload with its options) and the [`Harness`] around it. Built once by
/// the plan, serialized once for `fslab job JSON`, read back once there.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChildSpec<J> {
    pub job: J,
    pub harness: Harness,
}

/// What runs around a workload in its process, beside its own options:
/// what its report looks like and where its text goes, the probes in its
/// process, the caches dropped, and what `fslab run` needs of a child (the
/// cgroup it joins, dying with its parent, progress messages, phase acks).
/// A person's command makes one from what they typed (`--json`,
/// `--probes`, `--drop-caches`); `fslab run` makes one per cell.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Harness {
    /// The command line recorded with the run and printed by tools that
    /// print theirs (fs_mark, mdtest): what was typed, or for a cell its
    /// job rendered for display, never the harness's own settings.
    pub command_line: Vec<String>,
    /// A JSON report on stdout instead of the tool's text.
    pub json: bool,
    /// The probes run in the workload's process, as `--probes` takes them.
    pub probes: String,
    pub drop_caches: DropCaches,
    /// The memory cgroup the process joins before it starts.
    pub cgroup: Option<PathBuf>,
    /// Where the tool's text goes (also with `json`).
    pub text_to: Option<PathBuf>,
    /// Where the run's document goes once it is recorded (`--output FILE`:
    /// CSV when FILE ends in `.csv`, else JSON), the text still on stdout.
    #[serde(default)]
    pub output: Option<PathBuf>,
    /// Die when the parent dies (a killed `fslab run` leaves no workload).
    pub die_with_parent: bool,
    /// Send [`ChildMessage`]s on stderr: the run's id, phases, progress
    /// once a second, how it ended.
    pub progress: bool,
    /// With `progress`: after each phase message, wait for `fslab run` to
    /// answer on stdin (its probes then hold the phase's boundary).
    pub acks: bool,
}

impl Default for Harness {
    /// A run as a person starts it: its text on stdout, the default probes,
    /// nothing of `fslab run`'s.
    fn default() -> Harness {
        Harness {
            command_line: Vec::new(),
            json: false,
            probes: "default".into(),
            drop_caches: DropCaches::Never,
            cgroup: None,
            text_to: None,
            output: None,
            die_with_parent: false,
            progress: false,
            acks: false,
        }
    }
}

impl Harness {
    /// [`Harness::default`] with the command line that started it.
    pub fn typed(command_line: Vec<String>) -> Harness {
        Harness {
            command_line,
            ..Harness::default()
        }
    }

    /// Whether the probes were named (so one that does not apply says why).
    pub fn probes_named(&self) -> bool {
        self.probes != "default"
    }
}

/// When the page cache, dentries and inodes are synced and dropped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DropCaches {
    #[default]
    Never,
    /// Before the run and before each of its phases (`--drop-caches`).
    EachPhase,
    /// Once, before the run (`--drop-caches-once`).
    Once,
}

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
    /// The workload started program `pid` (a command workload's benchmark):
    /// the probes beside it watch that program and its descendants too.
    ProgramStarted { pid: u32 },
    /// Once a second: the phase, its rate over the second, its operations
    /// so far and the count it will make, when known.
    Progress {
        phase: String,
        ops_per_s: f64,
        total: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        expected: Option<u64>,
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
    fn a_child_spec_round_trips_as_json() {
        let spec = ChildSpec {
            job: serde_json::json!({"workload": "fsmark", "options": {"files": 10}}),
            harness: Harness {
                json: true,
                drop_caches: DropCaches::Once,
                cgroup: Some("/sys/fs/cgroup/memory/x".into()),
                acks: true,
                ..Harness::typed(vec!["fsmark".into(), "-n".into(), "10".into()])
            },
        };
        let text = serde_json::to_string(&spec).unwrap();
        assert!(text.contains("\"drop_caches\":\"once\""), "{text}");
        let back: ChildSpec<serde_json::Value> = serde_json::from_str(&text).unwrap();
        assert_eq!(back, spec);
        assert!(!back.harness.probes_named());
    }

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
                expected: Some(1000),
            },
            ChildMessage::Progress {
                phase: "execute".into(),
                ops_per_s: 1234.5,
                total: 99,
                expected: None,
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
