//! `fslab results list | experiments | show | export`: runs as text (and JSON/CSV).

use std::fmt::Write as _;

use fslab_cluster::MpiParams;
use fslab_model::json::Versioned;
use fslab_model::table::{Align, Table};
use fslab_model::units::human_bytes;
use fslab_probe::notes::Note;
use fslab_probe::plugin::{Described, NoteRef, SeriesSummary};
use fslab_probe::TargetsNote;
use fslab_store::{RunOrigin, RunRecord, Store};

use crate::format::{Format, Sheet};
use crate::Result;

/// One run of `results list --json`.
#[derive(Debug, serde::Serialize)]
pub struct Listed {
    #[serde(flatten)]
    pub run: fslab_store::RunRow,
    /// The tool's own headline number, if it reports one.
    pub headline: Option<fslab_model::Metric>,
}

/// `results list --format json`: `{fslab_schema, runs: [...]}`.
fn list_json(store: &Store, runs: Vec<fslab_store::RunRow>) -> Result<String> {
    #[derive(serde::Serialize)]
    struct Doc {
        runs: Vec<Listed>,
    }
    let mut listed = Vec::new();
    for r in runs {
        let metrics = store.metrics(r.id)?;
        let headline = fslab_model::metric::headline(&metrics).cloned();
        listed.push(Listed { run: r, headline });
    }
    Ok(Versioned::new(Doc { runs: listed }).to_pretty())
}

/// Which runs `results list` shows and how.
#[derive(Debug, Clone, Copy)]
pub struct Listing<'a> {
    /// Only runs of this workload.
    pub workload: Option<&'a str>,
    /// Only the newest this many (0: all).
    pub limit: usize,
    /// Every column in full (else the narrow layout: [`NARROW`] columns);
    /// the other formats are always whole.
    pub wide: bool,
    pub format: Format,
}

impl Default for Listing<'_> {
    fn default() -> Self {
        Listing {
            workload: None,
            limit: 0,
            wide: false,
            format: Format::Text,
        }
    }
}

/// The narrow layout's width: `results list` fits a terminal this wide.
pub const NARROW: usize = 100;

/// `s` cut to `max` characters, its middle replaced by `...` (a path keeps
/// its start and its last component).
pub fn elide(s: &str, max: usize) -> String {
    let n = s.chars().count();
    if n <= max || max < 5 {
        return s.to_string();
    }
    let tail = (max - 3) / 2;
    let head = max - 3 - tail;
    let start: String = s.chars().take(head).collect();
    let end: String = s.chars().skip(n - tail).collect();
    format!("{start}...{end}")
}

