//! What a choice selects in the store: the cells of experiments (or
//! groups of runs), each run with what `fslab run` measured around it, and
//! what the selection mixes that a comparison should not hide.

use fslab_model::catalogue;
use fslab_store::{RunRow, Store};

use crate::{Error, Result};

/// Groups of runs, each run with what `fslab run` measured around it.
#[derive(Debug, Clone)]
pub struct Groups {
    /// The experiments the groups are cells of (none for groups of runs).
    pub experiments: Vec<i64>,
    pub labels: Vec<String>,
    pub runs: Vec<Vec<GroupRun>>,
}

/// A run of a group, with the numbers `fslab run` measured around it
/// (none for a run started by hand).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct GroupRun {
    pub id: i64,
    pub unmount_s: Option<f64>,
    pub remount_s: Option<f64>,
    /// The image's extents on the host after the run.
    pub image_extents: Option<u64>,
}

impl GroupRun {
    /// A run started by hand: nothing measured around it.
    pub fn of(id: i64) -> GroupRun {
        GroupRun {
            id,
            ..GroupRun::default()
        }
    }
}

/// What `args` selects: an experiment's cells, or groups of run ids.
pub fn select(store: &Store, experiments: &[i64], runs: &[String]) -> Result<Groups> {
    if !runs.is_empty() {
        let mut g = Groups {
            experiments: Vec::new(),
            labels: Vec::new(),
            runs: Vec::new(),
        };
        let stored = store.run_ids()?;
        for arg in runs {
            let (label, list) = crate::ids::group(arg)?;
            if g.labels.contains(&label) {
                return Err(Error::Selection(format!(
                    "--runs {arg}: the label {label:?} is given twice"
                )));
            }
            let ids = crate::ids::resolve_in(&stored, list, &format!("--runs {arg}"))?;
            g.labels.push(label);
            g.runs.push(ids.into_iter().map(GroupRun::of).collect());
        }
        return Ok(g);
    }
    let ids = if experiments.is_empty() {
        vec![store.latest_experiment()?.ok_or_else(|| {
            Error::Selection("the results store has no experiment yet: run one (fslab run) or choose runs with --runs".into())
        })?]
    } else {
        experiments.to_vec()
    };
    let records = ids
        .iter()
        .map(|&id| store.experiment(id))
        .collect::<std::result::Result<Vec<_>, _>>()?;
    // Several experiments: each cell is named by its experiment too, and by
    // its kernel when the kernels differ (the usual regression question).
    let kernels_differ = records.iter().any(|e| e.kernel != records[0].kernel);
    let mut g = Groups {
        experiments: ids.clone(),
        labels: Vec::new(),
        runs: Vec::new(),
    };
    for e in &records {
        for c in &e.cells {
            g.labels.push(match (records.len(), kernels_differ) {
                (1, _) => c.label.clone(),
                (_, false) => format!("{} (exp {})", c.label, e.id),
                (_, true) => format!("{} (exp {}, {})", c.label, e.id, e.kernel),
            });
            g.runs.push(
                e.cell_runs
                    .iter()
                    .filter(|r| {
                        r.cell == c.index && r.status == Some(fslab_model::RunStatus::Complete)
                    })
                    .filter_map(|r| {
                        r.run_id.map(|id| GroupRun {
                            id,
                            unmount_s: r.unmount_s,
                            remount_s: r.remount_s,
                            image_extents: r.image_extents,
                        })
                    })
                    .collect(),
            );
        }
    }
    Ok(g)
}

/// The groups that have no completed run (they are left out of every
/// number), one warning line each.
pub fn complete_runs(g: &Groups) -> Vec<String> {
    g.labels
        .iter()
        .zip(&g.runs)
        .filter(|(_, r)| r.is_empty())
        .map(|(l, _)| format!("{l}: no completed run, left out of the comparison"))
        .collect()
}

/// Fails when no group has a completed run: a comparison of nothing is not
/// printed as an empty table.
pub fn something_to_compare(g: &Groups) -> Result<()> {
    if !g.labels.is_empty() && g.runs.iter().all(Vec::is_empty) {
        return Err(Error::Empty(format!(
            "nothing to compare: no cell of the selection has a completed run ({}); `fslab results list` shows the runs and their errors",
            g.labels.join(", ")
        )));
    }
    Ok(())
}

/// One stored run through the metric catalogue, with what `fslab run`
/// measured around it.
pub fn run_samples(store: &Store, run: &GroupRun) -> Result<Vec<catalogue::Sample>> {
    let phases: Vec<fslab_model::PhaseResult> =
        store.phases(run.id)?.into_iter().map(Into::into).collect();
    let metrics = store.metrics(run.id)?;
    Ok(catalogue::samples(&catalogue::RunNumbers {
        phases: &phases,
        metrics: &metrics,
        unmount_s: run.unmount_s,
        remount_s: run.remount_s,
        image_extents: run.image_extents,
    }))
}

/// A run's options, paths aside, as one line (`name = value; ...`): what
/// an A/A calibration must share with the runs it gives a threshold to.
pub fn option_key(params: &serde_json::Value) -> String {
    options(params)
        .into_iter()
        .map(|(k, v)| format!("{k} = {v}"))
        .collect::<Vec<_>>()
        .join("; ")
}

