//! Parity with the original tools: the filesystem calls each workload makes
//! per operation, counted with the full call counter
//! (`fslab_bench::trace`: every call of every workload task, path-less
//! ones too), and the timed region.

use std::collections::BTreeMap;

use fslab_bench::trace;

use crate::support::*;

/// Runs `fslab ARGS` under the full call counter and returns every call of
/// the tasks that worked on `marker` (a path: each file descriptor's path
/// is shown), by kind: those naming other files (the store) apart, calls
/// naming no file (sync, fsync by descriptor) in.
pub fn call_counts(lab: &Lab, args: &[&str], marker: &str) -> BTreeMap<String, u64> {
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("fslab"));
    cmd.arg("--db").arg(lab.db()).args(args);
    let (o, t) = trace::record(cmd, &trace::log_dir(lab.tmp.path(), "calls"));
    assert!(o.status.success(), "{}", stderr(&o));
    t.counts(marker).calls
}

/// The write phase's time holds the fsync: on a real disk its rate is what
/// writing and flushing the data costs (dd with conv=fsync), not what the
/// page cache takes in (3.8x faster on a loop-device ext4 before).
#[test]
fn tiotest_write_rates_include_the_flush_to_disk() {
    if !privileged("a loop-device ext4") || !need_tool("dd") {
        return;
    }
    let lab = Lab::new();
    let fs = LoopFs::new(fslab_lab::mkfs::FsType::Ext4, 2 << 30, &[]);
    // Best of three each, interleaved: the machine's other work (tests run
    // side by side) slows one run, not the comparison.
    let (mut write, mut dd_mib_s) = (0.0f64, 0.0f64);
    for round in 0..3 {
        let dir = fs.path().join(format!("t{round}"));
        std::fs::create_dir(&dir).unwrap();
        let o = lab.run(&[
            "tiotest",
            "-t",
            "1",
            "-f",
            "256",
            "-r",
            "2000",
            "-b",
            "4096",
            "-k",
            "2",
            "-k",
            "3",
            "--probes",
            "none",
            "--json",
            "-d",
            dir.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        // tiotest's Write Rate (MiB/s), a metric of the run's JSON.
        let rate = v["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["phase"] == "Write" && m["name"] == "Rate")
            .and_then(|m| m["value"].as_f64())
            .unwrap_or_else(|| panic!("no Write Rate in {v}"));
        write = write.max(rate);
        let out = fs.path().join(format!("dd{round}"));
        let dd = std::process::Command::new("dd")
            .arg("if=/dev/zero")
            .arg(format!("of={}", out.display()))
            .args(["bs=4096", "count=65536", "conv=fsync"])
            .output()
            .unwrap();
        let text = stderr(&dd);
        // "268435456 bytes (268 MB, 256 MiB) copied, 0.5 s, 537 MB/s"
        let secs: f64 = text
            .split(", ")
            .find_map(|p| p.strip_suffix(" s"))
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or_else(|| panic!("{text}"));
        dd_mib_s = dd_mib_s.max(256.0 / secs);
        std::fs::remove_dir_all(&dir).unwrap();
        std::fs::remove_file(&out).unwrap();
    }
    // What this guards is the upper bound: with the flush outside the
    // timed region tiotest read 3.8x dd. The lower bound only catches a
    // write path gone badly wrong; under CI load the best of two has read
    // 0.31 (201 against 645 MB/s).
    let ratio = write / dd_mib_s;
    assert!(
        (0.2..3.0).contains(&ratio),
        "tiotest Write {write:.0} MB/s against dd conv=fsync {dd_mib_s:.0} MB/s (ratio {ratio:.2})"
    );
}

/// seed 002's files (random page writes through a shared mapping) on ext3
/// and ext4: fslab's extent line is filefrag's, in `fslab frag` and in
/// alloctest's own output.
#[test]
fn frag_and_alloctest_print_what_filefrag_prints() {
    if !privileged("loop-device ext3 and ext4") || !need_tool("filefrag") {
        return;
    }
    for fs in [fslab_lab::mkfs::FsType::Ext3, fslab_lab::mkfs::FsType::Ext4] {
        let lab = Lab::new();
        let f = LoopFs::new(fs.clone(), 1 << 30, &[]);
        let file = f.path().join("big");
        let o = lab.run(&[
            "alloctest",
            file.to_str().unwrap(),
            "64M",
            "--no-readback",
            "--probes",
            "none",
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        let theirs = stdout(
            &std::process::Command::new("filefrag")
                .arg(&file)
                .output()
                .unwrap(),
        );
        let theirs = theirs.lines().next().unwrap().to_string();
        assert!(
            stdout(&o).lines().any(|l| l == theirs),
            "{}: alloctest {} / filefrag {theirs}",
            fs.name(),
            stdout(&o)
        );
        let ours = stdout(&lab.run(&["frag", file.to_str().unwrap()]));
        assert_eq!(ours.lines().next(), Some(theirs.as_str()), "{}", fs.name());
        assert!(
            ours.lines().nth(1).unwrap().contains("FIEMAP record"),
            "{ours}"
        );
    }
}

/// What compilebench 0.6 (python3, its datasets, its seed 555) printed for
/// `-i 2 -r 12`, operation and tree, run beside fslab on this machine.
const COMPILEBENCH_I2_R12: [&str; 14] = [
    "create dir kernel-0",
    "create dir kernel-1",
    "stat dir kernel-0",
    "delete kernel-1",
    "patch dir kernel-0",
    "stat dir kernel-0",
    "create dir kernel-22969",
    "read dir kernel-0",
    "read dir kernel-22969",
    "patch dir kernel-22969",
    "read dir kernel-22969",
    "compile dir kernel-22969",
    "create dir kernel-34119",
    "patch dir kernel-34119",
];

#[test]
fn compilebench_makes_compilebenchs_trees_and_choices() {
    let lab = Lab::new();
    let d = tempfile::tempdir_in("/dev/shm").unwrap();
    // The initial create makes compilebench's tree: 21,280 files, 233 MB.
    let o = lab.run(&[
        "compilebench",
        "-D",
        d.path().to_str().unwrap(),
        "-i",
        "1",
        "-r",
        "0",
        "-n",
        "--probes",
        "none",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let root = d.path().join("kernel-0");
    assert_eq!(count_files(&root), 21_280);
    assert!(
        stdout(&o).contains("create dir kernel-0 222MB in "),
        "{}",
        stdout(&o)
    );
    assert!(
        !d.path().join("native-0").exists(),
        "the ordering trees are gone"
    );
    // The random operations are compilebench's own, tree for tree.
    let d = tempfile::tempdir_in("/dev/shm").unwrap();
    let o = lab.run(&[
        "compilebench",
        "-D",
        d.path().to_str().unwrap(),
        "-i",
        "2",
        "-r",
        "12",
        "-n",
        "--probes",
        "none",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let ops: Vec<String> = stdout(&o)
        .lines()
        .take_while(|l| *l != "run complete:")
        .filter(|l| {
            [
                "create dir ",
                "patch dir ",
                "compile dir ",
                "clean ",
                "delete ",
                "read dir ",
                "stat dir ",
            ]
            .iter()
            .any(|p| l.starts_with(p))
        })
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .map(|l| l.trim_end_matches(" in").to_string())
        .collect();
    assert_eq!(ops, COMPILEBENCH_I2_R12, "{}", stdout(&o));
    let out = stdout(&o);
    assert!(out.contains("\nrun complete:\n"), "{out}");
    assert!(out.contains("no runs for clean\n"), "{out}");
    assert!(out.contains("patch total runs 3 avg "), "{out}");
}

#[test]
fn compilebench_writes_each_file_as_compilebench_does() {
    if !need_tool("strace") {
        return;
    }
    let lab = Lab::new();
    let sources = lab.path("sources");
    std::fs::create_dir_all(&sources).unwrap();
    for (f, text) in [
        ("dataset-unpatched", "a/b/x.c 300000\na/y.h 10\nz 0\n"),
        ("dataset-patched", "a/b/x.c 300001\na/y.h 10\nz 0\n"),
        (
            "dataset-unpatched-compiled",
            "a/b/x.c 300000\na/y.h 10\nz 0\na/b/x.o 7\n",
        ),
        (
            "dataset-patched-compiled",
            "a/b/x.c 300001\na/y.h 10\nz 0\na/b/x.o 8\n",
        ),
    ] {
        std::fs::write(sources.join(f), text).unwrap();
    }
    let d = tempfile::tempdir_in("/dev/shm").unwrap();
    let c = call_counts(
        &lab,
        &[
            "compilebench",
            "-D",
            d.path().to_str().unwrap(),
            "-s",
            sources.to_str().unwrap(),
            "-i",
            "1",
            "-r",
            "0",
            "-n",
            "-b",
            "131072",
            "--probes",
            "none",
        ],
        "kernel-0/",
    );
    // Per file: one open (O_APPEND|O_CREAT, as Python's 'a+') and the
    // lseek to its end that Python's append mode makes, 131072-byte writes
    // (300000 bytes: 3; 10 bytes: 1; 0 bytes: none), one close; a mkdir per
    // directory of the tree (a, a/b). Nothing else, path-less calls
    // included: with -n nothing is flushed (sync, fsync by descriptor).
    let expected: BTreeMap<String, u64> = [
        ("close", 3),
        ("lseek", 3),
        ("mkdir", 2),
        ("openat", 3),
        ("write", 4),
    ]
    .map(|(k, v)| (k.to_string(), v))
    .into();
    assert_eq!(c, expected);
}

/// seed 002's alloctest: open, ftruncate, one shared mapping, the page
/// writes (no calls), one msync of the whole mapping, munmap, close, in
/// that order.
#[test]
fn alloctest_makes_the_seeds_calls_in_the_seeds_order() {
    if !need_tool("strace") {
        return;
    }
    let lab = Lab::new();
    let d = tempfile::tempdir_in("/dev/shm").unwrap();
    let file = d.path().join("big");
    let log = lab.path("alloc.strace");
    let o = std::process::Command::new("strace")
        .args(["-f", "-y", "-qq", "-o"])
        .arg(&log)
        .arg(assert_cmd::cargo::cargo_bin("fslab"))
        .arg("--db")
        .arg(lab.db())
        .args(["alloctest", "--no-readback", "--probes", "none"])
        .arg(&file)
        .arg("8M")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&log).unwrap();
    let name = file.to_str().unwrap();
    // msync and munmap count when they name the file's mapping (by its
    // address: other 8 MiB regions, thread stacks, come and go).
    let mut mapping: Option<String> = None;
    let calls: Vec<&str> = text
        .lines()
        .filter_map(|l| {
            let rest = l.split_once(char::is_whitespace)?.1.trim_start();
            let (call, args) = rest.split_once('(')?;
            let on_file = l.contains(name);
            match call {
                "mmap" if on_file => {
                    mapping = l.rsplit_once("= ").map(|(_, a)| a.trim().to_string());
                    Some(call)
                }
                "openat" | "ftruncate" | "close" if on_file => Some(call),
                "msync" | "munmap"
                    if mapping
                        .as_deref()
                        .is_some_and(|a| args.starts_with(&format!("{a},"))) =>
                {
                    Some(call)
                }
                _ => None,
            }
        })
        .collect();
    // The extent count afterwards opens the file once more (FIEMAP).
    assert_eq!(
        &calls[..6],
        ["openat", "ftruncate", "mmap", "msync", "munmap", "close"],
        "{calls:?}"
    );
}

/// alloctest's timed region is the seed's: from the first page write to
/// the close without a pause, so `--drop-caches` (its sync) does not come
/// before the msync (which then had nothing left to write and read about
/// 0 s), and "total throughput" is the file over the seed's own calls
/// (touch, msync, munmap, close), not over fslab's pauses between phases.
#[test]
fn alloctest_total_is_its_own_calls_and_its_msync_writes_with_caches_dropped() {
    if !privileged("a loop-device ext4 and --drop-caches") {
        return;
    }
    let lab = Lab::new();
    let fs = LoopFs::new(fslab_lab::mkfs::FsType::Ext4, 1 << 30, &[]);
    let file = fs.path().join("big");
    let o = lab.run(&[
        "alloctest",
        file.to_str().unwrap(),
        "64M",
        "--no-readback",
        "--drop-caches",
        "--probes",
        "default",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let secs = |prefix: &str, after: &str| -> f64 {
        let l = out
            .lines()
            .find(|l| l.starts_with(prefix))
            .unwrap_or_else(|| panic!("no {prefix:?} in {out}"));
        l.split(after)
            .nth(1)
            .unwrap()
            .split_whitespace()
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    let touch = secs("touched ", " pages in ");
    let msync = secs("msync took", "took ");
    let munmap = secs("munmap took", "took ");
    let close = secs("close took", "took ");
    let total: f64 = secs("total throughput", "throughput ");
    let own = 64.0 / (touch + msync + munmap + close);
    assert!(
        (total / own - 1.0).abs() < 0.01,
        "total throughput {total} MB/s against 64 MiB over the seed's calls {own}:\n{out}"
    );
    // 64 MiB of dirty pages: 83 ms here; 2.8 ms when the drop's sync had
    // written them before the msync.
    assert!(
        msync > 0.02,
        "msync found nothing to write ({msync} s):\n{out}"
    );
}
