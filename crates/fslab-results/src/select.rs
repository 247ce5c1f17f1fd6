//! What `fslab compare` and `fslab report` compare: the cells of an experiment (or groups of runs), metric by
//! metric, with statistics (see fslab-stats).

use fslab_record::json::Versioned;
use fslab_stats::compare::{self, Direction, Metric};
use fslab_store::Store;

use crate::{Error, Result};

/// Groups of runs and the extra per-run values (unmount, remount).
#[derive(Debug, Clone)]
pub struct Groups {
    pub labels: Vec<String>,
    /// Per group: (run id, unmount s, remount s).
    pub runs: Vec<Vec<RunExtras>>,
}

/// A run id with its unmount and remount times in seconds.
pub type RunExtras = (i64, Option<f64>, Option<f64>);

/// What `args` selects: an experiment's cells, or groups of run ids.
pub fn select(store: &Store, experiments: &[i64], runs: &[String]) -> Result<Groups> {
    if !runs.is_empty() {
        let mut g = Groups {
            labels: Vec::new(),
            runs: Vec::new(),
        };
        for list in runs {
            let mut ids = Vec::new();
            for w in list.split(',').map(str::trim).filter(|w| !w.is_empty()) {
                let id: i64 = w.parse().map_err(|_| {
                    Error::Selection(format!("--runs {list}: {w:?} is not a run id"))
                })?;
                store.run(id)?;
                ids.push((id, None, None));
            }
            g.labels.push(format!("runs {list}"));
            g.runs.push(ids);
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
                        r.cell == c.index && r.status == Some(fslab_record::RunStatus::Complete)
                    })
                    .filter_map(|r| r.run_id.map(|id| (id, r.unmount_s, r.remount_s)))
                    .collect(),
            );
        }
    }
    Ok(g)
}

/// The groups that have no completed run (they are left out of every
/// number), one warning line each; fails when none has one: a comparison
/// of nothing is not printed as an empty table.
pub fn complete_runs(g: &Groups) -> Result<Vec<String>> {
    let empty: Vec<&str> = g
        .labels
        .iter()
        .zip(&g.runs)
        .filter(|(_, r)| r.is_empty())
        .map(|(l, _)| l.as_str())
        .collect();
    if !empty.is_empty() && empty.len() == g.labels.len() {
        return Err(Error::Empty(format!(
            "nothing to compare: no cell of the selection has a completed run ({}); `fslab results list` shows the runs and their errors",
            empty.join(", ")
        )));
    }
    Ok(empty
        .into_iter()
        .map(|l| format!("{l}: no completed run, left out of the comparison"))
        .collect())
}

/// The headline metrics of every group: each phase's time, rate, system and
/// user CPU, the tool's own numbers (named `TOOL PHASE NAME (UNIT)`), then
/// unmount and remount times.
pub fn metrics(store: &Store, g: &Groups) -> Result<Vec<Metric>> {
    let n = g.labels.len();
    let mut out: Vec<Metric> = Vec::new();
    let mut push = |name: String, direction: Direction, group: usize, v: f64| {
        let m = match out.iter_mut().position(|m| m.name == name) {
            Some(i) => &mut out[i],
            None => {
                out.push(Metric {
                    name,
                    direction,
                    values: vec![Vec::new(); n],
                });
                out.last_mut().expect("just pushed")
            }
        };
        m.values[group].push(v);
    };
    for (gi, runs) in g.runs.iter().enumerate() {
        for (id, unmount, remount) in runs {
            for p in store.phases(*id)? {
                push(
                    format!("{} time (s)", p.phase),
                    Direction::Time,
                    gi,
                    p.elapsed_s,
                );
                push(
                    format!("{} rate (ops/s)", p.phase),
                    Direction::Rate,
                    gi,
                    p.ops_per_s,
                );
                push(
                    format!("{} sys cpu (s)", p.phase),
                    Direction::Cost,
                    gi,
                    p.sys_cpu_s,
                );
                push(
                    format!("{} usr cpu (s)", p.phase),
                    Direction::Cost,
                    gi,
                    p.usr_cpu_s,
                );
            }
            // The tool's own numbers (breakdown rows stay out: the run's
            // totals stand for them).
            for m in store.metrics(*id)? {
                if m.detail {
                    continue;
                }
                let direction = if m.unit.is_rate() && m.better == fslab_record::Better::Higher {
                    Direction::Rate
                } else if m.unit.is_time() && m.better == fslab_record::Better::Lower {
                    Direction::Time
                } else {
                    Direction::Cost
                };
                push(
                    format!("{} {}", m.source, m.label()),
                    direction,
                    gi,
                    m.value,
                );
            }
            if let Some(u) = unmount {
                push("unmount (s)".into(), Direction::Time, gi, *u);
            }
            if let Some(r) = remount {
                push("remount (s)".into(), Direction::Time, gi, *r);
            }
        }
    }
    Ok(out)
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

/// The comparison as `compare --format json` prints it.
#[derive(Debug, serde::Serialize)]
pub struct Comparison<'a> {
    /// The group the differences are against.
    pub baseline: &'a str,
    pub groups: &'a [String],
    pub rows: &'a [compare::Row],
}

/// `compare`'s rows as a JSON document with its schema version.
pub fn json(labels: &[String], baseline: usize, rows: &[compare::Row]) -> String {
    Versioned::new(Comparison {
        baseline: &labels[baseline],
        groups: labels,
        rows,
    })
    .to_pretty()
}
