//! fslab tiotest's sequential write and read on tmpfs against bare pwrite and
//! pread loops of the same block size over the same files (2 threads, 256 MiB
//! each, 4 KiB blocks), as the phase's MB/s: fslab's from its JSON report,
//! the bare loops timed the same way (threads started to threads joined).
//! 11 runs, the side that goes first alternating; median of each side.
//! Files of 64 MiB made phases of 15 ms, too short for a steady ratio on a
//! two-CPU machine.

use std::time::Instant;

use fslab_bench::{fslab_bin, median, Scratch};

const THREADS: usize = 2;
const MIB: u64 = 256;
const BLOCK: usize = 4096;
const RUNS: usize = 11;

fn bare(dir: &std::path::Path) -> (f64, f64) {
    let files: Vec<std::path::PathBuf> =
        (0..THREADS).map(|t| dir.join(format!("bare{t}"))).collect();
    let run = |write: bool| {
        let start = Instant::now();
        std::thread::scope(|s| {
            for f in &files {
                s.spawn(move || {
                    let file = std::fs::OpenOptions::new()
                        .read(true)
                        .write(true)
                        .create(true)
                        .truncate(false)
                        .open(f)
                        .unwrap();
                    let mut buf = vec![0x5au8; BLOCK];
                    let blocks = (MIB << 20) / BLOCK as u64;
                    for i in 0..blocks {
                        if write {
                            rustix::io::pwrite(&file, &buf, i * BLOCK as u64).unwrap();
                        } else {
                            rustix::io::pread(&file, &mut buf, i * BLOCK as u64).unwrap();
                        }
                    }
                });
            }
        });
        (THREADS as u64 * MIB) as f64 / start.elapsed().as_secs_f64()
    };
    let w = run(true);
    let r = run(false);
    for f in &files {
        let _ = std::fs::remove_file(f);
    }
    (w, r)
}

fn fslab(scratch: &Scratch, dir: &std::path::Path) -> (f64, f64) {
    let out = std::process::Command::new(fslab_bin())
        .arg("--db")
        .arg(scratch.0.join("r.sqlite"))
        .args([
            "tiotest",
            "-t",
            "2",
            "-f",
            &MIB.to_string(),
            "-b",
            &BLOCK.to_string(),
            "-k",
            "1",
            "-k",
            "3",
            "--json",
            "--probes",
            "none",
            "-d",
        ])
        .arg(dir)
        .output()
        .unwrap();
    assert!(out.status.success());
    // The run's JSON: tiotest's Rate (MiB/s) of each test, in order.
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rates: Vec<f64> = v["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["name"] == "Rate")
        .filter_map(|m| m["value"].as_f64())
        .collect();
    (rates[0], rates[1])
}

fn main() {
    let scratch = Scratch::new("tiotest");
    let work = Scratch::new("tiotest-files");
    println!("tiotest sequential write and read: {THREADS} threads x {MIB} MiB, {BLOCK}-byte blocks, tmpfs, {RUNS} alternating runs");
    let (mut bw, mut br, mut fw, mut fr) = (vec![], vec![], vec![], vec![]);
    for run in 0..RUNS {
        // Which side goes first alternates, so neither always inherits the
        // other's freed pages or a CPU left warm.
        for side in [run % 2, 1 - run % 2] {
            if side == 0 {
                let (w, r) = bare(&work.0);
                bw.push(w);
                br.push(r);
            } else {
                let (w, r) = fslab(&scratch, &work.0);
                fw.push(w);
                fr.push(r);
            }
        }
        println!(
            "  run {run:>2}: write bare {:>5.0} fslab {:>5.0} MB/s, read bare {:>5.0} fslab {:>5.0} MB/s",
            bw[run], fw[run], br[run], fr[run]
        );
    }
    for (what, f, b) in [("write", &fw, &bw), ("read", &fr, &br)] {
        let ratio = median(f) / median(b);
        println!(
            "  {what}: bare {:.0} MB/s, fslab {:.0} MB/s, ratio {ratio:.3} (target >= 0.95): {}",
            median(b),
            median(f),
            if ratio >= 0.95 { "PASS" } else { "FAIL" }
        );
    }
}
