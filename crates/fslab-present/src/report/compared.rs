//! The cells compared: overlaid in one chart where their numbers share an
//! axis (each phase's per-second rates on a common time axis, each phase
//! and call's latency distribution, the workload's CPU), and side by side
//! on shared axes where they cannot (each probe's charts, the IO pattern,
//! each run's rates). Each series is named by its cell, in its cell's
//! colour; a chart too short to draw is left out with a line saying why.

use super::cell::{said, CellView, Drawn, MIN_LINE, TOO_SHORT};
use super::{share_axes, Block, Chart, Row, Series, Style};

/// A cell's line on an overlaid chart.
fn cell_line(c: &CellView, points: Vec<(f64, f64)>) -> Series {
    Series {
        name: c.label.clone(),
        points,
        style: Style::Line,
        colour: Some(c.colour),
    }
}

/// Distinct values in order of first appearance.
fn union<T: PartialEq + Clone>(lists: impl Iterator<Item = Vec<T>>) -> Vec<T> {
    let mut out: Vec<T> = Vec::new();
    for l in lists {
        for x in l {
            if !out.contains(&x) {
                out.push(x);
            }
        }
    }
    out
}

/// The section: heading, what it shows, then its charts.
pub fn blocks(cells: &[CellView]) -> Vec<Block> {
    if cells.is_empty() {
        return Vec::new();
    }
    let mut out = vec![
        Block::Heading("cells compared".into()),
        Block::Text(
            "Every cell in one chart where they share an axis, else side by side on the same \
             axes; each cell's run of median time (each run where a chart says so), each cell in \
             its colour."
                .into(),
        ),
    ];
    let mut time = Row {
        title: "every cell on one time axis".into(),
        items: Vec::new(),
        notes: Vec::new(),
    };
    phase_rates(cells, &mut time);
    cpu(cells, &mut time);
    out.extend(drawn(time));
    let (latency, table) = latency(cells);
    out.extend(drawn(latency));
    out.extend(table);
    out.extend(side_by_side(cells));
    out
}

/// A row of overlaid charts with its notes, or its notes alone when it
/// has no chart.
fn drawn(row: Row) -> Vec<Block> {
    if row.items.is_empty() {
        return row.notes.into_iter().map(Block::Note).collect();
    }
    vec![Block::Row(row)]
}

/// A chart in a row of overlaid charts, captioned with its title.
fn overlaid(row: &mut Row, chart: Chart) {
    row.items.push((chart.title.clone(), Block::Chart(chart)));
}

/// Each phase's per-second rates, every cell on one time axis.
fn phase_rates(cells: &[CellView], row: &mut Row) {
    let phases = union(
        cells
            .iter()
            .map(|c| c.phases.iter().map(|p| p.phase.clone()).collect()),
    );
    for phase in phases {
        let title = format!("{phase}: operations per second, every cell");
        let (mut series, mut notes, mut longest) = (Vec::new(), Vec::new(), 0.0f64);
        for c in cells {
            let Some(p) = c.phases.iter().find(|p| p.phase == phase) else {
                continue;
            };
            longest = longest.max(p.elapsed_s);
            if p.rates.len() >= MIN_LINE {
                series.push(cell_line(c, p.rates.clone()));
            } else {
                let why = said(TOO_SHORT, Some(p.elapsed_s));
                notes.push(format!("{title}: {} left out, {why}", c.label));
            }
        }
        if series.is_empty() {
            row.notes.push(format!(
                "{title}: left out, {TOO_SHORT} in every cell (the phase lasted at most {} s)",
                fslab_stats::fmt_num(longest)
            ));
            continue;
        }
        let chart = Chart::new(&title, "time in phase (s)", "ops/s", series);
        overlaid(row, chart);
        row.notes.extend(notes);
    }
}

