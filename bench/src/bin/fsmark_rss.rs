//! Peak RSS of `fslab fsmark -t 1 -s 0` at 100k and 1M files on tmpfs.
//!
//! fs_mark keeps about 200 bytes per file; fslab keeps nothing per file, so
//! its peak must stay under 32 MiB and flat as the file count grows.

use fslab_bench::{fslab_bin, Scratch};

fn peak_kib(files: u64) -> u64 {
    let scratch = Scratch::new(&format!("rss-{files}"));
    fslab_bench::peak_rss_kib(
        std::process::Command::new(fslab_bin())
            .args([
                "fsmark",
                "-t",
                "1",
                "-s",
                "0",
                "-S",
                "0",
                "-n",
                &files.to_string(),
            ])
            .arg("-d")
            .arg(scratch.0.join("d"))
            .arg("--db")
            .arg(scratch.0.join("r.sqlite"))
            .arg("-l")
            .arg(scratch.0.join("fs_log.txt")),
    )
}

fn main() {
    let small = peak_kib(100_000);
    let large = peak_kib(1_000_000);
    println!(
        "peak RSS: {:.1} MiB at 100000 files, {:.1} MiB at 1000000 files",
        small as f64 / 1024.0,
        large as f64 / 1024.0
    );
    let ok = large < 32 * 1024 && (large as f64) < small as f64 * 1.25 + 1024.0;
    println!(
        "target: < 32 MiB and flat (growth {:.2}x): {}",
        large as f64 / small as f64,
        if ok { "PASS" } else { "FAIL" }
    );
}
