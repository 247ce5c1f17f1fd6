//! One cell's charts, each under a key that is the same in every cell (so
//! that [`super::compared`] sets the cells' charts side by side), with a
//! line saying why where a chart is left out; and what the cell gives the
//! charts that overlay every cell: its phases' per-second rates, latency
//! histograms and the workload's CPU.

use std::collections::BTreeMap;

use super::{Bars, Block, Chart, Io, Movie, Series, Style};
use fslab_model::catalogue;
use fslab_probe::notes::{BlockioEvents, Note};
use fslab_probe::{names, plugin, TargetsNote};
use fslab_store::{RunRecord, StoredHistogram, StoredNote, StoredPoint};

/// A chart of one cell, or why it is left out (and, for a phase too
/// short, how long it lasted).
#[derive(Debug, Clone)]
pub enum Drawn {
    Chart(Block),
    LeftOut(String, Option<f64>),
}

/// Why, with how long the phase lasted where that is why.
pub fn said(why: &str, lasted_s: Option<f64>) -> String {
    match lasted_s {
        Some(s) => format!("{why} (the phase lasted {} s)", fslab_stats::fmt_num(s)),
        None => why.to_string(),
    }
}

/// One phase of a cell's run: its per-second rates and how long it took.
#[derive(Debug, Clone)]
pub struct PhaseRates {
    pub phase: String,
    /// (seconds into the phase, ops/s) at the end of each interval.
    pub rates: Vec<(f64, f64)>,
    pub elapsed_s: f64,
}

/// What one cell shows: its charts by key and its data for the overlays.
#[derive(Debug, Clone)]
pub struct CellView {
    pub label: String,
    pub colour: &'static str,
    /// Charts by key, in the order they are drawn.
    pub charts: Vec<(String, Drawn)>,
    /// Its run of median time, phase by phase.
    pub phases: Vec<PhaseRates>,
    pub latency: Vec<StoredHistogram>,
    /// The workload's CPU (user + system, % of one CPU) over run time.
    pub cpu: Vec<(f64, f64)>,
}

/// Fewer per-second points than this make no chart over time.
pub const MIN_LINE: usize = 2;

pub(crate) fn line(name: impl Into<String>, points: Vec<(f64, f64)>) -> Series {
    Series {
        name: name.into(),
        points,
        style: Style::Line,
        colour: None,
    }
}

/// A chart of the series that have points; None when none has; why not
/// (`short`) when some have, but too few to draw.
fn chart(
    title: &str,
    axes: (&str, &str),
    series: Vec<Series>,
    short: (&str, Option<f64>),
) -> Option<Drawn> {
    let series: Vec<Series> = series
        .into_iter()
        .filter(|s| !s.points.is_empty())
        .collect();
    if series.is_empty() {
        return None;
    }
    let c = Chart::new(title, axes.0, axes.1, series);
    Some(if c.drawable() {
        Drawn::Chart(Block::Chart(c))
    } else {
        Drawn::LeftOut(short.0.to_string(), short.1)
    })
}

/// A phase's per-second rates: (seconds into the phase, ops/s).
pub(crate) fn rates(run: &RunRecord, phase: u32) -> Vec<(f64, f64)> {
    let mut prev = 0.0;
    run.series
        .iter()
        .filter(|s| s.phase_index == phase)
        .map(|s| {
            let dt = (s.t_s - prev).max(1e-9);
            prev = s.t_s;
            (s.t_s, s.ops as f64 / dt)
        })
        .collect()
}

/// Why a phase has no per-second chart.
pub const TOO_SHORT: &str = "run too short for a per-second chart";

/// Run-relative time: each phase's points are offset by the phases before it.
pub(crate) fn offsets(rec: &RunRecord) -> BTreeMap<u32, f64> {
    let mut m = BTreeMap::new();
    let mut t = 0.0;
    for p in &rec.phases {
        m.insert(p.seq, t);
        t += p.elapsed_s;
    }
    m
}