/// Each phase and call's latency CDF with every cell on it, and a table
/// of every cell's percentiles.
fn latency(cells: &[CellView]) -> (Row, Option<Block>) {
    let keys = union(cells.iter().map(|c| {
        c.latency
            .iter()
            .map(|h| (h.phase.clone(), h.op.clone()))
            .collect()
    }));
    let mut out = Row {
        title: "every cell's latency (CDF)".into(),
        items: Vec::new(),
        notes: Vec::new(),
    };
    let mut rows = Vec::new();
    for (phase, op) in keys {
        let mut series = Vec::new();
        for c in cells {
            let Some(h) = c
                .latency
                .iter()
                .find(|h| h.phase == phase && h.op == op && h.histogram.count() > 0)
            else {
                continue;
            };
            // The CDF as steps from zero: a run whose calls all fall in one
            // bucket still draws its step.
            let cdf = h.histogram.cdf();
            let mut points: Vec<(f64, f64)> = cdf
                .first()
                .map(|(v, _)| (*v as f64 / 1000.0, 0.0))
                .into_iter()
                .collect();
            points.extend(cdf.into_iter().map(|(v, f)| (v as f64 / 1000.0, f)));
            series.push(cell_line(c, points));
            let s = h.histogram.summary();
            let us = |ns: u64| fslab_stats::fmt_num(ns as f64 / 1000.0);
            rows.push(vec![
                phase.clone(),
                op.clone(),
                c.label.clone(),
                s.count.to_string(),
                us(s.p50_ns),
                us(s.p90_ns),
                us(s.p99_ns),
                us(s.p999_ns),
                us(s.max_ns),
            ]);
        }
        if series.is_empty() {
            continue;
        }
        let chart = Chart {
            log_x: true,
            ..Chart::new(
                &format!("{phase} {op} latency, every cell (CDF)"),
                "latency (us, log scale)",
                "fraction of calls",
                series,
            )
        };
        overlaid(&mut out, chart);
    }
    let table = (!rows.is_empty()).then(|| {
        Block::Table(
            [
                "phase",
                "call",
                "cell",
                "calls",
                "p50 (us)",
                "p90 (us)",
                "p99 (us)",
                "p99.9 (us)",
                "max (us)",
            ]
            .map(String::from)
            .to_vec(),
            rows,
        )
    });
    (out, table)
}

/// The workload's CPU over the run, every cell on one time axis.
fn cpu(cells: &[CellView], row: &mut Row) {
    let title = "workload CPU (user + system), every cell";
    let mut series = Vec::new();
    for c in cells.iter().filter(|c| !c.cpu.is_empty()) {
        if c.cpu.len() >= MIN_LINE {
            series.push(cell_line(c, c.cpu.clone()));
        } else {
            row.notes.push(format!(
                "{title}: {} left out, run too short for a chart over time (one sample)",
                c.label
            ));
        }
    }
    if !series.is_empty() {
        let chart = Chart::new(
            title,
            "time since the run started (s)",
            "% of one CPU",
            series,
        );
        overlaid(row, chart);
    }
}

/// Each chart a cell draws, every cell's beside the others' on the same
/// axes; a line for each cell that has none, saying why.
fn side_by_side(cells: &[CellView]) -> Vec<Block> {
    let keys = union(
        cells
            .iter()
            .map(|c| c.charts.iter().map(|(k, _)| k.clone()).collect()),
    );
    let mut out = Vec::new();
    for key in keys {
        let mut items = Vec::new();
        let (mut notes, mut reasons): (_, Vec<(&str, Option<f64>)>) = (Vec::new(), Vec::new());
        for c in cells {
            match c.charts.iter().find(|(k, _)| *k == key).map(|(_, d)| d) {
                Some(Drawn::Chart(b)) => {
                    let title = match b {
                        Block::Chart(x) => &x.title,
                        Block::Bars(x) => &x.title,
                        Block::Movie(x) => &x.title,
                        _ => &key,
                    };
                    let caption = if *title == key {
                        c.label.clone()
                    } else {
                        format!("{}: {title}", c.label)
                    };
                    items.push((caption, b.clone()));
                }
                Some(Drawn::LeftOut(why, lasted)) => {
                    notes.push(format!("{}: left out, {}", c.label, said(why, *lasted)));
                    reasons.push((why, *lasted));
                }
                None => notes.push(format!("{}: none recorded", c.label)),
            }
        }
        if items.is_empty() {
            out.extend(left_out(&key, &reasons, notes));
            continue;
        }
        shared(&mut items);
        out.push(Block::Row(Row {
            title: key,
            items,
            notes,
        }));
    }
    out
}

