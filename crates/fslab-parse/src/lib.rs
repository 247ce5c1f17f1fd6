//! Readers of other benchmarks' output. fslab runs a benchmark program in
//! a cell (`fslab exec`, `kind = "command"`); a [`Parser`] turns what the
//! program printed, or the result file it wrote, into fslab's own record:
//! typed metrics with units, the phases the tool reports (fio's jobs,
//! IO500's phases) and latency histograms (fio's json+ bins).
//!
//! One module a tool, each one [`Parser`], found by name in [`all`]:
//! - [`fio`]: fio's JSON (`--output-format=json` or `json+`);
//! - [`io500`]: the IO500 app's `result.txt` (and [`io500::ini`], IO500's
//!   INI grammar, which `fslab io500md` reads its configuration with);
//! - [`ior`]: IOR's `Summary of all tests` table;
//! - [`mdtest`]: mdtest's `SUMMARY` tables;
//! - [`elbencho`]: elbencho's JSON or CSV result file;
//! - [`pattern`]: named regular expressions with units, for anything else.
//!
//! A metric's source is the tool's name and its name the tool's word, so
//! that a tool fslab re-implements and the tool itself are named alike
//! (`mdtest file creation rate (ops/s)`, `io500 mdtest-easy-write score
//! (kIOPS)`).

pub mod elbencho;
pub mod fio;
pub mod io500;
pub mod ior;
pub mod mdtest;
pub mod pattern;

use std::path::{Path, PathBuf};

use fslab_model::{LatencyHistogram, Metric, PhaseResult};

pub use pattern::{Pattern, PatternError};

/// What a program left for its parser.
#[derive(Debug, Clone, Copy)]
pub struct Output<'a> {
    /// The program and its arguments, as it ran (after any launcher).
    pub argv: &'a [String],
    /// What it printed on its standard output.
    pub stdout: &'a [u8],
    /// What it printed on its standard error (dd prints its rate there).
    pub stderr: &'a [u8],
    /// The directory it ran in: relative paths it names are from here.
    pub dir: &'a Path,
    /// The result file named with `--parse-file`, if any.
    pub file: Option<&'a Path>,
    /// The generic parser's patterns (`--metric`).
    pub patterns: &'a [Pattern],
}

impl Output<'_> {
    /// The program's file name (`fio` for `/usr/bin/fio`).
    pub fn program(&self) -> &str {
        self.argv.first().map_or("", |p| program_name(p))
    }

    /// `path` as the program meant it: from the directory it ran in.
    pub fn path(&self, path: &Path) -> PathBuf {
        self.dir.join(path)
    }

    /// Reads a file the program wrote, `what` naming it in errors.
    pub fn read(&self, parser: &'static str, path: &Path) -> Result<Vec<u8>, ParseError> {
        std::fs::read(self.path(path)).map_err(|e| ParseError {
            parser,
            place: path.display().to_string(),
            message: format!("cannot read it: {e}"),
        })
    }
}

/// What a parser read: the tool's phases (each marked
/// [`PhaseResult::reported`]), its numbers, its latency histograms, the
/// files it read besides the program's output (kept with the run), and
/// remarks.
#[derive(Debug, Default)]
pub struct Parsed {
    pub phases: Vec<PhaseResult>,
    pub metrics: Vec<Metric>,
    /// (phase, operation, histogram): `("rw", "write clat", ...)`.
    pub latency: Vec<(String, String, LatencyHistogram)>,
    /// (name, bytes) of the result files read (`result.txt`).
    pub files: Vec<(String, Vec<u8>)>,
    pub notes: Vec<String>,
}

/// Output a parser cannot read: the parser, where (`stdout line 12`, a
/// file and its line) and what it found there.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{parser} parser: {place}: {message}")]
pub struct ParseError {
    pub parser: &'static str,
    pub place: String,
    pub message: String,
}

