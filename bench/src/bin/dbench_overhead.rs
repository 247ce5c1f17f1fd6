//! fslab dbench against Debian's dbench (the original), both replaying
//! dbench's own /usr/share/dbench/client.txt with the same clients for the
//! same time on tmpfs. The measure is each tool's closing
//! `Throughput X MB/sec` line (bytes read and written over the measured
//! seconds, warm-up excluded, as both define it). Alternating runs, median of
//! 5 each. A ratio above 1 means fslab loses less time to itself than dbench.
//! It also compares the operations completed, from each tool's last progress
//! line, so a faster replay cannot hide skipped work.

use std::process::Command;

use fslab_bench::{fslab_bin, median, Scratch};

const CLIENTS: &str = "4";
const SECONDS: &str = "10";
const RUNS: usize = 5;
const LOADFILE: &str = "/usr/share/dbench/client.txt";

/// (MB/s, operations per second) from a dbench-format output.
fn parse(out: &str, secs: f64) -> (f64, f64) {
    let mbs = out
        .lines()
        .find_map(|l| l.strip_prefix("Throughput "))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|x| x.parse::<f64>().ok())
        .unwrap_or_else(|| panic!("no Throughput line in:\n{out}"));
    // The last "execute" progress line: clients, operations, MB/sec, ...
    let ops = out
        .lines()
        .filter(|l| l.contains(" execute "))
        .filter_map(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        .next_back()
        .unwrap_or(f64::NAN);
    (mbs, ops / secs)
}

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().expect("spawn");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}{text}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

fn main() {
    if !std::path::Path::new(LOADFILE).exists() {
        eprintln!("dbench_overhead: {LOADFILE} not found: install Debian's dbench package");
        std::process::exit(2);
    }
    let secs: f64 = SECONDS.parse().unwrap();
    let work = Scratch::new("dbench");
    let db = Scratch::new("dbench-db");
    println!(
        "dbench {CLIENTS} clients, {SECONDS} s after warm-up, {LOADFILE}, tmpfs, {RUNS} alternating runs"
    );
    let (mut orig, mut ours, mut orig_ops, mut our_ops) = (vec![], vec![], vec![], vec![]);
    for _ in 0..RUNS {
        work.clear();
        let (m, o) = parse(
            &run(Command::new("dbench")
                .args(["-t", SECONDS, "-c", LOADFILE, "-D"])
                .arg(&work.0)
                .arg(CLIENTS)),
            secs,
        );
        orig.push(m);
        orig_ops.push(o);
        work.clear();
        let (m, o) = parse(
            &run(Command::new(fslab_bin())
                .arg("--db")
                .arg(db.0.join("r.sqlite"))
                .args([
                    "dbench", "--probes", "none", "-t", SECONDS, "-c", LOADFILE, "-D",
                ])
                .arg(&work.0)
                .arg(CLIENTS)),
            secs,
        );
        ours.push(m);
        our_ops.push(o);
    }
    let ratio = median(&ours) / median(&orig);
    println!(
        "  throughput: dbench {:.1} MB/s, fslab {:.1} MB/s, ratio {ratio:.3} (target >= 1.0): {}",
        median(&orig),
        median(&ours),
        if ratio >= 1.0 { "PASS" } else { "FAIL" }
    );
    println!(
        "  operations: dbench {:.0}/s, fslab {:.0}/s, ratio {:.3}",
        median(&orig_ops),
        median(&our_ops),
        median(&our_ops) / median(&orig_ops)
    );
}
