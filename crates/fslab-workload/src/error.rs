//! Why a workload could not run: the one error type of this crate's public
//! functions. The binary turns its kinds into exit statuses (options: 2,
//! anything else: 1); `fslab run` into a refused experiment or a failed
//! cell.

use fslab_record::RecordError;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Options that cannot be run; the message names the option and its
    /// bad value (`-t 0: must be at least 1`).
    #[error("{0}")]
    Options(String),
    /// What the workload needs before it starts could not be made or read
    /// (its files, its directory, a dataset).
    #[error("{0}")]
    Setup(String),
    /// The results store could not record what was measured.
    #[error("results store: {0}")]
    Store(#[from] RecordError),
}

impl Error {
    /// Bad input rather than a failure.
    pub fn is_usage(&self) -> bool {
        matches!(self, Error::Options(_))
    }
}

/// A workload's result.
pub type Result<T, E = Error> = std::result::Result<T, E>;
