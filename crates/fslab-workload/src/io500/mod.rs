//! `fslab io500md`: IO500's metadata phases (github.com/IO500/io500,
//! src/main.c and src/phase_*.c) on one process or MPI ranks: mdtest-easy
//! and mdtest-hard's write, stat, read and delete phases run through
//! fslab's mdtest ([`crate::mdtest::run_within`]) with IO500's arguments,
//! the timestamp file, and the parallel find over both trees with IO500's
//! `-newer TIMESTAMP -size 3901c -name *01*`, in IO500's order; then the
//! result lines, the MD score (the geometric mean of the phases' kIOPS) and
//! IO500's validity rules, with the stonewall and minimum write times taken
//! from the options (and scaled by `fslab run --scale`).
//!
//! - [`options`]: the options and each phase's mdtest command line;
//! - [`ini`]: IO500's configuration file into the options;
//! - [`files`]: IO500's result files (result_summary.txt, result.txt,
//!   config-orig.ini, config.ini), written as the run goes;
//! - [`find`]: the parallel find;
//! - [`score`]: the result lines, the score and the validity rules;
//! - [`plugin`]: the workload's registration.

pub mod files;
pub mod find;
pub mod ini;
pub mod options;
pub mod plugin;
mod run;
pub mod score;

pub use options::{Io500Args, MdPhase, Step, Tree};
pub use run::{run, Io500Report};

/// One of IO500's phases that `fslab io500md` runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Md(MdPhase),
    /// Rank 0 makes the timestamp file the find's `-newer` compares with.
    Timestamp,
    /// The parallel find over both trees.
    Find,
}

const fn md(tree: Tree, step: Step) -> Phase {
    Phase::Md(MdPhase { tree, step })
}

/// IO500's metadata phases in its order (src/phase-definitions.h, with its
/// ior, mdworkbench and optional phases left out).
pub const PHASES: [Phase; 9] = [
    md(Tree::Easy, Step::Write),
    Phase::Timestamp,
    md(Tree::Hard, Step::Write),
    Phase::Find,
    md(Tree::Easy, Step::Stat),
    md(Tree::Hard, Step::Stat),
    md(Tree::Easy, Step::Delete),
    md(Tree::Hard, Step::Read),
    md(Tree::Hard, Step::Delete),
];

impl Phase {
    /// IO500's name for it.
    pub fn name(self) -> String {
        match self {
            Phase::Md(p) => p.name(),
            Phase::Timestamp => "timestamp".into(),
            Phase::Find => "find".into(),
        }
    }

    /// Its mdtest phase, if it is one.
    pub fn mdtest(self) -> Option<MdPhase> {
        match self {
            Phase::Md(p) => Some(p),
            _ => None,
        }
    }

    /// Whether it counts in the MD score (IO500's `.group = IO500_SCORE_MD`);
    /// the timestamp is a dummy phase.
    pub fn scored(self) -> bool {
        self != Phase::Timestamp
    }

    /// Whether IO500 checks its time against the stonewall and the minimum
    /// write time (`.verify_stonewall = 1`: the write phases).
    pub fn verifies_stonewall(self) -> bool {
        matches!(
            self,
            Phase::Md(MdPhase {
                step: Step::Write,
                ..
            })
        )
    }
}
