//! `fslab report -o FILE.html`: the comparison of an experiment's cells (or
//! groups of runs) and, for every cell, charts and tables drawn from the
//! store: rates over time, the IO pattern, IOPS and MB/s, IO sizes, image
//! extents, CPU, memory, journal commits, latency CDFs and percentiles, wait
//! stacks and profile symbols.

use std::collections::BTreeMap;

use super::{html, Bars, Block, Chart, Io, Movie, Series, Style};
use fslab_cluster::MpiParams;
use fslab_probe::notes::{BlockioEvents, Note};
use fslab_probe::plugin;
use fslab_probe::TargetsNote;
use fslab_record::{catalogue, RunStatus};
use fslab_store::{RunRecord, Store, StoredNote, StoredPoint};

use fslab_analysis::{Analysis, GroupRun};

use crate::Result;

fn line(name: impl Into<String>, points: Vec<(f64, f64)>) -> Series {
    Series {
        name: name.into(),
        points,
        style: Style::Line,
        colour: None,
    }
}

fn chart(title: &str, x: &str, y: &str, series: Vec<Series>) -> Option<Block> {
    let series: Vec<Series> = series
        .into_iter()
        .filter(|s| !s.points.is_empty())
        .collect();
    (!series.is_empty()).then(|| {
        Block::Chart(Chart {
            title: title.into(),
            x_label: x.into(),
            y_label: y.into(),
            series,
            log_x: false,
            log_y: false,
            markers: Vec::new(),
            wide: false,
        })
    })
}

/// Run-relative time: each phase's points are offset by the phases before it.
fn offsets(store: &Store, run: i64) -> BTreeMap<u32, f64> {
    let mut m = BTreeMap::new();
    let mut t = 0.0;
    for p in store.phases(run).unwrap_or_default() {
        m.insert(p.seq, t);
        t += p.elapsed_s;
    }
    m
}

fn points(
    all: &[StoredPoint],
    off: &BTreeMap<u32, f64>,
    probe: &str,
    metric: &str,
    scale: f64,
) -> Vec<(f64, f64)> {
    all.iter()
        .filter(|p| p.probe == probe && p.metric == metric)
        .map(|p| {
            let t0 = off.get(&p.phase_index).copied().unwrap_or(0.0);
            (t0 + p.t_s, p.value * scale)
        })
        .collect()
}