/// `results list`: a header, then one line per run, oldest first, with its
/// headline number (text; or JSON, CSV, Markdown); the runs left out by
/// the limit are counted in the second value.
pub fn list(store: &Store, l: Listing) -> Result<(String, usize)> {
    let mut runs: Vec<fslab_store::RunRow> = store
        .list_runs()?
        .into_iter()
        .filter(|r| l.workload.is_none_or(|w| r.workload == w))
        .collect();
    let hidden = if l.limit > 0 {
        runs.len().saturating_sub(l.limit)
    } else {
        0
    };
    runs.drain(..hidden);
    if l.format == Format::Json {
        return Ok((list_json(store, runs)?, hidden));
    }
    let text = l.format == Format::Text;
    let mut rows = Vec::new();
    for r in runs {
        // The tool's own headline number, else the first phase's rate.
        let metrics = store.metrics(r.id)?;
        let headline = match fslab_model::metric::headline(&metrics) {
            // The narrow text: the number and its unit (the workload names
            // the tool).
            Some(m) if text && !l.wide => {
                format!("{} {}", fslab_stats::fmt_g(m.value, 6), m.unit.symbol())
            }
            Some(m) => format!("{} {}", m.label(), fslab_stats::fmt_g(m.value, 6)),
            None => store
                .phases(r.id)?
                .first()
                .map(|p| match p.counted {
                    true => format!("{} {:.1} ops/s", p.phase, p.ops_per_s),
                    false => format!("{} {:.3} s", p.phase, p.elapsed_s),
                })
                .unwrap_or_else(|| "-".into()),
        };
        let ranks = match MpiParams::of(&r.params) {
            Some(m) => format!(" ({} MPI ranks)", m.ranks),
            None => String::new(),
        };
        rows.push([
            r.id.to_string(),
            if l.wide || !text {
                r.started_at.get(..19).unwrap_or(&r.started_at).to_string()
            } else {
                // MM-DD HH:MM
                r.started_at
                    .get(5..16)
                    .unwrap_or(&r.started_at)
                    .replace('T', " ")
            },
            r.workload.clone(),
            r.status.as_str().to_string(),
            if r.fs_type.is_empty() {
                "?".to_string()
            } else {
                r.fs_type.clone()
            },
            r.target_path.clone(),
            format!("{headline}{ranks}"),
        ]);
    }
    if rows.is_empty() && text {
        return Ok((String::new(), hidden));
    }
    let narrow_text = text && !l.wide;
    let started = if narrow_text {
        "started"
    } else {
        "started (UTC)"
    };
    if narrow_text {
        narrow(&mut rows);
    }
    let mut sheet = Sheet::new(&[
        ("id", Align::Left),
        (started, Align::Left),
        ("workload", Align::Left),
        ("status", Align::Left),
        ("fs", Align::Left),
        ("target", Align::Left),
        ("headline", Align::Left),
    ]);
    for r in rows {
        let mut cells: Vec<serde_json::Value> = r.into_iter().map(Into::into).collect();
        if let Ok(id) = cells[0].as_str().unwrap_or("").parse::<i64>() {
            cells[0] = id.into();
        }
        sheet.row(cells);
    }
    Ok((sheet.render(l.format, "runs"), hidden))
}

/// Cuts the target and headline columns so that every line fits
/// [`NARROW`] columns: the headline keeps up to 40 characters (an MPI
/// run's "create 3605.0 ops/s (3 MPI ranks)" whole), the target
/// what is left (at least 12).
fn narrow(rows: &mut [[String; 7]]) {
    let width = |i: usize, head: usize| {
        rows.iter()
            .map(|r| r[i].chars().count())
            .max()
            .unwrap_or(0)
            .max(head)
    };
    let fixed: usize = [(0, 2), (1, 7), (2, 8), (3, 6), (4, 2)]
        .iter()
        .map(|&(i, h)| width(i, h) + 2)
        .sum();
    let headline = width(6, 8).min(40);
    let target = NARROW.saturating_sub(fixed + headline + 2).max(12);
    for r in rows.iter_mut() {
        r[5] = elide(&r[5], target);
        r[6] = elide(&r[6], headline);
    }
}

/// `results experiments`: one line per experiment (text, or JSON, CSV,
/// Markdown).
pub fn experiments(store: &Store, format: Format) -> Result<String> {
    let all = store.list_experiments()?;
    if format == Format::Json {
        #[derive(serde::Serialize)]
        struct Doc {
            experiments: Vec<fslab_store::ExperimentRow>,
        }
        return Ok(Versioned::new(Doc { experiments: all }).to_pretty());
    }
    let mut table = Sheet::new(&[
        ("id", Align::Left),
        ("started (UTC)", Align::Left),
        ("status", Align::Left),
        ("runs", Align::Right),
        ("name", Align::Left),
        ("cells x repetitions, scale, file", Align::Left),
    ]);
    for e in all {
        let total = e.cells * e.repetitions;
        table.row(vec![
            e.id.into(),
            e.started_at.get(..19).unwrap_or(&e.started_at).into(),
            e.status.to_string().into(),
            format!("{}/{total}", e.completed).into(),
            e.name.clone().into(),
            format!(
                "{} cell{} x {} repetition{}, scale {}, {}",
                e.cells,
                if e.cells == 1 { "" } else { "s" },
                e.repetitions,
                if e.repetitions == 1 { "" } else { "s" },
                e.scale,
                e.file
            )
            .into(),
        ]);
    }
    Ok(table.render(format, "experiments"))
}

/// `results show ID`: the run, how its filesystem was made, its probes.
pub fn run_text(store: &Store, id: i64) -> Result<String> {
    let rec = store.run(id)?;
    let notes = store.probe_notes(id)?;
    let points = store.probe_point_summary(id)?;
    let made = store
        .run_origin(id)?
        .map(|o| origin(&o))
        .unwrap_or_default();
    Ok(format!(
        "{}{made}{}{}",
        show(&rec),
        machine(&rec.machine),
        probes(&rec, &notes, &points)
    ))
}