fn points(
    all: &[StoredPoint],
    off: &BTreeMap<u32, f64>,
    (probe, metric): (&str, &str),
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

/// The workload's CPU (user + system) at each sample, over run time.
pub(crate) fn workload_cpu(pts: &[StoredPoint], off: &BTreeMap<u32, f64>) -> Vec<(f64, f64)> {
    let usr = points(pts, off, ("cpu", names::WORKLOAD_USR_PCT), 1.0);
    let sys = points(pts, off, ("cpu", names::WORKLOAD_SYS_PCT), 1.0);
    let mut by_t: BTreeMap<u64, (f64, f64)> = BTreeMap::new();
    for (t, v) in usr.into_iter().chain(sys) {
        by_t.entry(t.to_bits()).or_insert((t, 0.0)).1 += v;
    }
    let mut v: Vec<(f64, f64)> = by_t.into_values().collect();
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    v
}

/// Rate over time, per phase, one line per run; numbered items' rates
/// against their number (fs_mark's loops, createmany's entries).
pub(crate) fn rate_charts(rec: &RunRecord, all: &[(i64, RunRecord)]) -> Vec<(String, Drawn)> {
    let mut out = Vec::new();
    for p in &rec.phases {
        let series = all
            .iter()
            .map(|(r, run)| line(format!("run {r}"), rates(run, p.seq)))
            .collect();
        let title = format!("{}: operations per second, each run", p.phase);
        let short = (TOO_SHORT, Some(p.elapsed_s));
        if let Some(d) = chart(&title, ("time in phase (s)", "ops/s"), series, short) {
            out.push((title, d));
        }
    }
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
        let series = all
            .iter()
            .map(|(r, run)| {
                let pts = run
                    .metrics
                    .iter()
                    .filter(|m| m.detail && m.source == source && m.name == name)
                    .filter_map(|m| {
                        let (w, n) = catalogue::numbered(m.phase.as_deref()?)?;
                        (w == word).then_some((n as f64, m.value))
                    })
                    .collect();
                line(format!("run {r}"), pts)
            })
            .collect();
        let title = format!("{source} {name} against {word}");
        let short = format!("one point only: nothing to draw against {word}");
        if let Some(d) = chart(&title, (&word, &unit), series, (&short, None)) {
            out.push((title, d));
        }
    }
    out
}

/// The filesystem's device's completed requests from the block trace,
/// every step-th of a long trace: (requests, its name, sectors, step).
fn device_ios(notes: &[StoredNote]) -> Option<(Vec<Io>, String, u64, usize)> {
    let ev = notes.iter().find(|n| BlockioEvents::is(&n.probe, &n.key))?;
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
    let mut ios = Vec::new();
    let mut i = 0usize;
    let _ = fslab_probe::blockio::each_completion(blob, |e| {
        if e.dev == dev && e.nr_sector > 0 {
            if i.is_multiple_of(step) {
                ios.push(Io {
                    t_s: e.t_ns.saturating_sub(t0) as f64 / 1e9,
                    sector: e.sector,
                    sectors: e.nr_sector as u64,
                    write: e.is_write(),
                });
            }
            i += 1;
        }
        true
    });
    let name = targets
        .device
        .clone()
        .unwrap_or_else(|| format!("{},{}", dev >> 20, dev & 0xfffff));
    Some((ios, name, targets.device_sectors.unwrap_or(0), step))
}

/// The IO pattern (sector against time) and iowatcher's movie of the
/// filesystem's device, from the block trace.
pub(crate) fn io_pattern(notes: &[StoredNote]) -> Vec<(String, Drawn)> {
    let Some((ios, name, sectors, step)) = device_ios(notes) else {
        return Vec::new();
    };
    let title = format!(
        "IO pattern on {name} ({} requests{})",
        ios.len(),
        if step > 1 {
            format!(", every {step}th drawn")
        } else {
            String::new()
        }
    );
    let side = |write: bool, name: &str, colour| Series {
        name: name.into(),
        points: ios
            .iter()
            .filter(|i| i.write == write)
            .map(|i| (i.t_s, i.sector as f64))
            .collect(),
        style: Style::Points,
        colour: Some(colour),
    };
    let series = vec![
        side(true, "writes", super::svg::WRITE),
        side(false, "reads", super::svg::READ),
    ];
    let mut out: Vec<(String, Drawn)> = chart(&title, ("time (s)", "sector"), series, ("", None))
        .map(|d| ("IO pattern".to_string(), d))
        .into_iter()
        .collect();
    // The same requests (every step-th of a long trace) as iowatcher's
    // movie: where on the device, window by window.
    if !ios.is_empty() {
        let movie = Movie::new(
            &format!("IO movie of {name} (iowatcher style; plays in a loop)"),
            &ios,
            sectors,
            60,
        );
        out.push(("IO movie".into(), Drawn::Chart(Block::Movie(movie))));
    }
    out
}

/// Each registered probe's charts over run time (its series, grouped by
/// the chart it places them on) and bar charts (a series summed over the
/// run), in the registry's order.
pub(crate) fn probe_charts(pts: &[StoredPoint], off: &BTreeMap<u32, f64>) -> Vec<(String, Drawn)> {
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
                    points: points(pts, off, (probe, &s.metric), p.scale),
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
            let short = "run too short for a chart over time (one sample)";
            if let Some(d) = chart(c.title, ("time (s)", c.y_label), lines, (short, None)) {
                out.push((c.title.to_string(), d));
            }
        }
        for b in k.plugin().bars() {
            let bars: Vec<(String, f64)> = b
                .bars
                .iter()
                .map(|(label, m)| {
                    let total = points(pts, off, (probe, m), 1.0).iter().map(|p| p.1).sum();
                    (label.clone(), total)
                })
                .collect();
            if bars.iter().any(|s| s.1 > 0.0) {
                let bars = Bars {
                    title: b.title.into(),
                    y_label: b.y_label.into(),
                    bars,
                    y_max: None,
                };
                out.push((b.title.to_string(), Drawn::Chart(Block::Bars(bars))));
            }
        }
    }
    out
}
