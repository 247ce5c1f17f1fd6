//! Each workload against its original and against a bare loop making the
//! same calls, on the same work, on tmpfs and (as root) on a loop-device
//! ext4. The three sides run as processes of their own and are timed the
//! same way (process start to exit); within a run they go in turn, the side
//! that goes first rotating from run to run; the medians are compared.
//! For a fixed amount of work (fs_mark, tiotest, createmany, alloctest) a
//! ratio is the other side's wall time over fslab's (above 1: fslab takes
//! less time); dbench runs for a time, and the ratio is fslab's Throughput
//! over the other side's.
//!
//! The bare side is this program again (`originals --bare CASE DIR`):
//! [`fslab_bench::bare`]'s loop for the case, per operation exactly the
//! calls fslab's workload makes (the parity tests pin them), and nothing
//! else; for dbench, fslab's own operations (`fslab_workload::dbench::
//! bare_replay`) without the clock reads, histograms and progress around
//! them. fslab runs with `--probes none --quiet` and its results store on
//! tmpfs, off the filesystem under test (on a loop ext4 the store's fsyncs
//! would commit the workload's journal too, which the original never waits
//! for).
//!
//! Originals: fs_mark and dbench from PATH (Debian's fsmark and dbench);
//! the others from `FSLAB_ORIGINAL_TIOTEST`, `FSLAB_ORIGINAL_CREATEMANY`,
//! `FSLAB_ORIGINAL_ALLOCTEST` (paths of binaries built by hand from their
//! sources, as the parity data says; an unset one is left out, and said so).
//!
//! ```text
//! cargo build --release -p fslab -p fslab-bench
//! FSLAB_ORIGINAL_TIOTEST=... cargo run --release -p fslab-bench --bin originals [RUNS] [CASE...]
//! ```

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use fslab_bench::{bare, bare_md, fslab_bin, median, phased};

struct Case {
    name: &'static str,
    /// The original's program: a name on PATH or an environment variable.
    program: Program,
    original: &'static [&'static str],
    fslab: &'static [&'static str],
    /// The same calls, bare (run in `--bare` mode).
    bare: Bare,
    /// Compare dbench's Throughput line rather than wall time.
    throughput: bool,
}