/// The machine the run ran on: each host's facts, `name: value`, with
/// where an unknown one could not be read (each phase's clock, page cache
/// and pressure are the `machine` probe's lines under its phase).
pub fn machine(m: &fslab_model::facts::Machine) -> String {
    let mut s = String::new();
    for h in &m.hosts {
        let _ = writeln!(s, "\nmachine {}:", h.host);
        let mut table = Table::new(&[("fact", Align::Left), ("value", Align::Left)]).indent(2);
        for f in &h.facts {
            table.row([
                f.name.clone(),
                match &f.value {
                    Some(v) => v.clone(),
                    None => format!("unknown ({})", f.source),
                },
            ]);
        }
        s.push_str(&table.render());
    }
    s
}

/// `results export ID --format json`: the run's record with its schema version.
pub fn export_json(store: &Store, id: i64) -> Result<String> {
    Ok(store.run_json(id)?)
}

/// `results export ID --format csv`.
pub fn export_csv(store: &Store, id: i64) -> Result<String> {
    Ok(store.run(id)?.to_csv())
}

/// How `fslab run` made the run's filesystem: the cell's setup as recorded.
pub fn origin(o: &RunOrigin) -> String {
    let (c, r) = (&o.cell, &o.cell_run);
    let mut s = String::new();
    let which = if r.is_warm_up() {
        "its warm-up (never compared)".to_string()
    } else {
        format!("repetition {}", r.repetition)
    };
    let _ = writeln!(
        s,
        "\nmade by experiment {} ({}), cell {} {:?}, {which}:",
        o.experiment_id, o.experiment, c.index, c.label
    );
    if let Some(h) = c.image_host() {
        let _ = writeln!(
            s,
            "  image host:  {} on {} ({}, {} sparse, on {}), mounted at {}",
            h.fs,
            h.loop_device,
            h.image,
            human_bytes(h.image_size),
            h.on,
            h.mount_point,
        );
    }
    if !r.image_path.is_empty() {
        let _ = writeln!(
            s,
            "  image:       {} ({} sparse, {} written at the end) on {}",
            r.image_path,
            human_bytes(r.image_size),
            human_bytes(r.image_allocated),
            r.host_fs
        );
    }
    if !r.loop_device.is_empty() {
        let _ = writeln!(
            s,
            "  device:      {}{}",
            r.loop_device,
            if r.image_path.is_empty() || r.guest.is_some() {
                ""
            } else if r.direct_io {
                " (loop, direct IO)"
            } else {
                " (loop, buffered IO)"
            }
        );
    }
    if !r.scheduler.is_empty() {
        let _ = writeln!(
            s,
            "  scheduler:   {}{}",
            r.scheduler,
            if r.scheduler_before.is_empty() || r.scheduler_before == r.scheduler {
                String::new()
            } else {
                format!(" (was {}, put back after the run)", r.scheduler_before)
            }
        );
    }
    if !r.mkfs_argv.is_empty() {
        let _ = writeln!(
            s,
            "  mkfs:        {}  ({:.2} s; {})",
            r.mkfs_argv.join(" "),
            r.mkfs_s,
            c.mkfs_version
        );
    }
    for a in &r.after_mkfs {
        let _ = writeln!(s, "  after mkfs:  {}", a.join(" "));
    }
    if !r.mount_argv.is_empty() {
        let _ = writeln!(s, "  mount:       {}", r.mount_argv.join(" "));
        let _ = writeln!(s, "  kernel says: {}", r.kernel_mount_options);
    }
    for (k, v) in &c.sysctl {
        let before = r.sysctl_before.get(k).map(String::as_str).unwrap_or("?");
        let _ = writeln!(s, "  sysctl:      {k} = {v} (was {before})");
    }
    if let Some(limit) = c.memory_limit_bytes {
        let _ = writeln!(
            s,
            "  memory:      limit {}, peak {}, limit hit {} times",
            human_bytes(limit),
            r.memory_max_usage_bytes
                .map(human_bytes)
                .unwrap_or("-".into()),
            r.memory_failcnt
                .map(|n| n.to_string())
                .unwrap_or("-".into())
        );
    }
    if c.drop_caches {
        let _ = writeln!(s, "  caches:      dropped before each phase");
    }
    if let (Some(u), Some(m)) = (r.unmount_s, r.remount_s) {
        let _ = writeln!(s, "  unmount:     {u:.3} s, remount {m:.3} s");
    }
    if let Some(g) = &r.guest {
        guest(&mut s, g);
    }
    s
}

