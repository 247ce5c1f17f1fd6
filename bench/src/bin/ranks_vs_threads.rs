//! N MPI ranks on one host against N threads of the same workload (issue
//! 25's goal: the ranks reach at least 0.95 of the threads' aggregate
//! rate). Both sides make the same files on tmpfs with the same calls:
//! `fslab fsmark -t N` (one process, N threads) against `mpirun -np N fslab
//! fsmark -t 1` (N processes, each in its own `rankNNNN` directory), and
//! tiotest's sequential write the same way. The rate compared is each
//! run's own phase rate from its `--json` (the threads' phase from start to
//! join; the merged ranks' all operations over the slowest rank's time, as
//! mdtest and IOR count), so MPI's start-up is outside both. The sides
//! alternate (which goes first too); medians of RUNS (default 7).
//!
//! ```text
//! cargo build --release -p fslab --features mpi
//! cargo run --release -p fslab-bench --bin ranks_vs_threads [RUNS]
//! ```

use std::path::Path;
use std::process::{Command, ExitCode};

use fslab_bench::{fslab_bin, median, Scratch};

/// One workload: its arguments after `-d DIR`, with `{t}` for the threads
/// of one process, and the phase whose rate is compared.
struct Case {
    name: &'static str,
    args: &'static str,
    phase: &'static str,
}

const CASES: &[Case] = &[
    Case {
        name: "fsmark -s 0 -S 0, 20000 files a thread",
        args: "fsmark -t {t} -n 20000 -s 0 -S 0 -L 1",
        phase: "create",
    },
    Case {
        name: "tiotest -f 256 -b 4096, sequential write",
        args: "tiotest -t {t} -f 256 -b 4096 -r 1",
        phase: "write",
    },
];

/// The rate of `phase` in a run's JSON on `stdout`.
fn phase_rate(stdout: &[u8], phase: &str) -> Option<f64> {
    let v: serde_json::Value = serde_json::from_slice(stdout).ok()?;
    v["phases"]
        .as_array()?
        .iter()
        .find(|p| p["phase"] == phase)?["ops_per_s"]
        .as_f64()
}

/// One run of `case` with `n` threads (`ranks` false) or `n` ranks of one
/// thread: its phase rate.
fn once(case: &Case, n: usize, ranks: bool, dir: &Path, db: &Path) -> Option<f64> {
    let threads = if ranks { 1 } else { n };
    let args = case.args.replace("{t}", &threads.to_string());
    let mut words: Vec<String> = args.split_whitespace().map(String::from).collect();
    let at = 1;
    for (i, w) in ["--probes", "none", "--json", "--quiet"].iter().enumerate() {
        words.insert(at + i, (*w).to_string());
    }
    words.extend(["-d".into(), dir.display().to_string()]);
    let fslab = fslab_bin();
    let mut cmd = if ranks {
        let mut c = Command::new("mpirun");
        c.args([
            "--allow-run-as-root",
            "--oversubscribe",
            "-np",
            &n.to_string(),
        ])
        .arg(&fslab);
        c
    } else {
        Command::new(&fslab)
    };
    cmd.arg("--db").arg(db).args(&words);
    let o = cmd.output().ok()?;
    if !o.status.success() {
        eprintln!(
            "ranks_vs_threads: {words:?}: {}",
            String::from_utf8_lossy(&o.stderr).trim()
        );
        return None;
    }
    let rate = phase_rate(&o.stdout, case.phase);
    if rate.is_none() {
        eprintln!(
            "ranks_vs_threads: {words:?}: no phase {:?} in its --json",
            case.phase
        );
    }
    rate
}

fn main() -> ExitCode {
    let runs: usize = match std::env::args().nth(1).map(|a| a.parse()) {
        None => 7,
        Some(Ok(n)) if n > 0 => n,
        Some(_) => {
            eprintln!("ranks_vs_threads: RUNS must be a whole number above 0");
            return ExitCode::from(2);
        }
    };
    if Command::new("mpirun").arg("--version").output().is_err() {
        eprintln!("ranks_vs_threads: mpirun not found (apt-get install openmpi-bin)");
        return ExitCode::FAILURE;
    }
    let scratch = Scratch::new("ranks-threads");
    let db = scratch.0.join("bench.sqlite");
    println!(
        "N ranks (mpirun -np N, one thread each) against N threads of one process, tmpfs, \
         medians of {runs} alternating runs; goal: ranks/threads >= 0.95"
    );
    println!(
        "{:<42} {:>2} {:>14} {:>14} {:>7}",
        "workload", "N", "threads ops/s", "ranks ops/s", "ratio"
    );
    let mut worst = f64::INFINITY;
    for case in CASES {
        for n in [2usize, 4] {
            let (mut th, mut rk) = (Vec::new(), Vec::new());
            for i in 0..runs {
                for ranks in [i % 2 == 1, i % 2 == 0] {
                    let dir = scratch.0.join("work");
                    let _ = std::fs::remove_dir_all(&dir);
                    std::fs::create_dir_all(&dir).expect("work dir");
                    rustix::fs::sync();
                    let Some(r) = once(case, n, ranks, &dir, &db) else {
                        return ExitCode::FAILURE;
                    };
                    if ranks { &mut rk } else { &mut th }.push(r);
                }
            }
            let (t, r) = (median(&th), median(&rk));
            let ratio = r / t;
            worst = worst.min(ratio);
            println!(
                "{:<42} {:>2} {:>14.0} {:>14.0} {:>7.3}",
                case.name, n, t, r, ratio
            );
        }
    }
    println!(
        "lowest ratio {worst:.3}: {}",
        if worst >= 0.95 {
            "goal met"
        } else {
            "goal missed"
        }
    );
    ExitCode::SUCCESS
}
