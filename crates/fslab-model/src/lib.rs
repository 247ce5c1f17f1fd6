//! What an fslab run records, and the [`Recorder`] trait through which
//! workloads report it while they run.
//!
//! Workloads never talk to the database: they call a `Recorder`, so the
//! scheduler and workloads are testable with [`MemRecorder`].

pub mod catalogue;
pub mod cgroup;
mod experiment;
pub mod facts;
pub mod journal;
pub mod json;
mod latency;
pub mod loop_metrics;
mod mem;
pub mod metric;
pub mod mountinfo;
mod probe;
pub mod process;
pub mod protocol;
pub mod table;
pub mod time;
mod types;
pub mod units;

pub use experiment::{
    CellInfo, CellRunInfo, ExperimentInfo, ExperimentRecorder, FindingOutcome, FindingResult,
    GuestFacts, ImageHostFacts, IMAGE_EXTENTS, WARM_UP,
};
pub use facts::{Fact, MachineFacts, PhaseFacts, Pressure};
pub use latency::{BadHistogram, HistogramBin, LatencyHistogram, LatencySummary};
pub use mem::{MemRecorder, SharedMem};
pub use metric::{Better, Direction, Metric, Unit};
pub use probe::{Blob, Monitor, NoMonitor, ProbeNote, ProbePoint, ProgramWatch};
pub use types::*;

/// How an error ends a command, every crate's error sorted by one
/// question: whose fault, and so which exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// Bad input (an option, a file, a selection): exit status 2.
    Usage,
    /// The work failed: exit status 1.
    Failed,
    /// Stopped by SIGINT or SIGTERM: exit status 130.
    Interrupted,
    /// The reader of the output went away (`fslab results list | head -1`):
    /// the output was wanted no further, so the command ends quietly, as
    /// Unix tools do: exit status 0.
    Closed,
}

impl ErrorKind {
    /// The exit status of a command ended by an error of this kind.
    pub fn exit_code(self) -> u8 {
        match self {
            ErrorKind::Usage => 2,
            ErrorKind::Failed => 1,
            ErrorKind::Interrupted => 130,
            ErrorKind::Closed => 0,
        }
    }

    /// The kind of an output error: a closed pipe, else a failure.
    pub fn of_output(e: &std::io::Error) -> ErrorKind {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            ErrorKind::Closed
        } else {
            ErrorKind::Failed
        }
    }
}

/// Failure of a recorder: what it could not keep.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// The database refused the write (its own message).
    #[error("{0}")]
    Storage(String),
    /// A probe's data could not be copied into the store.
    #[error("{what}: {source}")]
    Blob {
        what: String,
        #[source]
        source: std::io::Error,
    },
    /// A write named an experiment the recorder does not have.
    #[error("no experiment {0}")]
    NoSuchExperiment(i64),
}

/// Result of a recorder call.
pub type RecordResult<T> = Result<T, RecordError>;

/// Receives a run's measurements as they are made.
///
/// Implementations must make each call durable before returning (the store
/// commits every call), so a run that dies keeps everything reported so far.
pub trait Recorder {
    /// Starts a run; returns its id.
    fn begin_run(&mut self, info: &RunInfo) -> RecordResult<i64>;
    /// One second of a phase's operation rate.
    fn record_series(&mut self, run: i64, point: &SeriesPoint) -> RecordResult<()>;
    /// A finished (or interrupted) phase.
    fn record_phase(&mut self, run: i64, phase: &PhaseResult) -> RecordResult<()>;
    /// The latency distribution of one operation in one phase.
    fn record_latency(
        &mut self,
        run: i64,
        phase: &str,
        op: &str,
        hist: &LatencyHistogram,
    ) -> RecordResult<()>;
    /// Probe points, all in one transaction.
    fn record_probe_points(&mut self, run: i64, points: &[ProbePoint]) -> RecordResult<()>;
    /// A probe's summary (and its binary data, if any).
    fn record_probe_note(&mut self, run: i64, note: &ProbeNote) -> RecordResult<()>;
    /// The facts of a host the run ran on (see [`facts`]): once per host,
    /// at the run's start (a merged MPI run: every host's).
    fn record_facts(&mut self, run: i64, facts: &MachineFacts) -> RecordResult<()>;
    /// The run's numbers as its tool reports them (see [`Metric`]).
    fn record_metrics(&mut self, run: i64, metrics: &[Metric]) -> RecordResult<()>;
    /// What a program the run started printed, as it wrote it: `stream` is
    /// `stdout`, `stderr` or the name of a result file it wrote.
    fn record_output(&mut self, run: i64, stream: &str, bytes: &[u8]) -> RecordResult<()>;
    /// Ends the run with its final status and, if it failed, why.
    fn finish_run(&mut self, run: i64, status: RunStatus, error: Option<&str>) -> RecordResult<()>;
}
