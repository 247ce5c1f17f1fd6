//! Why a probe could not start or finish: the kind, and a message naming
//! what and why. A probe that fails says so in an "unavailable" note (and
//! on stderr when it applies or was named); the workload goes on.

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProbeError {
    /// There is nothing to trace: the workload's filesystem has no block
    /// device (tmpfs, a directory on the host's filesystem).
    #[error("the workload's filesystem has no block device")]
    NoDevice,
    /// The kernel's trace instance could not be made or set: no tracefs,
    /// not root, an event or a filter this kernel lacks.
    #[error("{0}")]
    Tracefs(String),
    /// The block trace's spool could not be written or read back.
    #[error("trace spool: {0}")]
    Spool(String),
    /// perf could not record or report.
    #[error("{0}")]
    Perf(String),
    /// The memory cgroup could not be found.
    #[error(transparent)]
    Cgroup(#[from] fslab_model::cgroup::CgroupError),
    /// A directory's htree could not be read.
    #[error(transparent)]
    Htree(#[from] fslab_layout::htree::HtreeError),
}