/// A guest's facts (a cell on another kernel): its kernel, machine and
/// accelerator, how it went; its config, dmesg and console are in the
/// record (`results export`).
fn guest(s: &mut String, g: &fslab_model::GuestFacts) {
    let _ = writeln!(
        s,
        "  guest:       {} ({}), {}",
        g.release, g.kernel, g.version
    );
    let _ = writeln!(
        s,
        "               {} ({}), {} memory, {} CPU(s){}",
        g.accel.to_uppercase(),
        g.accel_why,
        human_bytes(g.memory_bytes),
        g.cpus,
        if g.append.is_empty() {
            String::new()
        } else {
            format!(", command line + {}", g.append)
        }
    );
    let _ = writeln!(
        s,
        "               booted in {}, ended {} after {:.1} s; config {} lines, dmesg {} lines, console {} lines kept",
        g.boot_s.map_or("-".to_string(), |b| format!("{b:.1} s")),
        g.end.replace('_', " "),
        g.wall_s,
        g.config.lines().count(),
        g.dmesg.lines().count(),
        g.console.lines().count()
    );
    if g.emulated() {
        let _ = writeln!(
            s,
            "               under TCG the times are emulated; {}",
            fslab_analysis::kernels::COUNTS_CARRY_OVER
        );
    }
}

fn us(ns: f64) -> String {
    format!("{:.1}", ns / 1000.0)
}