impl ParseError {
    /// An error at line `line` (from 1) of `what` (`stdout`, a path).
    pub fn at(parser: &'static str, what: &str, line: usize, message: impl Into<String>) -> Self {
        ParseError {
            parser,
            place: format!("{what} line {line}"),
            message: message.into(),
        }
    }

    /// An error about the whole of `what`.
    pub fn in_(parser: &'static str, what: &str, message: impl Into<String>) -> Self {
        ParseError {
            parser,
            place: what.to_string(),
            message: message.into(),
        }
    }
}

/// A reader of one tool's output.
pub trait Parser: Sync {
    /// Its name, as `--parser` and `parser = "..."` give it, and the source
    /// of the metrics it makes.
    fn name(&self) -> &'static str;
    /// One line on what it reads.
    fn about(&self) -> &'static str;
    /// The programs it is the default parser of (their file names).
    fn programs(&self) -> &'static [&'static str] {
        &[]
    }
    /// What it needs of the program's arguments, checked before anything
    /// runs (fio's `--output-format=json`): one line naming what is
    /// missing. `patterns` are the generic parser's.
    fn check(&self, argv: &[String], patterns: &[Pattern]) -> Result<(), CheckError> {
        no_patterns(self.name(), patterns)?;
        let _ = argv;
        Ok(())
    }
    /// The files it will read that the program writes (elbencho's
    /// `--jsonfile`), relative to the program's directory: none may exist
    /// before the program starts, or what an earlier run left would be read
    /// as this run's.
    fn result_files(&self, argv: &[String]) -> Vec<PathBuf> {
        let _ = argv;
        Vec::new()
    }
    /// Reads the program's output.
    fn parse(&self, out: &Output) -> Result<Parsed, ParseError>;
}

/// `parser` reading what `argv` printed on its standard output alone, as
/// if run in `/` (the parsers' tests).
#[cfg(test)]
pub(crate) fn parse_stdout(
    parser: &dyn Parser,
    argv: &[&str],
    stdout: &[u8],
) -> Result<Parsed, ParseError> {
    let argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
    parser.parse(&Output {
        argv: &argv,
        stdout,
        stderr: b"",
        dir: Path::new("/"),
        file: None,
        patterns: &[],
    })
}

/// The labels of `phase`'s headline metrics, in order (the parsers' tests).
#[cfg(test)]
pub(crate) fn headline_labels(p: &Parsed, phase: &str) -> Vec<String> {
    p.metrics
        .iter()
        .filter(|m| m.phase.as_deref() == Some(phase) && !m.detail)
        .map(|m| m.label())
        .collect()
}

/// What a parser refuses before anything runs ([`Parser::check`]): one
/// line naming what is missing or wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CheckError {
    /// `--metric` given to a parser that reads its tool's own output.
    #[error(
        "--metric {pattern:?}: only the regex parser takes patterns (the {parser} parser reads its tool's own output)"
    )]
    PatternsNotTaken { parser: String, pattern: String },
    /// fio run without JSON output (its `--output-format`).
    #[error(
        "fio --output-format={0}: the fio parser reads fio's JSON: give --output-format=json+ (or json)"
    )]
    FioNotJson(String),
    /// elbencho run without a result file.
    #[error(
        "elbencho writes its results to a file: give --jsonfile {{dir}}/elbencho.json (or --csvfile), or --parse-file"
    )]
    ElbenchoNoFile,
    /// The regex parser without a pattern.
    #[error(
        "the regex parser needs a pattern: --metric 'NAME (UNIT)=REGEX' (metrics = [...] in an experiment)"
    )]
    NoPattern,
    /// Two patterns of one name (`pattern`: the second as written).
    #[error("--metric {pattern:?}: the name {name:?} is given twice")]
    NameTwice { pattern: String, name: String },
}

