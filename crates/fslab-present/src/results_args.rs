//! `fslab results` and `fslab trace`'s command lines ([`ResultsCommand`],
//! [`TraceCommand`], clap) and what `fslab results` prints for each
//! ([`results_text`]).

use clap::{Subcommand, ValueEnum};
use fslab_store::Store;

use crate::{show, Error};

#[derive(Debug, Subcommand)]
pub enum TraceCommand {
    /// Print a run's block IO completions in blkparse's format
    Show {
        /// Run id (from `fslab results list`)
        id: i64,
        /// Print at most this many lines
        #[arg(long, value_name = "N")]
        limit: Option<usize>,
        /// Only this device's completions, as blkparse names it: MAJOR,MINOR
        /// [default: the filesystem's own device]
        #[arg(long, value_name = "MAJ,MIN", value_parser = parse_dev, conflicts_with = "all_devices")]
        dev: Option<(u32, u32)>,
        /// Every traced device's completions (the filesystem's and the disk under its image)
        #[arg(long)]
        all_devices: bool,
    },
}

/// `MAJOR,MINOR` as blkparse prints a device.
fn parse_dev(s: &str) -> Result<(u32, u32), String> {
    let bad = || format!("{s:?} is not a device as MAJOR,MINOR (for example 7,3)");
    let (maj, min) = s.split_once(',').ok_or_else(bad)?;
    let maj: u32 = maj.trim().parse().map_err(|_| bad())?;
    let min: u32 = min.trim().parse().map_err(|_| bad())?;
    if maj >= 1 << 12 || min >= 1 << 20 {
        return Err(format!(
            "{s:?}: major must be below 4096 and minor below 1048576"
        ));
    }
    Ok((maj, min))
}

#[derive(Debug, Subcommand)]
pub enum ResultsCommand {
    /// One line per recorded run, starting with its id
    List {
        /// Only runs of this workload (fsmark, createmany, tiotest, alloctest, dbench, compilebench)
        #[arg(long, value_name = "KIND")]
        workload: Option<fslab_workload::Kind>,
        /// One JSON document (with fslab_schema) instead of text
        #[arg(long)]
        json: bool,
    },
    /// One line per experiment (`fslab run`), starting with its id, with runs completed
    Experiments,
    /// The findings' outcome tables (as docs/findings.md shows them), from the store: each finding's id, claim, the author's number, fslab's, the rule's verdict and the stand-ins, with the run's date, kernel, scale and repetitions, from the current built-in files
    #[command(
        after_help = "Examples:\n  fslab results outcomes              # each built-in's latest run of its current file, then the latest of each other name\n  fslab results outcomes 12 14        # these experiments"
    )]
    Outcomes {
        /// Experiment ids (from `fslab results experiments`); default: each built-in's latest run of its current file, then the latest of each other name
        ids: Vec<i64>,
    },
    /// Everything recorded for one run
    Show {
        /// Run id (from `fslab results list`)
        id: i64,
    },
    /// What a program a run started printed (fslab exec, kind = "command"), byte for byte
    #[command(
        after_help = "Examples:\n  fslab results output 12             # its stdout\n  fslab results output 12 stderr\n  fslab results output 12 result.txt  # a result file its parser read"
    )]
    Output {
        /// Run id (from `fslab results list`)
        id: i64,
        /// stdout, stderr, or the name of a result file its parser read (`results show` lists them)
        #[arg(default_value = "stdout")]
        stream: String,
    },
    /// One run as JSON or long-format CSV
    Export {
        /// Run id (from `fslab results list`)
        id: i64,
        /// Output format
        #[arg(long, value_enum, default_value_t = ExportFormat::Json)]
        format: ExportFormat,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    Json,
    Csv,
}

/// What `fslab results CMD` prints, read from `store`; `results output`
/// prints bytes, not text: asked for its text, a selection error.
pub fn results_text(store: &Store, cmd: ResultsCommand) -> Result<String, Error> {
    match cmd {
        ResultsCommand::List { workload, json } => {
            if json {
                show::list_json(store, workload.map(|k| k.name()))
            } else {
                show::list(store, workload.map(|k| k.name()))
            }
        }
        ResultsCommand::Experiments => show::experiments(store),
        ResultsCommand::Outcomes { ids } => {
            crate::outcomes::outcomes(store, &ids, fslab_experiment::builtin::BUILTIN)
        }
        ResultsCommand::Show { id } => show::run_text(store, id),
        ResultsCommand::Output { id, stream } => Err(Error::Selection(format!(
            "results output {id} {stream}: a program's output is bytes (the store's output)"
        ))),
        ResultsCommand::Export { id, format } => match format {
            ExportFormat::Json => show::export_json(store, id),
            ExportFormat::Csv => show::export_csv(store, id),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_device_is_major_comma_minor_within_the_kernels_ranges() {
        assert_eq!(parse_dev("7,3"), Ok((7, 3)));
        assert_eq!(parse_dev(" 259 , 0 "), Ok((259, 0)));
        assert!(parse_dev("7:3")
            .unwrap_err()
            .contains("is not a device as MAJOR,MINOR"));
        assert!(parse_dev("4096,0")
            .unwrap_err()
            .contains("major must be below 4096"));
        assert!(parse_dev("7,1048576").is_err());
    }
}
