//! `fslab report -o FILE.html`: the comparison of an experiment's cells (or
//! groups of runs) and, for every cell, charts and tables drawn from the
//! store: rates over time, the IO pattern, IOPS and MB/s, IO sizes, image
//! extents, CPU, memory, journal commits, latency CDFs and percentiles, wait
//! stacks and profile symbols.

use super::cell::{self, CellView, PhaseRates};
use super::{html, Block};
use fslab_cluster::MpiParams;
use fslab_model::RunStatus;
use fslab_probe::plugin;
use fslab_store::{RunRecord, Store, StoredNote};

use fslab_analysis::{Analysis, GroupRun};

use crate::Result;

fn cell(store: &Store, (i, label): (usize, &str), runs: &[i64]) -> Result<(CellView, Vec<Block>)> {
    let mut view = CellView {
        label: label.to_string(),
        colour: super::cell_colour(i),
        charts: Vec::new(),
        phases: Vec::new(),
        latency: Vec::new(),
        cpu: Vec::new(),
    };
    let mut out = vec![Block::Heading(format!("cell: {label}"))];
    let ids: Vec<String> = runs.iter().map(|r| r.to_string()).collect();
    // Every run of the cell, read once.
    let all = runs
        .iter()
        .map(|&r| store.run(r).map(|rec| (r, rec)))
        .collect::<std::result::Result<Vec<_>, _>>()?;
    let times: Vec<(i64, bool, f64)> = all
        .iter()
        .map(|(r, rec)| {
            let complete = rec.run.status == RunStatus::Complete;
            (*r, complete, rec.phases.iter().map(|p| p.elapsed_s).sum())
        })
        .collect();
    let Some(first) = median_run(&times) else {
        return Ok((view, out));
    };
    out.push(Block::Text(format!(
        "runs {} (the charts \"each run\" from every run; the others and the tables from run \
         {first}, the completed run of median workload time)",
        ids.join(", "),
    )));
    // How the run's filesystem was made (for runs of `fslab run`).
    if let Some(o) = store.run_origin(first)? {
        out.push(Block::Pre(
            crate::show::origin(&o).trim_matches('\n').to_string(),
        ));
    }
    let rec = &all
        .iter()
        .find(|(r, _)| *r == first)
        .expect("a run of the cell")
        .1;
    // The machine it ran on (each host's facts).
    let machine = crate::show::machine(&rec.machine);
    if !machine.is_empty() {
        out.push(Block::Pre(machine.trim_matches('\n').to_string()));
    }
    if let Some(mpi) = MpiParams::of(&rec.run.params) {
        out.extend(rank_blocks(&mpi));
    }
    view.charts.extend(cell::rate_charts(rec, &all));
    view.phases = rec
        .phases
        .iter()
        .map(|p| PhaseRates {
            phase: p.phase.clone(),
            rates: cell::rates(rec, p.seq),
            elapsed_s: p.elapsed_s,
        })
        .collect();
    let off = cell::offsets(rec);
    let pts = store.probe_points(first)?;
    let notes = store.probe_notes(first)?;
    view.charts.extend(cell::io_pattern(&notes));
    view.charts.extend(cell::probe_charts(&pts, &off));
    view.cpu = cell::workload_cpu(&pts, &off);
    view.latency = store.latency_histograms(first)?;
    out.extend(probe_tables(rec, &notes));
    Ok((view, out))
}

/// Each registered probe's tables of its notes (wait stacks, profile
/// symbols), in the registry's order.
fn probe_tables(rec: &RunRecord, notes: &[StoredNote]) -> Vec<Block> {
    let refs = crate::show::note_refs(notes);
    let phases = crate::show::phase_names(rec);
    let run = plugin::Described {
        run_id: rec.run.id,
        phase: None,
        phases: &phases,
        notes: &refs,
        summaries: &[],
    };
    fslab_probe::all()
        .into_iter()
        .flat_map(|k| k.plugin().tables(&run))
        .map(|t| Block::Table(t.head, t.rows))
        .collect()
}

