//! Why a workload command did not end well, and its exit status: bad
//! input 2, a failure 1, a signal 130.

use fslab_model::ErrorKind;
use fslab_store::StoreError;

/// How a workload's process ended other than well. Its message is the
/// command's one line (the binary prints it after `fslab: `); an
/// interrupted run has said what it kept already.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The workload refused its options (exit 2) or failed (exit 1).
    #[error("{name}: {source}")]
    Workload {
        name: String,
        #[source]
        source: fslab_workload::Error,
    },
    /// The `--probes` list does not parse.
    #[error("{name}: {source}")]
    Probes {
        name: String,
        #[source]
        source: fslab_probe::UnknownProbe,
    },
    /// `--output FILE` names a file in a missing directory.
    #[error("{name}: --output {}: no such directory {}", .file.display(), .dir.display())]
    OutputFile {
        name: String,
        file: std::path::PathBuf,
        dir: std::path::PathBuf,
    },
    /// This process could not join the MPI ranks it was started as.
    #[error("{name}: {source}")]
    Cluster {
        name: String,
        #[source]
        source: fslab_cluster::JoinError,
    },
    /// The results store cannot be opened.
    #[error("{}", store_line(.0))]
    Store(#[source] StoreError),
    /// The merged run of the ranks could not be kept.
    #[error("{name}: results store: {source}")]
    Record {
        name: String,
        #[source]
        source: fslab_model::RecordError,
    },
    /// The run kept could not be read back (for `--json`).
    #[error("{name}: results store: {source}")]
    ReadBack {
        name: String,
        #[source]
        source: StoreError,
    },
    /// Rank 0 could not open the store, so no rank started.
    #[error("{name}: rank 0 could not open the results store")]
    RankStore { name: String },
    /// `--die-with-parent`: the `fslab run` that started it is gone.
    #[error("{name}: the parent fslab run is gone")]
    ParentGone { name: String },
    /// A file or directory it needs (`--text-to`, a rank's directory).
    #[error("{name}: {what}: {source}")]
    Io {
        name: String,
        what: String,
        #[source]
        source: std::io::Error,
    },
    /// What the kernel was asked around the run (`--cgroup`,
    /// `--drop-caches`).
    #[error("{name}: {what}: {source}")]
    Machine {
        name: String,
        what: &'static str,
        #[source]
        source: fslab_lab::LabError,
    },
    #[error("cannot install signal handlers: {0}")]
    Signals(#[source] std::io::Error),
    /// The run started and stopped on an error; what it measured is kept.
    #[error("{name}: stopped: {error}; what was measured is printed above and kept as {kept}")]
    Stopped {
        name: String,
        error: String,
        kept: String,
    },
    /// `fslab rescue DIR`: DIR is not a spool of ranks (exit 2).
    #[error("rescue: {0}")]
    Spool(#[source] fslab_cluster::rescue::RescueError),
    /// Stopped by SIGINT or SIGTERM (said on stderr already).
    #[error("{name}: interrupted")]
    Interrupted { name: String },
    /// Its report could not be written on stdout (a reader that went
    /// away: `fslab fsmark --json ... | head -1`).
    #[error("{name}: writing its report: {source}")]
    Output {
        name: String,
        #[source]
        source: std::io::Error,
    },
}

fn store_line(e: &StoreError) -> String {
    if store_is_usage(e) {
        e.to_string()
    } else {
        format!("results store {e}")
    }
}

fn store_is_usage(e: &StoreError) -> bool {
    matches!(e, StoreError::Inconsistent { .. })
}

impl Error {
    /// Bad input, a failure, a signal, or a reader gone.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::Workload { source, .. } => source.kind(),
            Error::Store(e) if store_is_usage(e) => ErrorKind::Usage,
            Error::Probes { .. } | Error::Cluster { .. } => ErrorKind::Usage,
            Error::Spool(fslab_cluster::rescue::RescueError::NotASpool { .. }) => ErrorKind::Usage,
            Error::Interrupted { .. } => ErrorKind::Interrupted,
            Error::Output { source, .. } => ErrorKind::of_output(source),
            Error::OutputFile { .. } => ErrorKind::Usage,
            _ => ErrorKind::Failed,
        }
    }

    /// The exit status: 2 for bad input, 130 for a signal, 0 for a reader
    /// gone, else 1 ([`ErrorKind::exit_code`]).
    pub fn exit_code(&self) -> u8 {
        self.kind().exit_code()
    }

    /// Bad input rather than a failure.
    pub fn is_usage(&self) -> bool {
        self.kind() == ErrorKind::Usage
    }

    /// Whether the command has said everything already (a signal's line).
    pub fn is_interrupted(&self) -> bool {
        matches!(self, Error::Interrupted { .. })
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_options_exit_2_failures_1_and_signals_130() {
        let usage = Error::Workload {
            name: "w".into(),
            source: fslab_workload::Error::Options("-n 0: must be at least 1".into()),
        };
        assert_eq!(usage.exit_code(), 2);
        assert_eq!(usage.to_string(), "w: -n 0: must be at least 1");
        let failed = Error::Workload {
            name: "w".into(),
            source: fslab_workload::Error::Setup("no room".into()),
        };
        assert_eq!(failed.exit_code(), 1);
        let stopped = Error::Stopped {
            name: "w".into(),
            error: "ENOSPC".into(),
            kept: "run 3 in /x".into(),
        };
        assert_eq!(stopped.exit_code(), 1);
        assert_eq!(
            Error::Probes {
                name: "w".into(),
                source: fslab_probe::UnknownProbe { name: "bad".into() }
            }
            .exit_code(),
            2
        );
        let i = Error::Interrupted { name: "w".into() };
        assert_eq!((i.exit_code(), i.is_interrupted()), (130, true));
        let missing = Error::Store(StoreError::Missing("/x".into()));
        assert_eq!(missing.exit_code(), 1);
        assert!(
            missing.to_string().starts_with("results store "),
            "{missing}"
        );
    }
}
