//! The report's opening: what was run where (kernel, fslab version,
//! experiment file, scale, commands, dates), then the comparison at a
//! glance: the difference table with verdicts, each headline metric with
//! every cell on one axis, and every cell's rate over time on shared axes
//! with its phase boundaries. Each cell has one colour throughout.

use super::{cell_colour, Block, Chart, IntervalRow, Intervals, Marker, Series, Style};
use fslab_analysis::{Analysis, GroupRun};
use fslab_store::{RunRecord, Store};

use crate::Result;

/// `name: value` lines of the page's header.
pub fn header(store: &Store, a: &Analysis) -> Result<Block> {
    let mut facts: Vec<(String, String)> = Vec::new();
    for e in &a.experiments {
        facts.push((
            "experiment".into(),
            format!(
                "{} ({}) from {}, scale {}, {} repetition(s), started {}",
                e.id, e.name, e.file, e.scale, e.repetitions, e.started_at
            ),
        ));
    }
    let (mut kernels, mut versions, mut hosts) = (Vec::new(), Vec::new(), Vec::new());
    let (mut first, mut last) = (None::<String>, None::<String>);
    let mut commands = Vec::new();
    for (label, runs) in a.labels.iter().zip(&a.runs) {
        for (i, GroupRun { id, .. }) in runs.iter().enumerate() {
            let r = store.run_row(*id)?;
            for (list, v) in [
                (&mut kernels, &r.kernel),
                (&mut versions, &r.fslab_version),
                (&mut hosts, &r.hostname),
            ] {
                if !list.contains(v) {
                    list.push(v.clone());
                }
            }
            if first.as_ref().is_none_or(|f| r.started_at < *f) {
                first = Some(r.started_at.clone());
            }
            let end = r.finished_at.clone().unwrap_or(r.started_at.clone());
            if last.as_ref().is_none_or(|l| end > *l) {
                last = Some(end);
            }
            if i == 0 {
                commands.push(format!("{label}: {}", r.command_line.join(" ")));
            }
        }
    }
    facts.push(("kernel".into(), kernels.join(", ")));
    facts.push(("fslab".into(), versions.join(", ")));
    facts.push(("host".into(), hosts.join(", ")));
    if let (Some(f), Some(l)) = (first, last) {
        facts.push(("runs".into(), format!("{f} to {l}")));
    }
    facts.push(("commands".into(), commands.join("\n")));
    Ok(Block::Facts(facts))
}

/// The comparison at a glance (see the module's text); `runs` are each
/// group's run of median time.
pub fn blocks(a: &Analysis, runs: &[Option<RunRecord>]) -> Vec<Block> {
    let mut out = vec![Block::Heading("overview".into())];
    // The seed-style table: each headline metric, each cell, with verdicts.
    let mut table = Vec::new();
    for (mi, m) in a.metrics.iter().enumerate() {
        if !a.is_headline(&m.name) {
            continue;
        }
        let mut line = vec![m.name.clone()];
        let base = crate::headline::baseline_mean(a.rows_of(mi));
        for r in a.rows_of(mi) {
            let s = &r.summary;
            // Plain numbers with their unit: `475.2 ±44.156 ops/s (n=3)`.
            let unit = match crate::headline::unit_of(&m.name) {
                Some("%") => "%".to_string(),
                Some(u) => format!(" {u}"),
                None => String::new(),
            };
            let num = fslab_stats::fmt_num;
            let mut cell = match s.n {
                0 => "-".to_string(),
                1 => format!("{}{unit} (n=1)", num(s.mean)),
                n => format!("{} ±{}{unit} (n={n})", num(s.mean), num(s.sd)),
            };
            if let (Some(change), Some(v)) = (crate::headline::change(r, base), r.verdict) {
                let delta = r
                    .delta_pct
                    .unwrap_or(fslab_stats::verdict::DEFAULT_DELTA_PCT);
                cell.push_str(&format!(" {change} {}", v.words(delta)));
            }
            line.push(cell);
        }
        table.push(line);
    }
    if !table.is_empty() {
        let mut head = vec!["headline metric".to_string()];
        head.extend(a.labels.iter().cloned());
        out.push(Block::Table(head, table));
    }
    // Each headline metric: every cell on one axis.
    for m in a.metrics.iter().filter(|m| a.is_headline(&m.name)) {
        let rows = a
            .labels
            .iter()
            .zip(&m.values)
            .enumerate()
            .map(|(i, (label, v))| IntervalRow {
                label: label.clone(),
                colour: cell_colour(i),
                mean: fslab_stats::summarize(v).mean,
                interval: fslab_stats::mean_interval(v, 0.95),
                values: v.clone(),
            })
            .collect();
        out.push(Block::Intervals(Intervals {
            title: format!("{}: each cell's runs, mean and 95% interval", m.name),
            x_label: m.name.clone(),
            rows,
        }));
    }
    // Rates over time, every cell on the same axes, phases marked.
    let mut series = Vec::new();
    let mut markers = Vec::new();
    for (i, (label, run)) in a.labels.iter().zip(runs).enumerate() {
        let Some(run) = run else { continue };
        let mut offset = 0.0;
        let mut points = Vec::new();
        for p in &run.phases {
            markers.push(Marker {
                x: offset,
                label: p.phase.clone(),
                colour: cell_colour(i),
            });
            let mut prev = 0.0;
            for s in run.series.iter().filter(|s| s.phase_index == p.seq) {
                let dt = (s.t_s - prev).max(1e-9);
                prev = s.t_s;
                points.push((offset + s.t_s, s.ops as f64 / dt));
            }
            offset += p.elapsed_s;
        }
        series.push(Series {
            name: format!("{label} (run {})", run.run.id),
            points,
            style: Style::Line,
            colour: Some(cell_colour(i)),
        });
    }
    // Phases whose rates differ by orders of magnitude (create and stat)
    // share the axes on a log scale.
    let rates: Vec<f64> = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .filter(|r| *r > 0.0)
        .collect();
    let lo = rates.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = rates.iter().copied().fold(0.0, f64::max);
    let log_y = hi > 20.0 * lo;
    let title = "operations per second over the run, every cell (its run of median time)";
    if series.iter().any(|s| !s.points.is_empty()) && !series.iter().any(Series::drawable) {
        out.push(Block::Note(format!(
            "{title}: left out, {} (one per-second sample in every cell)",
            super::cell::TOO_SHORT
        )));
    } else if series.iter().any(Series::drawable) {
        out.push(Block::Chart(Chart {
            log_y,
            markers,
            wide: true,
            ..Chart::new(
                &format!("{title}; dashed: phase starts"),
                "time since the run started (s)",
                if log_y { "ops/s (log scale)" } else { "ops/s" },
                series,
            )
        }));
    }
    out
}
