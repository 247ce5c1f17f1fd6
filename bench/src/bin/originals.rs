//! Each workload against its original on the same work, on tmpfs and (as
//! root) on a loop-device ext4: the two commands alternate (the side that
//! goes first alternating too), and the ratio of the medians is printed.
//! For a fixed amount of work (fs_mark, tiotest, createmany, alloctest) the
//! ratio is the original's wall time over fslab's (above 1: fslab takes
//! less time); dbench runs for a time, and the ratio is fslab's Throughput
//! over dbench's.
//!
//! Originals: fs_mark and dbench from PATH (Debian's fsmark and dbench);
//! the others from `FSLAB_ORIGINAL_TIOTEST`, `FSLAB_ORIGINAL_CREATEMANY`,
//! `FSLAB_ORIGINAL_ALLOCTEST` (paths of binaries built by hand from their
//! sources, as the parity data says; an unset one is skipped, and said so).
//!
//! ```text
//! cargo build --release --workspace
//! FSLAB_ORIGINAL_TIOTEST=... cargo run --release -p fslab-bench --bin originals [RUNS]
//! ```

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use fslab_bench::{fslab_bin, median};

struct Case {
    name: &'static str,
    /// The original's program: a name on PATH or an environment variable.
    program: Program,
    original: &'static [&'static str],
    fslab: &'static [&'static str],
    /// Compare dbench's Throughput line rather than wall time.
    throughput: bool,
}