/// The human-readable account of one run.
pub fn show(rec: &RunRecord) -> String {
    let r = &rec.run;
    let mut s = String::new();
    let _ = writeln!(s, "run {}: {} ({})", r.id, r.workload, r.status.as_str());
    if let Some(e) = &r.error {
        let _ = writeln!(s, "error:     {e}");
    }
    let _ = writeln!(s, "command:   {}", r.command_line.join(" "));
    let _ = writeln!(s, "started:   {}", r.started_at);
    let _ = writeln!(s, "finished:  {}", r.finished_at.as_deref().unwrap_or("-"));
    let _ = writeln!(
        s,
        "fslab:     {}   kernel: {}   host: {}",
        r.fslab_version, r.kernel, r.hostname
    );
    let _ = writeln!(
        s,
        "target:    {} on {} ({}, mounted at {})",
        r.target_path, r.mount_source, r.fs_type, r.mount_point
    );
    let _ = writeln!(s, "options:   {}", r.mount_options);
    if let Some(mpi) = MpiParams::of(&r.params) {
        let _ = writeln!(
            s,
            "mpi:       {} ranks on {}, each in rankNNNN under the directories given",
            mpi.ranks,
            mpi.host_counts()
        );
        for r in &mpi.rates {
            let _ = writeln!(
                s,
                "           {:<14} rank ops/s: min {:.1}  mean {:.1}  max {:.1}  sd {:.1}  ({} ranks)",
                r.phase, r.min, r.mean, r.max, r.sd, r.ranks
            );
        }
        s.push_str(&host_probes(&mpi));
        s.push_str(&host_clocks(&mpi));
    }
    // The tool's own numbers; rows of numbered items (`loop 3`) as tables
    // of their own, below.
    let (items, own): (Vec<&fslab_model::Metric>, Vec<&fslab_model::Metric>) =
        rec.metrics.iter().partition(|m| numbered_item(m).is_some());
    // Each source's numbers under its own heading: the workload's first,
    // then each probe's ("mem probe reported"), in the order recorded.
    let probe = |m: &fslab_model::Metric| fslab_probe::registry::ProbeRef::of(&m.source).is_some();
    let mut sources: Vec<Option<&str>> = vec![None];
    for m in own.iter().filter(|m| probe(m)) {
        if !sources.contains(&Some(m.source.as_str())) {
            sources.push(Some(&m.source));
        }
    }
    for src in sources {
        let mine: Vec<&&fslab_model::Metric> = own
            .iter()
            .filter(|m| match src {
                None => !probe(m),
                Some(p) => m.source == p,
            })
            .collect();
        if mine.is_empty() {
            continue;
        }
        let heading = match src {
            None => format!("{} reported", r.workload),
            Some(p) => format!("{p} probe reported"),
        };
        let _ = writeln!(s, "\n{heading}:");
        let mut table = Table::new(&[("metric", Align::Left), ("value", Align::Right)]).indent(2);
        for m in mine {
            table.row([m.label(), fslab_stats::fmt_g(m.value, 6)]);
        }
        s.push_str(&table.render());
    }
    s.push_str(&item_tables(&items));
    if !rec.phases.is_empty() {
        s.push_str("\nphases:\n");
        let mut table = Table::new(&[
            ("phase", Align::Left),
            ("ops", Align::Right),
            ("time s", Align::Right),
            ("ops/s", Align::Right),
            ("usr s", Align::Right),
            ("sys s", Align::Right),
            ("done", Align::Left),
        ]);
        // What a phase has not (CPU of a reported one, a count of an
        // uncounted one) is a dash.
        let or_dash = |has: bool, v: String| if has { v } else { "-".to_string() };
        for p in &rec.phases {
            table.row([
                p.phase.clone(),
                or_dash(p.counted, p.ops.to_string()),
                format!("{:.3}", p.elapsed_s),
                or_dash(p.counted, format!("{:.1}", p.ops_per_s)),
                or_dash(!p.reported, format!("{:.3}", p.usr_cpu_s)),
                or_dash(!p.reported, format!("{:.3}", p.sys_cpu_s)),
                (if p.complete { "yes" } else { "no" }).to_string(),
            ]);
        }
        s.push_str(&table.render());
        if rec.phases.iter().any(|p| p.reported) {
            s.push_str(
                "  (a phase without CPU time is the tool's own, read from its output after it ran)\n",
            );
        }
    }
    if !rec.outputs.is_empty() {
        let kept: Vec<String> = rec
            .outputs
            .iter()
            .map(|o| format!("{} ({} bytes)", o.stream, o.bytes))
            .collect();
        let _ = writeln!(
            s,
            "\noutput kept: {} (fslab results output {} STREAM)",
            kept.join(", "),
            r.id
        );
    }
    latency_and_rates(rec, &mut s);
    s
}

/// What each host's probes recorded, a column per host (the run's own
/// probe numbers above are rank 0's host's).
fn host_probes(mpi: &MpiParams) -> String {
    let Some((header, rows)) = mpi.host_probes() else {
        return String::new();
    };
    let cols: Vec<(&str, Align)> = header
        .iter()
        .enumerate()
        .map(|(i, h)| (h.as_str(), if i == 0 { Align::Left } else { Align::Right }))
        .collect();
    let mut table = Table::new(&cols).indent(2);
    for row in rows {
        table.row(row);
    }
    format!("\nprobes per host:\n{}", table.render())
}

/// Each host's clock against rank 0's at the run's start and end
/// (fslab_cluster::clock: the offset of the round with the shortest round
/// trip, exact to within half of it), in microseconds.
fn host_clocks(mpi: &MpiParams) -> String {
    if mpi
        .host_facts
        .iter()
        .all(|f| f.clock_start.is_none() && f.clock_end.is_none())
    {
        return String::new();
    }
    let us = |o: Option<fslab_cluster::clock::ClockOffset>,
              v: fn(&fslab_cluster::clock::ClockOffset) -> i64| {
        o.map_or("-".to_string(), |o| format!("{:+.1}", v(&o) as f64 / 1e3))
    };
    let mut table = Table::new(&[
        ("host", Align::Left),
        ("start", Align::Right),
        ("end", Align::Right),
        ("± start", Align::Right),
        ("± end", Align::Right),
    ])
    .indent(2);
    for f in &mpi.host_facts {
        let half = |o: &fslab_cluster::clock::ClockOffset| o.rtt_ns / 2;
        table.row([
            f.host.clone(),
            us(f.clock_start, |o| o.offset_ns),
            us(f.clock_end, |o| o.offset_ns),
            us(f.clock_start, half).trim_start_matches('+').to_string(),
            us(f.clock_end, half).trim_start_matches('+').to_string(),
        ]);
    }
    format!(
        "\nclock per host (its clock minus rank 0's, us, at the run's start and end; exact to ±):\n{}",
        table.render()
    )
}

