//! The scheduler: runs every (cell, repetition) of an experiment on a fresh
//! filesystem, records everything, and always tears down what it set up.
//!
//! The workload runs as a child process (`fslab fsmark --json ...`, see
//! [`ProcessExecutor`]): a memory cgroup can then limit exactly the
//! workload, and if the kernel kills it at the limit, this process survives
//! to record why and to clean up. Tests replace the executor and the
//! progress display with fakes.
//!
//! One file a job:
//! - [`scheduler`]: the cells x repetitions, their order, resuming, the
//!   until-resolved loop, the experiment's record and its findings;
//! - [`cell`]: one repetition of one cell, step by step (machine settings,
//!   mkfs and mount, the workload, unmount and detach) under one teardown
//!   guard;
//! - [`executor`]: the workload's runner (a child process), with `child`
//!   reading the messages it sends, and [`progress`], the display;
//! - `until`: which cells run once more (what a run produced is
//!   [`crate::outcome`], below the runner, since the summary reads it);
//! - [`first_pass`]: a cell's first pass over its image (`[first_pass]`);
//! - [`guest`]: a cell on another kernel, in a guest fslab boots for it
//!   ([`guest_job`]: what the guest is handed);
//! - [`hosts`]: a `[cluster]` cell's hosts' own filesystems, and the
//!   check that a shared directory is shared;
//! - [`preflight`](mod@preflight): what is checked before anything is touched;
//! - [`error`]: why a run or a cell stopped, each error keeping its source.

pub mod cell;
mod child;
pub mod error;
pub mod executor;
pub mod first_pass;
pub mod guest;
pub mod guest_job;
pub mod hosts;
pub mod preflight;
pub mod progress;
pub mod scheduler;
mod until;

#[cfg(test)]
mod tests;

/// What a run produced (below the runner: the summary reads it too).
pub use crate::outcome::{self, ExperimentOutcome, RepOutcome, WorkloadOutcome};
pub use error::{CellError, RunError};
pub use executor::{Executor, HostLabsRun, ProcessExecutor, Watch};
pub use preflight::{dry_run, preflight, preflight_as, preflight_mpi, Preflight};
pub use progress::{NoProgress, Progress};
pub use scheduler::{run, Resume, RunConfig};
