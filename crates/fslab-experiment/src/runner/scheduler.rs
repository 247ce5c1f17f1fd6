//! The scheduler: the experiment's record, its cells x repetitions in
//! their order (minus what a resumed run already has), the until-resolved
//! loop, and the findings evaluated at the end.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use fslab_model::{
    CellInfo, CellRunInfo, ExperimentInfo, ExperimentRecorder, ImageHostFacts, RunStatus,
};

use super::cell::{run_cell, RunEnv};
use super::error::RunError;
use super::executor::Executor;
use super::progress::Progress;
use super::until::resolution;
use crate::backend::{DeviceConsent, Versions};
use crate::findings;
use crate::image_host::{self, HostFs};
use crate::outcome::{ExperimentOutcome, RepOutcome};
use crate::plan::{mount_options, schedule, shown_command_line, WARM_UP};
use crate::spec::{Cell, Device, Experiment};
use crate::summary::{Direction, RepetitionValue};
use fslab_lab::undo::Journal;

/// How `fslab run` was asked to run.
#[derive(Debug, Clone)]
pub struct RunConfig {
    pub scale: f64,
    pub consent: DeviceConsent,
    /// Where the experiment came from, and its text.
    pub file: String,
    pub text: String,
    pub command_line: Vec<String>,
    /// `--resume`: carry on an earlier run of this experiment.
    pub resume: Option<Resume>,
}

/// What an earlier, interrupted or partly failed run of the experiment
/// already has (`fslab run --resume ID`): its completed repetitions are
/// kept and not run again; the others run and are recorded in the same
/// experiment.
#[derive(Debug, Clone, Default)]
pub struct Resume {
    pub experiment_id: i64,
    /// The completed (cell, repetition) runs, as measured then.
    pub done: Vec<RepOutcome>,
}

fn now() -> String {
    fslab_model::time::now()
}

/// Runs the experiment. Cells that fail are recorded and the others go on;
/// the stop flag ends the run after tearing down the current cell.
pub fn run(
    exp: &Experiment,
    cfg: &RunConfig,
    exec: &mut dyn Executor,
    rec: &mut dyn ExperimentRecorder,
    progress: &mut dyn Progress,
    stop: &AtomicBool,
    journal: &mut Journal,
) -> Result<ExperimentOutcome, RunError> {
    let host = match &exp.device {
        Device::Image { dir, .. } if image_host::needed(&exp.device)? => {
            HostFs::make(dir, journal, cfg.consent.keep_images)?
        }
        _ => {
            let mut env = RunEnv {
                exec,
                rec,
                progress,
                stop,
                journal,
            };
            return run_cells(exp, None, cfg, &mut env);
        }
    };
    progress.note(&host.describe());
    let hosted = image_host::hosting(&host, exp);
    let facts = host.facts().clone();
    let r = run_cells(
        &hosted,
        Some(&facts),
        cfg,
        &mut RunEnv {
            exec,
            rec,
            progress: &mut *progress,
            stop,
            journal: &mut *journal,
        },
    );
    let torn = host.teardown(journal);
    if cfg.consent.keep_images {
        let img = &facts.image;
        progress.note(&format!(
            "kept the image host {img}: the kept images are inside it (mount -o loop {img} DIR)"
        ));
    }
    match (r, torn) {
        (Ok(mut o), Err(e)) => {
            o.teardown_problems.push(format!("image host: {e}"));
            Ok(o)
        }
        (r, _) => r,
    }
}