fn cell_blocks(store: &Store, label: &str, runs: &[i64], out: &mut Vec<Block>) -> Result<()> {
    out.push(Block::Heading(format!("cell: {label}")));
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
        return Ok(());
    };
    out.push(Block::Text(format!(
        "runs {} (rate over time for every run; the other charts and tables from run {first}, \
         the completed run of median workload time)",
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
    out.extend(rate_charts(rec, &all));
    let off = offsets(store, first);
    let pts = store.probe_points(first)?;
    let notes = store.probe_notes(first)?;
    out.extend(io_pattern(&notes));
    out.extend(probe_charts(&pts, &off));
    out.extend(latency_blocks(store, first)?);
    out.extend(probe_tables(rec, &notes));
    Ok(())
}

/// Rate over time, per phase, one line per run; numbered items' rates
/// against their number (fs_mark's loops, createmany's entries).
fn rate_charts(rec: &RunRecord, all: &[(i64, RunRecord)]) -> Vec<Block> {
    let mut out = Vec::new();
    // Rate over time, per phase, one line per run.
    for p in &rec.phases {
        let mut series = Vec::new();
        for (r, run) in all {
            let mut prev = 0.0;
            let pts: Vec<(f64, f64)> = run
                .series
                .iter()
                .filter(|s| s.phase_index == p.seq)
                .map(|s| {
                    let dt = (s.t_s - prev).max(1e-9);
                    prev = s.t_s;
                    (s.t_s, s.ops as f64 / dt)
                })
                .collect();
            series.push(line(format!("run {r}"), pts));
        }
        out.extend(chart(
            &format!("{}: operations per second", p.phase),
            "time in phase (s)",
            "ops/s",
            series,
        ));
    }
    // Numbered items' rates (a workload's loops, its rate as its directory
    // grows) against their number, one line per run.
    let mut kinds: Vec<(String, String, String, String)> = Vec::new();
    for m in rec.metrics.iter().filter(|m| m.detail && m.unit.is_rate()) {
        if let Some((word, _)) = m.phase.as_deref().and_then(catalogue::numbered) {
            let k = (
                m.source.clone(),
                word.to_string(),
                m.name.clone(),
                m.unit.symbol().to_string(),
            );
            if !kinds.contains(&k) {
                kinds.push(k);
            }
        }
    }
    for (source, word, name, unit) in kinds {
        let mut series = Vec::new();
        for (r, run) in all {
            let pts = run
                .metrics
                .iter()
                .filter(|m| m.detail && m.source == source && m.name == name)
                .filter_map(|m| {
                    let (w, n) = catalogue::numbered(m.phase.as_deref()?)?;
                    (w == word).then_some((n as f64, m.value))
                })
                .collect();
            series.push(line(format!("run {r}"), pts));
        }
        out.extend(chart(
            &format!("{source} {name} against {word}"),
            &word,
            &unit,
            series,
        ));
    }
    out
}

/// The IO pattern (sector against time) and iowatcher's movie of the
/// filesystem's device, from the block trace.
fn io_pattern(notes: &[StoredNote]) -> Vec<Block> {
    let mut out = Vec::new();
    // The IO pattern: sector against time for every completed request.
    if let Some(ev) = notes.iter().find(|n| BlockioEvents::is(&n.probe, &n.key)) {
        let blob = ev.blob.as_deref().unwrap_or_default();
        // Two passes over the records, one at a time: counts per device and
        // time zero, then every step-th request of the filesystem's device.
        let mut by_dev: BTreeMap<u32, usize> = BTreeMap::new();
        let mut first = u64::MAX;
        let _ = fslab_probe::blockio::each_completion(blob, |e| {
            if e.nr_sector > 0 {
                *by_dev.entry(e.dev).or_default() += 1;
            }
            first = first.min(e.t_ns);
            true
        });
        let targets = notes
            .iter()
            .find(|n| TargetsNote::is(&n.probe, &n.key))
            .map(|n| TargetsNote::from_value(&n.value))
            .unwrap_or_default();
        let target = targets.device.clone();
        // The filesystem's own device; runs recorded before its numbers were
        // kept fall back to the busiest traced device.
        let dev = targets
            .device_number()
            .or_else(|| by_dev.iter().max_by_key(|(_, n)| **n).map(|(d, _)| *d))
            .unwrap_or(0);
        let t0 = BlockioEvents::from_value(&ev.value)
            .t0_mono_ns
            .min(if first == u64::MAX { 0 } else { first });
        let count = by_dev.get(&dev).copied().unwrap_or(0);
        let step = (count / 30_000).max(1);
        let mut mine = Vec::new();
        let mut i = 0usize;
        let _ = fslab_probe::blockio::each_completion(blob, |e| {
            if e.dev == dev && e.nr_sector > 0 {
                if i.is_multiple_of(step) {
                    mine.push(*e);
                }
                i += 1;
            }
            true
        });
        let (mut w, mut r) = (Vec::new(), Vec::new());
        for e in &mine {
            let p = ((e.t_ns - t0) as f64 / 1e9, e.sector as f64);
            if e.is_write() {
                w.push(p);
            } else {
                r.push(p);
            }
        }
        let title = format!(
            "IO pattern on {} ({} requests{})",
            target.unwrap_or_else(|| format!("{},{}", dev >> 20, dev & 0xfffff)),
            mine.len(),
            if step > 1 {
                format!(", every {step}th drawn")
            } else {
                String::new()
            }
        );
        let series = vec![
            Series {
                name: "writes".into(),
                points: w,
                style: Style::Points,
                colour: Some(super::svg::WRITE),
            },
            Series {
                name: "reads".into(),
                points: r,
                style: Style::Points,
                colour: Some(super::svg::READ),
            },
        ];
        out.extend(chart(&title, "time (s)", "sector", series));
        // The same requests (every step-th of a long trace) as iowatcher's
        // movie: where on the device, window by window.
        let ios: Vec<Io> = mine
            .iter()
            .map(|e| Io {
                t_s: (e.t_ns - t0) as f64 / 1e9,
                sector: e.sector,
                sectors: e.nr_sector as u64,
                write: e.is_write(),
            })
            .collect();
        if !ios.is_empty() {
            let name = targets.device.as_deref().unwrap_or("the device");
            out.push(Block::Movie(Movie::new(
                &format!("IO movie of {name} (iowatcher style; plays in a loop)"),
                &ios,
                targets.device_sectors.unwrap_or(0),
                60,
            )));
        }
    }
    out
}

/// Each registered probe's charts over run time (its series, grouped by
/// the chart it places them on) and bar charts (a series summed over the
/// run), in the registry's order.
fn probe_charts(pts: &[StoredPoint], off: &BTreeMap<u32, f64>) -> Vec<Block> {
    let mut out = Vec::new();
    for k in fslab_probe::all() {
        let probe = k.name();
        let series = k.plugin().series();
        let mut charts: Vec<plugin::Chart> = Vec::new();
        for c in series.iter().filter_map(|s| s.chart.map(|p| p.chart)) {
            if !charts.contains(&c) {
                charts.push(c);
            }
        }
        for c in charts {
            let lines = series
                .iter()
                .filter_map(|s| Some((s, s.chart.filter(|p| p.chart == c)?)))
                .map(|(s, p)| Series {
                    name: s.label.clone(),
                    points: points(pts, off, probe, &s.metric, p.scale),
                    style: match p.style {
                        plugin::Style::Line => Style::Line,
                        plugin::Style::Points => Style::Points,
                    },
                    colour: match p.tone {
                        plugin::Tone::Auto => None,
                        plugin::Tone::Write => Some(super::svg::WRITE),
                        plugin::Tone::Read => Some(super::svg::READ),
                    },
                })
                .collect();
            out.extend(chart(c.title, "time (s)", c.y_label, lines));
        }
        for b in k.plugin().bars() {
            let bars: Vec<(String, f64)> = b
                .bars
                .iter()
                .map(|(label, m)| {
                    let total = points(pts, off, probe, m, 1.0).iter().map(|p| p.1).sum();
                    (label.clone(), total)
                })
                .collect();
            if bars.iter().any(|s| s.1 > 0.0) {
                out.push(Block::Bars(Bars {
                    title: b.title.into(),
                    y_label: b.y_label.into(),
                    bars,
                }));
            }
        }
    }
    out
}

/// Latency CDFs and the percentile table.
fn latency_blocks(store: &Store, run: i64) -> Result<Vec<Block>> {
    let mut out = Vec::new();
    let hists = store.latency_histograms(run)?;
    if !hists.is_empty() {
        let series: Vec<Series> = hists
            .iter()
            .map(|h| {
                line(
                    format!("{} {}", h.phase, h.op),
                    h.histogram
                        .cdf()
                        .into_iter()
                        .map(|(v, f)| (v as f64 / 1000.0, f))
                        .collect(),
                )
            })
            .collect();
        out.push(Block::Chart(Chart {
            title: "latency CDF".into(),
            x_label: "latency (us, log)".into(),
            y_label: "fraction of calls".into(),
            series,
            log_x: true,
            log_y: false,
            markers: Vec::new(),
            wide: false,
        }));
        let rows = hists
            .iter()
            .map(|h| {
                let s = h.histogram.summary();
                let us = |ns: u64| format!("{:.1}", ns as f64 / 1000.0);
                vec![
                    h.phase.clone(),
                    h.op.clone(),
                    s.count.to_string(),
                    us(s.p50_ns),
                    us(s.p90_ns),
                    us(s.p99_ns),
                    us(s.p999_ns),
                    us(s.max_ns),
                ]
            })
            .collect();
        out.push(Block::Table(
            [
                "phase", "call", "count", "p50 us", "p90 us", "p99 us", "p99.9 us", "max us",
            ]
            .map(String::from)
            .to_vec(),
            rows,
        ));
    }
    Ok(out)
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
    for (label, runs) in a.labels.iter().zip(&a.runs) {
        let ids: Vec<i64> = runs.iter().map(|r| r.id).collect();
        cell_blocks(store, label, &ids, &mut blocks)?;
    }
    let charts = blocks
        .iter()
        .filter(|b| {
            matches!(
                b,
                Block::Chart(_) | Block::Bars(_) | Block::Movie(_) | Block::Intervals(_)
            )
        })
        .count();
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