/// The latency table and the per-second rate summary of a run.
fn latency_and_rates(rec: &RunRecord, s: &mut String) {
    if !rec.latency.is_empty() {
        s.push_str("\nlatency (microseconds):\n");
        let mut table = Table::new(&[
            ("phase", Align::Left),
            ("call", Align::Left),
            ("count", Align::Right),
            ("min", Align::Right),
            ("mean", Align::Right),
            ("p50", Align::Right),
            ("p99", Align::Right),
            ("p99.9", Align::Right),
            ("max", Align::Right),
        ]);
        for l in &rec.latency {
            table.row([
                l.phase.clone(),
                l.op.clone(),
                l.count.to_string(),
                us(l.min_ns as f64),
                us(l.mean_ns),
                us(l.p50_ns as f64),
                us(l.p99_ns as f64),
                us(l.p999_ns as f64),
                us(l.max_ns as f64),
            ]);
        }
        s.push_str(&table.render());
    }
    if !rec.series.is_empty() {
        s.push_str("\nper-second rate (ops/s):\n");
        let mut table = Table::new(&[
            ("phase", Align::Left),
            ("samples", Align::Right),
            ("min", Align::Right),
            ("mean", Align::Right),
            ("max", Align::Right),
        ]);
        for p in &rec.phases {
            let pts: Vec<f64> = rec
                .series
                .iter()
                .filter(|x| x.phase_index == p.seq)
                .scan(0.0, |prev, x| {
                    let dt = x.t_s - *prev;
                    *prev = x.t_s;
                    Some(if dt > 0.0 { x.ops as f64 / dt } else { 0.0 })
                })
                .collect();
            if pts.is_empty() {
                continue;
            }
            let mean = pts.iter().sum::<f64>() / pts.len() as f64;
            let min = pts.iter().copied().fold(f64::INFINITY, f64::min);
            let max = pts.iter().copied().fold(0.0, f64::max);
            table.row([
                p.phase.clone(),
                pts.len().to_string(),
                format!("{min:.1}"),
                format!("{mean:.1}"),
                format!("{max:.1}"),
            ]);
        }
        if !table.is_empty() {
            s.push_str(&table.render());
        }
    }
}

/// The stored note of type `T` for phase `phase` (`None`: the run's own).
pub fn note_of<T: Note>(notes: &[fslab_store::StoredNote], phase: Option<u32>) -> Option<T> {
    notes
        .iter()
        .find(|n| n.phase_index == phase && T::is(&n.probe, &n.key))
        .map(|n| T::from_value(&n.value))
}

/// The probes' summaries: what they watched and what could not start,
/// then each registered probe's lines about the run and about each phase
/// ([`fslab_probe::Plugin::describe_run`], `describe_phase`).
pub fn probes(
    rec: &RunRecord,
    notes: &[fslab_store::StoredNote],
    points: &[fslab_store::ProbeSummary],
) -> String {
    let mut s = String::new();
    if notes.is_empty() {
        return s;
    }
    s.push_str("\nprobes:\n");
    if let Some(t) = note_of::<TargetsNote>(notes, None) {
        let _ = writeln!(
            s,
            "  watching: device {}, image {}, host device {} ({})",
            t.device.as_deref().unwrap_or("-"),
            t.image.as_deref().unwrap_or("-"),
            t.host.as_deref().unwrap_or("-"),
            t.probes.join(",")
        );
    }
    for n in notes
        .iter()
        .filter(|n| n.phase_index.is_none() && n.key == "unavailable")
    {
        let _ = writeln!(
            s,
            "  {}: unavailable: {}",
            n.probe,
            n.value.as_str().unwrap_or("")
        );
    }
    let refs = note_refs(notes);
    let summaries = summary_refs(points);
    let phases = phase_names(rec);
    let run = Described {
        run_id: rec.run.id,
        phase: None,
        phases: &phases,
        notes: &refs,
        summaries: &summaries,
    };
    // The always-on ones (the machine's) after those asked for.
    let probes: Vec<fslab_probe::ProbeRef> = fslab_probe::all()
        .into_iter()
        .chain(fslab_probe::always())
        .collect();
    for k in &probes {
        for l in k.plugin().describe_run(&run) {
            let _ = writeln!(s, "  {l}");
        }
    }
    // A phase its tool reported after it ran had no probes of its own.
    for p in rec.phases.iter().filter(|p| !p.reported) {
        let _ = writeln!(s, "  phase {}:", p.phase);
        let phase = Described {
            phase: Some(p.seq),
            ..run
        };
        for k in &probes {
            for l in k.plugin().describe_phase(&phase) {
                let _ = writeln!(s, "    {l}");
            }
        }
    }
    s
}

