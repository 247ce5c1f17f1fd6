//! `fslab bisect`'s command line: its options ([`BisectArgs`], clap), the
//! experiment and kernels they name ([`BisectArgs::planned`]), what is
//! checked before anything runs ([`check`]), the one-kernel experiment of
//! each step ([`one_cell`]) and the metric's values a step gives
//! ([`values`]). The search itself is [`crate::bisect`].

use clap::Args;

use crate::bisect::{BisectError, Kernels};
use crate::runner::ExperimentOutcome;
use crate::spec::Experiment;

#[derive(Debug, Args)]
pub struct BisectArgs {
    /// Experiment file, or the name of a built-in experiment
    #[arg(value_name = "EXPERIMENT")]
    pub experiment: String,
    /// A kernel on which the metric is good (a kernel of the list, by name or label)
    #[arg(long, value_name = "KERNEL")]
    pub good: String,
    /// A kernel on which it is bad
    #[arg(long, value_name = "KERNEL")]
    pub bad: String,
    /// The metric, as `fslab run`'s summary and `fslab compare` name it (default: the
    /// workload's first headline metric)
    #[arg(long, value_name = "NAME")]
    pub metric: Option<String>,
    /// Repetitions of each kernel
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub repetitions: u32,
    /// Repetitions a kernel may get before it is called undecided
    #[arg(long, value_name = "N", default_value_t = 6)]
    pub max_repetitions: u32,
    /// Shrink (or grow) counts and sizes by this factor (as fslab run --scale)
    #[arg(long, value_name = "F", default_value_t = 1.0)]
    pub scale: f64,
}