enum Program {
    Path(&'static str),
    Env(&'static str),
}

enum Bare {
    FsMark {
        threads: usize,
        files: usize,
    },
    Tiotest {
        threads: usize,
        mib: u64,
        block: usize,
        random: u64,
    },
    Createmany {
        n: usize,
    },
    Alloctest {
        len: u64,
    },
    Dbench,
}

const CASES: &[Case] = &[
    Case {
        name: "fs_mark -S0 -s 0, 2 threads x 20000 files",
        program: Program::Path("fs_mark"),
        original: &[
            "-S0", "-s", "0", "-t", "2", "-n", "20000", "-L", "1", "-d", "{dir}",
        ],
        fslab: &[
            "fsmark", "-S0", "-s", "0", "-t", "2", "-n", "20000", "-L", "1", "-d", "{dir}",
        ],
        bare: Bare::FsMark {
            threads: 2,
            files: 20000,
        },
        throughput: false,
    },
    Case {
        name: "tiotest -t 2 -f 256 -r 20000 -b 4096",
        program: Program::Env("FSLAB_ORIGINAL_TIOTEST"),
        original: &[
            "-t", "2", "-f", "256", "-r", "20000", "-b", "4096", "-d", "{dir}",
        ],
        fslab: &[
            "tiotest", "-t", "2", "-f", "256", "-r", "20000", "-b", "4096", "-d", "{dir}",
        ],
        bare: Bare::Tiotest {
            threads: 2,
            mib: 256,
            block: 4096,
            random: 20000,
        },
        throughput: false,
    },
    Case {
        name: "createmany -m, 200000 names",
        program: Program::Env("FSLAB_ORIGINAL_CREATEMANY"),
        original: &["-m", "{dir}/f", "200000"],
        fslab: &["createmany", "-m", "{dir}/f", "200000"],
        bare: Bare::Createmany { n: 200000 },
        throughput: false,
    },
    Case {
        name: "alloctest 256 MiB",
        program: Program::Env("FSLAB_ORIGINAL_ALLOCTEST"),
        original: &["{dir}/big", "268435456"],
        fslab: &["alloctest", "--no-readback", "{dir}/big", "256M"],
        bare: Bare::Alloctest { len: 256 << 20 },
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
        bare: Bare::Dbench,
        throughput: true,
    },
];

/// `--bare CASE DIR`: case CASE's bare loop in DIR (dbench's prints its
/// Throughput line, as dbench does).
fn run_bare(case: &Case, dir: &Path) {
    match case.bare {
        Bare::FsMark { threads, files } => {
            let _ = std::fs::create_dir(dir);
            println!(
                "timed {}",
                bare::fsmark_create(&[dir.to_path_buf()], threads, files)
            );
        }
        Bare::Tiotest {
            threads,
            mib,
            block,
            random,
        } => {
            let s = bare::tiotest(dir, threads, mib, block, random, [true; 4]);
            println!("timed {}", s.iter().sum::<f64>());
        }
        Bare::Createmany { n } => {
            println!(
                "timed {}",
                bare::createmany(&format!("{}/f", dir.display()), n, false)
            );
        }
        Bare::Alloctest { len } => {
            println!("timed {}", bare::alloctest(&dir.join("big"), len));
        }
        Bare::Dbench => {
            #[derive(clap::Parser)]
            struct Args {
                #[command(flatten)]
                a: fslab_workload::dbench::DbenchArgs,
            }
            let argv = case
                .fslab
                .iter()
                .map(|a| a.replace("{dir}", &dir.to_string_lossy()));
            let o = <Args as clap::Parser>::parse_from(argv)
                .a
                .validate()
                .expect("dbench options");
            let mbs = fslab_workload::dbench::bare_replay(&o).expect("bare dbench");
            println!("Throughput {mbs} MB/sec (bare)");
        }
    }
}

/// A fresh directory for one run; emptied after it.
fn fresh(base: &Path) -> PathBuf {
    let d = base.join("run");
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("run dir");
    d
}

/// One run: wall seconds, or dbench's Throughput (MB/sec); and the seconds
/// of its timed region where it says them (fslab: its phases, from
/// `--json`; the bare loop: its `timed` line).
fn once(
    program: &str,
    args: &[String],
    dir: &Path,
    throughput: bool,
) -> Option<(f64, Option<f64>)> {
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
    let out = String::from_utf8_lossy(&o.stdout);
    let timed = serde_json::from_str::<serde_json::Value>(&out)
        .ok()
        .and_then(|doc| {
            doc["phases"]
                .as_array()
                .map(|ps| ps.iter().filter_map(|p| p["elapsed_s"].as_f64()).sum())
        })
        .or_else(|| {
            out.lines()
                .find_map(|l| l.strip_prefix("timed "))
                .and_then(|x| x.trim().parse().ok())
        });
    if !throughput {
        return Some((secs, timed));
    }
    out.lines()
        .find_map(|l| l.trim().strip_prefix("Throughput "))
        .and_then(|r| r.split_whitespace().next())
        .and_then(|x| x.parse().ok())
        .map(|mbs| (mbs, None))
}

/// Which side runs `k`-th in run `i` of `n` sides: each run rotates the
/// order by one (every side runs in every position), and every other
/// round of `n` runs reverses it, so that each side follows each other
/// side about as often (a Williams design: what ran before, the page
/// cache and the memory it freed, does not favour one side).
fn turn(i: usize, k: usize, n: usize) -> usize {
    let at = (i + k) % n;
    if (i / n) % 2 == 1 {
        n - 1 - at
    } else {
        at
    }
}

/// Medians of one case's sides.
struct Medians {
    /// The original's process time (or Throughput); None without one.
    orig: Option<f64>,
    /// fslab's and the bare loop's process time (or Throughput).
    fslab: f64,
    bare: f64,
    /// fslab's and the bare loop's timed regions (seconds), where both
    /// said them (not dbench: its Throughput is its timed region already).
    timed: Option<(f64, f64)>,
}

fn compare(
    index: usize,
    case: &Case,
    program: Option<&str>,
    (base, store): (&Path, &Path),
    runs: usize,
) -> Option<Medians> {
    let fslab = fslab_bin().to_string_lossy().into_owned();
    let me = std::env::current_exe()
        .expect("current exe")
        .to_string_lossy()
        .into_owned();
    let db = store.join("bench.sqlite").to_string_lossy().into_owned();
    let mut ours: Vec<String> = vec!["--db".into(), db, case.fslab[0].into()];
    // --json for the phases' times; dbench's Throughput line needs its
    // table (--quiet leaves it).
    let output = if case.throughput { "--quiet" } else { "--json" };
    ours.extend(["--probes", "none", output].map(String::from));
    ours.extend(case.fslab[1..].iter().map(|a| a.to_string()));
    let theirs: Vec<String> = case.original.iter().map(|a| a.to_string()).collect();
    let bare_args: Vec<String> = vec!["--bare".into(), index.to_string(), "{dir}".into()];
    let sides: Vec<(usize, &str, &[String])> = [
        program.map(|p| (0, p, theirs.as_slice())),
        Some((1, fslab.as_str(), ours.as_slice())),
        Some((2, me.as_str(), bare_args.as_slice())),
    ]
    .into_iter()
    .flatten()
    .collect();
    let mut got: [Vec<f64>; 3] = Default::default();
    let mut timed: [Vec<f64>; 3] = Default::default();
    for i in 0..runs {
        for k in 0..sides.len() {
            let (side, prog, args) = sides[turn(i, k, sides.len())];
            let dir = fresh(base);
            rustix::fs::sync();
            let (v, t) = once(prog, args, &dir, case.throughput)?;
            got[side].push(v);
            timed[side].extend(t);
        }
    }
    let _ = std::fs::remove_dir_all(base.join("run"));
    // dbench's sides say no timed region: its Throughput is one already.
    let both = timed[1].len() == runs && timed[2].len() == runs;
    Some(Medians {
        orig: (!got[0].is_empty()).then(|| median(&got[0])),
        fslab: median(&got[1]),
        bare: median(&got[2]),
        timed: both.then(|| (median(&timed[1]), median(&timed[2]))),
    })
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
        // Inodes for io500md's trees (the default 262,144 would run out).
        let ok = Command::new("mkfs.ext4")
            .args(["-q", "-N", "2000000", &dev])
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

/// One mdtest or io500md case in one place: its lines, and its misses (a
/// case that did not run met no target).
fn md_case(
    place: &str,
    base: &Path,
    case: &phased::Case,
    runs: usize,
    missed: &mut Vec<String>,
    open: &mut Vec<String>,
) {
    let turns = |i, k, n| turn(i, k, n);
    match phased::compare(case, base, runs, turns) {
        Ok(c) => phased::print(place, case, &c, missed, open),
        Err(e) => {
            println!(
                "{place:5} {} rank(s) {}: failed: {e}",
                case.ranks, case.name
            );
            missed.push(format!(
                "{place} {} rank(s) {}: failed",
                case.ranks, case.name
            ));
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("--bare-md") {
        bare_md(&args[2..]);
        return;
    }
    if args.get(1).map(String::as_str) == Some("--bare") {
        let case = args
            .get(2)
            .and_then(|i| i.parse::<usize>().ok())
            .and_then(|i| CASES.get(i));
        let (Some(case), Some(dir)) = (case, args.get(3)) else {
            eprintln!(
                "originals: --bare takes a case number below {} and a directory",
                CASES.len()
            );
            std::process::exit(2);
        };
        run_bare(case, Path::new(dir));
        return;
    }
    // `originals [RUNS] [CASE...]`: CASE words pick the cases whose names
    // start with them (fs_mark, tiotest, createmany, alloctest, dbench).
    let picked: Vec<&str> = args.iter().skip(2).map(String::as_str).collect();
    if let Some(bad) = picked
        .iter()
        .find(|w| !CASES.iter().any(|c| c.name.starts_with(**w)) && !MD_WORDS.contains(w))
    {
        eprintln!(
            "originals: no case starts with {bad:?} (cases: {}, {})",
            CASES
                .iter()
                .map(|c| c.name.split(' ').next().unwrap_or(c.name))
                .collect::<Vec<_>>()
                .join(", "),
            MD_WORDS.join(", ")
        );
        std::process::exit(2);
    }
    let wanted = |c: &Case| picked.is_empty() || picked.iter().any(|w| c.name.starts_with(*w));
    let md_wanted = |w: &str| picked.is_empty() || picked.contains(&w);
    let runs: usize = match args.get(1) {
        None => 7,
        Some(a) => match a.parse() {
            Ok(n) if n > 0 => n,
            _ => {
                eprintln!("originals: RUNS must be a positive whole number, not {a:?}");
                std::process::exit(2);
            }
        },
    };
    // Short paths: fs_mark takes a directory name under 40 bytes.
    let scratch = PathBuf::from(format!("/dev/shm/fso{}", std::process::id()));
    let _ = std::fs::create_dir_all(&scratch);
    let host = PathBuf::from(format!("/var/tmp/fso{}", std::process::id()));
    let _ = std::fs::create_dir_all(&host);
    let ext4 = LoopExt4::new(&host);
    let mut places: Vec<(&str, PathBuf)> = vec![("tmpfs", scratch.clone())];
    match &ext4 {
        Some(l) => places.push(("ext4", l.mnt.clone())),
        None => println!("loop ext4: skipped (needs root, losetup, mkfs.ext4)"),
    }
    println!(
        "{runs} runs a side, sides taking turns (rotating; every other round reversed); medians of process wall time \
         (dbench: of its Throughput MB/s)"
    );
    println!(
        "vs orig = original/fslab time (target >= 1.00), vs bare = bare/fslab time; timed = the same \
         ratio of the timed regions (fslab's phases, the bare loop's own clock; target >= 0.98); \
         above 1: fslab faster; [a, b] after a phase's ratio: the 95% interval of the rounds' \
         ratios (paired t on logs): a target is missed when the whole interval is under it"
    );
    let mut missed = Vec::new();
    let mut open = Vec::new();
    for (place, base) in &places {
        for case in md_cases(&scratch)
            .iter()
            .filter(|c| md_wanted(c.name.as_str()))
        {
            md_case(place, base, case, runs, &mut missed, &mut open);
        }
        for (index, case) in CASES.iter().enumerate() {
            if !wanted(case) {
                continue;
            }
            let program = match case.program {
                Program::Path(p) => Some(p.to_string()),
                Program::Env(v) => std::env::var(v).ok(),
            };
            match compare(index, case, program.as_deref(), (base, &scratch), runs) {
                Some(m) => print_case(place, case, &m, &mut missed),
                None => println!("{place:5}  {:40}  failed (above)", case.name),
            }
        }
    }
    for (_, case) in CASES
        .iter()
        .enumerate()
        .filter(|(_, c)| matches!(c.program, Program::Env(v) if std::env::var(v).is_err()))
    {
        if let Program::Env(v) = case.program {
            println!("{}: no original (set {v})", case.name);
        }
    }
    if !open.is_empty() {
        println!(
            "targets these runs do not settle (the median ratio under, its rounds' 95% interval reaching the target; more runs):"
        );
        for o in &open {
            println!("  {o}");
        }
    }
    fslab_bench::print_targets(&missed);
    drop(ext4);
    let _ = std::fs::remove_dir_all(&host);
    let _ = std::fs::remove_dir_all(&scratch);
}

/// Prints case `case`'s line on `place` and adds the targets it missed.
fn print_case(place: &str, case: &Case, m: &Medians, missed: &mut Vec<String>) {
    let unit = if case.throughput { "MB/s" } else { "s" };
    let fmt = |x: f64| {
        if case.throughput {
            format!("{x:8.1}")
        } else {
            format!("{x:8.3}")
        }
    };
    // Both ratios as "above 1: fslab faster".
    let speed = |other: f64, ours: f64| {
        if case.throughput {
            ours / other
        } else {
            other / ours
        }
    };
    let (orig, ours, bare) = (m.orig, m.fslab, m.bare);
    let (o_col, r_orig) = match orig {
        Some(t) => (fmt(t), format!("{:5.2}", speed(t, ours))),
        None => ("     n/a".to_string(), "  n/a".to_string()),
    };
    // The bare target is judged on the timed regions where both sides give
    // them (the loops making the same calls; fslab's process start and
    // results store are outside them), else on what was compared.
    let r_process = speed(bare, ours);
    let (t_col, r_bare) = match m.timed {
        Some((f, b)) => (
            format!("  timed fslab {f:.3} bare {b:.3} s: {:5.2}", b / f),
            b / f,
        ),
        None => (String::new(), r_process),
    };
    println!(
        "{place:5}  {:40}  {unit:4}  original {o_col}  fslab {}  bare {}  vs orig {r_orig}  \
         vs bare {r_process:5.2}{t_col}",
        case.name,
        fmt(ours),
        fmt(bare),
    );
    if let Some(t) = orig {
        if speed(t, ours) < 1.0 {
            missed.push(format!(
                "{place} {}: {:.2} of the original",
                case.name,
                speed(t, ours)
            ));
        }
    }
    if r_bare < 0.98 {
        missed.push(format!(
            "{place} {}: {r_bare:.3} of the bare loop{}",
            case.name,
            if m.timed.is_some() {
                " (timed regions)"
            } else {
                ""
            }
        ));
    }
}

/// The words that pick mdtest's and io500md's phase-by-phase cases.
const MD_WORDS: [&str; 2] = ["mdtest", "io500md"];

/// mdtest's items per rank, and io500md's files per rank and stonewall.
const MD_ITEMS: u64 = 20_000;
const IO500_N: u64 = 1_000_000;
const IO500_WALL_S: u64 = 2;

/// mdtest (files and directories in one shared tree: create, stat, read,
/// remove) and io500md (IO500's metadata phases, stonewall 2 s), on 1 and
/// 2 ranks; the originals from `FSLAB_ORIGINAL_MDTEST` and
/// `FSLAB_ORIGINAL_IO500` (left out when unset).
fn md_cases(store: &Path) -> Vec<phased::Case> {
    let fslab = fslab_bin().to_string_lossy().into_owned();
    let me = std::env::current_exe()
        .expect("current exe")
        .to_string_lossy()
        .into_owned();
    let db = store.join("bench-md.sqlite").to_string_lossy().into_owned();
    let s = |v: &[&str]| v.iter().map(|a| a.to_string()).collect::<Vec<String>>();
    let n = MD_ITEMS.to_string();
    let (big, wall) = (IO500_N.to_string(), IO500_WALL_S.to_string());
    let md_args = ["-n", &n, "-C", "-T", "-E", "-r", "-d", "{dir}/md"];
    let mut out = Vec::new();
    for ranks in [1, 2] {
        let original = std::env::var("FSLAB_ORIGINAL_MDTEST").ok().map(|p| {
            let mut v = vec![p];
            v.extend(s(&md_args));
            v
        });
        let mut ours = s(&[&fslab, "--db", &db, "mdtest", "--probes", "none", "--json"]);
        ours.extend(s(&md_args));
        out.push(phased::Case {
            name: "mdtest".into(),
            kind: phased::Kind::Mdtest,
            ranks,
            original,
            fslab: ours,
            bare: s(&[&me, "--bare-md", "mdtest", "{dir}/md", &n]),
            ini: None,
        });
        out.push(phased::Case {
            name: "io500md".into(),
            kind: phased::Kind::Io500,
            ranks,
            original: std::env::var("FSLAB_ORIGINAL_IO500")
                .ok()
                .map(|p| vec![p, "{ini}".to_string()]),
            fslab: s(&[
                &fslab,
                "--db",
                &db,
                "io500md",
                "--probes",
                "none",
                "--json",
                "--easy-n",
                &big,
                "--hard-n",
                &big,
                "--stonewall-time",
                &wall,
                "--minwrite",
                &wall,
                "-d",
                "{dir}/data",
                "--resultdir",
                "{dir}/results",
            ]),
            bare: s(&[
                &me,
                "--bare-md",
                "io500",
                "{dir}/data",
                "{dir}/results",
                &big,
                &big,
                &wall,
            ]),
            ini: Some(io500_ini(IO500_N, IO500_WALL_S)),
        });
    }
    out
}

/// The IO500 app's configuration for its metadata phases alone (every
/// ior and mdworkbench phase off), `{dir}` for the run's directory.
fn io500_ini(n: u64, wall: u64) -> String {
    let mut t = format!(
        "[global]\ndatadir = {{dir}}/data\nresultdir = {{dir}}/results\n\
         timestamp-resultdir = FALSE\ntimestamp-datadir = FALSE\ndrop-caches = FALSE\n\
         [debug]\nstonewall-time = {wall}\n[mdtest-easy]\nn = {n}\n[mdtest-hard]\nn = {n}\n"
    );
    for off in [
        "ior-easy",
        "ior-easy-write",
        "ior-rnd4K-easy-read",
        "ior-hard",
        "ior-hard-write",
        "ior-easy-read",
        "ior-hard-read",
        "mdworkbench",
    ] {
        t.push_str(&format!("[{off}]\nrun = FALSE\n"));
    }
    t
}

/// `--bare-md mdtest DIR N` or `--bare-md io500 DATADIR RESULTDIR EASY_N
/// HARD_N STONEWALL`: the bare loops on this process's ranks; rank 0
/// prints the phases.
fn bare_md(a: &[String]) {
    let c = match fslab_cluster::join() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("originals --bare-md: {e} (build with --features fslab/mpi)");
            std::process::exit(2);
        }
    };
    let num = |i: usize| -> u64 {
        a.get(i).and_then(|x| x.parse().ok()).unwrap_or_else(|| {
            eprintln!("originals --bare-md: argument {i} must be a whole number: {a:?}");
            std::process::exit(2)
        })
    };
    let phases = match a.first().map(String::as_str) {
        Some("mdtest") if a.len() == 3 => {
            let n = num(2);
            let m = bare_md::Md::all_phases(PathBuf::from(&a[1]));
            if c.rank() == 0 {
                let _ = std::fs::create_dir_all(&m.dir);
            }
            c.sum(0);
            bare_md::mdtest(c.as_ref(), &m, n).0
        }
        Some("io500") if a.len() == 6 => bare_md::io500(
            c.as_ref(),
            Path::new(&a[1]),
            Path::new(&a[2]),
            num(3),
            num(4),
            num(5),
        ),
        _ => {
            eprintln!("originals --bare-md: mdtest DIR N | io500 DATADIR RESULTDIR EASY_N HARD_N STONEWALL");
            std::process::exit(2);
        }
    };
    if c.rank() == 0 {
        for t in phases {
            println!("{}", t.line());
        }
    }
}
