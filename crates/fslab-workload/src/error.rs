//! Why a workload could not run: the one error type of this crate's public
//! functions. Its [`Error::kind`] is what the binary's exit status and
//! `fslab run` read: bad input (a refused option: 2) or a failure (1).

use std::fmt;

use fslab_model::RecordError;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// One option's value that cannot be run: it names the option, the
    /// value and why (`-t 0: must be at least 1`).
    #[error(transparent)]
    Option(#[from] OptionError),
    /// Options that do not parse (the parser's one line) or do not go
    /// together (`-M and -X exclude each other`).
    #[error("{0}")]
    Options(String),
    /// A workload name no registered workload has.
    #[error(transparent)]
    Unknown(#[from] crate::plugin::UnknownWorkload),
    /// A line of an input file the workload reads (a loadfile, a dataset)
    /// that it cannot use.
    #[error(transparent)]
    Input(#[from] LineError),
    /// What the workload needs before it starts could not be made or read
    /// (its files, its directory, a dataset).
    #[error("{0}")]
    Setup(String),
    /// A file or directory the workload needs could not be made or read.
    #[error("{what}: {source}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
    /// The results store could not record what was measured.
    #[error("results store: {0}")]
    Store(#[from] RecordError),
}

pub use fslab_model::ErrorKind;

impl Error {
    /// Bad input or a failure.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::Option(_) | Error::Options(_) | Error::Input(_) | Error::Unknown(_) => {
                ErrorKind::Usage
            }
            Error::Setup(_) | Error::Io { .. } | Error::Store(_) => ErrorKind::Failed,
        }
    }

    /// Bad input rather than a failure.
    pub fn is_usage(&self) -> bool {
        self.kind() == ErrorKind::Usage
    }

    /// `what` could not be done, for the system's reason `source`.
    pub fn io(what: impl Into<String>, source: std::io::Error) -> Error {
        Error::Io {
            what: what.into(),
            source,
        }
    }
}

/// An option's value that a workload cannot run with.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{option} {value}: {why}")]
pub struct OptionError {
    /// The option as written (`-n`, `--phases`), or a positional's name
    /// (`FMT`).
    pub option: String,
    /// Its value as given.
    pub value: String,
    /// Why it cannot be run.
    pub why: String,
}

/// A line of an input file (dbench's loadfile, compilebench's datasets)
/// that a workload cannot use; line 0 is the file as a whole.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}{}: {why}", if *.line > 0 { format!(":{line}") } else { String::new() })]
pub struct LineError {
    pub file: String,
    pub line: usize,
    pub why: String,
}

/// The error of option `option` given `value`, refused for `why`.
pub fn opt(option: &str, value: impl fmt::Display, why: impl Into<String>) -> Error {
    Error::Option(OptionError {
        option: option.into(),
        value: value.to_string(),
        why: why.into(),
    })
}

/// A workload's result.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_option_error_names_option_value_and_why_and_is_bad_input() {
        let e = opt("-t", 0, "must be at least 1");
        assert_eq!(e.to_string(), "-t 0: must be at least 1");
        assert_eq!(e.kind(), ErrorKind::Usage);
        let Error::Option(o) = &e else {
            panic!("{e:?}")
        };
        assert_eq!((o.option.as_str(), o.value.as_str()), ("-t", "0"));
        let io = Error::io(
            "-D /x: cannot create",
            std::io::Error::from_raw_os_error(13),
        );
        assert_eq!(io.kind(), ErrorKind::Failed);
        assert!(
            std::error::Error::source(&io).is_some(),
            "the system's error"
        );
    }
}
