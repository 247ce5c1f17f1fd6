//! fslab createmany -m and -o on tmpfs against bare mknod and open+close
//! loops (one thread, one directory, 500k names, each written into one
//! reused buffer as createmany's sprintf does), as total names over
//! wall-clock time; the fslab side is the real binary with `--probes none`
//! (the probes' cost is `probe_overhead`'s subject; this measures the
//! workload loop: name making, per-call timing, counters). 15 runs, the side
//! that goes first alternating; median of each side. Then createmany's peak
//! memory at 1M and 10M names (created and unlinked at once, so the
//! filesystem stays small).

use std::time::Instant;

use fslab_bench::{fslab_bin, median, Scratch};

const RUNS: usize = 15;

fn bare(dir: &std::path::Path, n: usize, open: bool) -> f64 {
    let prefix = format!("{}/f", dir.display());
    n as f64 / fslab_bench::bare::createmany(&prefix, n, open)
}

fn fslab(scratch: &Scratch, dir: &std::path::Path, n: usize, open: bool) -> f64 {
    let start = Instant::now();
    let st = std::process::Command::new(fslab_bin())
        .arg("--db")
        .arg(scratch.0.join("r.sqlite"))
        .args([
            "createmany",
            "--probes",
            "none",
            if open { "-o" } else { "-m" },
        ])
        .arg(format!("{}/f", dir.display()))
        .arg(n.to_string())
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(st.success());
    n as f64 / start.elapsed().as_secs_f64()
}

fn peak_kib(scratch: &Scratch, n: u64) -> u64 {
    let d = scratch.0.join(format!("rss{n}"));
    std::fs::create_dir_all(&d).unwrap();
    fslab_bench::peak_rss_kib(
        std::process::Command::new(fslab_bin())
            .arg("--db")
            .arg(scratch.0.join("r.sqlite"))
            .args(["createmany", "-m", "-u"])
            .arg(format!("{}/f", d.display()))
            .arg(n.to_string()),
    )
}

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(500_000);
    let scratch = Scratch::new("createmany");
    let work = Scratch::new("createmany-files");
    let dir = work.0.join("d");
    // Memory first: a child's peak RSS counts the bench's own image up to its
    // exec, which the bare loops below make large.
    let small = peak_kib(&scratch, 1_000_000);
    let large = peak_kib(&scratch, 10_000_000);
    println!(
        "createmany -m -u peak RSS: {:.1} MiB at 1M names, {:.1} MiB at 10M names",
        small as f64 / 1024.0,
        large as f64 / 1024.0
    );
    let flat = (large as f64) < small as f64 * 1.25 + 1024.0;
    println!(
        "  memory flat from 1M to 10M (growth {:.2}x): {}",
        large as f64 / small as f64,
        if flat { "PASS" } else { "FAIL" }
    );
    for (mode, open) in [("-m (mknod)", false), ("-o (open+close)", true)] {
        println!("createmany {mode}: {n} names in one tmpfs directory, {RUNS} alternating runs (fslab with --probes none)");
        let (mut b, mut f) = (Vec::new(), Vec::new());
        for run in 0..RUNS {
            // Which side goes first alternates, so neither always follows
            // the other's freeing of the names.
            for side in [run % 2, 1 - run % 2] {
                work.clear();
                std::fs::create_dir_all(&dir).unwrap();
                if side == 0 {
                    b.push(bare(&dir, n, open));
                } else {
                    f.push(fslab(&scratch, &dir, n, open));
                }
            }
            println!(
                "  run {run:>2}: bare {:>8.0}/s  fslab {:>8.0}/s",
                b[run], f[run]
            );
        }
        let ratio = median(&f) / median(&b);
        println!(
            "  median: bare {:.0}/s, fslab {:.0}/s",
            median(&b),
            median(&f)
        );
        println!(
            "  ratio fslab/bare = {ratio:.3} (target >= 0.95): {}",
            if ratio >= 0.95 { "PASS" } else { "FAIL" }
        );
    }
}