/// Why a bisection does not start.
#[derive(Debug, thiserror::Error)]
pub enum BisectArgsError {
    /// `--scale` is not a number above 0.
    #[error("--scale {0}: must be a number above 0")]
    Scale(f64),
    /// Fewer than 2 repetitions a kernel, or a most below the least.
    #[error(
        "--repetitions {0} --max-repetitions {1}: a verdict needs at least 2 repetitions a \
         kernel, and the most may not be fewer"
    )]
    Repetitions(u32, u32),
    /// The experiment file (or built-in) named cannot be read.
    #[error(transparent)]
    Load(#[from] crate::builtin::LoadError),
    /// The experiment file is not one.
    #[error(transparent)]
    Spec(#[from] crate::spec::SpecError),
    /// The kernels named are not a list to search.
    #[error(transparent)]
    Kernels(#[from] BisectError),
    /// The experiment's safety rules refuse it.
    #[error("bisect: {0}")]
    Refused(#[from] crate::safety::Refused),
    /// What the experiment or a kernel needs is not there (see
    /// [`crate::safety::Preflight::is_usage`]).
    #[error("bisect: {0}")]
    Preflight(#[from] crate::safety::Preflight),
    /// A kernel of the list is not one, or not to be had.
    #[error("bisect: {0}")]
    Guest(#[from] fslab_guest::GuestError),
}

impl BisectArgsError {
    /// Bad input (exit 2), or what this machine lacks (a failure).
    pub fn is_usage(&self) -> bool {
        match self {
            BisectArgsError::Preflight(p) => p.is_usage(),
            _ => true,
        }
    }
}

/// What a bisection runs: the experiment as its file gave it, scaled, and
/// its kernels from good to bad.
#[derive(Debug, Clone)]
pub struct PlannedBisection {
    pub file: String,
    pub text: String,
    pub exp: Experiment,
    pub kernels: Kernels,
}

impl BisectArgs {
    /// The options checked, the experiment read and scaled, its kernels.
    pub fn planned(&self) -> Result<PlannedBisection, BisectArgsError> {
        if !(self.scale > 0.0 && self.scale.is_finite()) {
            return Err(BisectArgsError::Scale(self.scale));
        }
        if self.repetitions < 2 || self.max_repetitions < self.repetitions {
            return Err(BisectArgsError::Repetitions(
                self.repetitions,
                self.max_repetitions,
            ));
        }
        let (file, text) = crate::builtin::load(&self.experiment)?;
        let exp = crate::spec::parse(&file, &text, &crate::spec::Defaults::from_env())?;
        let exp = crate::plan::scaled(&exp, self.scale);
        let kernels = Kernels::of(&exp, &self.good, &self.bad)?;
        Ok(PlannedBisection {
            file,
            text,
            exp,
            kernels,
        })
    }
}

/// What is checked before anything runs: the experiment as `fslab run`
/// checks it (`root`: whether this user is), and every kernel of the list
/// (an image that is not a kernel, a package that does not exist).
pub fn check(exp: &Experiment, kernels: &Kernels, root: bool) -> Result<(), BisectArgsError> {
    let one = one_cell(exp, kernels, 0, 1);
    crate::safety::check(&one, &Default::default())?;
    crate::runner::preflight_as(&one, root)?;
    let cache = fslab_guest::package::cache_dir();
    for k in kernels.cells.iter().filter_map(|c| c.kernel.as_ref()) {
        fslab_guest::check(&k.name, &cache)?;
    }
    Ok(())
}

/// The experiment with only kernel `k`'s cell, `n` repetitions.
pub fn one_cell(exp: &Experiment, kernels: &Kernels, k: usize, n: u32) -> Experiment {
    let mut e = exp.clone();
    let mut cell = kernels.cells[k].clone();
    cell.index = 0;
    e.cells = vec![cell];
    e.repetitions = n;
    e.until_resolved = None;
    e.findings.clear();
    e
}

/// Why a step gave no values of the metric.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ValuesError {
    /// Repetitions failed on the kernel (the first one's error).
    #[error("{failed} of {n} repetitions failed on {kernel}: {error}")]
    Failed {
        failed: usize,
        n: usize,
        kernel: String,
        error: String,
    },
    #[error("the workload has no headline metric: choose one with --metric")]
    NoHeadline,
    #[error("no metric {metric:?} on {kernel}; measured: {measured}")]
    NoMetric {
        metric: String,
        kernel: String,
        measured: String,
    },
}

/// The values of `metric` in a step's outcome on kernel `name` (every
/// repetition having completed); with no metric given, the workload's
/// first headline metric, kept in `metric` for the steps after. Err says
/// why there are none, in one line.
pub fn values(
    outcome: &ExperimentOutcome,
    metric: &mut Option<String>,
    name: &str,
) -> Result<Vec<f64>, ValuesError> {
    let n = outcome.runs.len();
    if let Some(f) = outcome.runs.iter().find(|r| !r.ok) {
        return Err(ValuesError::Failed {
            failed: outcome.runs.iter().filter(|r| !r.ok).count(),
            n,
            kernel: name.to_string(),
            error: f.error.clone().unwrap_or_else(|| "failed".into()),
        });
    }
    let samples = crate::summary::family(outcome);
    let metric = match metric {
        Some(m) => m.clone(),
        None => {
            let m = samples
                .iter()
                .find(|s| s.headline)
                .map(|s| s.metric.clone())
                .ok_or(ValuesError::NoHeadline)?;
            *metric = Some(m.clone());
            m
        }
    };
    let values: Vec<f64> = samples
        .iter()
        .filter(|s| s.metric == metric)
        .map(|s| s.value)
        .collect();
    if values.is_empty() {
        let mut names: Vec<&str> = samples.iter().map(|s| s.metric.as_str()).collect();
        names.dedup();
        return Err(ValuesError::NoMetric {
            metric,
            kernel: name.to_string(),
            measured: names.join(", "),
        });
    }
    Ok(values)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: BisectArgs,
    }

    fn args(extra: &[&str]) -> BisectArgs {
        let argv = ["bisect", "seed004-large-dir", "--good", "a", "--bad", "b"];
        Cli::parse_from(argv.iter().chain(extra)).args
    }

    #[test]
    fn bad_scale_and_repetitions_are_refused_before_the_file_is_read() {
        let e = args(&["--scale", "0"]).planned().unwrap_err();
        assert_eq!(e.to_string(), "--scale 0: must be a number above 0");
        assert!(e.is_usage());
        let e = args(&["--repetitions", "1"]).planned().unwrap_err();
        assert!(matches!(e, BisectArgsError::Repetitions(1, 6)), "{e:?}");
        let e = args(&["--repetitions", "4", "--max-repetitions", "3"])
            .planned()
            .unwrap_err();
        assert!(e.to_string().contains("the most may not be fewer"), "{e}");
        let e = args(&[]).planned().unwrap_err();
        assert!(matches!(e, BisectArgsError::Kernels(_)), "{e:?}");
        assert!(e.is_usage());
    }
}
