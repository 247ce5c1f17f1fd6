//! fslab fsmark's create rate against a bare loop making the same calls on
//! tmpfs: what fslab costs beyond the filesystem calls fs_mark makes.
//!
//! Both sides create FILES zero-length files in each of two directories with
//! two threads, and are measured as total files over wall-clock time. The
//! fslab side is the real binary (process start, header, results store,
//! default probes included) with `-s 0 -S 0 -k`. The bare side makes, per
//! file, fs_mark's four calls as fslab's parity test pins them: `mkdir` of
//! the file's directory (EEXIST), `openat(O_CREAT|O_EXCL)` of a
//! 40-character name made in a reused buffer, a `write` of zero bytes and
//! `close`; nothing else (no clock read): `fslab_bench::bare::fsmark_create`. 11 runs, the side that goes
//! first alternating; the medians of each side are compared.

use std::time::Instant;

use fslab_bench::{fslab_bin, median, Scratch};

const THREADS: usize = 2;
const RUNS: usize = 11;

fn bare(dirs: &[std::path::PathBuf], files: usize) -> f64 {
    (THREADS * files) as f64 / fslab_bench::bare::fsmark_create(dirs, THREADS, files)
}

fn fslab(scratch: &Scratch, dirs: &[std::path::PathBuf], files: usize) -> f64 {
    let db = scratch.0.join("bench.sqlite");
    let log = scratch.0.join("fs_log.txt");
    let n = files.to_string();
    let mut cmd = std::process::Command::new(fslab_bin());
    cmd.args(["--quiet", "fsmark", "-s", "0", "-S", "0", "-k", "-n", &n])
        .arg("--db")
        .arg(&db)
        .arg("-l")
        .arg(&log);
    for d in dirs {
        cmd.arg("-d").arg(d);
    }
    cmd.stdout(std::process::Stdio::null());
    let start = Instant::now();
    let st = cmd.status().expect("spawn fslab");
    let rate = (THREADS * files) as f64 / start.elapsed().as_secs_f64();
    assert!(st.success(), "fslab fsmark failed");
    rate
}

fn main() {
    let files: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(200_000);
    let scratch = Scratch::new("overhead");
    let work = Scratch::new("overhead-files");
    let dirs: Vec<_> = (0..THREADS).map(|t| work.0.join(format!("d{t}"))).collect();
    let prep = || {
        work.clear();
        for d in &dirs {
            std::fs::create_dir_all(d).unwrap();
        }
    };
    println!("fsmark overhead: {THREADS} threads x {files} zero-length files on tmpfs, {RUNS} alternating runs");
    let (mut b, mut f) = (Vec::new(), Vec::new());
    for i in 0..RUNS {
        // Which side goes first alternates, so neither always follows the
        // other's freeing of a few hundred thousand inodes.
        let (mut rb, mut rf) = (0.0, 0.0);
        for side in [i % 2, 1 - i % 2] {
            prep();
            if side == 0 {
                rb = bare(&dirs, files);
            } else {
                rf = fslab(&scratch, &dirs, files);
            }
        }
        println!(
            "  run {i}: bare {rb:>10.0} files/s   fslab {rf:>10.0} files/s   ratio {:.3}",
            rf / rb
        );
        b.push(rb);
        f.push(rf);
    }
    let (mb, mf) = (median(&b), median(&f));
    let ratio = mf / mb;
    println!("median: bare {mb:.0} files/s, fslab {mf:.0} files/s");
    println!(
        "ratio fslab/bare = {ratio:.3} (target >= 0.95): {}",
        if ratio >= 0.95 { "PASS" } else { "FAIL" }
    );
}
