//! Merging 10,000 ranks' records, as rank 0 does after the gather: decode
//! each rank's bytes and merge them into one run (phases, series, latency
//! histograms, fs_mark loops, per-host facts, timelines).
//!
//! Goal (issue 25): under a second, in bounded memory. The records are
//! synthetic but of a real rank's shape: 3 phases, 3 latency histograms of
//! 2,000 calls each, 30 per-second points, 2 fs_mark loop rows, 3 spans.
//! Memory: the gathered bytes must be held (MPI gathers them at once); the
//! merge may add at most as much again, plus 64 MiB.

use fslab_cluster::{merge_clocked, ClockOffset, Clocks, RankHist, RankRun, Span};
use fslab_model::{CallStats, LatencyHistogram, LoopRow, PhaseResult, RunStatus, SeriesPoint};

const RANKS: usize = 10_000;
const PHASES: [&str; 3] = ["create", "stat", "unlink"];

fn vm_kib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        .unwrap_or(0)
}

fn rank(r: usize) -> Vec<u8> {
    let mut run = RankRun::new(r, &format!("node{:03}", r / 32));
    run.status = RunStatus::Complete;
    for (i, name) in PHASES.iter().enumerate() {
        let secs = 1.0 + (r % 7) as f64 * 0.1;
        run.phases.push(PhaseResult {
            phase: (*name).into(),
            ops: 2_000,
            elapsed_s: secs,
            ops_per_s: 2_000.0 / secs,
            complete: true,
            ..Default::default()
        });
        let mut h = LatencyHistogram::new();
        for k in 0..2_000u64 {
            // A spread of latencies: 2 us to ~2 ms, the tail per rank.
            h.record(2_000 + (k * k * 7 + r as u64 * 13) % 2_000_000);
        }
        run.latency.push(RankHist::of(name, "op", &h));
        for s in 0..10u64 {
            run.series.push(SeriesPoint {
                phase_index: i as u32,
                t_s: s as f64 + 1.0,
                ops: 200,
                total_ops: (s + 1) * 200,
            });
        }
        run.spans.push(Span {
            name: (*name).into(),
            start_ns: i as i64 * 2_000_000_000,
            end_ns: i as i64 * 2_000_000_000 + (secs * 1e9) as i64,
        });
    }
    for l in 0..2 {
        run.loops.push(LoopRow {
            index: l,
            count: 1_000 * (l as u64 + 1),
            files: 1_000,
            files_per_sec: 900.0,
            wall_s: 1.1,
            calls: vec![(
                "creat".into(),
                CallStats {
                    min_us: 3,
                    avg_us: 9,
                    max_us: 400,
                },
            )],
            complete: true,
            ..Default::default()
        });
    }
    run.to_bytes()
}

fn main() {
    let base = vm_kib("VmRSS:");
    let parts: Vec<Vec<u8>> = (0..RANKS).map(rank).collect();
    let input: usize = parts.iter().map(Vec::len).sum();
    let held = vm_kib("VmRSS:");
    let clocks = Clocks {
        start: (0..RANKS)
            .map(|rank| ClockOffset {
                rank,
                offset_ns: rank as i64 % 1_000,
                rtt_ns: 20_000,
                at_ns: 0,
            })
            .collect(),
        end: Vec::new(),
    };
    let t = std::time::Instant::now();
    let runs: Vec<RankRun> = parts
        .iter()
        .map(|b| RankRun::from_bytes(b).expect("a synthetic rank decodes"))
        .collect();
    let merged = merge_clocked(runs, &clocks);
    let took = t.elapsed().as_secs_f64();
    let peak = vm_kib("VmHWM:");
    let calls: u64 = merged
        .run
        .latency
        .iter()
        .map(|h| h.histogram().expect("merged histogram").count())
        .sum();
    assert_eq!(calls, (RANKS * PHASES.len() * 2_000) as u64);
    assert_eq!(merged.run.phases[0].ops, RANKS as u64 * 2_000);
    let added_mib = (peak.saturating_sub(held)) as f64 / 1024.0;
    let input_mib = input as f64 / (1 << 20) as f64;
    println!(
        "merge of {RANKS} ranks: {took:.3} s (goal < 1 s); gathered bytes {input_mib:.1} MiB \
         (RSS {:.1} -> {:.1} MiB holding them), peak RSS {:.1} MiB: the merge added {added_mib:.1} MiB \
         (goal <= {:.1} MiB: as much as the input again plus 64 MiB); {} hosts, {calls} calls merged",
        base as f64 / 1024.0,
        held as f64 / 1024.0,
        peak as f64 / 1024.0,
        input_mib + 64.0,
        merged.host_facts.len(),
    );
    let ok = took < 1.0 && added_mib <= input_mib + 64.0;
    println!("{}", if ok { "ok" } else { "GOAL MISSED" });
    std::process::exit(i32::from(!ok));
}