/// For a run merged from MPI ranks: which hosts ran how many ranks, and
/// each phase's aggregate rate beside the spread of the ranks' own rates.
fn rank_blocks(mpi: &MpiParams) -> Vec<Block> {
    let num = |v: f64| format!("{v:.1}");
    let rows: Vec<Vec<String>> = mpi
        .rates
        .iter()
        .map(|r| {
            vec![
                r.phase.clone(),
                r.ranks.to_string(),
                num(r.aggregate),
                num(r.max),
                num(r.min),
                num(r.mean),
                num(r.sd),
            ]
        })
        .collect();
    let mut blocks = vec![
        Block::Text(format!(
            "merged from {} MPI ranks on {}: a phase's rate is every rank's operations over the slowest rank's time",
            mpi.ranks,
            mpi.host_counts()
        )),
        Block::Table(
            ["phase", "ranks", "aggregate ops/s", "rank max", "rank min", "rank mean", "rank sd"]
                .map(String::from)
                .to_vec(),
            rows,
        ),
    ];
    if let Some((header, rows)) = mpi.host_probes() {
        blocks.push(Block::Text(
            "probes per host (the run's own probe numbers are rank 0's host's)".into(),
        ));
        blocks.push(Block::Table(header, rows));
    }
    blocks
}

/// The report: its page and what it holds.
pub struct Page {
    pub html: String,
    /// Charts, bar charts and movies drawn.
    pub charts: usize,
    pub cells: usize,
}

/// The report of analysis `a`, with what the store holds about its runs.
pub fn build(store: &Store, a: &Analysis) -> Result<Page> {
    let experiments = &a.experiments;
    let title = if experiments.is_empty() {
        "fslab report: groups of runs".to_string()
    } else {
        let names: Vec<String> = experiments
            .iter()
            .map(|e| format!("experiment {} ({})", e.id, e.name))
            .collect();
        format!("fslab report: {}", names.join("; "))
    };
    let mut blocks = vec![super::overview::header(store, a)?];
    let kernels = fslab_analysis::kernels::group_kernels(store, &a.labels, &a.runs)?;
    blocks.extend(
        fslab_analysis::kernels::lines(&kernels)
            .into_iter()
            .map(Block::Text),
    );
    blocks.extend(a.notes.iter().map(|n| Block::Text(format!("note: {n}"))));
    blocks.extend(explanation_blocks(a));
    blocks.extend(findings(experiments));
    blocks.extend(not_completed(experiments));
    // Each cell's run of median time stands for it in the overview's rates.
    let mut medians = Vec::new();
    for runs in &a.runs {
        let mut times = Vec::new();
        for GroupRun { id, .. } in runs {
            let rec = store.run(*id)?;
            let t = rec.phases.iter().map(|p| p.elapsed_s).sum::<f64>();
            times.push((*id, rec.run.status == RunStatus::Complete, t));
        }
        medians.push(match median_run(&times) {
            Some(id) => Some(store.run(id)?),
            None => None,
        });
    }
    blocks.extend(super::overview::blocks(a, &medians));
    drop(medians);
    // Each cell read once: its charts go to the comparison, its own
    // blocks (its runs, how it was made, its tables) after it.
    let mut views = Vec::new();
    let mut details = Vec::new();
    for (i, (label, runs)) in a.labels.iter().zip(&a.runs).enumerate() {
        let ids: Vec<i64> = runs.iter().map(|r| r.id).collect();
        let (view, own) = cell(store, (i, label), &ids)?;
        views.push(view);
        details.extend(own);
    }
    blocks.extend(super::compared::blocks(&views));
    drop(views);
    blocks.push(Block::Heading("every metric".into()));
    blocks.push(Block::Table(
        crate::comparison::COLUMNS.map(String::from).to_vec(),
        crate::comparison::table(&a.rows),
    ));
    // Where each δ came from (a calibration, --delta, A/A splits) and how
    // the p-values were corrected, as `compare` says it.
    let provenance = crate::comparison::provenance(&a.rows);
    if !provenance.is_empty() {
        blocks.push(Block::Pre(provenance.trim_end().to_string()));
    }
    blocks.extend(details);
    let charts = blocks.iter().map(Block::charts).sum();
    Ok(Page {
        html: html(&title, &blocks),
        charts,
        cells: a.labels.len(),
    })
}

