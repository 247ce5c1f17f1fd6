//! `fslab results list | show | export`.

use std::fmt::Write as _;
use std::path::PathBuf;

use fslab_store::RunRecord;
use fslab_workload::fsmark::output;

use crate::cli::{ExportFormat, ResultsCommand};
use crate::Failure;

pub fn run(cmd: ResultsCommand, db: &PathBuf) -> Result<(), Failure> {
    if !db.exists() {
        return Err(Failure::Usage(format!(
            "no results store at {} (run a workload first, or give --db)",
            db.display()
        )));
    }
    let store = super::open_store(db)?;
    let fetch = |id: i64| {
        store.run(id).map_err(|e| match e {
            fslab_store::StoreError::NoSuchRun(_) => Failure::Usage(e.to_string()),
            e => Failure::Failed(format!("results store {e}")),
        })
    };
    match cmd {
        ResultsCommand::List => {
            let runs = store
                .list_runs()
                .map_err(|e| Failure::Failed(format!("results store {e}")))?;
            for r in runs {
                let headline = store
                    .phases(r.id)
                    .ok()
                    .and_then(|p| p.first().cloned())
                    .map(|p| format!("{} {:.1} ops/s", p.phase, p.ops_per_s))
                    .unwrap_or_else(|| "-".into());
                println!(
                    "{:<5} {}  {:<8} {:<11} {:<6} {}  {headline}",
                    r.id,
                    r.started_at.get(..19).unwrap_or(&r.started_at),
                    r.workload,
                    r.status.as_str(),
                    if r.fs_type.is_empty() {
                        "?"
                    } else {
                        &r.fs_type
                    },
                    r.target_path,
                );
            }
        }
        ResultsCommand::Show { id } => print!("{}", show(&fetch(id)?)),
        ResultsCommand::Export { id, format } => {
            let rec = fetch(id)?;
            match format {
                ExportFormat::Json => {
                    println!("{}", serde_json::to_string_pretty(&rec).unwrap_or_default())
                }
                ExportFormat::Csv => print!("{}", rec.to_csv()),
            }
        }
    }
    Ok(())
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
    if !rec.loops.is_empty() {
        s.push_str("\nloops (fs_mark table):\n");
        let _ = writeln!(
            s,
            "{:>6} {:>12} {:>12} {:>12} {:>16}",
            "FSUse%", "Count", "Size", "Files/sec", "App Overhead"
        );
        for l in &rec.loops {
            s.push_str(&output::row(l, false));
        }
    }
    if !rec.phases.is_empty() {
        s.push_str("\nphases:\n");
        let _ = writeln!(
            s,
            "{:<8} {:>12} {:>10} {:>12} {:>9} {:>9}  done",
            "phase", "ops", "time s", "ops/s", "usr s", "sys s"
        );
        for p in &rec.phases {
            let _ = writeln!(
                s,
                "{:<8} {:>12} {:>10.3} {:>12.1} {:>9.3} {:>9.3}  {}",
                p.phase,
                p.ops,
                p.elapsed_s,
                p.ops_per_s,
                p.usr_cpu_s,
                p.sys_cpu_s,
                if p.complete { "yes" } else { "no" }
            );
        }
    }
    if !rec.latency.is_empty() {
        s.push_str("\nlatency (microseconds):\n");
        let _ = writeln!(
            s,
            "{:<8} {:<7} {:>10} {:>9} {:>9} {:>9} {:>9} {:>9} {:>10}",
            "phase", "call", "count", "min", "mean", "p50", "p99", "p99.9", "max"
        );
        for l in &rec.latency {
            let _ = writeln!(
                s,
                "{:<8} {:<7} {:>10} {:>9} {:>9} {:>9} {:>9} {:>9} {:>10}",
                l.phase,
                l.op,
                l.count,
                us(l.min_ns as f64),
                us(l.mean_ns),
                us(l.p50_ns as f64),
                us(l.p99_ns as f64),
                us(l.p999_ns as f64),
                us(l.max_ns as f64)
            );
        }
    }
    if !rec.series.is_empty() {
        s.push_str("\nper-second rate (ops/s):\n");
        let _ = writeln!(
            s,
            "{:<8} {:>8} {:>12} {:>12} {:>12}",
            "phase", "seconds", "min", "mean", "max"
        );
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
            let min = pts.iter().cloned().fold(f64::INFINITY, f64::min);
            let max = pts.iter().cloned().fold(0.0, f64::max);
            let _ = writeln!(
                s,
                "{:<8} {:>8} {:>12.1} {:>12.1} {:>12.1}",
                p.phase,
                pts.len(),
                min,
                mean,
                max
            );
        }
    }
    s
}
