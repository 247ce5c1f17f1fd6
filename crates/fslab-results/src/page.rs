//! `fslab report -o FILE.html`: the comparison of an experiment's cells (or
//! groups of runs) and, for every cell, charts and tables drawn from the
//! store: rates over time, the IO pattern, IOPS and MB/s, IO sizes, image
//! extents, CPU, memory, journal commits, latency CDFs and percentiles, wait
//! stacks and profile symbols.

use fslab_probe::names;
use std::collections::BTreeMap;

use fslab_cluster::MpiParams;
use fslab_probe::notes::{BlockioEvents, Note, PerfTop, StacksTop};
use fslab_probe::TargetsNote;
use fslab_record::{catalogue, RunStatus};
use fslab_report::{page, Bars, Block, Chart, Io, Movie, Series, Style};
use fslab_store::{RunRecord, Store, StoredNote, StoredPoint};

use crate::select::{baseline_of, check_mix, metrics, select};
use crate::Result;

fn line(name: impl Into<String>, points: Vec<(f64, f64)>) -> Series {
    Series {
        name: name.into(),
        points,
        style: Style::Line,
        colour: None,
    }
}

/// A series in a fixed colour (a cell's, reads' or writes').
fn coloured(mut s: Series, colour: &'static str) -> Series {
    s.colour = Some(colour);
    s
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
    out.extend(wait_tables(rec, &notes));
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
                colour: Some(fslab_report::svg::WRITE),
            },
            Series {
                name: "reads".into(),
                points: r,
                style: Style::Points,
                colour: Some(fslab_report::svg::READ),
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

/// The sampled probes over run time: IOPS, MB/s, IO sizes, image extents,
/// CPU, memory, journal commits.
fn probe_charts(pts: &[StoredPoint], off: &BTreeMap<u32, f64>) -> Vec<Block> {
    let mut out = Vec::new();
    out.extend(chart(
        "IOPS",
        "time (s)",
        "requests/s",
        vec![
            line("IOPS", points(pts, off, "blockio", names::IOPS, 1.0)),
            line(
                "host IOPS",
                points(pts, off, "blockio", &names::host(names::IOPS), 1.0),
            ),
        ],
    ));
    let mb_s = fslab_record::Unit::MbPerSec.symbol();
    out.extend(chart(
        mb_s,
        "time (s)",
        mb_s,
        vec![
            coloured(
                line(
                    "written",
                    points(pts, off, "blockio", names::WRITE_MB_S, 1.0),
                ),
                fslab_report::svg::WRITE,
            ),
            coloured(
                line("read", points(pts, off, "blockio", names::READ_MB_S, 1.0)),
                fslab_report::svg::READ,
            ),
        ],
    ));
    let sizes: Vec<(String, f64)> = fslab_probe::blockio::SIZE_BUCKETS
        .iter()
        .map(|(_, m)| {
            (
                m.trim_start_matches("size_")
                    .replace("le_", "<=")
                    .replace("gt_", ">"),
                points(pts, off, "blockio", m, 1.0)
                    .iter()
                    .map(|p| p.1)
                    .sum::<f64>(),
            )
        })
        .collect();
    if sizes.iter().any(|s| s.1 > 0.0) {
        out.push(Block::Bars(Bars {
            title: "IO sizes".into(),
            y_label: "requests".into(),
            bars: sizes,
        }));
    }
    out.extend(chart(
        "backing image extents",
        "time (s)",
        "extents",
        vec![line(
            "extents",
            points(pts, off, "frag", names::IMAGE_EXTENTS, 1.0),
        )],
    ));
    out.extend(chart(
        "CPU",
        "time (s)",
        "% of one CPU",
        vec![
            line(
                "workload usr",
                points(pts, off, "cpu", names::WORKLOAD_USR_PCT, 1.0),
            ),
            line(
                "workload sys",
                points(pts, off, "cpu", names::WORKLOAD_SYS_PCT, 1.0),
            ),
            line("machine usr", points(pts, off, "cpu", names::USR_PCT, 1.0)),
            line("machine sys", points(pts, off, "cpu", names::SYS_PCT, 1.0)),
            line(
                "machine iowait",
                points(pts, off, "cpu", names::IOWAIT_PCT, 1.0),
            ),
            line(
                "fs threads",
                points(pts, off, "cpu", names::FS_KTHREADS_PCT, 1.0),
            ),
        ],
    ));
    out.extend(chart(
        "memory",
        "time (s)",
        "MB",
        vec![
            line("dirty", points(pts, off, "mem", names::DIRTY_BYTES, 1e-6)),
            line(
                "writeback",
                points(pts, off, "mem", names::WRITEBACK_BYTES, 1e-6),
            ),
        ],
    ));
    let commit = |field: &str| Series {
        name: field.into(),
        points: points(pts, off, "journal", &names::jbd2_commit(field), 1.0),
        style: Style::Points,
        colour: None,
    };
    out.extend(chart(
        "journal commits (jbd2)",
        "time (s)",
        "ms",
        vec![
            commit(names::JBD2_RUNNING),
            commit(names::JBD2_LOCKED),
            commit(names::JBD2_LOGGING),
        ],
    ));

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

/// The blocked-stack and profile tables.
fn wait_tables(rec: &RunRecord, notes: &[StoredNote]) -> Vec<Block> {
    let mut out = Vec::new();
    let phase_name = |seq: Option<u32>| {
        rec.phases
            .iter()
            .find(|p| Some(p.seq) == seq)
            .map(|p| p.phase.clone())
            .unwrap_or_default()
    };
    let mut stack_rows = Vec::new();
    for n in notes.iter().filter(|n| StacksTop::is(&n.probe, &n.key)) {
        for s in StacksTop::from_value(&n.value).stacks.iter().take(5) {
            let frames: Vec<&str> = s.frames.iter().map(String::as_str).take(6).collect();
            stack_rows.push(vec![
                phase_name(n.phase_index),
                s.thread.clone(),
                format!("{:.1}%", s.share_pct),
                frames.join(" <- "),
            ]);
        }
    }
    if !stack_rows.is_empty() {
        out.push(Block::Table(
            ["phase", "blocked thread", "share", "kernel stack"]
                .map(String::from)
                .to_vec(),
            stack_rows,
        ));
    }
    let mut perf_rows = Vec::new();
    for n in notes.iter().filter(|n| PerfTop::is(&n.probe, &n.key)) {
        for s in PerfTop::from_value(&n.value).0.iter().take(10) {
            perf_rows.push(vec![
                format!("{:.2}%", s.percent),
                s.symbol.clone(),
                s.dso.clone(),
            ]);
        }
    }
    if !perf_rows.is_empty() {
        out.push(Block::Table(
            ["share", "symbol", "object"].map(String::from).to_vec(),
            perf_rows,
        ));
    }
    out
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

/// What a report compares: experiments (none: the latest) or groups of
/// run ids (`--runs 1,2,3`), against a baseline group.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    pub experiments: Vec<i64>,
    pub runs: Vec<String>,
    pub baseline: Option<String>,
    /// How the verdicts are reached (noise threshold, correction).
    pub policy: fslab_stats::verdict::Policy,
}

/// Builds the report of `sel` from the store.
pub fn build(store: &Store, sel: &Selection) -> Result<Page> {
    let g = select(store, &sel.experiments, &sel.runs)?;
    let notes = check_mix(store, &g)?;
    let base = baseline_of(&g, sel.baseline.as_deref())?;
    let policy = sel.policy;
    let all_metrics = metrics(store, &g)?;
    let cal = crate::calibration::thresholds(store, &g, &all_metrics, None)?;
    let rows =
        fslab_stats::compare::compare_calibrated(&g.labels, &all_metrics, base, policy, &cal);
    // The experiments shown (none when groups of runs were given).
    let exp_ids = if !sel.runs.is_empty() {
        Vec::new()
    } else if sel.experiments.is_empty() {
        store.latest_experiment()?.into_iter().collect()
    } else {
        sel.experiments.clone()
    };
    let experiments = exp_ids
        .iter()
        .map(|&id| store.experiment(id))
        .collect::<std::result::Result<Vec<_>, _>>()?;
    let title = if !sel.runs.is_empty() {
        "fslab report: groups of runs".to_string()
    } else {
        let names: Vec<String> = experiments
            .iter()
            .map(|e| format!("experiment {} ({})", e.id, e.name))
            .collect();
        format!("fslab report: {}", names.join("; "))
    };
    let mut blocks = vec![crate::overview::header(store, &g, &experiments)?];
    let kernels = crate::kernels::group_kernels(store, &g)?;
    blocks.extend(crate::kernels::lines(&kernels).into_iter().map(Block::Text));
    blocks.extend(notes.into_iter().map(|n| Block::Text(format!("note: {n}"))));
    let findings: Vec<Vec<String>> = experiments
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
    if !findings.is_empty() {
        blocks.push(Block::Heading("findings".into()));
        blocks.push(Block::Table(
            [
                "experiment",
                "finding",
                "author",
                "verdict",
                "fslab's numbers",
            ]
            .map(String::from)
            .to_vec(),
            findings,
        ));
    }
    blocks.extend(not_completed(&experiments));
    // Each cell's run of median time stands for it in the overview's rates.
    let mut medians = Vec::new();
    for runs in &g.runs {
        let mut times = Vec::new();
        for crate::select::GroupRun { id, .. } in runs {
            let rec = store.run(*id)?;
            let t = rec.phases.iter().map(|p| p.elapsed_s).sum::<f64>();
            times.push((*id, rec.run.status == RunStatus::Complete, t));
        }
        medians.push(match median_run(&times) {
            Some(id) => Some(store.run(id)?),
            None => None,
        });
    }
    let headlines = crate::select::headlines(store, &g)?;
    blocks.extend(crate::overview::blocks(
        &g,
        &all_metrics,
        &rows,
        &headlines,
        &medians,
    ));
    blocks.push(Block::Heading("every metric".into()));
    blocks.push(Block::Table(
        crate::comparison::COLUMNS.map(String::from).to_vec(),
        crate::comparison::table(&rows),
    ));
    for (label, runs) in g.labels.iter().zip(&g.runs) {
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
        html: page(&title, &blocks),
        charts,
        cells: g.labels.len(),
    })
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
