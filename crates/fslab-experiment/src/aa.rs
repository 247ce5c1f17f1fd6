//! `fslab run EXPERIMENT --calibrate CELL`'s experiment: cell CELL as two
//! copies, interleaved repetition by repetition, so that whatever drifts
//! (the machine, the page cache, the order) falls on both; afterwards each
//! metric's noise between the copies (`fslab_stats::calibrate`) is kept in
//! the store, per metric, filesystem and machine ([`record`]), and `fslab
//! compare` takes its noise threshold from it.

use fslab_model::table::{Align, Table};
use fslab_store::{Calibration, Store};

use crate::runner::ExperimentOutcome;
use crate::spec::{Experiment, Order};
use crate::summary;

/// Why there is no A/A experiment of the cell asked for (bad input).
#[derive(Debug, thiserror::Error)]
pub enum AaError {
    #[error("--calibrate {cell}: {name} has cells 0 to {last}")]
    NoSuchCell {
        cell: u32,
        name: String,
        last: usize,
    },
    #[error("--calibrate {cell}: {repetitions} repetition(s) give no noise: use --repetitions 3 or more")]
    TooFew { cell: u32, repetitions: u32 },
}

/// The name of the A/A experiment of `exp`'s cell labelled `label`: what
/// its calibrations are found by (`fslab run --dry-run`'s power lines).
pub fn name(exp: &Experiment, label: &str) -> String {
    format!("{} A/A {label}", exp.name)
}

/// The A/A experiment of cell `cell` of `exp`: two copies of it,
/// interleaved, no findings (they name the experiment's own cells).
pub fn of(exp: &Experiment, cell: u32) -> Result<Experiment, AaError> {
    let Some(c) = exp.cells.iter().find(|c| c.index == cell) else {
        return Err(AaError::NoSuchCell {
            cell,
            name: exp.name.clone(),
            last: exp.cells.len().saturating_sub(1),
        });
    };
    if exp.repetitions < 2 {
        return Err(AaError::TooFew {
            cell,
            repetitions: exp.repetitions,
        });
    }
    let mut aa = exp.clone();
    aa.name = name(exp, &c.label);
    aa.order = Order::Interleaved;
    aa.until_resolved = None;
    aa.findings.clear();
    aa.cells = ["A", "A'"]
        .iter()
        .enumerate()
        .map(|(i, copy)| {
            let mut x = c.clone();
            x.index = i as u32;
            x.label = format!("{} ({copy})", c.label);
            x
        })
        .collect();
    Ok(aa)
}

/// Why an A/A experiment's calibration was not kept.
#[derive(Debug, thiserror::Error)]
pub enum CalibrateError {
    /// No repetition completed.
    #[error("calibrate: no run completed: nothing kept")]
    NoRun,
    /// The store could not read the run or keep the calibration.
    #[error("calibrate: results store {0}")]
    Store(#[source] fslab_store::StoreError),
}

/// Keeps each metric's A/A noise of a finished A/A experiment and says
/// what it kept.
pub fn record(
    store: &mut Store,
    exp: &Experiment,
    outcome: &ExperimentOutcome,
) -> Result<String, CalibrateError> {
    let a = summary::analysis(exp, outcome, Default::default());
    let Some(run_id) = outcome.runs.iter().find(|r| r.ok).and_then(|r| r.run_id) else {
        return Err(CalibrateError::NoRun);
    };
    let run = store.run(run_id).map_err(CalibrateError::Store)?.run;
    let mut rows = Vec::new();
    for m in &a.metrics {
        let Some(noise) = fslab_stats::calibrate::aa_noise(&m.values[0], &m.values[1]) else {
            continue;
        };
        rows.push(Calibration {
            experiment_id: outcome.experiment_id,
            created_at: run.started_at.clone(),
            hostname: run.hostname.clone(),
            fs_type: run.fs_type.clone(),
            workload: run.workload.clone(),
            options: fslab_analysis::select::option_key(&run.params),
            metric: m.name.clone(),
            n: noise.n as u32,
            sd_log: noise.sd_log,
            ratio: noise.ratio,
            delta_pct: noise.delta_pct,
        });
    }
    store
        .record_calibrations(&rows)
        .map_err(CalibrateError::Store)?;
    let mut t = Table::new(&[
        ("metric", Align::Left),
        ("n", Align::Right),
        ("A'/A", Align::Right),
        ("sd (log)", Align::Right),
        ("\u{3b4}", Align::Right),
    ]);
    for r in &rows {
        t.row([
            r.metric.clone(),
            r.n.to_string(),
            format!("{:.4}", r.ratio),
            format!("{:.4}", r.sd_log),
            format!("{:.2}%", r.delta_pct),
        ]);
    }
    Ok(format!(
        "\ncalibration {} ({}, {}, {}): {} metric(s) kept; `fslab compare` takes \u{3b4} from it \
         for runs of {} on {} here\n{}{}",
        outcome.experiment_id,
        run.hostname,
        run.fs_type,
        run.workload,
        rows.len(),
        run.workload,
        run.fs_type,
        t.render(),
        crate::noise_sources::render(outcome)
    ))
}
