//! What each workload's timed loop costs per item in user space, against a
//! bare loop making the same calls, and where its system calls are made:
//! counted by callgrind, so the numbers do not move with the machine's load
//! (the other benches time things; on a shared 2-CPU machine a timing can
//! be off by 20%, an instruction count by well under 1%).
//!
//! For each case, fslab (`--probes none`) and the bare loop each run under
//! `valgrind --tool=callgrind --collect-systime=nsec` twice, on N and on 2N
//! items, on tmpfs. A side's cost per item is the difference of its two
//! runs' instructions over N (start-up and other fixed costs cancel out):
//! fslab's in the threads that run its loop (the worker threads; mdtest's
//! and io500md's main thread, a rank's one thread), not in those that take
//! a point a second, which depends on time, not items; the bare loop's in
//! all its threads. Two targets per case:
//! - fslab's instructions per item at most the bare loop's plus BUDGET (the
//!   clock, histogram and progress of each item, and the loop's own
//!   bookkeeping);
//! - every function that made at least N/2 of the run's system calls
//!   itself was called fewer than N/2 times: the calls are made in a loop's
//!   own body, not inside a function called (and returning) once per item.
//!   On the AMD EPYC VMs fslab runs on (the kernel's SRSO mitigation "Safe
//!   RET") a system call inside a function that returns costs up to ~500 ns
//!   more (bench `loop_cost`, docs/speed.md).
//!
//! Exits 1 when a target is missed. Needs valgrind.
//!
//! ```text
//! cargo build --release -p fslab -p fslab-bench --features fslab/mpi
//! target/release/loop_calls [N] [CASE...]
//! ```

use std::path::Path;

use fslab_bench::callgrind::{self, Profile};
use fslab_bench::{bare, bare_md, fslab_bin, Scratch};

/// What fslab may add per item over the bare loop, in instructions: one
/// clock read and its conversion, the histogram's record, the progress
/// store, the stop and stonewall checks (about 80 on x86-64 today).
const BUDGET: f64 = 150.0;

/// fs_mark's own work per file beyond the calls, which its bare loop (lean
/// names, no clocks) leaves out: a clock read and the per-call statistics
/// for each of its 3 further timed calls (about 100 each), and a name of
/// 24 random characters (about 370, its C string checked).
const FSMARK_BUDGET: f64 = BUDGET + 3.0 * 100.0 + 370.0;

struct Case {
    name: &'static str,
    /// fslab's arguments after `fslab --db DB`, `{dir}` and `{n}` filled.
    fslab: &'static [&'static str],
    /// What `{n}` is for about N items (fslab and the bare loop are given
    /// the same): MiB for tiotest, bytes for alloctest.
    amount: fn(u64) -> u64,
    /// The items of an amount: tiotest's write and read each call once
    /// per 4 KiB block, alloctest touches each page, mdtest has 7 item
    /// phases (directories: create, stat, remove; files: create, stat,
    /// read, remove), io500md 9 (the find looks at both trees).
    items: fn(u64) -> f64,
    /// Instructions an item fslab may add (see [`BUDGET`]).
    budget: f64,
    /// Which of fslab's threads run the loop.
    counted: Counted,
}

/// The threads whose instructions count.
#[derive(Clone, Copy)]
enum Counted {
    /// All but the main thread, which takes a point a second.
    Workers,
    /// The main thread alone: a rank's phases run there, a helper thread
    /// takes the points (`fslab_workload::measure::supervise_here`).
    Main,
    /// Every thread (the bare loops).
    All,
}

