//! `fslab run`'s command line: its options ([`RunArgs`], clap), what they
//! change in the experiment they run ([`RunArgs::apply`]), and the closing
//! words of a run by how it ended ([`ending`]).

use std::path::PathBuf;

use clap::Args;

use crate::runner::ExperimentOutcome;
use crate::spec::Experiment;

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Experiment file, or the name of a built-in experiment (see --list)
    #[arg(
        value_name = "EXPERIMENT",
        required_unless_present_any = ["list", "resume"],
        conflicts_with = "resume"
    )]
    pub experiment: Option<String>,
    /// Carry on experiment ID (interrupted, or with failed runs): its file and scale as
    /// recorded, only the repetitions that did not complete, recorded in the same experiment
    #[arg(long, value_name = "ID")]
    pub resume: Option<i64>,
    /// Shrink (or grow) counts and sizes by this factor: workload -n and -D, image size (at least 512 MiB)
    #[arg(
        long,
        value_name = "F",
        default_value_t = 1.0,
        allow_negative_numbers = true,
        value_parser = scale_factor
    )]
    pub scale: f64,
    /// Print the expanded cells, their commands and the run's estimated cost (time, disk,
    /// memory); touch nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Run although the estimate is over a threshold (more than an hour, more disk than the
    /// image directory has free, more memory than the machine has)
    #[arg(long)]
    pub yes: bool,
    /// Override the number of repetitions (with --resume: add repetitions up to N)
    #[arg(long, value_name = "N")]
    pub repetitions: Option<u32>,
    /// Run every cell once first as a warm-up: recorded as repetition 0, left out of every
    /// comparison, finding and calibration (the experiment file's `warm_up = true`)
    #[arg(long)]
    pub warm_up: bool,
    /// Keep adding repetitions (the first cell and every cell with an unresolved headline
    /// comparison with it, interleaved) until all are resolved or each cell has MAX
    #[arg(long, value_name = "MAX")]
    pub until_resolved: Option<u32>,
    /// Calibrate instead: run cell CELL (its index, from 0) against itself, two copies
    /// interleaved, and keep each metric's A/A noise for `fslab compare` (per metric,
    /// filesystem and machine). Example: fslab run my.toml --calibrate 0 --repetitions 5
    #[arg(long, value_name = "CELL", conflicts_with_all = ["resume", "until_resolved"])]
    pub calibrate: Option<u32>,
    /// Leave the image files in place after each run
    #[arg(long)]
    pub keep_images: bool,
    /// The block device a `kind = "block"` experiment may format (it must be named here too)
    #[arg(long, value_name = "DEVICE")]
    pub format_device: Option<PathBuf>,
    /// Format the named block device even if it holds a filesystem or data; use a
    /// directory device that holds files fslab did not make
    #[arg(long)]
    pub force: bool,
    /// Allow the experiment to set this sysctl although it is outside the vm.* and fs.*
    /// settings a filesystem experiment changes (repeatable; shown by --dry-run, recorded)
    #[arg(long, value_name = "NAME")]
    pub allow_sysctl: Vec<String>,
    /// Allow after_mkfs to run this program as root although it is not a filesystem tuning
    /// tool (tune2fs, xfs_admin, btrfstune, e2label); repeatable; shown by --dry-run, recorded
    #[arg(long, value_name = "PROGRAM")]
    pub allow_command: Vec<String>,
    /// List the built-in experiments
    #[arg(long)]
    pub list: bool,
    /// The instruments of every cell, as the workloads' --probes takes them
    /// (default, all, none, names, -NAME); overrides the experiment's `probes`
    #[arg(long, value_name = "LIST")]
    pub probes: Option<String>,
    /// Stop a cell's workload that runs longer than this ("90s", "20m", "2h"): the cell
    /// fails with "time limit", what it measured is kept, the next cell starts; overrides
    /// the experiment's `time_limit`
    #[arg(long, value_name = "DURATION")]
    pub cell_time_limit: Option<String>,
}

