//! `fslab compare` and `fslab report`'s command line: which runs they
//! analyse and how verdicts are reached ([`SelectArgs`], one group of
//! arguments for both, clap), as the analysis takes it
//! ([`SelectArgs::choice`]), and compare's format ([`CompareArgs`]).

use clap::{Args, ValueEnum};

/// Which runs `compare` and `report` analyse, and how their verdicts are
/// reached: one group of arguments for both.
#[derive(Debug, Args)]
pub struct SelectArgs {
    /// Experiment id (from `fslab results experiments`); repeat to compare the cells of
    /// several experiments, say the same one on two kernels; default: the most recent
    #[arg(long, value_name = "ID")]
    pub experiment: Vec<i64>,
    /// A group of runs, optionally labelled: `ext4=7,9,11`, `7-12`, `latest~2-latest`
    /// (ids, ranges, `latest`, `latest~N`, comma-separated); repeat for more groups
    /// (instead of an experiment)
    #[arg(long = "runs", value_name = "[LABEL=]IDS")]
    pub runs: Vec<String>,
    /// The group others are compared with: its position (from 0) or its label [default: the first]
    #[arg(long, value_name = "N|LABEL")]
    pub baseline: Option<String>,
    /// The noise threshold in percent: differences smaller than this are "no difference"
    /// [default: a stored A/A calibration that fits, else A/A splits of each cell's runs]
    #[arg(long, value_name = "PCT", value_parser = delta_pct)]
    pub delta: Option<f64>,
    /// How p-values are corrected, every cell and metric together: bh (Benjamini-Hochberg, the
    /// false discovery rate) or holm (the family-wise error rate)
    #[arg(long, value_enum, default_value_t = Correction::Bh)]
    pub correction: Correction,
    /// The error rate the correction holds: a difference is called real when its corrected
    /// p-value is below it
    #[arg(long, value_name = "P", default_value_t = 0.05, value_parser = alpha)]
    pub alpha: f64,
    /// Take the noise threshold from this A/A calibration (the id of the experiment
    /// `fslab run EXPERIMENT --calibrate CELL` made); it must fit the runs compared
    /// [default: the newest that fits each metric, if any; else A/A splits of the runs]
    #[arg(long, value_name = "ID", conflicts_with = "delta")]
    pub calibration: Option<i64>,
}

impl SelectArgs {
    /// What to analyse, as the analysis takes it, explained by `explainers`
    /// (the binary passes fslab-explain's).
    pub fn choice(
        self,
        explainers: &'static [&'static dyn fslab_analysis::Explainer],
    ) -> fslab_analysis::Choice<'static> {
        fslab_analysis::Choice {
            policy: self.correction.policy_at(self.delta, self.alpha),
            experiments: self.experiment,
            runs: self.runs,
            baseline: self.baseline,
            calibration: self.calibration,
            refuse_empty: false,
            explainers,
        }
    }
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    #[command(flatten)]
    pub select: SelectArgs,
    /// Output format (every registered exporter: text, markdown, csv, json, html, ...)
    /// [default: text; with --output, FILE's extension]
    #[arg(long, value_parser = formats())]
    pub format: Option<String>,
    /// Write the chosen format to FILE; the text is still printed on the terminal
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<std::path::PathBuf>,
}

/// `--format` and `--output`, one spelling for every command that prints
/// results.
#[derive(Debug, Args)]
pub struct OutputArgs {
    /// Output format: text, json, csv or markdown [default: text; with --output,
    /// FILE's extension]
    #[arg(long, value_name = "FORMAT", value_parser = output_format)]
    pub format: Option<crate::format::Format>,
    /// Write the chosen format to FILE; the text is still printed on the terminal
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<std::path::PathBuf>,
}

/// Why an option's value is refused (clap says it after the option),
/// naming the value.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ValueError {
    #[error("{0:?} is not a format (text, json, csv or markdown)")]
    Format(String),
    #[error("{0:?} is not a significance level above 0 and at most 0.5 (say 0.05)")]
    Alpha(String),
    #[error("{0:?} is not a percentage between 0 and 100")]
    Percentage(String),
    #[error("{0:?} is not a percentile above 0 and at most 100 (say 99.9)")]
    Percentile(String),
    #[error("{0:?} is not a device as MAJOR,MINOR (for example 7,3)")]
    Device(String),
    #[error("{0:?}: major must be below 4096 and minor below 1048576")]
    DeviceRange(String),
}

/// `--format NAME`: one of [`crate::format::Format`]'s.
fn output_format(s: &str) -> Result<crate::format::Format, ValueError> {
    crate::format::Format::of(s).ok_or_else(|| ValueError::Format(s.to_string()))
}

/// `--format`'s values: the registered exporters' names.
fn formats() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(crate::export::names())
}

/// `--alpha P`: a significance level above 0 and at most 0.5.
pub fn alpha(s: &str) -> Result<f64, ValueError> {
    match s.parse::<f64>() {
        Ok(x) if x > 0.0 && x <= 0.5 => Ok(x),
        _ => Err(ValueError::Alpha(s.to_string())),
    }
}

/// `--delta PCT`: a percentage above 0 and below 100.
pub fn delta_pct(s: &str) -> Result<f64, ValueError> {
    match s.trim_end_matches('%').parse::<f64>() {
        Ok(x) if x > 0.0 && x < 100.0 => Ok(x),
        _ => Err(ValueError::Percentage(s.to_string())),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Correction {
    Bh,
    Holm,
}

impl Correction {
    pub fn policy(self, delta_pct: Option<f64>) -> fslab_stats::verdict::Policy {
        fslab_stats::verdict::Policy {
            delta_pct,
            correction: match self {
                Correction::Bh => fslab_stats::verdict::Correction::BenjaminiHochberg,
                Correction::Holm => fslab_stats::verdict::Correction::Holm,
            },
            ..Default::default()
        }
    }

    /// [`Correction::policy`] at significance level `alpha`.
    pub fn policy_at(self, delta_pct: Option<f64>, alpha: f64) -> fslab_stats::verdict::Policy {
        fslab_stats::verdict::Policy {
            alpha,
            ..self.policy(delta_pct)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: CompareArgs,
    }

    fn parse(argv: &[&str]) -> Result<CompareArgs, clap::Error> {
        Cli::try_parse_from(std::iter::once("compare").chain(argv.iter().copied())).map(|c| c.args)
    }

    #[test]
    fn alpha_delta_and_format_are_checked_as_they_are_parsed() {
        let a = parse(&["--delta", "5%", "--alpha", "0.01", "--correction", "holm"]).unwrap();
        assert_eq!((a.select.delta, a.select.alpha), (Some(5.0), 0.01));
        assert_eq!(a.select.correction, Correction::Holm);
        assert_eq!(a.format, None);
        let e = parse(&["--alpha", "0.6"]).unwrap_err().to_string();
        assert!(
            e.contains("not a significance level above 0 and at most 0.5"),
            "{e}"
        );
        let e = parse(&["--delta", "100"]).unwrap_err().to_string();
        assert!(e.contains("not a percentage between 0 and 100"), "{e}");
        assert!(parse(&["--delta", "5", "--calibration", "3"]).is_err());
        assert!(parse(&["--format", "nosuch"]).is_err());
        let c = parse(&["--experiment", "4", "--alpha", "0.1"])
            .unwrap()
            .select
            .choice(&[]);
        assert_eq!((c.experiments, c.policy.alpha), (vec![4], 0.1));
    }
}
