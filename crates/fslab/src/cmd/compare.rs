//! `fslab compare`: the cells of an experiment (or groups of runs), metric by
//! metric, with statistics (see fslab-stats).

use std::path::Path;

use fslab_stats::compare::{self, Direction, Metric};
use fslab_store::Store;

use crate::cli::{CompareArgs, CompareFormat};
use crate::Failure;

/// Groups of runs and the extra per-run values (unmount, remount).
pub struct Groups {
    pub labels: Vec<String>,
    /// Per group: (run id, unmount s, remount s).
    pub runs: Vec<Vec<RunExtras>>,
}

/// A run id with its unmount and remount times in seconds.
pub type RunExtras = (i64, Option<f64>, Option<f64>);

fn store_err(e: fslab_store::StoreError) -> Failure {
    match e {
        fslab_store::StoreError::NoSuchRun(_) | fslab_store::StoreError::NoSuchExperiment(_) => {
            Failure::Usage(e.to_string())
        }
        e => Failure::Failed(format!("results store {e}")),
    }
}

/// What `args` selects: an experiment's cells, or groups of run ids.
pub fn select(store: &Store, experiments: &[i64], runs: &[String]) -> Result<Groups, Failure> {
    if !runs.is_empty() {
        let mut g = Groups {
            labels: Vec::new(),
            runs: Vec::new(),
        };
        for list in runs {
            let mut ids = Vec::new();
            for w in list.split(',').map(str::trim).filter(|w| !w.is_empty()) {
                let id: i64 = w
                    .parse()
                    .map_err(|_| Failure::Usage(format!("--runs {list}: {w:?} is not a run id")))?;
                store.run(id).map_err(store_err)?;
                ids.push((id, None, None));
            }
            g.labels.push(format!("runs {list}"));
            g.runs.push(ids);
        }
        return Ok(g);
    }
    let ids = if experiments.is_empty() {
        vec![store.latest_experiment().map_err(store_err)?.ok_or_else(|| {
            Failure::Usage("the results store has no experiment yet: run one (fslab run) or choose runs with --runs".into())
        })?]
    } else {
        experiments.to_vec()
    };
    let records = ids
        .iter()
        .map(|&id| store.experiment(id).map_err(store_err))
        .collect::<Result<Vec<_>, _>>()?;
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

/// Says which groups have no completed run (they are left out of every
/// number), and fails when none has one: a comparison of nothing is not
/// printed as an empty table.
pub fn complete_runs(g: &Groups) -> Result<(), Failure> {
    let empty: Vec<&str> = g
        .labels
        .iter()
        .zip(&g.runs)
        .filter(|(_, r)| r.is_empty())
        .map(|(l, _)| l.as_str())
        .collect();
    if !empty.is_empty() && empty.len() == g.labels.len() {
        return Err(Failure::Failed(format!(
            "nothing to compare: no cell of the selection has a completed run ({}); `fslab results list` shows the runs and their errors",
            empty.join(", ")
        )));
    }
    for l in empty {
        eprintln!("fslab: compare: {l}: no completed run, left out of the comparison");
    }
    Ok(())
}

/// The headline metrics of every group: each phase's time, rate, system and
/// user CPU, the tool's own numbers (named `TOOL PHASE NAME (UNIT)`), then
/// unmount and remount times.
pub fn metrics(store: &Store, g: &Groups) -> Result<Vec<Metric>, Failure> {
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
            for p in store.phases(*id).map_err(store_err)? {
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
            for m in store.metrics(*id).map_err(store_err)? {
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
pub fn baseline(labels: &[String], b: Option<&str>) -> Result<usize, Failure> {
    match b {
        None => Ok(0),
        Some(s) => {
            if let Ok(i) = s.parse::<usize>() {
                if i < labels.len() {
                    return Ok(i);
                }
            }
            labels.iter().position(|l| l == s).ok_or_else(|| {
                Failure::Usage(format!(
                    "--baseline {s}: no such group (groups: {})",
                    labels.join("; ")
                ))
            })
        }
    }
}

pub fn run(args: CompareArgs, db: &Path) -> Result<(), Failure> {
    if !db.exists() {
        return Err(Failure::Usage(format!(
            "no results store at {} (run a workload first, or give --db)",
            db.display()
        )));
    }
    let store = super::open_store_read(db)?;
    let g = select(&store, &args.experiment, &args.runs)?;
    complete_runs(&g)?;
    let base = baseline(&g.labels, args.baseline.as_deref())?;
    let m = metrics(&store, &g)?;
    let rows = compare::compare(&g.labels, &m, base);
    let text = match args.format {
        CompareFormat::Text => compare::text(&rows),
        CompareFormat::Markdown => compare::markdown(&rows),
        CompareFormat::Csv => compare::csv(&rows),
        CompareFormat::Json => serde_json::to_string_pretty(&rows).unwrap_or_default() + "\n",
    };
    print!("{text}");
    Ok(())
}
