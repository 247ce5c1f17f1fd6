//! The block trace's memory and speed: synthetic `block_rq_issue` and
//! `block_rq_complete` lines (one pair per event, as tracefs gives them)
//! through the trace reader's accounting and its compressed spool, then
//! copied into a results store, in a process of its own for 1M and 20M
//! events. Prints each process's peak RSS (goal: under 64 MiB whatever the
//! number of events), the events per second the reader sustains (goal:
//! well above 150k events/s, so the kernel's buffer never fills), the
//! spool's size, and the memory the old in-memory buffer (44 bytes an
//! event) would have taken.

use std::fmt::Write;
use std::time::Instant;

use fslab_model::{ProbeNote, Recorder};
use fslab_probe::trace::{Spool, TraceState};

/// One event's two lines: an issue and its completion, 50 us later.
fn lines(i: u64, out: &mut String) {
    out.clear();
    // Mostly sequential runs of 8..64 KiB writes with a jump every 37th.
    let sector = (i / 37) * 1_000_003 % 400_000_000 + (i % 37) * 128;
    let sectors = 16 << (i % 4);
    let t_us = 1_000_000 + i * 7;
    let (s, u) = (t_us / 1_000_000, t_us % 1_000_000);
    let (cs, cu) = ((t_us + 50) / 1_000_000, (t_us + 50) % 1_000_000);
    let _ = write!(
        out,
        "  kworker/u8:3-812 [001] ..... {s}.{u:06}: block_rq_issue: 7,3 WS {b} () {sector} + {sectors} none,0,0 [kworker/u8:3]\n\
         \x20 ksoftirqd/1-22 [001] ..s.. {cs}.{cu:06}: block_rq_complete: 7,3 WS () {sector} + {sectors} none,0,0 [0]\n",
        b = sectors * 512
    );
}

fn hwm_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// One measurement, in this process: (seconds reading, spool bytes, peak RSS KiB).
fn measure(events: u64) -> (f64, u64, u64) {
    let dir = tempfile::tempdir_in("/var/tmp").expect("scratch");
    let mut st = TraceState::new(Some(Spool::new(dir.path()).expect("spool")));
    let mut buf = String::new();
    let t0 = Instant::now();
    for i in 0..events {
        lines(i, &mut buf);
        for l in buf.lines() {
            st.line(l);
        }
    }
    let secs = t0.elapsed().as_secs_f64();
    assert_eq!(st.kept + st.not_kept, events);
    let blob = st.spool.take().expect("spool").finish().expect("spool");
    let bytes = blob.len();
    // Into a store, as `fslab run` records it.
    let mut store = fslab_store::Store::open(&dir.path().join("r.sqlite")).expect("store");
    let run = store
        .begin_run(&fslab_model::RunInfo {
            workload: "fsmark".into(),
            command_line: vec!["trace_spool".into()],
            fslab_version: String::new(),
            kernel: String::new(),
            hostname: String::new(),
            started_at: fslab_model::time::now(),
            target: Default::default(),
            params: serde_json::Value::Null,
        })
        .expect("run");
    store
        .record_probe_note(
            run,
            &ProbeNote {
                phase_index: None,
                probe: "blockio".into(),
                key: "events".into(),
                value: serde_json::Value::Null,
                blob: Some(blob),
            },
        )
        .expect("record");
    (secs, bytes, hwm_kib())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(n) = args.iter().position(|a| a == "--events") {
        let events: u64 = args[n + 1].parse().expect("--events N");
        let (secs, bytes, hwm) = measure(events);
        println!("{events} {secs} {bytes} {hwm}");
        return;
    }
    let me = std::env::current_exe().expect("exe");
    println!("trace reader and spool, one process per size (synthetic issue + complete pairs):");
    println!(
        "{:>10} {:>14} {:>12} {:>14} {:>18}",
        "events", "events/s", "spool MB", "peak RSS MiB", "in-memory MiB (44 B/event)"
    );
    let mut worst_rate = f64::MAX;
    let mut worst_rss = 0.0f64;
    for events in [1_000_000u64, 20_000_000] {
        let out = std::process::Command::new(&me)
            .args(["--events", &events.to_string()])
            .output()
            .expect("spawn");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8_lossy(&out.stdout);
        let v: Vec<f64> = text
            .split_whitespace()
            .map(|x| x.parse().expect("number"))
            .collect();
        let (secs, bytes, hwm) = (v[1], v[2], v[3]);
        let rate = events as f64 / secs;
        let rss = hwm / 1024.0;
        worst_rate = worst_rate.min(rate);
        worst_rss = worst_rss.max(rss);
        println!(
            "{:>10} {:>14.0} {:>12.1} {:>14.1} {:>18.1}",
            events,
            rate,
            bytes / 1e6,
            rss,
            events as f64 * 44.0 / 1048576.0
        );
    }
    println!(
        "sustained rate / 150k events/s: {:.2}x; peak RSS / 64 MiB: {:.2}",
        worst_rate / 150_000.0,
        worst_rss / 64.0
    );
}
