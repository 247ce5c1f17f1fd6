//! `fslab bisect`'s run: the experiment's cell on each kernel the search
//! needs ([`crate::bisect`]), each step recorded as an experiment of its
//! own in the store.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::bisect::{self, Kernels, Repetitions};
use crate::bisect_args::{one_cell, values, BisectArgs, BisectArgsError, PlannedBisection};
use crate::launch::{self, Display, Refusal};
use crate::spec::Experiment;
use fslab_lab::undo::state_dir;

/// Why a step could not measure its kernel, which stops the search.
#[derive(Debug, thiserror::Error)]
pub enum StepError {
    /// A signal stopped the bisection.
    #[error("interrupted")]
    Interrupted,
    /// Its run could not be set up (this fslab, the journal).
    #[error(transparent)]
    Setup(#[from] launch::SetupError),
    /// Its run panicked (said above).
    #[error("internal error (see above)")]
    Internal,
    /// Its run failed.
    #[error(transparent)]
    Run(#[from] crate::runner::RunError),
    /// It gave no values of the metric.
    #[error(transparent)]
    Values(#[from] crate::bisect_args::ValuesError),
}

/// What a bisection found: its text, and how it ended.
pub struct Bisected {
    /// The search's steps and verdict ([`bisect::text`]).
    pub text: String,
    /// A signal stopped it.
    pub interrupted: bool,
    /// It found the first bad kernel.
    pub found: bool,
}

/// How a step is shown: a fresh live display for each, and the line that
/// says what it measured (a remark, which `--quiet` leaves out).
pub struct Shown<'a, D> {
    pub display: &'a dyn Fn() -> D,
    pub remark: &'a dyn Fn(&str),
}

/// Plans, checks and runs the bisection `args` asks for into the store at
/// `db`.
pub fn run<D: Display>(
    args: &BisectArgs,
    db: &Path,
    shown: Shown<'_, D>,
) -> Result<Bisected, Refusal> {
    let refused = |e: BisectArgsError| {
        if e.is_usage() {
            Refusal::usage(e.to_string())
        } else {
            Refusal::failed(e.to_string())
        }
    };
    let PlannedBisection {
        file,
        text,
        exp,
        kernels,
    } = args.planned().map_err(refused)?;
    let root = rustix::process::geteuid().is_root();
    crate::bisect_args::check(&exp, &kernels, root).map_err(refused)?;
    let mut store = fslab_store::Store::open(db).map_err(Refusal::store)?;
    let stop = crate::signals::install(state_dir(), crate::signals::TEARDOWN_BOUND)
        .map_err(|e| Refusal::failed(format!("cannot install signal handlers: {e}")))?;
    let mut step = Stepper {
        exp: &exp,
        kernels: &kernels,
        file,
        text,
        scale: args.scale,
        metric: args.metric.clone(),
        db,
        stop: &stop,
        shown,
    };
    let reps = Repetitions {
        each: args.repetitions,
        max: args.max_repetitions,
    };
    let b = bisect::bisect(&kernels, reps, &mut |k, n| step.measure(&mut store, k, n));
    let metric = step.metric.clone().unwrap_or_default();
    Ok(Bisected {
        text: bisect::text(&kernels, &metric, &b),
        interrupted: stop.load(Ordering::Relaxed),
        found: b.first_bad.is_some(),
    })
}

/// Runs the steps of a bisection.
struct Stepper<'a, D> {
    exp: &'a Experiment,
    kernels: &'a Kernels,
    file: String,
    text: String,
    scale: f64,
    /// The metric (chosen from the first step's headline when not given).
    metric: Option<String>,
    db: &'a Path,
    stop: &'a AtomicBool,
    shown: Shown<'a, D>,
}

impl<D: Display> Stepper<'_, D> {
    /// `n` repetitions of kernel `k`'s cell: the metric's values.
    fn measure(
        &mut self,
        store: &mut fslab_store::Store,
        k: usize,
        n: u32,
    ) -> Result<Vec<f64>, StepError> {
        if self.stop.load(Ordering::Relaxed) {
            return Err(StepError::Interrupted);
        }
        let exp = one_cell(self.exp, self.kernels, k, n);
        let (mut exec, cfg, journal) =
            launch::one_host(&exp, self.db, self.scale, (&self.file, &self.text))?;
        let mut display = (self.shown.display)();
        let r = launch::scheduled(
            (&exp, &cfg),
            &mut exec,
            store,
            (&mut display, self.stop),
            journal,
            "bisect",
        )
        .map_err(|_| StepError::Internal)?;
        let outcome = r?;
        let name = self.kernels.name(k);
        let values = values(&outcome, &mut self.metric, &name)?;
        let metric = self.metric.as_deref().unwrap_or_default();
        (self.shown.remark)(&format!(
            "fslab: bisect: {name}: {metric} {}",
            values
                .iter()
                .map(|v| format!("{v:.4}"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
        Ok(values)
    }
}