/// Refuses `--metric` patterns for a parser that does not take them.
pub fn no_patterns(parser: &str, patterns: &[Pattern]) -> Result<(), CheckError> {
    match patterns.first() {
        Some(p) => Err(CheckError::PatternsNotTaken {
            parser: parser.to_string(),
            pattern: p.text().to_string(),
        }),
        None => Ok(()),
    }
}

/// Every parser, in the order `--parser` lists them.
pub fn all() -> &'static [&'static dyn Parser] {
    static ALL: &[&dyn Parser] = &[
        &fio::Fio,
        &io500::Io500,
        &ior::Ior,
        &mdtest::Mdtest,
        &elbencho::Elbencho,
        &pattern::Regex,
    ];
    ALL
}

/// The parser named `name`.
pub fn by_name(name: &str) -> Option<&'static dyn Parser> {
    all().iter().copied().find(|p| p.name() == name)
}

/// Every parser's name, comma-separated (for error messages).
pub fn names() -> String {
    all()
        .iter()
        .map(|p| p.name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The parser a program has by default: the one named after it (`fio`
/// for `/usr/bin/fio`), if any.
pub fn default_for(program: &str) -> Option<&'static dyn Parser> {
    let name = program_name(program);
    all()
        .iter()
        .copied()
        .find(|p| p.name() == name || p.programs().contains(&name))
}

/// A program's file name: `fio` for `/usr/bin/fio`.
pub fn program_name(program: &str) -> &str {
    program.rsplit('/').next().unwrap_or(program)
}

/// The value of option `long` in `argv` (`--name=V` or `--name V`), the
/// last one given.
pub fn option_value<'a>(argv: &'a [String], long: &str) -> Option<&'a str> {
    let mut found = None;
    let mut args = argv.iter().skip(1);
    while let Some(a) = args.next() {
        if let Some(v) = a.strip_prefix(long).and_then(|r| r.strip_prefix('=')) {
            found = Some(v);
        } else if a == long {
            found = args.next().map(String::as_str);
        }
    }
    found
}

/// The 1-based line of byte offset `at` in `text`.
pub fn line_of(text: &[u8], at: usize) -> usize {
    text[..at.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// Names made unique in order: the second `rw` is `rw.1`, the third `rw.2`.
pub fn unique_names(names: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut seen: std::collections::BTreeMap<String, usize> = Default::default();
    names
        .into_iter()
        .map(|n| {
            let k = seen.entry(n.clone()).or_default();
            let out = if *k == 0 { n } else { format!("{n}.{k}") };
            *k += 1;
            out
        })
        .collect()
}

/// A phase the tool reported: `ops` in `elapsed_s` seconds, `bytes` moved.
pub fn reported_phase(name: &str, ops: u64, bytes: u64, elapsed_s: f64) -> PhaseResult {
    PhaseResult {
        bytes,
        complete: true,
        reported: true,
        ..PhaseResult::timed(name, ops, elapsed_s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_program_has_the_parser_named_after_it() {
        assert_eq!(default_for("/usr/bin/fio").unwrap().name(), "fio");
        assert_eq!(default_for("ior").unwrap().name(), "ior");
        assert_eq!(default_for("./io500").unwrap().name(), "io500");
        assert!(default_for("dd").is_none());
        assert!(by_name("nosuch").is_none());
        assert_eq!(names(), "fio, io500, ior, mdtest, elbencho, regex");
    }

    #[test]
    fn options_are_found_in_either_spelling_and_the_last_counts() {
        let argv: Vec<String> = ["fio", "--output-format", "json", "--output-format=json+"]
            .map(String::from)
            .to_vec();
        assert_eq!(option_value(&argv, "--output-format"), Some("json+"));
        assert_eq!(option_value(&argv[..3], "--output-format"), Some("json"));
        assert_eq!(option_value(&argv, "--output"), None);
    }

    #[test]
    fn names_are_made_unique_in_order() {
        let n = unique_names(["rw", "rw", "seq", "rw"].map(String::from));
        assert_eq!(n, ["rw", "rw.1", "seq", "rw.2"]);
    }
}
