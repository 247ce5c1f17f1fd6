//! fslab tiotest's sequential write and read on tmpfs against bare write and
//! read loops (`fslab_bench::bare::tiotest`) of the same block size over the same files (2 threads, 256 MiB
//! each, 4 KiB blocks), as the phase's MB/s: fslab's from its JSON report,
//! the bare loops timed the same way (threads started to threads joined).
//! 11 runs, the side that goes first alternating; median of each side.
//! Files of 64 MiB made phases of 15 ms, too short for a steady ratio on a
//! two-CPU machine.

use fslab_bench::{fslab_bin, median, Scratch};

const THREADS: usize = 2;
const MIB: u64 = 256;
const BLOCK: usize = 4096;
const RUNS: usize = 11;

fn bare(dir: &std::path::Path) -> (f64, f64) {
    // tiotest's own calls: after an lseek to 0, a write or read per block
    // at the file position (then fsync after writing), each thread its file.
    let secs = fslab_bench::bare::tiotest(dir, THREADS, MIB, BLOCK, 0, [true, false, true, false]);
    let mb = (THREADS as u64 * MIB) as f64;
    (mb / secs[0], mb / secs[2])
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
