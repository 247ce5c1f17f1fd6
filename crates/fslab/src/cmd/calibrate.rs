//! `fslab run EXPERIMENT --calibrate CELL`: an A/A experiment. Cell CELL
//! runs as two copies, interleaved repetition by repetition, so that
//! whatever drifts (the machine, the page cache, the order) falls on both;
//! afterwards each metric's noise between the copies
//! (`fslab_stats::calibrate`) is kept in the store, per metric, filesystem
//! and machine, and `fslab compare` takes its noise threshold from it.
//! The A/A experiment itself is `fslab_experiment::aa::of`.

use fslab_experiment::runner::ExperimentOutcome;
use fslab_experiment::spec::Experiment;
use fslab_experiment::summary;
use fslab_record::table::{Align, Table};
use fslab_store::{Calibration, Store};

use crate::Failure;

/// Keeps each metric's A/A noise of a finished A/A experiment and says
/// what it kept.
pub fn record(
    store: &mut Store,
    exp: &Experiment,
    outcome: &ExperimentOutcome,
) -> Result<String, Failure> {
    let a = summary::analysis(exp, outcome, Default::default());
    let Some(run_id) = outcome.runs.iter().find(|r| r.ok).and_then(|r| r.run_id) else {
        return Err(Failure::Failed(
            "calibrate: no run completed: nothing kept".into(),
        ));
    };
    let run = store
        .run(run_id)
        .map_err(|e| Failure::Failed(format!("calibrate: results store {e}")))?
        .run;
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
        .map_err(|e| Failure::Failed(format!("calibrate: results store {e}")))?;
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
         for runs of {} on {} here\n{}",
        outcome.experiment_id,
        run.hostname,
        run.fs_type,
        run.workload,
        rows.len(),
        run.workload,
        run.fs_type,
        t.render()
    ))
}