const CASES: &[Case] = &[
    Case {
        name: "createmany",
        fslab: &["createmany", "--probes", "none", "-m", "{dir}/f", "{n}"],
        amount: |n| n,
        items: |a| a as f64,
        budget: BUDGET,
        counted: Counted::Workers,
    },
    Case {
        name: "fsmark",
        fslab: &[
            "fsmark", "--probes", "none", "-S0", "-s", "0", "-t", "1", "-L", "1", "-n", "{n}",
            "-d", "{dir}",
        ],
        amount: |n| n,
        items: |a| a as f64,
        budget: FSMARK_BUDGET,
        counted: Counted::Workers,
    },
    Case {
        name: "tiotest",
        fslab: &[
            "tiotest", "--probes", "none", "-t", "1", "-r", "1", "-b", "4096", "-f", "{n}", "-d",
            "{dir}",
        ],
        amount: |n| (n / 256).max(1),
        items: |a| (a * 256 * 2) as f64,
        budget: BUDGET,
        counted: Counted::Workers,
    },
    Case {
        name: "alloctest",
        fslab: &[
            "alloctest",
            "--probes",
            "none",
            "--no-readback",
            "{dir}/big",
            "{n}",
        ],
        amount: |n| n * 4096,
        items: |a| (a / 4096) as f64,
        budget: BUDGET,
        counted: Counted::Workers,
    },
    Case {
        name: "mdtest",
        fslab: &[
            "mdtest", "--probes", "none", "-n", "{n}", "-C", "-T", "-E", "-r", "-d", "{dir}/md",
        ],
        amount: |n| n,
        items: |a| (a * 7) as f64,
        budget: BUDGET,
        counted: Counted::Main,
    },
    Case {
        name: "io500md",
        fslab: &[
            "io500md",
            "--probes",
            "none",
            "--easy-n",
            "{n}",
            "--hard-n",
            "{n}",
            "--stonewall-time",
            "3600",
            "--minwrite",
            "1",
            "-d",
            "{dir}/data",
            "--resultdir",
            "{dir}/results",
        ],
        amount: |n| n,
        items: |a| (a * 9) as f64,
        budget: BUDGET,
        counted: Counted::Main,
    },
];

/// `--bare CASE DIR AMOUNT`: the case's bare loop (in this process).
fn run_bare(name: &str, dir: &Path, amount: u64) {
    let c = fslab_cluster::Solo;
    match name {
        "createmany" => {
            bare::createmany(&format!("{}/f", dir.display()), amount as usize, false);
        }
        "fsmark" => {
            bare::fsmark_create(&[dir.to_path_buf()], 1, amount as usize);
        }
        "tiotest" => {
            // The four tests, one random operation each (fslab's -r 1).
            bare::tiotest(dir, 1, amount, 4096, 1, [true; 4]);
        }
        "alloctest" => {
            bare::alloctest(&dir.join("big"), amount);
        }
        "mdtest" => {
            let m = bare_md::Md::all_phases(dir.join("md"));
            let _ = std::fs::create_dir_all(&m.dir);
            bare_md::mdtest(&c, &m, amount);
        }
        "dbench" => {
            #[derive(clap::Parser)]
            struct Args {
                #[command(flatten)]
                a: fslab_workload::dbench::DbenchArgs,
            }
            let argv = [
                "dbench",
                "-t",
                &amount.to_string(),
                "--warmup",
                "0",
                "-D",
                &dir.to_string_lossy(),
                "-c",
                "/usr/share/dbench/client.txt",
                "1",
            ]
            .map(String::from);
            let o = <Args as clap::Parser>::parse_from(argv)
                .a
                .validate()
                .expect("dbench options");
            fslab_workload::dbench::bare_replay(&o).expect("bare dbench");
        }
        "io500md" => {
            bare_md::io500(
                &c,
                &dir.join("data"),
                &dir.join("results"),
                amount,
                amount,
                3600,
            );
        }
        _ => {
            eprintln!("loop_calls --bare: no case {name:?}");
            std::process::exit(2);
        }
    }
}

