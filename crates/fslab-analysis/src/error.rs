//! Why an analysis could not be made.

use fslab_store::StoreError;

/// Why an analysis could not be made.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The selection names something that does not exist or cannot be
    /// compared (bad input: the binary exits 2).
    #[error("{0}")]
    Selection(String),
    /// The selection is valid but holds nothing to compare (exit 1).
    #[error("{0}")]
    Empty(String),
    /// The store could not be read.
    #[error("{}", store_message(.0))]
    Store(#[from] StoreError),
}

impl Error {
    /// Bad input rather than a failure: a selection that names nothing, or
    /// a run or experiment id the store does not have.
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            Error::Selection(_)
                | Error::Store(StoreError::NoSuchRun(_) | StoreError::NoSuchExperiment(_))
        )
    }
}

fn store_message(e: &StoreError) -> String {
    match e {
        StoreError::NoSuchRun(_) | StoreError::NoSuchExperiment(_) => e.to_string(),
        e => format!("results store {e}"),
    }
}

pub type Result<T> = std::result::Result<T, Error>;