enum Program {
    Path(&'static str),
    Env(&'static str),
}

const CASES: &[Case] = &[
    Case {
        name: "fs_mark -S0 -s 0, 2 threads, 20000 files each",
        program: Program::Path("fs_mark"),
        original: &[
            "-S0", "-s", "0", "-t", "2", "-n", "20000", "-L", "1", "-d", "{dir}",
        ],
        fslab: &[
            "fsmark", "-S0", "-s", "0", "-t", "2", "-n", "20000", "-L", "1", "-d", "{dir}",
        ],
        throughput: false,
    },
    Case {
        name: "tiotest -t 2 -f 256 -r 20000",
        program: Program::Env("FSLAB_ORIGINAL_TIOTEST"),
        original: &[
            "-t", "2", "-f", "256", "-r", "20000", "-b", "4096", "-d", "{dir}",
        ],
        fslab: &[
            "tiotest", "-t", "2", "-f", "256", "-r", "20000", "-b", "4096", "-d", "{dir}",
        ],
        throughput: false,
    },
    Case {
        name: "createmany -m, 200000 names",
        program: Program::Env("FSLAB_ORIGINAL_CREATEMANY"),
        original: &["-m", "{dir}/f", "200000"],
        fslab: &["createmany", "-m", "{dir}/f", "200000"],
        throughput: false,
    },
    Case {
        name: "alloctest 256 MiB",
        program: Program::Env("FSLAB_ORIGINAL_ALLOCTEST"),
        original: &["{dir}/big", "268435456"],
        fslab: &["alloctest", "--no-readback", "{dir}/big", "256M"],
        throughput: false,
    },
    Case {
        name: "dbench 4 clients, 10 s (client.txt)",
        program: Program::Path("dbench"),
        original: &[
            "-t",
            "10",
            "-D",
            "{dir}",
            "-c",
            "/usr/share/dbench/client.txt",
            "4",
        ],
        fslab: &[
            "dbench",
            "-t",
            "10",
            "--warmup",
            "2",
            "-D",
            "{dir}",
            "-c",
            "/usr/share/dbench/client.txt",
            "4",
        ],
        throughput: true,
    },
];

/// A fresh directory for one run; emptied after it.
fn fresh(base: &Path) -> PathBuf {
    let d = base.join("run");
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("run dir");
    d
}

/// One run: wall seconds, or dbench's Throughput (MB/sec).
fn once(program: &str, args: &[&str], dir: &Path, throughput: bool) -> Option<f64> {
    let argv: Vec<String> = args
        .iter()
        .map(|a| a.replace("{dir}", &dir.to_string_lossy()))
        .collect();
    let t = Instant::now();
    let o = Command::new(program).args(&argv).output().ok()?;
    let secs = t.elapsed().as_secs_f64();
    if !o.status.success() {
        eprintln!(
            "originals: {program} {argv:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        return None;
    }
    if !throughput {
        return Some(secs);
    }
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .find_map(|l| l.trim().strip_prefix("Throughput "))
        .and_then(|r| r.split_whitespace().next())
        .and_then(|x| x.parse().ok())
}

fn compare(case: &Case, program: &str, base: &Path, runs: usize) -> Option<(f64, f64)> {
    let fslab = fslab_bin();
    let db = base.join("bench.sqlite");
    let db_s = db.to_string_lossy().into_owned();
    let mut ours_args: Vec<&str> =
        vec!["--db", &db_s, case.fslab[0], "--probes", "none", "--quiet"];
    ours_args.extend_from_slice(&case.fslab[1..]);
    let (mut theirs, mut ours) = (Vec::new(), Vec::new());
    for i in 0..runs {
        for side in [i % 2, 1 - i % 2] {
            let dir = fresh(base);
            rustix::fs::sync();
            let v = if side == 0 {
                once(program, case.original, &dir, case.throughput)
            } else {
                once(&fslab.to_string_lossy(), &ours_args, &dir, case.throughput)
            }?;
            if side == 0 { &mut theirs } else { &mut ours }.push(v);
        }
    }
    Some((median(&theirs), median(&ours)))
}

/// A loop-device ext4 of 4 GiB under `base` (root): its mount point and
/// what to undo.
struct LoopExt4 {
    mnt: PathBuf,
    dev: String,
    image: PathBuf,
}

impl LoopExt4 {
    fn new(base: &Path) -> Option<LoopExt4> {
        if !rustix::process::geteuid().is_root() {
            return None;
        }
        let image = base.join("ext4.img");
        let mnt = base.join("mnt");
        std::fs::create_dir_all(&mnt).ok()?;
        let f = std::fs::File::create(&image).ok()?;
        f.set_len(4 << 30).ok()?;
        let o = Command::new("losetup")
            .args(["-f", "--show"])
            .arg(&image)
            .output()
            .ok()?;
        let dev = String::from_utf8_lossy(&o.stdout).trim().to_string();
        let ok = Command::new("mkfs.ext4")
            .args(["-q", &dev])
            .status()
            .ok()?
            .success()
            && Command::new("mount")
                .arg(&dev)
                .arg(&mnt)
                .status()
                .ok()?
                .success();
        let l = LoopExt4 { mnt, dev, image };
        ok.then_some(l)
    }
}

impl Drop for LoopExt4 {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.mnt).status();
        let _ = Command::new("losetup").args(["-d", &self.dev]).status();
        let _ = std::fs::remove_file(&self.image);
    }
}

fn main() {
    let runs: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(7);
    // Short paths: fs_mark takes a directory name under 40 bytes.
    let scratch = PathBuf::from(format!("/dev/shm/fso{}", std::process::id()));
    let _ = std::fs::create_dir_all(&scratch);
    let host = PathBuf::from(format!("/var/tmp/fso{}", std::process::id()));
    let _ = std::fs::create_dir_all(&host);
    let ext4 = LoopExt4::new(&host);
    let mut places: Vec<(&str, PathBuf)> = vec![("tmpfs", scratch.clone())];
    match &ext4 {
        Some(l) => places.push(("loop ext4", l.mnt.clone())),
        None => println!("loop ext4: skipped (needs root, losetup, mkfs.ext4)"),
    }
    println!("{runs} runs a side, alternating; medians; ratio above 1: fslab does the work faster");
    for (place, base) in &places {
        for case in CASES {
            let program = match case.program {
                Program::Path(p) => p.to_string(),
                Program::Env(v) => match std::env::var(v) {
                    Ok(p) => p,
                    Err(_) => {
                        println!("{place:9}  {:42}  skipped: set {v}", case.name);
                        continue;
                    }
                },
            };
            match compare(case, &program, base, runs) {
                Some((t, o)) if case.throughput => println!(
                    "{place:9}  {:42}  original {t:9.2} MB/s  fslab {o:9.2} MB/s  ratio {:.2}",
                    case.name,
                    o / t
                ),
                Some((t, o)) => println!(
                    "{place:9}  {:42}  original {t:8.3} s  fslab {o:8.3} s  ratio {:.2}",
                    case.name,
                    t / o
                ),
                None => println!("{place:9}  {:42}  failed (above)", case.name),
            }
        }
    }
    drop(ext4);
    let _ = std::fs::remove_dir_all(&host);
    let _ = std::fs::remove_dir_all(&scratch);
}