/// A run's options as `name = value` leaves of its parameters, without
/// paths (directories and file names differ between repetitions).
fn options(params: &serde_json::Value) -> std::collections::BTreeMap<String, String> {
    fn walk(
        prefix: &str,
        v: &serde_json::Value,
        out: &mut std::collections::BTreeMap<String, String>,
    ) {
        match v {
            serde_json::Value::Object(m) => {
                for (k, x) in m {
                    let name = if prefix.is_empty() {
                        k.clone()
                    } else {
                        format!("{prefix}.{k}")
                    };
                    walk(&name, x, out);
                }
            }
            serde_json::Value::String(t) if t.starts_with('/') => {}
            serde_json::Value::Array(a)
                if a.iter()
                    .all(|x| x.as_str().is_some_and(|t| t.starts_with('/'))) => {}
            x => {
                out.insert(prefix.to_string(), x.to_string());
            }
        }
    }
    let mut out = std::collections::BTreeMap::new();
    walk("", params, &mut out);
    out
}

/// The options in which two runs differ, as `name A vs B`.
fn differences(a: &serde_json::Value, b: &serde_json::Value) -> Vec<String> {
    let (a, b) = (options(a), options(b));
    let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter(|k| a.get(*k) != b.get(*k))
        .map(|k| {
            let v = |m: &std::collections::BTreeMap<String, String>| {
                m.get(k).cloned().unwrap_or_else(|| "-".into())
            };
            format!("{k} {} vs {}", v(&a), v(&b))
        })
        .collect()
}

/// What a selection mixes that a comparison should not hide. Runs of
/// different workloads are refused (their numbers do not compare). Notes:
/// a group whose runs differ in options or kernel (a group should be
/// repetitions of one thing); for groups of runs, the options and kernels
/// in which the groups differ; for experiments, different scales.
/// `rows` are each group's runs' rows, in [`Groups::runs`]' order.
pub fn check_mix(store: &Store, g: &Groups, rows: &[Vec<RunRow>]) -> Result<Vec<String>> {
    let experiments = &g.experiments;
    let mut runs: Vec<(&str, &RunRow)> = Vec::new();
    for (label, group) in g.labels.iter().zip(rows) {
        for r in group {
            runs.push((label.as_str(), r));
        }
    }
    let mut workloads: Vec<(&str, Vec<String>)> = Vec::new();
    for (_, r) in &runs {
        match workloads.iter_mut().find(|w| w.0 == r.workload) {
            Some(w) => w.1.push(r.id.to_string()),
            None => workloads.push((r.workload.as_str(), vec![r.id.to_string()])),
        }
    }
    if workloads.len() > 1 {
        let list: Vec<String> = workloads
            .iter()
            .map(|(w, ids)| format!("{w} (runs {})", ids.join(",")))
            .collect();
        return Err(Error::Selection(format!(
            "the selection mixes workloads: {}; their numbers do not compare: choose runs of one workload",
            list.join(", ")
        )));
    }
    let mut notes = Vec::new();
    for label in &g.labels {
        let mine: Vec<&RunRow> = runs.iter().filter(|r| r.0 == label).map(|r| r.1).collect();
        let Some(first) = mine.first() else { continue };
        for r in &mine[1..] {
            let d = differences(&first.params, &r.params);
            if !d.is_empty() {
                notes.push(format!(
                    "{label}: run {} differs from run {} in {}: a group should be repetitions of one thing",
                    r.id,
                    first.id,
                    d.join(", ")
                ));
            }
            if r.kernel != first.kernel {
                notes.push(format!(
                    "{label}: run {} ran on kernel {}, run {} on {}",
                    r.id, r.kernel, first.id, first.kernel
                ));
            }
        }
    }
    if experiments.is_empty() {
        // Groups of runs: say how the groups differ beyond their labels.
        let firsts: Vec<(&str, &RunRow)> = g
            .labels
            .iter()
            .filter_map(|l| runs.iter().find(|r| r.0 == l).map(|r| (l.as_str(), r.1)))
            .collect();
        if let Some((l0, r0)) = firsts.first() {
            for (l, r) in &firsts[1..] {
                let d = differences(&r0.params, &r.params);
                if !d.is_empty() {
                    notes.push(format!("{l} differs from {l0} in {}", d.join(", ")));
                }
                if r.kernel != r0.kernel {
                    notes.push(format!(
                        "{l} ran on kernel {}, {l0} on {}",
                        r.kernel, r0.kernel
                    ));
                }
            }
        }
    } else {
        let recs = experiments
            .iter()
            .map(|&id| store.experiment(id))
            .collect::<std::result::Result<Vec<_>, _>>()?;
        if recs.iter().any(|e| e.scale != recs[0].scale) {
            let list: Vec<String> = recs
                .iter()
                .map(|e| format!("experiment {} at scale {}", e.id, e.scale))
                .collect();
            notes.push(format!(
                "the experiments ran at different scales ({}): their differences are mostly the scale's",
                list.join(", ")
            ));
        }
    }
    Ok(notes)
}

/// The baseline group's position: `--baseline`'s, which must have a
/// completed run, or the first group that has one.
pub fn baseline_of(g: &Groups, b: Option<&str>) -> Result<usize> {
    if b.is_none() {
        return Ok(g.runs.iter().position(|r| !r.is_empty()).unwrap_or(0));
    }
    let i = baseline(&g.labels, b)?;
    if g.runs[i].is_empty() {
        return Err(Error::Selection(format!(
            "the baseline {:?} has no completed run: choose another with --baseline",
            g.labels[i]
        )));
    }
    Ok(i)
}

/// The baseline group's position from `--baseline`.
pub fn baseline(labels: &[String], b: Option<&str>) -> Result<usize> {
    match b {
        None => Ok(0),
        Some(s) => {
            if let Ok(i) = s.parse::<usize>() {
                if i < labels.len() {
                    return Ok(i);
                }
            }
            labels.iter().position(|l| l == s).ok_or_else(|| {
                Error::Selection(format!(
                    "--baseline {s}: no such group (groups: {})",
                    labels.join("; ")
                ))
            })
        }
    }
}
