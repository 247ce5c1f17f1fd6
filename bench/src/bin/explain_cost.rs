//! What issue 34's explanations cost: (1) what recording the machine's
//! facts adds to a run (the facts read once at its start, and the machine
//! probe's reads at each phase's start and end, which the workload waits
//! for; the once-a-second clock sample runs on the probes' thread), target
//! under 50 ms for a run of three phases; (2) explaining a 3-cell
//! comparison from the store (`fslab compare`'s analysis with and without
//! fslab-explain's explainer), target under 1 s. Medians; each printed
//! against its target, with PASS or FAIL.
//!
//! `explain_cost [--db PATH --experiment ID]`: without a store, a synthetic
//! one of 3 cells x 3 runs, each run as a default-probes run records it
//! (its machine's facts, wait stacks, jbd2 commits, disk and block IO
//! summaries, a perf profile, latencies, a block trace's blob, per-second
//! points).

use std::path::PathBuf;
use std::time::Instant;

use fslab_analysis::{Choice, Explainer};
use fslab_bench::median;
use fslab_model::{
    Blob, LatencyHistogram, PhaseResult, ProbeNote, ProbePoint, Recorder, RunInfo, RunStatus,
    TargetInfo,
};
use fslab_probe::notes::{
    BlockedStack, BlockioPhase, BlockioSummary, DiskPhase, DiskSummary, Jbd2Commits, Note,
    PerfSymbol, PerfTop, StacksTop,
};
use fslab_probe::probe::{Ctx, PhaseInfo, Probe};
use fslab_probe::source::Machine;
use fslab_store::Store;

const PHASES: [&str; 3] = ["create", "stat", "unlink"];

fn ms(f: impl FnOnce()) -> f64 {
    let t = Instant::now();
    f();
    t.elapsed().as_secs_f64() * 1e3
}

/// The facts read at a run's start, and the machine probe's reads at a
/// phase's start and end (ms, medians of 21).
fn recording_cost() -> (f64, f64) {
    let targets = fslab_probe::resolve(std::path::Path::new("/"));
    let facts: Vec<f64> = (0..21)
        .map(|_| {
            ms(|| {
                std::hint::black_box(fslab_probe::facts::machine(&Machine, &targets));
            })
        })
        .collect();
    let scratch = std::env::temp_dir();
    let info = PhaseInfo::default();
    let me = [std::process::id()];
    let ctx = Ctx {
        source: &Machine,
        targets: &targets,
        pid: me[0],
        processes: &me,
        workers: &me,
        memory_cgroup: None,
        trace: None,
        trace_dropped: 0,
        phase: &info,
        first_mono_ns: 0,
        now_mono_ns: 0,
        scratch: &scratch,
        kthreads: &[],
    };
    let plugin = fslab_probe::always()
        .into_iter()
        .find(|k| k.name() == fslab_model::facts::PHASE_PROBE)
        .expect("the machine probe");
    let phase: Vec<f64> = (0..21)
        .map(|_| {
            let mut p: Box<dyn Probe> = plugin.plugin().make();
            ms(|| {
                p.phase_start(&ctx);
                std::hint::black_box(p.phase_end(&ctx, 1.0));
            })
        })
        .collect();
    (median(&facts), median(&phase))
}

fn note<T: Note>(phase: u32, v: &T) -> ProbeNote {
    fslab_probe::probe::typed_note(Some(phase), v)
}

/// The per-phase notes a default-probes run keeps, and a perf profile.
fn phase_notes(i: u32, scale: f64) -> Vec<ProbeNote> {
    let stacks = StacksTop {
        rounds: 600,
        stacks: (0..20)
            .map(|k| BlockedStack {
                thread: "workload".into(),
                samples: 100 - k * 4,
                share_pct: 5.0,
                per_round: 0.5,
                frames: (0..15)
                    .map(|f| format!("kernel_function_{k}_{f}"))
                    .collect(),
            })
            .collect(),
        workload_blocked: 1500,
        worker_states: [("R", 900), ("D", 1500), ("S", 100)]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
    };
    let commits = Jbd2Commits(
        (0..500)
            .map(|t| format!("1.0: jbd2_run_stats: dev 7,3 tid {t} wait 0 request_delay 0 running 5000 locked 3 flushing 0 logging {} handle_count 900 blocks 40 blocks_logged 41", 20 + t % 30))
            .collect(),
    );
    let mut disk = DiskSummary::default();
    disk.0.insert(
        "loop3".into(),
        DiskPhase {
            util_pct: 40.0,
            ..Default::default()
        },
    );
    let mut blockio = BlockioSummary::default();
    blockio.devices.insert(
        "loop3".into(),
        BlockioPhase {
            queue_depth: 2.0,
            avg_io_kb: 16.0,
            ..Default::default()
        },
    );
    let perf = PerfTop(
        (0..100)
            .map(|k| PerfSymbol {
                percent: 10.0 / f64::from(k + 1) * scale,
                samples: 1000 / (k as u64 + 1),
                dso: "[kernel.kallsyms]".into(),
                kernel: true,
                symbol: format!("symbol_{k}"),
            })
            .collect(),
    );
    let facts = fslab_model::PhaseFacts {
        clock_mhz: Some(2596.0),
        clock_source: "sampled /proc/cpuinfo cpu MHz".into(),
        page_cache_mib: Some(800.0),
        dirty_mib: Some(12.0),
        ..Default::default()
    };
    vec![
        note(i, &stacks),
        note(i, &commits),
        note(i, &disk),
        note(i, &blockio),
        note(i, &perf),
        note(i, &facts),
    ]
}

