//! Every difference explained by its instruments (issue 34): pure
//! functions from what runs recorded to what a filesystem developer asks
//! before believing a number.
//!
//! - [`confound`]: the facts in which two machines differ, the CPU clock of
//!   each phase, and when a clock that moved confounds a verdict.
//! - [`waits`]: wait classes (journal, directory-block read, page writeback,
//!   memory reclaim, lock, device queue) matched within one blocked stack,
//!   caller above callee; extendable from an experiment file.
//! - [`evidence`]: one run's instruments ([`RunEvidence`]), pooled per
//!   phase over a group's runs ([`PhaseEvidence`]).
//! - [`limiter`]: the rule table that names a phase's limiter with its
//!   evidence.
//! - [`profile`]: differential profiles (perf diff's delta and ratio), a
//!   symbol's share of a phase.
//! - [`shares`]: each operation's share of a mixed workload's time.
//! - [`explain`]: all of it for a comparison of groups ([`Explanation`]);
//!   [`explainer`]: said as the analysis' explanations ([`Instruments`],
//!   the `fslab_analysis::Explainer` compare, the report and `fslab run`'s
//!   summary are given).
//!
//! Nothing here reads the machine, and only [`stored`] reads the store:
//! the rest are pure functions over typed values, tested with fakes.

pub mod confound;
pub mod evidence;
pub mod explain;
pub mod explainer;
pub mod limiter;
pub mod profile;
pub mod shares;
pub mod stored;
pub mod waits;

pub use evidence::{OpTime, PhaseEvidence, RunEvidence};
pub use explain::{explain, Explanation, Group, Side};
pub use explainer::{Instruments, EXPLAINERS};
pub use limiter::{judge, Limit, Limiter};
pub use waits::{WaitClassEntry, WaitClassError, WaitTable};
