//! `fslab bisect EXPERIMENT --good K1 --bad K2`: the experiment's cell on
//! each kernel the search needs (see `fslab_experiment::bisect`), each
//! step recorded as an experiment of its own in the store.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use fslab_experiment::backend::DeviceConsent;
use fslab_experiment::bisect::{self, Kernels, Repetitions};
use fslab_experiment::bisect_args::{
    one_cell, values, BisectArgs, BisectArgsError, PlannedBisection,
};
use fslab_experiment::runner::{ProcessExecutor, RunConfig};
use fslab_experiment::spec::Experiment;
use fslab_experiment::state::{state_dir, Journal};

use crate::Failure;

pub fn run(args: BisectArgs, db: &Path) -> Result<(), Failure> {
    let refused = |e: BisectArgsError| {
        if e.is_usage() {
            Failure::Usage(e.to_string())
        } else {
            Failure::Failed(e.to_string())
        }
    };
    let PlannedBisection {
        file,
        text,
        exp,
        kernels,
    } = args.planned().map_err(refused)?;
    let root = rustix::process::geteuid().is_root();
    fslab_experiment::bisect_args::check(&exp, &kernels, root).map_err(refused)?;
    let mut store = super::open_store(db)?;
    let stop =
        fslab_experiment::signals::install(state_dir(), fslab_experiment::signals::TEARDOWN_BOUND)
            .map_err(|e| Failure::Failed(format!("cannot install signal handlers: {e}")))?;
    let mut step = Stepper {
        exp: &exp,
        kernels: &kernels,
        file,
        text,
        scale: args.scale,
        metric: args.metric.clone(),
        db,
        stop: &stop,
    };
    let reps = Repetitions {
        each: args.repetitions,
        max: args.max_repetitions,
    };
    let b = bisect::bisect(&kernels, reps, &mut |k, n| step.measure(&mut store, k, n));
    let metric = step.metric.clone().unwrap_or_default();
    print!("{}", bisect::text(&kernels, &metric, &b));
    if stop.load(Ordering::Relaxed) {
        return Err(Failure::Interrupted);
    }
    match b.first_bad {
        Some(_) => Ok(()),
        None => Err(Failure::Failed(
            "bisect: no first bad kernel found (see above)".into(),
        )),
    }
}

/// Runs the steps of a bisection.
struct Stepper<'a> {
    exp: &'a Experiment,
    kernels: &'a Kernels,
    file: String,
    text: String,
    scale: f64,
    /// The metric (chosen from the first step's headline when not given).
    metric: Option<String>,
    db: &'a Path,
    stop: &'a AtomicBool,
}

impl Stepper<'_> {
    /// `n` repetitions of kernel `k`'s cell: the metric's values.
    fn measure(
        &mut self,
        store: &mut fslab_store::Store,
        k: usize,
        n: u32,
    ) -> Result<Vec<f64>, String> {
        if self.stop.load(Ordering::Relaxed) {
            return Err("interrupted".into());
        }
        let exp = one_cell(self.exp, self.kernels, k, n);
        let exe = std::env::current_exe().map_err(|e| format!("cannot find fslab itself: {e}"))?;
        let mut exec = ProcessExecutor {
            exe,
            db: self.db.to_path_buf(),
            ranks: 1,
            cluster: None,
            own_ranks: exp.workload.kind.launches_ranks(),
        };
        let argv: Vec<String> = std::env::args().collect();
        let journal = Journal::create(&state_dir(), "run", argv.clone())
            .map_err(|e| format!("the state journal: {e}"))?;
        let cfg = RunConfig {
            scale: self.scale,
            resume: None,
            consent: DeviceConsent::default(),
            file: self.file.clone(),
            text: self.text.clone(),
            command_line: argv,
        };
        let r = super::run::scheduled(&exp, &cfg, &mut exec, store, self.stop, journal, "bisect")
            .map_err(|_| "internal error (see above)".to_string())?;
        let outcome = r.map_err(|e| e.to_string())?;
        let name = self.kernels.name(k);
        let values = values(&outcome, &mut self.metric, &name)?;
        let metric = self.metric.as_deref().unwrap_or_default();
        remark!(
            "fslab: bisect: {name}: {metric} {}",
            values
                .iter()
                .map(|v| format!("{v:.4}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        Ok(values)
    }
}
