//! Parity with the originals that are not packaged (tiotest 0.3.5, Lustre's
//! createmany, compilebench 0.6, seed 002's alloctest): their reference
//! traces, recorded once by hand from builds of their public sources with
//! `record_reference` and kept in `tests/data/reference/`, against fslab
//! traced on the same option sets in every run, by the same counter
//! (`fslab_bench::trace`): every call of every task, kind by kind, with
//! failures and bytes; and the original's output lines, numbers aside.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use fslab_bench::reference;
use fslab_bench::trace::{self, Explained};

use crate::support::*;

type Calls = BTreeMap<String, u64>;

/// Output lines of an original that fslab does not print, and why.
const OUTPUT_EXPLAINED: &[(&str, &str)] = &[
    (
        "no runs for delete tree",
        "compilebench files the delete of the last tree of a state under \
         'delete compiled tree' when no compiled tree exists: it compares the \
         dictionaries by value (`ch == dset.unpatched_compiled_dirs`, both empty); \
         fslab files a tree's delete by what the tree was",
    ),
    ("delete compiled tree total runs", "the same delete"),
];

/// compilebench's timed operations (its `native` ordering and start-up
/// are not: fslab makes the ordering trees' files empty, on purpose).
const TIMED_OPS: &[&str] = &[
    "create dir",
    "patch dir",
    "compile dir",
    "clean",
    "read dir",
    "stat dir",
    "delete",
];

/// What compilebench's operations are compared on: the files' data path,
/// kind by kind (opening a file, every write and read with their bytes,
/// truncations, syncs, unlinks and rmdirs). Not compared, and why:
/// - `fstat`, `lseek`, `ioctl`: compilebench is Python, and its `open()`
///   also `fstat`s the new descriptor (its buffer size), asks whether it is
///   a terminal (`ioctl(TCGETS)`, ENOTTY) and keeps its position with
///   several `lseek`s a file (six on create); fslab makes the one
///   `fp.seek(0)` compilebench asks for.
/// - `stat`, `lstat`, `mkdir`: `os.makedirs` stats each path before making
///   it; fslab tries `mkdir` and makes the parent on ENOENT (one `mkdir`
///   more per missing parent, no `stat`).
/// - directory reads (`openat O_DIRECTORY`, `getdents64`, their `close`):
///   `os.walk` and `os.listdir` read each directory with their own calls.
/// - `read`: compilebench 0.6 under Python 3 opens a file to patch or
///   compile with `a+`, which puts the position at the end, so its
///   read-first loop reads nothing (one `read` of 0 bytes a file) where the
///   seed's compilebench under Python 2 (C stdio's `a+` reads from the
///   start) read the whole file, as fslab does; and its text-mode reads of
///   `read dir` end with one more `read` of 0 bytes. Measured: 711,643,051
///   bytes in 213,710 reads against fslab's 1,038,464,560 in 165,261 over
///   `-i 2 -r 12`, every other kind equal.
const DATA_PATH: &[&str] = &[
    "openat",
    "write",
    "pwrite64",
    "ftruncate",
    "fsync",
    "fdatasync",
    "sync",
    "unlink",
    "rmdir",
    "rename",
];

fn data_path(mut c: Calls) -> Calls {
    c.retain(|k, _| {
        DATA_PATH.iter().any(|d| {
            k == d
                || k.strip_prefix(d)
                    .is_some_and(|r| r.starts_with(' ') && !r.contains("O_DIRECTORY"))
        })
    });
    c
}

fn data(name: &str) -> serde_json::Value {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/reference")
        .join(format!("{name}.json"));
    serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap()
}

