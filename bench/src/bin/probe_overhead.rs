//! The cost of the default probes: fslab fsmark's create rate (the create
//! phase's files per second, as fsmark reports it) on a fresh ext4 on a
//! loop device with `--probes default` against `--probes none`, alternating
//! runs, median of 7 each (root needed). The whole process's wall time is
//! printed too: the probes' set-up and teardown (a tracefs instance, the
//! compressed trace) cost a fixed fraction of a second per run.

use std::time::Instant;

use fslab_bench::{fslab_bin, median};

/// (create-phase rate, files over the process's wall time)
fn run(probes: &str, files: &str) -> (f64, f64) {
    let dir = tempfile_dir();
    let img = dir.join("bench.img");
    let mnt = dir.join("mnt");
    std::fs::create_dir_all(&mnt).unwrap();
    sh("truncate", &["-s", "8G", img.to_str().unwrap()]);
    let dev = String::from_utf8(
        std::process::Command::new("losetup")
            .args(["-f", "--show"])
            .arg(&img)
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let dev = dev.trim().to_string();
    sh("mkfs.ext4", &["-F", "-q", &dev]);
    sh(
        "mount",
        &["-o", "noinit_itable", &dev, mnt.to_str().unwrap()],
    );
    let a = mnt.join("a");
    let b = mnt.join("b");
    let start = Instant::now();
    let st = std::process::Command::new(fslab_bin())
        .args([
            "fsmark", "-S", "0", "-s", "0", "-n", files, "-k", "--json", "--probes", probes,
        ])
        .arg("--db")
        .arg(dir.join("r.sqlite"))
        .arg("-l")
        .arg(dir.join("log"))
        .arg("-d")
        .arg(&a)
        .arg("-d")
        .arg(&b)
        .env("FSLAB_STATE_DIR", dir.join("state"))
        .output()
        .unwrap();
    let wall = 2.0 * files.parse::<f64>().unwrap() / start.elapsed().as_secs_f64();
    sh("umount", &[mnt.to_str().unwrap()]);
    sh("losetup", &["-d", &dev]);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        st.status.success(),
        "fslab fsmark failed: {}",
        String::from_utf8_lossy(&st.stderr)
    );
    let text = String::from_utf8_lossy(&st.stdout);
    // The create phase's ops_per_s from the JSON report.
    let rate = text
        .split("\"ops_per_s\":")
        .nth(1)
        .and_then(|r| r.split([',', '\n']).next())
        .and_then(|v| v.trim().parse::<f64>().ok())
        .expect("create phase rate in the JSON report");
    (rate, wall)
}

fn tempfile_dir() -> std::path::PathBuf {
    let p = std::path::PathBuf::from(format!(
        "/var/tmp/fslab-bench-probes-{}",
        std::process::id()
    ));
    std::fs::create_dir_all(&p).unwrap();
    p
}

fn sh(cmd: &str, args: &[&str]) {
    let st = std::process::Command::new(cmd).args(args).status().unwrap();
    assert!(st.success(), "{cmd} {args:?}");
}

fn main() {
    let files = std::env::args().nth(1).unwrap_or_else(|| "100000".into());
    println!("probe overhead: fsmark -S0 -s 0 -n {files} x 2 threads on a fresh loop-device ext4, 7 alternating runs");
    let (mut on, mut off, mut won, mut woff) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for i in 0..7 {
        let (a, wa) = run("none", &files);
        let (b, wb) = run("default", &files);
        println!("  run {i}: create rate, probes off {a:>9.0} files/s, default probes {b:>9.0} files/s, ratio {:.3}", b / a);
        off.push(a);
        on.push(b);
        woff.push(wa);
        won.push(wb);
    }
    println!(
        "wall-clock (process start to exit, set-up and teardown included): ratio {:.3}",
        median(&won) / median(&woff)
    );
    let ratio = median(&on) / median(&off);
    println!(
        "median: off {:.0}, default {:.0} files/s",
        median(&off),
        median(&on)
    );
    println!(
        "ratio default/off = {ratio:.3} (target >= 0.95): {}",
        if ratio >= 0.95 { "PASS" } else { "FAIL" }
    );
}
