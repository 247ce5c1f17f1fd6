//! fslab's presentation: what the results store holds and what an
//! analysis (`fslab_analysis`) says, rendered for people and scripts.
//!
//! - [`export`]: the analysis in each format `fslab compare --format` takes
//!   (text, markdown, csv, json, html), one [`export::Exporter`] a file,
//!   registered;
//! - [`headline`]: how a difference is said: each comparison's one-line
//!   headline, a change from the baseline (absolute from near zero);
//! - [`format`]: `--format text|json|csv|markdown` for every command that
//!   prints results, and [`format::Sheet`], a table in each;
//! - [`comparison`]: a comparison's cells, as every format prints them;
//! - [`report`]: `fslab report`'s self-contained HTML page: its blocks,
//!   charts (SVG) and IO movie, from an analysis and the store;
//! - [`show`]: `fslab results list | experiments | show | export` and the
//!   "made by experiment" account of a run's filesystem;
//! - [`run_export`]: one run in each format, with its histograms' bins and
//!   the percentiles asked for;
//! - [`run`]: what `fslab run` shows: its progress, its summary, its end;
//! - [`history`]: `fslab history`'s text;
//! - [`outcomes`]: `fslab results outcomes`, docs/findings.md's outcome table;
//! - [`output`]: `--output FILE` and `--format`, and a run's kept program output;
//! - [`trace`]: `fslab trace show`, a run's block IO in blkparse's format.
//!
//! Everything here returns text or values; the binary parses arguments,
//! calls these and prints.

pub mod comparison;
pub mod export;
pub mod format;
pub mod headline;
pub mod history;
pub mod man;
pub mod outcomes;
pub mod output;
pub mod report;
pub mod results_args;
pub mod run;
pub mod run_export;
pub mod select_args;
pub mod show;
pub mod trace;

use fslab_store::StoreError;

/// Why rendering failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The analysis could not be made (a bad selection, nothing to
    /// compare, the store).
    #[error(transparent)]
    Analysis(#[from] fslab_analysis::Error),
    /// What is asked for is not there (a run without a trace, a device it
    /// did not trace: bad input, exit 2).
    #[error("{0}")]
    Selection(String),
    /// Nothing to show (exit 1).
    #[error("{0}")]
    Empty(String),
    /// What the store holds cannot be read back (a damaged trace; exit 1).
    #[error("{0}")]
    Damaged(String),
}

impl From<StoreError> for Error {
    fn from(e: StoreError) -> Error {
        Error::Analysis(e.into())
    }
}

impl Error {
    /// Bad input rather than a failure: a selection that names nothing, or
    /// a run or experiment id the store does not have.
    pub fn is_usage(&self) -> bool {
        match self {
            Error::Analysis(e) => e.is_usage(),
            Error::Selection(_) => true,
            Error::Empty(_) | Error::Damaged(_) => false,
        }
    }
}

pub type Result<T> = std::result::Result<T, Error>;