/// A chart no cell could draw: one line, the reason said once when every
/// cell has the same, else each cell's.
fn left_out(key: &str, reasons: &[(&str, Option<f64>)], notes: Vec<String>) -> Option<Block> {
    let (why, _) = reasons.first()?;
    if reasons.iter().all(|(w, _)| w == why) {
        let longest = reasons.iter().filter_map(|r| r.1).reduce(f64::max);
        let lasted = longest
            .map(|s| format!(" (the phase lasted at most {} s)", fslab_stats::fmt_num(s)))
            .unwrap_or_default();
        let every = if reasons.len() == notes.len() {
            "every cell"
        } else {
            "every cell that recorded it"
        };
        return Some(Block::Note(format!(
            "{key}: left out, {why} in {every}{lasted}"
        )));
    }
    Some(Block::Note(format!("{key}: {}", notes.join("; "))))
}

/// Charts side by side share their axes; bar charts their top.
fn shared(items: &mut [(String, Block)]) {
    let mut charts: Vec<&mut Chart> = items
        .iter_mut()
        .filter_map(|(_, b)| match b {
            Block::Chart(c) => Some(c),
            _ => None,
        })
        .collect();
    share_axes(&mut charts);
    let top = items
        .iter()
        .filter_map(|(_, b)| match b {
            Block::Bars(b) => b.bars.iter().map(|x| x.1).reduce(f64::max),
            _ => None,
        })
        .reduce(f64::max);
    for (_, b) in items.iter_mut() {
        if let Block::Bars(b) = b {
            b.y_max = top;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::cell::PhaseRates;
    use super::super::html;
    use super::*;
    use fslab_store::StoredHistogram;

    /// A cell whose create phase lasted `create_s` at `rate` ops/s (one
    /// point a second), a stat phase of 0.01 s, a latency histogram
    /// around `us`, and one probe chart over `create_s` seconds.
    fn cell(i: usize, label: &str, create_s: usize, rate: f64, us: u64) -> CellView {
        let per_second = |n: usize| (1..=n).map(|t| (t as f64, rate)).collect::<Vec<_>>();
        let mut h = fslab_model::LatencyHistogram::new();
        for k in 0..100 {
            h.record(us * 1000 + k * 10);
        }
        let probe = Chart::new(
            "IOPS",
            "time (s)",
            "requests/s",
            vec![super::super::cell::line("IOPS", per_second(create_s))],
        );
        CellView {
            label: label.into(),
            colour: super::super::cell_colour(i),
            charts: vec![("IOPS".into(), Drawn::Chart(Block::Chart(probe)))],
            phases: vec![
                PhaseRates {
                    phase: "create".into(),
                    rates: per_second(create_s),
                    elapsed_s: create_s as f64,
                },
                PhaseRates {
                    phase: "stat".into(),
                    rates: vec![(0.01, 1e5)],
                    elapsed_s: 0.01,
                },
            ],
            latency: vec![StoredHistogram {
                phase: "create".into(),
                op: "creat".into(),
                histogram: h,
            }],
            cpu: per_second(create_s),
        }
    }

    fn series_of<'a>(page: &'a str, caption: &str) -> Vec<&'a str> {
        let end = page
            .find(&format!("<figcaption>{caption}</figcaption>"))
            .unwrap_or_else(|| panic!("no {caption:?} in the page"));
        let start = page[..end].rfind("<figure").unwrap();
        page[start..end]
            .split("data-series=\"")
            .skip(1)
            .map(|s| &s[..s.find('"').unwrap()])
            .collect()
    }

    #[test]
    fn every_cell_is_on_the_overlaid_charts_and_beside_the_others() {
        let cells = [cell(0, "ext4", 5, 500.0, 40), cell(1, "xfs", 3, 900.0, 20)];
        let page = html("t", &blocks(&cells));
        for caption in [
            "create: operations per second, every cell",
            "create creat latency, every cell (CDF)",
            "workload CPU (user + system), every cell",
        ] {
            assert_eq!(series_of(&page, caption), ["ext4", "xfs"], "{caption}");
        }
        assert!(page.contains(
            "<figure class=\"row\"><figcaption>IOPS</figcaption><div class=\"cells\"><figure>"
        ));
        assert_eq!(page.matches("aria-label=\"IOPS\"").count(), 2);
        assert_eq!(
            page.matches("<figcaption>ext4</figcaption>").count(),
            1,
            "each side chart captioned with its cell"
        );
        // The stat phase (0.01 s) has no per-second chart, and says why.
        assert!(!page.contains("<figcaption>stat: operations per second"));
        assert!(
            !page.contains("every cell: ext4 left out"),
            "said once for every cell"
        );
        assert!(page.contains(
            "<p class=\"note\">stat: operations per second, every cell: left out, run too short \
             for a per-second chart in every cell (the phase lasted at most 0.0100 s)</p>"
        ));
        // Latency percentiles in plain numbers with their unit.
        assert!(page.contains("<th>p50 (us)</th>"));
        assert!(!page.contains("e+0") && !page.contains("e-0"));
    }

    #[test]
    fn side_charts_share_their_axes() {
        let cells = [cell(0, "a", 5, 500.0, 40), cell(1, "b", 2, 900.0, 20)];
        let rows = side_by_side(&cells);
        let Some(Block::Row(row)) = rows.first() else {
            panic!("a row: {rows:?}");
        };
        let extents: Vec<_> = row
            .items
            .iter()
            .map(|(_, b)| match b {
                Block::Chart(c) => c.extent,
                _ => None,
            })
            .collect();
        assert_eq!(extents, [Some((1.0, 5.0, 500.0, 900.0)); 2]);
        // And draw the same axes: the same ticks.
        let ticks = |b: &Block| {
            let svg = b.svg().unwrap();
            svg.matches("text-anchor=\"end\" font-size=\"11\">").count()
        };
        assert_eq!(ticks(&row.items[0].1), ticks(&row.items[1].1));
    }

    #[test]
    fn a_cell_too_short_is_left_out_with_its_reason() {
        let cells = [
            cell(0, "long", 4, 500.0, 40),
            cell(1, "short", 1, 900.0, 20),
        ];
        let page = html("t", &blocks(&cells));
        assert_eq!(
            series_of(&page, "create: operations per second, every cell"),
            ["long"]
        );
        assert!(page.contains(
            "create: operations per second, every cell: short left out, run too short for a \
             per-second chart (the phase lasted 1.000 s)"
        ));
        assert_eq!(
            series_of(&page, "workload CPU (user + system), every cell"),
            ["long"]
        );
        // A side chart with one point of a line is left out, said in the row.
        let mut short = cell(1, "short", 1, 900.0, 20);
        short.charts = vec![(
            "IOPS".into(),
            Drawn::LeftOut(
                "run too short for a chart over time (one sample)".into(),
                None,
            ),
        )];
        let page = html("t", &blocks(&[cell(0, "long", 4, 500.0, 40), short]));
        assert!(page.contains("<p class=\"note\">short: left out, run too short for a chart over time (one sample)</p></figure>"));
    }
}