/// An option of `fslab run` refused, in one line naming it and its value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{option} {value}: {why}")]
pub struct OptionRefused {
    pub option: &'static str,
    pub value: String,
    pub why: String,
}

/// Why `fslab run`'s options cannot be applied to its experiment.
#[derive(Debug, thiserror::Error)]
pub enum RunArgsError {
    #[error(transparent)]
    Option(#[from] OptionRefused),
    /// `--calibrate`'s cell or repetitions.
    #[error(transparent)]
    Calibrate(#[from] crate::aa::AaError),
    /// `--cell-time-limit` is no duration.
    #[error("--cell-time-limit {0}")]
    TimeLimit(#[source] crate::duration::DurationError),
    /// `--probes` names no probes (the probes' own line).
    #[error(transparent)]
    Probes(#[from] fslab_probe::UnknownProbe),
    /// The experiment file (or built-in) named cannot be read.
    #[error(transparent)]
    Load(#[from] crate::builtin::LoadError),
    /// The experiment file is not one.
    #[error(transparent)]
    Spec(#[from] crate::spec::SpecError),
}

/// The experiment `fslab run` runs, as its file gave it and its command
/// line changed and scaled it.
#[derive(Debug, Clone)]
pub struct Planned {
    pub file: String,
    pub text: String,
    pub scale: f64,
    pub exp: Experiment,
    /// The experiment before `--scale` (the command line's say applied):
    /// what another scale is tried on.
    pub base: Experiment,
}

fn refused(
    option: &'static str,
    value: impl std::fmt::Display,
    why: impl Into<String>,
) -> OptionRefused {
    OptionRefused {
        option,
        value: value.to_string(),
        why: why.into(),
    }
}

/// An experiment run before, as `--resume` carries it on: its id and the
/// repetitions it has.
#[derive(Debug, Clone, Copy)]
pub struct Resumed {
    pub id: i64,
    pub repetitions: u32,
}

impl RunArgs {
    /// `--scale` is a number above 0.
    pub fn check_scale(&self) -> Result<(), OptionRefused> {
        if self.scale > 0.0 && self.scale.is_finite() {
            Ok(())
        } else {
            Err(refused("--scale", self.scale, "must be a number above 0"))
        }
    }

    /// The experiment to run: `earlier`'s file and scale (`--resume`), or
    /// the file (or built-in) named at `--scale`; parsed, with the command
    /// line's say over it ([`RunArgs::apply`]), scaled.
    pub fn planned(
        &self,
        earlier: Option<&crate::resume::Earlier>,
    ) -> Result<Planned, RunArgsError> {
        let (file, text, scale) = match earlier {
            Some(e) => (e.file.clone(), e.text.clone(), e.scale),
            None => {
                let (file, text) =
                    crate::builtin::load(self.experiment.as_deref().unwrap_or_default())?;
                (file, text, self.scale)
            }
        };
        let mut exp = crate::spec::parse(&file, &text, &crate::spec::Defaults::from_env())?;
        let resumed = earlier.map(|e| Resumed {
            id: e.resume.experiment_id,
            repetitions: e.repetitions,
        });
        self.apply(&mut exp, resumed)?;
        exp.workload.allowed.clone_from(&self.allow_command);
        let base = exp;
        let exp = crate::plan::scaled(&base, scale);
        Ok(Planned {
            file,
            text,
            scale,
            exp,
            base,
        })
    }

    /// The command line's say over the experiment file: repetitions (never
    /// fewer than a resumed experiment has), until-resolved, calibration,
    /// probes, the cells' time limit.
    pub fn apply(
        &self,
        exp: &mut Experiment,
        earlier: Option<Resumed>,
    ) -> Result<(), RunArgsError> {
        if let Some(e) = earlier {
            exp.repetitions = exp.repetitions.max(e.repetitions);
        }
        if let Some(r) = self.repetitions {
            if r == 0 {
                return Err(refused("--repetitions", 0, "must be at least 1").into());
            }
            if let Some(e) = earlier.filter(|e| r < e.repetitions) {
                return Err(refused(
                    "--repetitions",
                    r,
                    format!(
                        "experiment {} already has {} repetitions (resume adds, never removes)",
                        e.id, e.repetitions
                    ),
                )
                .into());
            }
            exp.repetitions = r;
        }
        if let Some(max) = self.until_resolved {
            if max < exp.repetitions {
                return Err(refused(
                    "--until-resolved",
                    max,
                    format!("below the {} repetitions every cell has", exp.repetitions),
                )
                .into());
            }
            exp.until_resolved = Some(max);
        }
        if self.warm_up {
            exp.warm_up = true;
        }
        if let Some(cell) = self.calibrate {
            *exp = crate::aa::of(exp, cell)?;
        }
        if let Some(p) = &self.probes {
            fslab_probe::parse_list(p).map_err(RunArgsError::Probes)?;
            exp.workload.probes = Some(p.clone());
        }
        if let Some(t) = &self.cell_time_limit {
            exp.time_limit =
                Some(crate::duration::parse_duration(t).map_err(RunArgsError::TimeLimit)?);
        }
        Ok(())
    }
}

/// How a finished `fslab run` ends, by what its outcome says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    /// Every run completed.
    Complete,
    /// A signal stopped it; the line says what was kept.
    Interrupted(String),
    /// Runs failed; the line says how many and what was kept.
    Failed(String),
}

/// How `outcome` ends the command: interrupted (a second signal, or one
/// that `stopped` it), failed runs, or complete.
pub fn ending(outcome: &ExperimentOutcome, stopped: bool) -> Ending {
    let id = outcome.experiment_id;
    if crate::signals::hurry() {
        return Ending::Interrupted(format!(
            "run: interrupted by a second signal; everything set up was undone; what was \
             measured is kept as experiment {id}"
        ));
    }
    if outcome.interrupted || stopped {
        return Ending::Interrupted(format!(
            "run: interrupted; what was measured is kept as experiment {id}"
        ));
    }
    let failed = outcome.runs.iter().filter(|r| !r.ok).count();
    if failed > 0 {
        return Ending::Failed(format!(
            "run: {failed} of {} runs failed (see above); what was measured is kept as experiment {id}",
            outcome.runs.len()
        ));
    }
    Ending::Complete
}

/// What a resumed run will do, in one line each.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResumeNotice {
    /// Runs are left: which, at what scale (a remark on stderr).
    Resuming(String),
    /// Every run completed already: nothing to resume (the answer, on stdout).
    NothingLeft(String),
}

/// What resuming `r` will do.
pub fn resume_notice(exp: &Experiment, r: &crate::runner::Resume, scale: f64) -> ResumeNotice {
    let total = exp.cells.len() * exp.repetitions as usize;
    if r.done.len() >= total {
        return ResumeNotice::NothingLeft(format!(
            "experiment {} ({}): all {total} runs completed already; nothing to resume \
             (add repetitions with --repetitions N)",
            r.experiment_id, exp.name
        ));
    }
    ResumeNotice::Resuming(format!(
        "resuming experiment {} ({}) at scale {scale}: {} of {total} runs completed before, {} to run",
        r.experiment_id,
        exp.name,
        r.done.len(),
        total - r.done.len()
    ))
}

/// `--scale F` that is no factor above 0, as written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not a factor above 0 (say 0.01)")]
pub struct NotAScale(pub String);

/// `--scale F`: a factor above 0 (a negative one is named, not taken for
/// an option).
fn scale_factor(s: &str) -> Result<f64, NotAScale> {
    match s.trim().parse::<f64>() {
        Ok(x) if x > 0.0 && x.is_finite() => Ok(x),
        _ => Err(NotAScale(s.to_string())),
    }
}
