//! Why a run of an experiment, or one of its cells, stopped: typed, each
//! keeping the error it came from as its source. The words are the
//! one-liners `fslab run` has always printed.

use fslab_lab::LabError;
use fslab_model::journal::JournalError;
use fslab_model::RecordError;

/// Why `fslab run` could not carry on with the experiment (a failed cell is
/// recorded and the others go on: that is not a [`RunError`]). The binary
/// exits 1 on each: none is bad input, which the preflight refuses first.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The results store refused a record of the experiment.
    #[error("results store: {0}")]
    Store(#[from] RecordError),
    /// The image host could not be measured (does the image fit?) or made.
    #[error("{0}")]
    ImageHost(#[from] LabError),
}

/// Why one repetition of one cell failed. It is recorded with the cell
/// (as its message) and the run goes on with the next.
#[derive(Debug, thiserror::Error)]
pub enum CellError {
    /// A machine setting, mkfs, mount, the check that the workload's
    /// directory is on the new filesystem, or their undoing failed.
    #[error("{0}")]
    Lab(#[from] LabError),
    /// The state journal could not record a resource before it was made.
    #[error("{0}")]
    Journal(#[from] JournalError),
    /// The workload's directory could not be made.
    #[error("{0}")]
    Workdir(#[source] std::io::Error),
    /// A sysctl the cell sets was left changed by a killed run, which
    /// `fslab cleanup` restores.
    #[error(
        "sysctl {name} was left changed by a killed fslab run (pid {pid}): \
         run `fslab cleanup` first"
    )]
    LeftChanged { name: String, pid: u32 },
    /// A cluster's hosts could not make their filesystems (the hosts named).
    #[error(transparent)]
    Hosts(#[from] super::hosts::HostsError),
    /// A cell's guest could not be had or started (its kernel, QEMU).
    #[error(transparent)]
    Guest(#[from] fslab_guest::GuestError),
    /// The cell's job could not be made from the experiment's arguments
    /// (which were checked when the experiment was read).
    #[error("workload: {0}")]
    Job(#[from] fslab_workload::Error),
    /// The workload did not complete: what it (or the process that watched
    /// it) said, as one line. Its source is in another process.
    #[error("{0}")]
    Workload(String),
}