/// One side's run on one amount: its threads' profiles merged, and the
/// instructions of the threads that count.
fn profile(argv: &[String], scratch: &Scratch, which: Counted) -> Result<(Profile, u64), String> {
    scratch.clear();
    let out = std::env::temp_dir().join(format!("loop_calls.{}.cg", std::process::id()));
    let threads = callgrind::profile_threads(Path::new(&argv[0]), &argv[1..], &out)
        .map_err(|e| e.to_string())?;
    let mut all = Profile::default();
    for t in &threads {
        all.add(t);
    }
    let counted = threads
        .iter()
        .enumerate()
        .filter(|(i, _)| match which {
            Counted::Workers => *i > 0,
            Counted::Main => *i == 0,
            Counted::All => true,
        })
        .map(|(_, t)| t.total("Ir"))
        .sum();
    Ok((all, counted))
}

/// A side's instructions per item and the per-item functions that made
/// system calls (name, calls made, times called).
struct Side {
    per_item: f64,
    inside: Vec<(String, u64, u64)>,
}

fn side(
    argvs: [Vec<String>; 2],
    items: f64,
    scratch: &Scratch,
    which: Counted,
) -> Result<Side, String> {
    let (_, small) = profile(&argvs[0], scratch, which)?;
    let (big, large) = profile(&argvs[1], scratch, which)?;
    let per_item = (large as f64 - small as f64) / items;
    let half = (items / 2.0) as u64;
    let inside = big
        .issuers(half)
        .into_iter()
        .filter(|(_, _, called)| *called >= half)
        .collect();
    Ok(Side { per_item, inside })
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("--bare") {
        let amount = args.get(4).and_then(|a| a.parse().ok());
        let (Some(name), Some(dir), Some(amount)) = (args.get(2), args.get(3), amount) else {
            eprintln!("loop_calls --bare CASE DIR AMOUNT");
            std::process::exit(2);
        };
        run_bare(name, Path::new(dir), amount);
        return;
    }
    let n: u64 = match args.get(1).map(|a| a.parse()) {
        None => 2000,
        Some(Ok(n)) if n > 0 => n,
        Some(_) => {
            eprintln!(
                "loop_calls: N must be a positive whole number, not {:?}",
                args[1]
            );
            std::process::exit(2);
        }
    };
    let picked: Vec<&str> = args.iter().skip(2).map(String::as_str).collect();
    if let Some(bad) = picked
        .iter()
        .find(|w| !CASES.iter().any(|c| c.name == **w) && **w != "dbench")
    {
        let mut names: Vec<&str> = CASES.iter().map(|c| c.name).collect();
        names.push("dbench");
        eprintln!("loop_calls: no case {bad:?} (cases: {})", names.join(", "));
        std::process::exit(2);
    }
    if !callgrind::available() {
        eprintln!("loop_calls: valgrind is not installed (apt-get install valgrind)");
        std::process::exit(2);
    }
    let scratch = Scratch::new("loop-calls");
    let fslab = fslab_bin().to_string_lossy().into_owned();
    let me = std::env::current_exe().expect("current exe");
    let db = std::env::temp_dir().join(format!("loop_calls.{}.sqlite", std::process::id()));
    println!(
        "per item, instructions in user space (callgrind; N = {n} and 2N items, tmpfs); \
         target: fslab <= bare + {BUDGET}, and no system call made inside a function called per item"
    );
    let mut missed = Vec::new();
    for case in CASES
        .iter()
        .filter(|c| picked.is_empty() || picked.contains(&c.name))
    {
        let dir = scratch.0.to_string_lossy().into_owned();
        let a = (case.amount)(n);
        let amounts = [a, 2 * a];
        let ours = amounts.map(|a| {
            let mut v = vec![
                fslab.clone(),
                "--db".into(),
                db.to_string_lossy().into_owned(),
            ];
            let fill = |x: &&str| x.replace("{dir}", &dir).replace("{n}", &a.to_string());
            v.extend(case.fslab.iter().map(fill));
            v
        });
        let bare = amounts.map(|a| {
            vec![
                me.to_string_lossy().into_owned(),
                "--bare".into(),
                case.name.into(),
                dir.clone(),
                a.to_string(),
            ]
        });
        let items = (case.items)(a);
        // Once without valgrind first: the store's tables are made then, not
        // in the first profiled run (6M instructions on the main thread,
        // which counts for mdtest and io500md).
        scratch.clear();
        let _ = std::process::Command::new(&ours[0][0])
            .args(&ours[0][1..])
            .output();
        match (
            side(ours, items, &scratch, case.counted),
            side(bare, items, &scratch, Counted::All),
        ) {
            (Ok(f), Ok(b)) => report(case, &f, &b, &mut missed),
            (Err(e), _) | (_, Err(e)) => {
                println!("{:11} failed: {e}", case.name);
                missed.push(format!("{}: failed", case.name));
            }
        }
    }
    if picked.is_empty() || picked.contains(&"dbench") {
        dbench(&scratch, &fslab, &me, &db, &mut missed);
    }
    let _ = std::fs::remove_file(&db);
    // exit() runs no destructor: the scratch directory goes first.
    drop(scratch);
    if !fslab_bench::print_targets(&missed) {
        std::process::exit(1);
    }
}