/// A run's stored notes as the probes describe them.
pub fn note_refs(notes: &[fslab_store::StoredNote]) -> Vec<NoteRef<'_>> {
    notes
        .iter()
        .map(|n| NoteRef {
            phase_index: n.phase_index,
            probe: &n.probe,
            key: &n.key,
            value: &n.value,
        })
        .collect()
}

/// A run's series summaries as the probes describe them.
fn summary_refs(points: &[fslab_store::ProbeSummary]) -> Vec<SeriesSummary<'_>> {
    points
        .iter()
        .map(|x| SeriesSummary {
            phase_index: x.phase_index,
            probe: &x.probe,
            metric: &x.metric,
            mean: x.mean,
            max: x.max,
        })
        .collect()
}

/// A run's phases: (index, name).
pub fn phase_names(rec: &RunRecord) -> Vec<(u32, String)> {
    rec.phases
        .iter()
        .map(|p| (p.seq, p.phase.clone()))
        .collect()
}

/// A breakdown row of a numbered item (`loop 3`, see
/// `fslab_model::catalogue::numbered`): its source and word.
fn numbered_item(m: &fslab_model::Metric) -> Option<(&str, &str)> {
    let (word, _) = fslab_model::catalogue::numbered(m.phase.as_deref()?)?;
    m.detail.then_some((m.source.as_str(), word))
}

/// Numbered items' rows as tables, per source and word: one row an item,
/// one column a number (at most [`ITEM_COLUMNS`] a table, the rest in
/// tables below).
fn item_tables(metrics: &[&fslab_model::Metric]) -> String {
    let mut s = String::new();
    let mut kinds: Vec<(&str, &str)> = Vec::new();
    for k in metrics.iter().filter_map(|m| numbered_item(m)) {
        if !kinds.contains(&k) {
            kinds.push(k);
        }
    }
    for (source, word) in kinds {
        let mine: Vec<&&fslab_model::Metric> = metrics
            .iter()
            .filter(|m| numbered_item(m) == Some((source, word)))
            .collect();
        let mut loops: Vec<&str> = Vec::new();
        let mut names: Vec<String> = Vec::new();
        for m in &mine {
            let phase = m.phase.as_deref().unwrap_or_default();
            if !loops.contains(&phase) {
                loops.push(phase);
            }
            if !names.contains(&m.name_with_unit()) {
                names.push(m.name_with_unit());
            }
        }
        let _ = writeln!(s, "\n{source} per {word}:");
        for chunk in names.chunks(ITEM_COLUMNS) {
            let mut columns = vec![("", Align::Left)];
            columns.extend(chunk.iter().map(|n| (n.as_str(), Align::Right)));
            let mut table = Table::new(&columns).indent(2);
            for l in &loops {
                let mut row = vec![l.to_string()];
                row.extend(chunk.iter().map(|n| {
                    mine.iter()
                        .find(|m| m.phase.as_deref() == Some(l) && &m.name_with_unit() == n)
                        .map(|m| fslab_stats::fmt_g(m.value, 6))
                        .unwrap_or_else(|| "-".into())
                }));
                table.row(row);
            }
            s.push_str(&table.render());
        }
    }
    s
}

/// The most number columns an item table has.
const ITEM_COLUMNS: usize = 9;
