//! `fslab results` and `fslab trace`'s command lines ([`ResultsCommand`],
//! [`TraceCommand`], clap); the binary prints each in `--format` and
//! `--output` ([`crate::select_args::OutputArgs`]).

use clap::Subcommand;

use crate::select_args::{OutputArgs, ValueError};

#[derive(Debug, Subcommand)]
pub enum TraceCommand {
    /// Print a run's block IO completions in blkparse's format
    Show {
        /// Run id (from `fslab results list`), `latest` or `latest~N`
        id: String,
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
fn parse_dev(s: &str) -> Result<(u32, u32), ValueError> {
    let bad = || ValueError::Device(s.to_string());
    let (maj, min) = s.split_once(',').ok_or_else(bad)?;
    let maj: u32 = maj.trim().parse().map_err(|_| bad())?;
    let min: u32 = min.trim().parse().map_err(|_| bad())?;
    if maj >= 1 << 12 || min >= 1 << 20 {
        return Err(ValueError::DeviceRange(s.to_string()));
    }
    Ok((maj, min))
}

#[derive(Debug, Subcommand)]
pub enum ResultsCommand {
    /// One line per recorded run, starting with its id (the newest 50; the text fits
    /// 100 columns)
    List {
        /// Only runs of this workload (fsmark, createmany, tiotest, alloctest, dbench, compilebench)
        #[arg(long, value_name = "KIND")]
        workload: Option<fslab_workload::WorkloadRef>,
        /// Only the newest N runs (0: all)
        #[arg(long, value_name = "N", default_value_t = 50)]
        limit: usize,
        /// Every column in full (the text is cut to 100 columns otherwise)
        #[arg(long)]
        wide: bool,
        /// The same as --format json
        #[arg(long, hide = true, conflicts_with = "format")]
        json: bool,
        #[command(flatten)]
        out: OutputArgs,
    },
    /// One line per experiment (`fslab run`), starting with its id, with runs completed
    Experiments {
        #[command(flatten)]
        out: OutputArgs,
    },
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
        /// Run id (from `fslab results list`), `latest` or `latest~N`
        id: String,
        #[command(flatten)]
        out: OutputArgs,
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
    /// One run as JSON (the default) or long-format CSV, every stored histogram's bins
    /// included
    Export {
        /// Run id (from `fslab results list`), `latest` or `latest~N`
        id: String,
        #[command(flatten)]
        out: OutputArgs,
        /// The latency percentiles to export, comma-separated, each above 0 and at most
        /// 100 [default: 50,90,99,99.9]
        #[arg(long, value_name = "P,P,...", value_parser = percentile, value_delimiter = ',')]
        percentiles: Vec<f64>,
    },
}

/// A percentile: above 0 and at most 100.
fn percentile(s: &str) -> Result<f64, ValueError> {
    match s.trim().trim_end_matches('%').parse::<f64>() {
        Ok(p) if p > 0.0 && p <= 100.0 => Ok(p),
        _ => Err(ValueError::Percentile(s.to_string())),
    }
}