/// A line's shape: runs of spaces as one, every number as `#`.
fn shape(line: &str) -> String {
    line.split_whitespace()
        .map(|w| {
            let mut out = String::new();
            let mut in_num = false;
            for ch in w.chars() {
                let digit = ch.is_ascii_digit() || (in_num && ch == '.');
                if digit && !in_num {
                    out.push('#');
                }
                if !digit {
                    out.push(ch);
                }
                in_num = digit;
            }
            out
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Runs every option set of `name` through fslab, traced, and compares its
/// calls (every workload task's: fslab's main task with its workers, as the
/// originals' single process or main thread with its threads) with the
/// recorded ones. `explained` bounds are per run.
fn assert_matches_reference(name: &str, base: &Path, explained: &[Explained]) {
    let lab = Lab::new();
    let doc = data(name);
    assert_eq!(doc["original"], name);
    for key in ["version", "repository", "commit", "built"] {
        assert!(doc[key].is_string(), "{name}: the data says no {key}");
    }
    let cases = reference::cases(name).unwrap();
    let recorded = doc["cases"].as_array().unwrap();
    assert_eq!(
        recorded.len(),
        cases.len(),
        "{name}: record the option sets again"
    );
    for (case, rec) in cases.iter().zip(recorded) {
        assert_eq!(rec["case"], case.label, "{name}: cases out of order");
        let dir = base.join(format!("{name}-{}", case.label.len()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("fslab"));
        let args = case.fslab_args(&dir);
        cmd.arg("--db")
            .arg(lab.db())
            .arg(&args[0])
            .args(["--probes", "none"])
            .args(&args[1..])
            .current_dir(lab.tmp.path());
        let (o, t) = trace::record(cmd, &trace::log_dir(lab.tmp.path(), "ref"));
        assert!(o.status.success(), "fslab {args:?}: {}", stderr(&o));
        let marker = dir.to_str().unwrap();
        let labels = reference::op_lines(name);
        let pairs: Vec<(String, Calls, Calls)> = if labels.is_empty() {
            let theirs: Calls = serde_json::from_value(rec["calls"].clone()).unwrap();
            vec![("the run".into(), theirs, t.counts(marker).compared())]
        } else {
            let theirs: BTreeMap<String, Calls> =
                serde_json::from_value(rec["calls_by_operation"].clone()).unwrap();
            let mut ours = reference::per_op(&t, marker, labels);
            assert_eq!(
                theirs.keys().collect::<Vec<_>>(),
                ours.keys().collect::<Vec<_>>(),
                "{name} {}: the operations differ",
                case.label
            );
            // Summed over the timed operations: fslab runs an operation's
            // calls on a worker thread and prints its line from the main
            // one, so a call near an operation's end may fall in the next
            // operation's stretch; the sum over them all is exact.
            let (mut t_all, mut o_all) = (Calls::new(), Calls::new());
            for (op, c) in theirs {
                if TIMED_OPS.iter().any(|t| op.starts_with(t)) {
                    let mine = ours.remove(&op).unwrap();
                    for (k, v) in data_path(c) {
                        *t_all.entry(k).or_default() += v;
                    }
                    for (k, v) in data_path(mine) {
                        *o_all.entry(k).or_default() += v;
                    }
                }
            }
            vec![("the timed operations".into(), t_all, o_all)]
        };
        let mut failures = String::new();
        for (what, theirs, ours) in pairs {
            let (diffs, table) = trace::compare(&theirs, &ours, 1, 1, explained);
            if !diffs.is_empty() {
                failures.push_str(&format!(
                    "{name} {} ({what}): calls differ from `{}` for {:?}:\n{table}\n",
                    case.label,
                    rec["command"].as_str().unwrap(),
                    diffs.iter().map(|d| &d.what).collect::<Vec<_>>()
                ));
            }
        }
        assert!(failures.is_empty(), "{failures}");
        // The original's output lines, numbers aside, in fslab's, in order.
        let mine: Vec<String> = stdout(&o).lines().map(shape).collect();
        let mut at = 0;
        for line in rec["output"].as_array().unwrap() {
            let want = shape(line.as_str().unwrap());
            if want.is_empty() || OUTPUT_EXPLAINED.iter().any(|(l, _)| want.starts_with(l)) {
                continue;
            }
            match mine[at..].iter().position(|m| *m == want) {
                Some(i) => at += i + 1,
                None => panic!(
                    "{name} {}: fslab does not print (after line {at}) what the original printed:\n\
                     {want}\nfslab printed:\n{}",
                    case.label,
                    stdout(&o)
                ),
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

/// A scratch directory on tmpfs, removed when the test ends, a failing
/// one too (tmpfs is memory: a kept one would hold it until reboot).
fn scratch() -> tempfile::TempDir {
    tempfile::tempdir_in("/dev/shm").unwrap()
}

/// fslab's main task checks the path it is given before the work starts:
/// `canonicalize` (a `readlink` that fails with EINVAL on a directory) and
/// a `statx` that it exists. Once a run, outside the timed region.
const SETUP: &[Explained] = &[
    Explained {
        what: "readlink",
        per_task: 1,
        why: "fslab canonicalises the path once before the run",
    },
    Explained {
        what: "readlink EINVAL (failed)",
        per_task: 1,
        why: "the same readlink (not a link)",
    },
    Explained {
        what: "statx",
        per_task: 1,
        why: "fslab checks once that the directory is there",
    },
];

/// createmany in one directory: fslab's setup, and one look at the
/// directory's filesystem before the run (open, statfs, close) to follow its
/// htree depth on ext4 (seed 004); on any other filesystem that is all,
/// outside the timed region.
const CREATEMANY_SETUP: &[Explained] = &[
    SETUP[0],
    SETUP[1],
    SETUP[2],
    Explained {
        what: "openat O_DIRECTORY",
        per_task: 1,
        why: "fslab opens the directory once to read its htree depth (ext4 only)",
    },
    Explained {
        what: "fstatfs",
        per_task: 1,
        why: "the same look: which filesystem the directory is on",
    },
    Explained {
        what: "close",
        per_task: 1,
        why: "the same look's descriptor closed",
    },
];

/// alloctest's file: fslab's setup, and the extent count it prints after
/// the seed's calls (the seed ran filefrag by hand), outside the timed
/// region.
const ALLOCTEST_AFTER: &[Explained] = &[
    SETUP[0],
    SETUP[1],
    Explained {
        what: "statx",
        per_task: 3,
        why: "fslab checks the file does not exist (ENOENT) and, for the extent count, its size",
    },
    Explained {
        what: "statx ENOENT (failed)",
        per_task: 1,
        why: "the file must not exist before the run",
    },
    Explained {
        what: "openat",
        per_task: 1,
        why: "the extent count opens the file again after the seed's close",
    },
    Explained {
        what: "close",
        per_task: 1,
        why: "... and closes it",
    },
    Explained {
        what: "ioctl",
        per_task: 1,
        why: "... FS_IOC_FIEMAP, filefrag's call",
    },
    Explained {
        what: "ioctl EOPNOTSUPP (failed)",
        per_task: 1,
        why: "tmpfs has no FIEMAP: the line says so",
    },
    Explained {
        what: "statfs",
        per_task: 1,
        why: "the extent line names the filesystem's block size",
    },
];

#[test]
fn createmany_makes_lustres_createmany_calls_on_every_option_set() {
    if !need_tool("strace") {
        return;
    }
    let d = scratch();
    assert_matches_reference("createmany", d.path(), CREATEMANY_SETUP);
}

#[test]
fn tiotest_makes_tiotest_0_3_5s_calls_on_every_option_set() {
    if !need_tool("strace") {
        return;
    }
    let d = scratch();
    assert_matches_reference("tiotest", d.path(), SETUP);
}

#[test]
fn tiotest_with_mmap_makes_tiotest_0_3_5s_calls_when_built_with_mmap() {
    if !need_tool("strace") {
        return;
    }
    let d = scratch();
    assert_matches_reference("tiotest-mmap", d.path(), SETUP);
}

#[test]
fn alloctest_makes_the_seeds_alloctest_calls_on_every_option_set() {
    if !need_tool("strace") {
        return;
    }
    let d = scratch();
    assert_matches_reference("alloctest", d.path(), ALLOCTEST_AFTER);
}

#[test]
fn compilebench_makes_compilebench_0_6s_calls_on_every_option_set() {
    if !need_tool("strace") {
        return;
    }
    let d = scratch();
    assert_matches_reference("compilebench", d.path(), &[]);
}

#[test]
fn a_line_shape_keeps_words_and_drops_numbers() {
    assert_eq!(
        shape("| Write           2 MBs |    0.1 s |  17.117 MB/s |"),
        "| Write # MBs | # s | # MB/s |"
    );
    assert_eq!(
        shape("total: 300 create in 0.00 seconds"),
        "total: # create in # seconds"
    );
    assert_ne!(
        shape("msync took 1 seconds"),
        shape("munmap took 1 seconds")
    );
}