fn run_cells(
    exp: &Experiment,
    image_host: Option<&ImageHostFacts>,
    cfg: &RunConfig,
    env: &mut RunEnv,
) -> Result<ExperimentOutcome, RunError> {
    let exp_id = begin(exp, image_host, cfg, env.rec)?;

    let done = cfg
        .resume
        .as_ref()
        .map(|r| r.done.clone())
        .unwrap_or_default();
    let mut queue: std::collections::VecDeque<(u32, u32)> = schedule(exp)
        .into_iter()
        .filter(|(c, r)| !done.iter().any(|d| d.cell == *c && d.repetition == *r))
        .collect();
    let mut total = queue.len();
    let mut outcome = ExperimentOutcome {
        experiment_id: exp_id,
        runs: done,
        interrupted: false,
        teardown_problems: Vec::new(),
        resolution: None,
        findings: Vec::new(),
    };
    let mut next_rep = exp.repetitions + 1;
    let mut k = 0;
    loop {
        let Some((ci, rep)) = queue.pop_front() else {
            // `until_resolved`: one more repetition of the baseline and of
            // every cell with an unresolved headline comparison, interleaved.
            let Some(max) = exp.until_resolved else { break };
            let (more, said) = resolution(exp, &outcome, next_rep - 1, max);
            outcome.resolution = Some(said);
            if more.is_empty() || next_rep > max || env.stop.load(Ordering::Relaxed) {
                break;
            }
            total += more.len();
            queue.extend(more.into_iter().map(|c| (c, next_rep)));
            next_rep += 1;
            continue;
        };
        if env.stop.load(Ordering::Relaxed) {
            outcome.interrupted = true;
            break;
        }
        let cell = &exp.cells[ci as usize];
        env.progress
            .cell_start(k, total, cell, rep, exp.repetitions.max(rep));
        k += 1;
        let (run, status) = run_one(exp, exp_id, cell, rep, cfg, env, &mut outcome)?;
        // A warm-up is recorded (repetition 0) and compared never.
        if rep != WARM_UP {
            outcome.runs.push(run);
        }
        if status == Some(RunStatus::Interrupted) || env.stop.load(Ordering::Relaxed) {
            outcome.interrupted = true;
            break;
        }
    }
    finish(exp, exp_id, &mut outcome, env.rec)?;
    Ok(outcome)
}

/// Runs repetition `rep` of `cell` and records it: how it went, and the
/// status recorded.
fn run_one(
    exp: &Experiment,
    exp_id: i64,
    cell: &Cell,
    rep: u32,
    cfg: &RunConfig,
    env: &mut RunEnv,
    outcome: &mut ExperimentOutcome,
) -> Result<(RepOutcome, Option<RunStatus>), RunError> {
    let mut info = CellRunInfo {
        cell: cell.index,
        repetition: rep,
        started_at: now(),
        ..Default::default()
    };
    let r = if cell.in_guest() {
        let source = super::guest::Source {
            file: &cfg.file,
            text: &cfg.text,
            scale: cfg.scale,
            keep_images: cfg.consent.keep_images,
        };
        super::guest::run_guest_cell(
            exp,
            cell,
            rep,
            &source,
            env,
            &mut info,
            &mut outcome.teardown_problems,
        )
    } else {
        run_cell(
            exp,
            cell,
            rep,
            &cfg.consent,
            env,
            &mut info,
            &mut outcome.teardown_problems,
        )
    };
    let ok = r.error.is_none() && info.status == Some(RunStatus::Complete);
    if info.error.is_none() {
        info.error = r.error.as_ref().map(ToString::to_string);
    }
    if info.status.is_none() {
        info.status = Some(RunStatus::Failed);
    }
    env.rec.record_cell_run(exp_id, &info)?;
    let msg = match (&info.error, info.status) {
        (Some(e), _) => e.clone(),
        (None, Some(s)) => s.as_str().to_string(),
        (None, None) => String::new(),
    };
    env.progress.cell_end(ok, &msg);
    let run = RepOutcome {
        cell: cell.index,
        repetition: rep,
        ok,
        error: info.error,
        run_id: info.run_id,
        phases: r.phases,
        metrics: r.metrics,
        unmount_s: info.unmount_s,
        image_extents: info.image_extents,
        output: info.output,
        remount_s: info.remount_s,
        evidence: r.evidence,
        guest_accel: info.guest.as_ref().map(|g| g.accel.clone()),
    };
    Ok((run, info.status))
}