/// What the instruments say about the analysis, as a table (none when
/// they say nothing).
fn explanation_blocks(a: &Analysis) -> Vec<Block> {
    if a.explanations.is_empty() {
        return Vec::new();
    }
    let rows = a
        .explanations
        .iter()
        .map(|e| {
            vec![
                e.about.words(),
                e.kind.name().to_string(),
                e.says.clone(),
                e.evidence.join("; "),
            ]
        })
        .collect();
    vec![
        Block::Heading("explanations".into()),
        Block::Table(
            ["about", "kind", "says", "evidence"]
                .map(String::from)
                .to_vec(),
            rows,
        ),
    ]
}

/// The experiments' findings as a table (none when they state none).
fn findings(experiments: &[fslab_store::ExperimentRecord]) -> Vec<Block> {
    let rows: Vec<Vec<String>> = experiments
        .iter()
        .flat_map(|e| {
            e.findings.iter().map(move |f| {
                let mut numbers = f.detail.clone();
                for (label, x) in [("why", &f.why), ("from", &f.from)] {
                    if !x.is_empty() {
                        numbers.push_str(&format!("; {label}: {x}"));
                    }
                }
                if let Some(si) = &f.stand_in {
                    numbers.push_str(&format!("; stand-in: {si}"));
                }
                vec![
                    format!("{} ({})", e.id, e.name),
                    format!("{} {}", f.id, f.says),
                    f.author.clone(),
                    f.outcome.words().to_string(),
                    numbers,
                ]
            })
        })
        .collect();
    if rows.is_empty() {
        return Vec::new();
    }
    vec![
        Block::Heading("findings".into()),
        Block::Table(
            [
                "experiment",
                "finding",
                "author",
                "verdict",
                "fslab's numbers",
            ]
            .map(String::from)
            .to_vec(),
            rows,
        ),
    ]
}

/// Runs that did not complete are in no comparison: which, and why.
fn not_completed(experiments: &[fslab_store::ExperimentRecord]) -> Vec<Block> {
    let mut not_done = Vec::new();
    for e in experiments {
        for r in e
            .cell_runs
            .iter()
            .filter(|r| r.status != Some(RunStatus::Complete))
        {
            let label = e
                .cells
                .iter()
                .find(|c| c.index == r.cell)
                .map(|c| c.label.clone());
            not_done.push(vec![
                format!(
                    "{} (exp {})",
                    label.unwrap_or_else(|| format!("cell {}", r.cell)),
                    e.id
                ),
                r.repetition.to_string(),
                r.status.map(|s| s.as_str()).unwrap_or("failed").to_string(),
                r.error.clone().unwrap_or_default(),
            ]);
        }
    }
    if not_done.is_empty() {
        return Vec::new();
    }
    vec![
        Block::Text(format!(
            "{} run(s) did not complete and are left out of the comparison:",
            not_done.len()
        )),
        Block::Table(
            ["cell", "repetition", "status", "error"]
                .map(String::from)
                .to_vec(),
            not_done,
        ),
    ]
}

/// The run whose probes stand for its cell: of the completed runs (or of all,
/// when none completed), the one of median total phase time; with an even
/// count, the faster of the middle two.
fn median_run(runs: &[(i64, bool, f64)]) -> Option<i64> {
    let mut pick: Vec<&(i64, bool, f64)> = runs.iter().filter(|r| r.1).collect();
    if pick.is_empty() {
        pick = runs.iter().collect();
    }
    pick.sort_by(|a, b| a.2.total_cmp(&b.2).then(a.0.cmp(&b.0)));
    pick.get(pick.len().saturating_sub(1) / 2).map(|r| r.0)
}

#[cfg(test)]
mod tests {
    use super::median_run;

    #[test]
    fn the_cells_run_of_median_time_stands_for_it() {
        assert_eq!(median_run(&[]), None);
        assert_eq!(median_run(&[(7, false, 3.0)]), Some(7));
        let runs = [(1, true, 9.0), (2, true, 1.0), (3, true, 5.0)];
        assert_eq!(median_run(&runs), Some(3));
        // Even count: the faster of the middle two.
        let runs = [
            (1, true, 9.0),
            (2, true, 1.0),
            (3, true, 5.0),
            (4, true, 6.0),
        ];
        assert_eq!(median_run(&runs), Some(3));
        // A failed run (short, since it stopped early) does not stand for the cell.
        let runs = [
            (1, false, 0.1),
            (2, true, 4.0),
            (3, true, 5.0),
            (4, false, 0.2),
        ];
        assert_eq!(median_run(&runs), Some(2));
    }
}
