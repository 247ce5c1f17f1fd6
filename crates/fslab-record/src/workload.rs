//! Which workload a run or an experiment runs.

use serde::{Deserialize, Serialize};

/// The workloads fslab runs (their command names are their names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WorkloadKind {
    FsMark,
    CreateMany,
    TioTest,
    AllocTest,
    Dbench,
    CompileBench,
}

impl WorkloadKind {
    pub const ALL: [WorkloadKind; 6] = [
        WorkloadKind::FsMark,
        WorkloadKind::CreateMany,
        WorkloadKind::TioTest,
        WorkloadKind::AllocTest,
        WorkloadKind::Dbench,
        WorkloadKind::CompileBench,
    ];

    /// The command's name, as runs record it (`fsmark`, `createmany`, ...).
    pub fn name(self) -> &'static str {
        match self {
            WorkloadKind::FsMark => "fsmark",
            WorkloadKind::CreateMany => "createmany",
            WorkloadKind::TioTest => "tiotest",
            WorkloadKind::AllocTest => "alloctest",
            WorkloadKind::Dbench => "dbench",
            WorkloadKind::CompileBench => "compilebench",
        }
    }

    /// The workload of a recorded name, if fslab has it.
    pub fn of(name: &str) -> Option<WorkloadKind> {
        WorkloadKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// Whether it takes its directories as `-d DIR` options (fsmark,
    /// tiotest), rather than naming its files in its arguments.
    pub fn takes_dirs(self) -> bool {
        matches!(self, WorkloadKind::FsMark | WorkloadKind::TioTest)
    }

    /// Whether the tool prints nothing while `phase` runs, so that on a
    /// terminal fslab shows a count instead: fs_mark's stat and unlink walks
    /// after its loops, and every phase of tiotest and alloctest (whose
    /// originals print only when a phase ends). dbench (a line a second),
    /// createmany (a line every 10 s) and compilebench (a line per
    /// operation) speak for themselves.
    pub fn is_silent_during(self, phase: &str) -> bool {
        match self {
            WorkloadKind::FsMark => matches!(phase, "stat" | "unlink"),
            WorkloadKind::TioTest | WorkloadKind::AllocTest => true,
            WorkloadKind::Dbench | WorkloadKind::CreateMany | WorkloadKind::CompileBench => false,
        }
    }

    /// Every name, comma-separated (for error messages).
    pub fn names() -> String {
        WorkloadKind::ALL.map(WorkloadKind::name).join(", ")
    }
}

impl std::fmt::Display for WorkloadKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for WorkloadKind {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        WorkloadKind::of(s).ok_or_else(|| {
            format!(
                "unknown workload {s:?} (available: {})",
                WorkloadKind::names()
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::WorkloadKind;

    #[test]
    fn names_round_trip_as_serde_writes_them() {
        for k in WorkloadKind::ALL {
            assert_eq!(k.name().parse::<WorkloadKind>(), Ok(k));
            assert_eq!(
                serde_json::to_value(k).unwrap(),
                serde_json::json!(k.name())
            );
        }
        let e = "fsmrak".parse::<WorkloadKind>().unwrap_err();
        assert!(
            e.starts_with("unknown workload \"fsmrak\" (available: fsmark, "),
            "{e}"
        );
    }
}