/// Starts the experiment's record (or reopens a resumed one) and records
/// its cells.
fn begin(
    exp: &Experiment,
    image_host: Option<&ImageHostFacts>,
    cfg: &RunConfig,
    rec: &mut dyn ExperimentRecorder,
) -> Result<i64, RunError> {
    let (kernel, hostname) = fslab_model::host_facts();
    let exp_id = match &cfg.resume {
        Some(r) => {
            rec.reopen_experiment(r.experiment_id, exp.repetitions)?;
            r.experiment_id
        }
        None => rec.begin_experiment(&ExperimentInfo {
            name: exp.name.clone(),
            file: cfg.file.clone(),
            text: cfg.text.clone(),
            scale: cfg.scale,
            repetitions: exp.repetitions,
            command_line: cfg.command_line.clone(),
            fslab_version: env!("CARGO_PKG_VERSION").into(),
            kernel,
            hostname,
            started_at: now(),
        })?,
    };
    let mut versions = Versions::default();
    let placeholder = Path::new("MNT");
    for c in &exp.cells {
        // A directory that exists: the filesystem found there, as found.
        let found = c.path.as_deref().map(fslab_model::TargetInfo::of);
        let info = CellInfo {
            index: c.index,
            label: c.label.clone(),
            fs_type: match (&c.fs, &found) {
                (Some(f), _) => f.name().to_string(),
                (None, Some(t)) => t.fs_type.clone(),
                (None, None) => "directory".into(),
            },
            mkfs_argv: c
                .fs
                .as_ref()
                .map(|f| fslab_lab::mkfs::mkfs_argv(f, &c.mkfs_options, Path::new("DEVICE")))
                .unwrap_or_default(),
            mkfs_version: c.fs.as_ref().map(|f| versions.of(f)).unwrap_or_default(),
            mount_options: found
                .as_ref()
                .map_or_else(|| mount_options(c), |t| t.mount_options.clone()),
            sysctl: c.sysctl.clone(),
            drop_caches: exp.machine.drop_caches,
            memory_limit_bytes: exp.machine.memory_limit,
            workload: exp.workload.kind.name().into(),
            workload_argv: shown_command_line(exp, c, placeholder),
            device: if let Some(t) = &found {
                let mut d = serde_json::to_value(t).unwrap_or_default();
                if let Some(m) = d.as_object_mut() {
                    m.insert("kind".into(), "path".into());
                }
                d
            } else {
                let mut d = serde_json::to_value(&exp.device).unwrap_or_default();
                if let (Some(h), Some(m)) = (image_host, d.as_object_mut()) {
                    m.insert(
                        "image_host_fs".into(),
                        serde_json::to_value(h).unwrap_or_default(),
                    );
                }
                d
            },
        };
        rec.record_cell(exp_id, &info)?;
    }
    Ok(exp_id)
}

/// Evaluates the stated findings over every completed run and closes the
/// experiment's record.
fn finish(
    exp: &Experiment,
    exp_id: i64,
    outcome: &mut ExperimentOutcome,
    rec: &mut dyn ExperimentRecorder,
) -> Result<(), RunError> {
    // The stated findings, over every completed run.
    let labels: Vec<String> = exp.cells.iter().map(|c| c.label.clone()).collect();
    let samples = finding_samples(outcome);
    let evidence: Vec<(u32, u32, &findings::Evidence)> = outcome
        .runs
        .iter()
        .filter(|r| r.ok)
        .map(|r| (r.cell, r.repetition, &r.evidence))
        .collect();
    let facts = findings::Facts::of(exp, findings::MachineFacts::read(&kernel_symbols(exp)));
    let runs = findings::Runs {
        labels: &labels,
        samples: &samples,
        evidence: &evidence,
        facts: &facts,
    };
    let results = findings::evaluate_all(&exp.findings, &runs);
    for (seq, r) in results.iter().enumerate() {
        rec.record_finding(exp_id, seq as u32, r)?;
    }
    outcome.findings = results;
    let status = if outcome.interrupted {
        RunStatus::Interrupted
    } else if outcome.runs.iter().all(|r| r.ok) {
        RunStatus::Complete
    } else {
        RunStatus::Failed
    };
    rec.finish_experiment(exp_id, status)?;
    Ok(())
}

/// The kernel symbols the experiment's kernel-path mechanisms name.
fn kernel_symbols(exp: &Experiment) -> Vec<String> {
    exp.findings
        .iter()
        .filter_map(|f| match &f.kind {
            findings::FindingKind::Kernel { symbols, .. } => Some(symbols.clone()),
            _ => None,
        })
        .flatten()
        .collect()
}

/// The samples findings read: the summary's and compare's family
/// (`summary::family`), and each phase's median jbd2 commit logging
/// time from the journal probe.
fn finding_samples(outcome: &ExperimentOutcome) -> Vec<RepetitionValue> {
    let mut v = crate::summary::family(outcome);
    for r in outcome.runs.iter().filter(|r| r.ok) {
        for (metric, value) in r.evidence.commit_medians() {
            v.push(RepetitionValue {
                cell: r.cell,
                repetition: r.repetition,
                metric,
                direction: Direction::Time,
                value,
                headline: false,
                exact: false,
            });
        }
    }
    v
}