/// One run as a default-probes run with perf records it.
fn a_run(s: &mut Store, cell: usize, rep: usize) -> i64 {
    let id = s
        .begin_run(&RunInfo {
            workload: "fsmark".into(),
            command_line: vec!["fslab".into(), "fsmark".into()],
            fslab_version: "0".into(),
            kernel: "6".into(),
            hostname: "h".into(),
            started_at: "now".into(),
            target: TargetInfo::default(),
            params: serde_json::json!({"files": 1000}),
        })
        .unwrap();
    let targets = fslab_probe::resolve(std::path::Path::new("/"));
    s.record_facts(id, &fslab_probe::facts::machine(&Machine, &targets))
        .unwrap();
    for (i, p) in PHASES.iter().enumerate() {
        let rate = 10_000.0 * (1.0 + cell as f64 / 10.0) * (1.0 + rep as f64 / 100.0);
        s.record_phase(id, &PhaseResult::timed(p, (rate * 10.0) as u64, 10.0))
            .unwrap();
        for op in ["creat", "write", "fsync", "close"] {
            let mut h = LatencyHistogram::new();
            for ns in 1..200u64 {
                h.record(ns * 1_000);
            }
            s.record_latency(id, p, op, &h).unwrap();
        }
        for n in phase_notes(i as u32, 1.0 + cell as f64) {
            s.record_probe_note(id, &n).unwrap();
        }
        let points: Vec<ProbePoint> = (0..3000)
            .map(|t| ProbePoint {
                phase_index: i as u32,
                t_s: f64::from(t),
                probe: "cpu".into(),
                metric: "usr_pct".into(),
                value: 1.0,
            })
            .collect();
        s.record_probe_points(id, &points).unwrap();
    }
    // A block trace's blob, which the explanations never read.
    s.record_probe_note(
        id,
        &ProbeNote {
            phase_index: None,
            probe: "blockio".into(),
            key: "events".into(),
            value: serde_json::json!({}),
            blob: Some(Blob::Bytes(vec![7u8; 8 << 20])),
        },
    )
    .unwrap();
    s.finish_run(id, RunStatus::Complete, None).unwrap();
    id
}

/// A synthetic store of 3 cells x 3 runs, and its groups.
fn synthetic(dir: &std::path::Path) -> (PathBuf, Vec<String>) {
    let path = dir.join("explain.sqlite");
    let mut s = Store::open(&path).unwrap();
    let groups = (0..3)
        .map(|cell| {
            (0..3)
                .map(|rep| a_run(&mut s, cell, rep).to_string())
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect();
    (path, groups)
}

/// Medians (ms) of the analysis without and with the explainer.
fn explain_cost(db: &std::path::Path, runs: &[String], experiment: Option<i64>) -> (f64, f64) {
    let store = Store::open_read(db).unwrap();
    let time = |explainers: &[&dyn Explainer]| {
        let v: Vec<f64> = (0..5)
            .map(|_| {
                let choice = Choice {
                    runs: runs.to_vec(),
                    experiments: experiment.into_iter().collect(),
                    explainers,
                    ..Default::default()
                };
                ms(|| {
                    let a = fslab_analysis::from_store(&store, &choice).unwrap();
                    std::hint::black_box(a.explanations.len());
                })
            })
            .collect();
        median(&v)
    };
    (time(&[]), time(fslab_explain::EXPLAINERS))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1).cloned())
    };
    let (facts, phase) = recording_cost();
    let per_run = facts + PHASES.len() as f64 * phase;
    println!("machine facts read at a run's start:  {facts:.2} ms (median of 21)");
    println!("machine probe, a phase's start and end: {phase:.2} ms (median of 21)");
    println!(
        "added to a run of {} phases: {per_run:.2} ms, {:.3} of the 50 ms target: {}",
        PHASES.len(),
        per_run / 50.0,
        if per_run < 50.0 { "PASS" } else { "FAIL" }
    );
    let tmp = tempfile::tempdir().unwrap();
    let (db, runs, experiment, what) = match (arg("--db"), arg("--experiment")) {
        (Some(db), Some(e)) => (
            PathBuf::from(db),
            Vec::new(),
            Some(e.parse::<i64>().expect("--experiment ID")),
            format!("experiment {e}"),
        ),
        _ => {
            let (db, runs) = synthetic(tmp.path());
            (db, runs, None, "a synthetic 3 cells x 3 runs".to_string())
        }
    };
    let (plain, explained) = explain_cost(&db, &runs, experiment);
    println!(
        "compare's analysis of {what}: {plain:.1} ms without the explainer, {explained:.1} ms with it (median of 5)"
    );
    println!(
        "explained in {explained:.1} ms, {:.3} of the 1 s target: {}",
        explained / 1000.0,
        if explained < 1000.0 { "PASS" } else { "FAIL" }
    );
}
