//! fslab against the originals Debian packages (fs_mark 3.3, dbench 4.0),
//! on tmpfs where the tool is the limit: for each, the filesystem calls per
//! operation, kind by kind (counted with `strace -f -c`, one run each), and
//! beside them the rate ratio (alternating runs without strace, median), so
//! that a speed-up is only read where the work is equal.

use std::collections::BTreeMap;
use std::process::Command;

use fslab_bench::strace::{self, By};
use fslab_bench::{fslab_bin, median, Scratch};

const RUNS: usize = 3;

/// `strace -f -y` of `cmd`: per kind, the calls whose line names a path
/// under `dir` (so the tools' own bookkeeping, such as fslab's store, is
/// left out), and the number of `kill(` calls (dbench checks its parent
/// once per loadfile line).
fn calls(
    cmd: &Command,
    dir: &std::path::Path,
    log: &std::path::Path,
) -> (BTreeMap<String, u64>, u64) {
    let mut s = Command::new("strace");
    s.args(["-f", "-y", "-qq", "-o"])
        .arg(log)
        .arg(cmd.get_program())
        .args(cmd.get_args());
    let out = s.output().expect("spawn strace");
    assert!(
        out.status.success(),
        "{s:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(log).expect("strace log");
    strace::count(&text, dir.to_str().unwrap_or_default(), By::Kind)
}

fn print_calls(
    orig: &BTreeMap<String, u64>,
    n_orig: f64,
    ours: &BTreeMap<String, u64>,
    n_ours: f64,
    per: &str,
) {
    for k in orig
        .keys()
        .chain(ours.keys())
        .collect::<std::collections::BTreeSet<_>>()
    {
        let (a, b) = (
            *orig.get(k).unwrap_or(&0) as f64 / n_orig,
            *ours.get(k).unwrap_or(&0) as f64 / n_ours,
        );
        if a.max(b) >= 0.01 {
            println!(
                "    {k:10} {a:8.3} vs {b:8.3} per {per}  ratio {:.3}",
                b / a.max(1e-9)
            );
        }
    }
}

fn output(cmd: &mut Command) -> String {
    let out = cmd.output().expect("spawn");
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// fs_mark's closing Files/sec (the last loop row's fourth column).
fn files_per_sec(out: &str) -> f64 {
    out.lines()
        .filter(|l| {
            l.split_whitespace()
                .next()
                .is_some_and(|w| w.parse::<u64>().is_ok())
        })
        .filter_map(|l| l.split_whitespace().nth(3)?.parse::<f64>().ok())
        .next_back()
        .unwrap_or(f64::NAN)
}

fn fsmark() {
    const FILES: &str = "20000";
    // fs_mark takes directory paths under 40 bytes only.
    let work = Scratch(std::path::PathBuf::from(format!(
        "/dev/shm/fp{}",
        std::process::id()
    )));
    std::fs::create_dir_all(&work.0).expect("scratch");
    let db = Scratch::new("parity-db");
    let args = |dir: &std::path::Path| -> Vec<String> {
        [
            "-d",
            dir.to_str().unwrap(),
            "-n",
            FILES,
            "-s",
            "0",
            "-S0",
            "-L",
            "1",
            "-l",
            "/dev/null",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    let orig_cmd = || {
        // fs_mark wants its directories to exist.
        let _ = std::fs::create_dir_all(work.0.join("o"));
        let _ = std::fs::create_dir_all(work.0.join("f"));
        let mut c = Command::new("fs_mark");
        c.args(args(&work.0.join("o")));
        c
    };
    let our_cmd = || {
        let mut c = Command::new(fslab_bin());
        c.arg("--db")
            .arg(db.0.join("r.sqlite"))
            .args(["fsmark", "--probes", "none"])
            .args(args(&work.0.join("f")));
        c
    };
    println!("fs_mark 3.3 against fslab fsmark: -n {FILES} -s 0 -S0, tmpfs");
    let log = work.0.join("strace.txt");
    let (a, _) = calls(&orig_cmd(), &work.0.join("o"), &log);
    work.clear();
    let _ = orig_cmd();
    let (b, _) = calls(&our_cmd(), &work.0.join("f"), &log);
    work.clear();
    let n: f64 = FILES.parse().unwrap();
    print_calls(&a, n, &b, n, "file");
    let (mut o, mut f) = (vec![], vec![]);
    for _ in 0..RUNS {
        o.push(files_per_sec(&output(&mut orig_cmd())));
        work.clear();
        let _ = orig_cmd();
        f.push(files_per_sec(&output(&mut our_cmd())));
        work.clear();
    }
    let (o, f) = (median(&o), median(&f));
    println!(
        "  Files/sec: fs_mark {o:.0}, fslab {f:.0}, ratio {:.3} ({RUNS} alternating runs, median)",
        f / o
    );
}

fn dbench() {
    const LOADFILE: &str = "/usr/share/dbench/client.txt";
    let work = Scratch::new("parity-dbench");
    let db = Scratch::new("parity-dbench-db");
    println!("dbench 4.0 against fslab dbench: {LOADFILE}, 1 client, tmpfs");
    // dbench for 3 s; then fslab replays exactly the lines dbench got
    // through (dbench checks its parent once per line: its kill() calls).
    let log = work.0.join("strace.txt");
    let (o, f) = (work.0.join("o"), work.0.join("f"));
    std::fs::create_dir_all(&o).unwrap();
    std::fs::create_dir_all(&f).unwrap();
    let mut orig = Command::new("dbench");
    orig.args(["-t", "3", "--skip-cleanup", "-c", LOADFILE, "-D"])
        .arg(&o)
        .arg("1");
    let (theirs, ops) = calls(&orig, &o, &log);
    let lines: Vec<String> = std::fs::read_to_string(LOADFILE)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(String::from)
        .collect();
    let replay: String = (0..ops as usize)
        .map(|i| format!("{}\n", lines[i % lines.len()]))
        .collect();
    let rf = work.0.join("replay.txt");
    std::fs::write(&rf, replay).unwrap();
    let mut ours = Command::new(fslab_bin());
    ours.arg("--db")
        .arg(db.0.join("r.sqlite"))
        .args([
            "dbench",
            "--loops",
            "1",
            "--no-cleanup",
            "--probes",
            "none",
            "-c",
        ])
        .arg(&rf)
        .arg("-D")
        .arg(&f)
        .arg("1");
    let (mine, _) = calls(&ours, &f, &log);
    print_calls(&theirs, ops as f64, &mine, ops as f64, "operation");
    println!("  (rates: see dbench_overhead, which replays the same loadfile with 4 clients)");
}

fn main() {
    for (tool, f) in [("fs_mark", fsmark as fn()), ("dbench", dbench as fn())] {
        if Command::new(tool).arg("--help").output().is_err() {
            eprintln!("parity: {tool} not found: install Debian's fsmark and dbench packages");
            std::process::exit(2);
        }
        f();
    }
}
