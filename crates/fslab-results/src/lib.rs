//! What the results store holds, rendered for people and scripts.
//!
//! - [`show`]: `fslab results list | experiments | show` (text) and the
//!   "made by experiment" account of a run's filesystem.
//! - [`select`]: what `compare` and `report` compare: groups of runs (an
//!   experiment's cells or `--runs` lists) and their metrics, typed.
//! - [`comparison`]: `compare`'s text, Markdown and CSV.
//! - [`page`]: the HTML report's blocks, drawn by `fslab-report`.
//! - [`outcomes`]: `fslab results outcomes`, the README's outcome table.
//! - [`trace`]: `fslab trace show`, a run's block IO in blkparse's format.
//!
//! Everything here reads a [`fslab_store::Store`] and returns text or
//! values; the binary parses arguments, calls these and prints.

pub mod calibration;
pub mod comparison;
pub mod history;
pub mod kernels;
pub mod outcomes;
pub mod overview;
pub mod page;
pub mod select;
pub mod show;
pub mod trace;

use fslab_store::StoreError;

/// Why rendering failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The selection names something that does not exist or cannot be
    /// compared (bad input: the binary exits 2).
    #[error("{0}")]
    Selection(String),
    /// The selection is valid but holds nothing to show (exit 1).
    #[error("{0}")]
    Empty(String),
    /// The store could not be read.
    #[error("{}", store_message(.0))]
    Store(#[from] StoreError),
    /// What the store holds cannot be read back (a damaged trace; exit 1).
    #[error("{0}")]
    Damaged(String),
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
