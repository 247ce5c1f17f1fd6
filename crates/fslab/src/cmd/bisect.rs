//! `fslab bisect EXPERIMENT --good K1 --bad K2`: the experiment's cell on
//! each kernel the search needs (see `fslab_experiment::bisect`), each
//! step recorded as an experiment of its own in the store.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use fslab_experiment::backend::DeviceConsent;
use fslab_experiment::bisect::{self, Kernels, Repetitions};
use fslab_experiment::runner::{self, ProcessExecutor, RunConfig};
use fslab_experiment::spec::{self, Experiment};
use fslab_experiment::state::{state_dir, Journal};

use crate::cli::BisectArgs;
use crate::Failure;

pub fn run(args: BisectArgs, db: &Path) -> Result<(), Failure> {
    if !(args.scale > 0.0 && args.scale.is_finite()) {
        return Err(Failure::Usage(format!(
            "--scale {}: must be a number above 0",
            args.scale
        )));
    }
    if args.repetitions < 2 || args.max_repetitions < args.repetitions {
        return Err(Failure::Usage(format!(
            "--repetitions {} --max-repetitions {}: a verdict needs at least 2 repetitions a \
             kernel, and the most may not be fewer",
            args.repetitions, args.max_repetitions
        )));
    }
    let (file, text) = fslab_experiment::builtin::load(&args.experiment)
        .map_err(|e| Failure::Usage(e.to_string()))?;
    let exp = spec::parse(&file, &text, &spec::Defaults::from_env())
        .map_err(|e| Failure::Usage(e.to_string()))?;
    let exp = fslab_experiment::plan::scaled(&exp, args.scale);
    let kernels =
        Kernels::of(&exp, &args.good, &args.bad).map_err(|e| Failure::Usage(e.to_string()))?;
    check(&exp, &kernels)?;
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

/// What is checked before anything runs: the experiment as `fslab run`
/// checks it, and every kernel of the list (an image that is not a
/// kernel, a package that does not exist).
fn check(exp: &Experiment, kernels: &Kernels) -> Result<(), Failure> {
    let one = one_cell(exp, kernels, 0, 1);
    fslab_experiment::safety::check(&one, &Default::default())
        .map_err(|e| Failure::Usage(format!("bisect: {e}")))?;
    let root = rustix::process::geteuid().is_root();
    runner::preflight_as(&one, root).map_err(|e| {
        let m = format!("bisect: {e}");
        if e.is_usage() {
            Failure::Usage(m)
        } else {
            Failure::Failed(m)
        }
    })?;
    let cache = fslab_guest::package::cache_dir();
    for c in &kernels.cells {
        if let Some(k) = &c.kernel {
            fslab_guest::check(&k.name, &cache)
                .map_err(|e| Failure::Usage(format!("bisect: {e}")))?;
        }
    }
    Ok(())
}

/// The experiment with only kernel `k`'s cell, `n` repetitions.
fn one_cell(exp: &Experiment, kernels: &Kernels, k: usize, n: u32) -> Experiment {
    let mut e = exp.clone();
    let mut cell = kernels.cells[k].clone();
    cell.index = 0;
    e.cells = vec![cell];
    e.repetitions = n;
    e.until_resolved = None;
    e.findings.clear();
    e
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
        if let Some(f) = outcome.runs.iter().find(|r| !r.ok) {
            return Err(format!(
                "{} of {n} repetitions failed on {name}: {}",
                outcome.runs.iter().filter(|r| !r.ok).count(),
                f.error.as_deref().unwrap_or("failed")
            ));
        }
        let samples = fslab_experiment::summary::family(&outcome);
        let metric = match &self.metric {
            Some(m) => m.clone(),
            None => {
                let m = samples
                    .iter()
                    .find(|s| s.headline)
                    .map(|s| s.metric.clone())
                    .ok_or("the workload has no headline metric: choose one with --metric")?;
                self.metric = Some(m.clone());
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
            return Err(format!(
                "no metric {metric:?} on {name}; measured: {}",
                names.join(", ")
            ));
        }
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