fn report(case: &Case, f: &Side, b: &Side, missed: &mut Vec<String>) {
    let (name, budget) = (case.name, case.budget);
    println!(
        "{name:11} fslab {:8.1}  bare {:8.1}  fslab - bare {:7.1} instructions an item (budget {budget})",
        f.per_item,
        b.per_item,
        f.per_item - b.per_item
    );
    // A loop counted in none of the threads looked at reads as no cost.
    if f.per_item < 1.0 {
        missed.push(format!(
            "{name}: {:.1} instructions an item: its loop is not in the threads counted",
            f.per_item
        ));
    }
    if f.per_item > b.per_item + budget {
        missed.push(format!(
            "{name}: {:.1} instructions an item over the bare loop (budget {budget})",
            f.per_item - b.per_item
        ));
    }
    inside(name, "fslab", &f.inside, missed);
    inside(name, "bare", &b.inside, missed);
}

fn inside(name: &str, who: &str, found: &[(String, u64, u64)], missed: &mut Vec<String>) {
    for (func, calls, called) in found {
        println!("{name:11} {who}: {func} made {calls} system calls and was called {called} times");
        missed.push(format!(
            "{name} ({who}): system calls made inside {func}, called per item"
        ));
    }
}

/// dbench runs for a time, not a count: one run of each side (1 client,
/// 2 s of client.txt), and only where its calls are made: no function
/// called 1,000 times or more may make a tenth of the run's system calls
/// itself (its operations run in its client loop's own body).
fn dbench(scratch: &Scratch, fslab: &str, me: &Path, db: &Path, missed: &mut Vec<String>) {
    let dir = scratch.0.to_string_lossy().into_owned();
    let load = "/usr/share/dbench/client.txt";
    if !Path::new(load).exists() {
        println!("dbench      skipped: no {load} (apt-get install dbench)");
        return;
    }
    let ours: Vec<String> = [
        fslab,
        "--db",
        &db.to_string_lossy(),
        "dbench",
        "--probes",
        "none",
        "-t",
        "2",
        "--warmup",
        "0",
        "-D",
        &dir,
        "-c",
        load,
        "1",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let bare = vec![
        me.to_string_lossy().into_owned(),
        "--bare".into(),
        "dbench".into(),
        dir.clone(),
        "2".into(),
    ];
    for (who, argv, which) in [
        ("fslab", ours, Counted::Workers),
        ("bare", bare, Counted::All),
    ] {
        match profile(&argv, scratch, which) {
            Ok((p, _)) => {
                let calls: u64 = p.issuers(1).iter().map(|i| i.1).sum();
                let found: Vec<(String, u64, u64)> = p
                    .issuers(calls / 10)
                    .into_iter()
                    .filter(|(_, _, called)| *called >= 1000)
                    .collect();
                println!("dbench      {who}: {calls} system calls, {} made inside a function called 1,000 times or more", found.iter().map(|f| f.1).sum::<u64>());
                inside("dbench", who, &found, missed);
            }
            Err(e) => {
                println!("dbench      {who} failed: {e}");
                missed.push(format!("dbench ({who}): failed"));
            }
        }
    }
}
