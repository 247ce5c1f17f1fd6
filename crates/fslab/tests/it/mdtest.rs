//! `fslab mdtest` against hpc/ior's mdtest: its calls per item kind, kind
//! by kind, against reference traces of the original (built by hand from
//! its public source, outside this repository, and traced as an MPI
//! singleton with `record_reference`: tests/data/reference/mdtest.json),
//! its SUMMARY tables' lines against the original's output, and bad input.
//! The stonewall on MPI ranks is in `mdtest_mpi`.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use fslab_bench::reference;
use fslab_bench::trace::{self, Explained};

use crate::support::*;

type Calls = BTreeMap<String, u64>;

fn data() -> serde_json::Value {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/reference/mdtest.json");
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// The calls mdtest makes on its items and its tree, the ones compared,
/// kind by kind: making, opening, writing, reading, syncing, stat'ing,
/// renaming and removing, with their bytes. Not compared, and why: the
/// original is an MPI program, and its MPI library's start (the dynamic
/// loader's and Open MPI's own `openat`, `stat`, `readlink`, `faccessat2`,
/// `sched_setaffinity`, ... that the counter sees in its task) is not
/// mdtest's work; failed calls are compared only for the kinds below.
/// `access` (mdtest asks whether its directories exist before making
/// them; fslab does too) and `statfs` (the "FS" line) are compared.
const COMPARED: &[&str] = &[
    "mkdir", "rmdir", "rename", "unlink", "close", "lseek", "write", "read", "fsync", "sync",
    "access", "statfs",
];

/// The compared quantities of a side's counts: the kinds above with their
/// failures and bytes, successful `openat` of files and `stat`s (the MPI
/// library's failed lookups left out).
fn compared(c: &Calls) -> Calls {
    let mut out = Calls::new();
    let failed = |k: &str| *c.get(&format!("{k} ENOENT (failed)")).unwrap_or(&0);
    for (k, v) in c {
        let kind = k.split(" (").next().unwrap_or(k);
        let base = kind.split(' ').next().unwrap_or(kind);
        if COMPARED.contains(&base) {
            out.insert(k.clone(), *v);
        }
    }
    for k in ["openat", "stat"] {
        out.insert(
            format!("{k} (succeeded)"),
            c.get(k).unwrap_or(&0) - failed(k),
        );
    }
    out
}

/// What fslab does beside the original's calls, once a run.
const EXPLAINED: &[Explained] = &[
    Explained {
        what: "stat (succeeded)",
        per_task: -6,
        why:
            "the original's MPI library looks at its libraries' directories (6 stats that succeed)",
    },
    Explained {
        what: "stat (succeeded)",
        per_task: 1,
        why: "fslab checks once that the directory is there (a statx on some builds)",
    },
];

/// The original's output lines that fslab prints otherwise, and why.
const OUTPUT_EXPLAINED: &[(&str, &str)] = &[
    (
        "mdtest-#+dev was launched with",
        "fslab names itself: `fslab-mdtest-VERSION was launched with ...`",
    ),
    (
        "Command line used:",
        "fslab's command line, quoted as mdtest quotes it",
    ),
    ("Path :", "the test's directory, not the recording's"),
];

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

#[test]
fn mdtest_makes_mdtests_calls_on_every_option_set_and_prints_its_tables() {
    if !need_tool("strace") {
        return;
    }
    let lab = Lab::new();
    let base = tempfile::tempdir_in("/dev/shm").unwrap();
    let doc = data();
    assert_eq!(doc["original"], "mdtest");
    for key in ["version", "repository", "commit", "built"] {
        assert!(doc[key].is_string(), "the data says no {key}");
    }
    let cases = reference::cases("mdtest").unwrap();
    let recorded = doc["cases"].as_array().unwrap();
    assert_eq!(recorded.len(), cases.len(), "record the option sets again");
    let mut failures = String::new();
    for (i, (case, rec)) in cases.iter().zip(recorded).enumerate() {
        assert_eq!(rec["case"], case.label, "cases out of order");
        let dir = base.path().join(format!("case{i}"));
        std::fs::create_dir_all(&dir).unwrap();
        let args = case.fslab_args(&dir);
        let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("fslab"));
        cmd.arg("--db")
            .arg(lab.db())
            .arg(&args[0])
            .args(["--probes", "none"])
            .args(&args[1..])
            .current_dir(lab.tmp.path());
        let (o, t) = trace::record(cmd, &trace::log_dir(lab.tmp.path(), "ref"));
        assert!(o.status.success(), "fslab {args:?}: {}", stderr(&o));
        let marker = dir.to_str().unwrap();
        let theirs: Calls = serde_json::from_value(rec["calls"].clone()).unwrap();
        let ours = t.counts(marker).compared();
        let (diffs, table) = trace::compare(&compared(&theirs), &compared(&ours), 1, 1, EXPLAINED);
        if !diffs.is_empty() {
            failures.push_str(&format!(
                "{}: calls differ from `{}` for {:?}:\n{table}\n",
                case.label,
                rec["command"].as_str().unwrap(),
                diffs.iter().map(|d| &d.what).collect::<Vec<_>>()
            ));
        }
        // The original's lines, numbers aside, in fslab's, in order: the
        // SUMMARY tables' headers and rows among them.
        let mine: Vec<String> = stdout(&o).lines().map(shape).collect();
        let mut at = 0;
        for line in rec["output"].as_array().unwrap() {
            let want = shape(line.as_str().unwrap());
            if want.is_empty() || OUTPUT_EXPLAINED.iter().any(|(l, _)| want.starts_with(l)) {
                continue;
            }
            match mine[at..].iter().position(|m| *m == want) {
                Some(k) => at += k + 1,
                None => failures.push_str(&format!(
                    "{}: fslab does not print (after its line {at}) the original's line\n{want}\nfslab printed:\n{}\n",
                    case.label,
                    stdout(&o)
                )),
            }
        }
    }
    assert!(failures.is_empty(), "{failures}");
}

#[test]
fn the_summary_rows_line_up_in_mdtests_columns() {
    // Exact columns, not shapes: the rows of the original's first case.
    let doc = data();
    let theirs: Vec<String> = doc["cases"][0]["output"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap().to_string())
        .filter(|l| l.starts_with("   "))
        .collect();
    assert_eq!(theirs.len(), 12, "{theirs:?}");
    let lab = Lab::new();
    let d = lab.path("m");
    let o = lab.run(&[
        "mdtest",
        "--probes",
        "none",
        "-n",
        "20",
        "-d",
        d.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let mine: Vec<&str> = out.lines().filter(|l| l.starts_with("   ")).collect();
    assert_eq!(mine.len(), theirs.len(), "{out}");
    for (m, t) in mine.iter().zip(&theirs) {
        // Same label, same width, each number right-aligned at the same column.
        assert_eq!(m.len(), t.len(), "\nfslab:    {m:?}\noriginal: {t:?}");
        assert_eq!(m.get(..22), t.get(..22));
        let ends = |s: &str| -> Vec<usize> {
            s.char_indices()
                .filter(|&(i, c)| c != ' ' && s[i + 1..].starts_with(' ') || i + 1 == s.len())
                .map(|(i, _)| i)
                .collect()
        };
        assert_eq!(ends(m), ends(t), "\nfslab:    {m:?}\noriginal: {t:?}");
    }
}

#[test]
fn bad_mdtest_input_is_one_line_and_status_2() {
    let lab = Lab::new();
    for (args, want) in [
        (&["-n", "0"][..], "fslab: mdtest: -n 0: must be at least 1"),
        (
            &["-n", "5", "-i", "0"][..],
            "fslab: mdtest: -i 0: must be at least 1",
        ),
        (
            &["-n", "5", "-W", "5", "-z", "1", "-b", "2"][..],
            "fslab: mdtest: -W 5 with -b 2",
        ),
        // hpc/ior's md_validate_tests' words for -n with -I and for
        // several -d directories.
        (
            &["-n", "10", "-I", "5", "-u"][..],
            "fslab: mdtest: -n 10 with -I 5 and -u: only specify the number of items or the \
             number of items per directory",
        ),
        (
            &["-n", "10", "-I", "3"][..],
            "fslab: mdtest: -n 10 with -I 3: items must be a multiple of items per directory",
        ),
        (
            &["-n", "5", "-d", "a@b"][..],
            "fslab: mdtest: -d a@b: shared directory mode is not compatible with multiple \
             directory paths",
        ),
        (
            &["-n", "5", "-u", "-N", "1", "-d", "a@b"][..],
            "fslab: mdtest: -d a@b with -N 1: cannot have multiple directory paths with -N \
             strides between neighbor tasks",
        ),
        (&["-n", "5", "-Q"][..], "fslab: unexpected argument '-Q'"),
        (
            &["-n", "x"][..],
            "fslab: invalid value 'x' for '--items <N>'",
        ),
    ] {
        let mut all = vec!["mdtest", "--probes", "none"];
        all.extend_from_slice(args);
        let o = lab.run(&all);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
        assert_eq!(e.lines().count(), 1, "{args:?}: {e}");
        assert!(e.starts_with(want), "{args:?}: {e}");
    }
    // A later phase's run whose -x file is missing: the file is named.
    let x = lab.path("no-such-file");
    let o = lab.run(&[
        "mdtest",
        "--probes",
        "none",
        "-n",
        "5",
        "-T",
        "-x",
        x.to_str().unwrap(),
        "-d",
        lab.path("m").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("no-such-file: cannot read the stonewall status"),
        "{}",
        stderr(&o)
    );
}

/// The stonewall with wear-out on MPI ranks: the real binary under Open
/// MPI's mpirun, three ranks on this machine.
#[cfg(feature = "mpi")]
mod on_ranks {
    use std::process::{Command, Output};

    use crate::support::{need_tool, stderr, stdout, Lab};

    fn mpirun(lab: &Lab, n: usize, args: &[&str]) -> Output {
        let out = Command::new("timeout")
            .args([
                "120",
                "mpirun",
                "--allow-run-as-root",
                "--oversubscribe",
                "-np",
            ])
            .arg(n.to_string())
            .arg(assert_cmd::cargo::cargo_bin("fslab"))
            .arg("--db")
            .arg(lab.db())
            .args(["mdtest", "--probes", "none"])
            .args(args)
            .current_dir(lab.tmp.path())
            .output()
            .unwrap();
        assert_ne!(
            out.status.code(),
            Some(124),
            "mpirun hung: {}",
            stderr(&out)
        );
        out
    }

    fn export(lab: &Lab, id: &str) -> serde_json::Value {
        let o = lab.run(&["results", "export", id]);
        assert!(o.status.success(), "{}", stderr(&o));
        serde_json::from_slice(&o.stdout).unwrap()
    }

    fn metric(run: &serde_json::Value, name: &str) -> f64 {
        run["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == name)
            .unwrap_or_else(|| panic!("no metric {name} in {}", run["metrics"]))["value"]
            .as_f64()
            .unwrap()
    }

    fn ops(run: &serde_json::Value, phase: &str) -> u64 {
        run["phases"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["phase"] == phase)
            .unwrap_or_else(|| panic!("no phase {phase} in {}", run["phases"]))["ops"]
            .as_u64()
            .unwrap()
    }

    #[test]
    fn three_ranks_stop_at_the_stonewall_agree_and_wear_out_to_the_same_count() {
        if !need_tool("mpirun") {
            return;
        }
        let lab = Lab::new();
        let d = lab.path("md");
        let x = lab.path("stonewall");
        let (ds, xs) = (d.to_str().unwrap(), x.to_str().unwrap());
        let o = mpirun(
            &lab,
            3,
            &[
                "-n", "5000000", "-F", "-u", "-C", "-W", "1", "-x", xs, "-d", ds,
            ],
        );
        assert!(o.status.success(), "{}", stderr(&o));
        let text = stdout(&o);
        assert!(text.contains("3 tasks, 15000000 files"), "{text}");
        assert!(
            text.contains("SUMMARY rate (in ops/sec): (of 1 iterations)"),
            "{text}"
        );
        assert!(text.contains("Stonewall, iteration 1: "), "{text}");
        let agreed: u64 = std::fs::read_to_string(&x).unwrap().parse().unwrap();
        assert!(
            agreed > 0 && agreed < 5_000_000,
            "the stonewall stopped them: {agreed}"
        );
        for rank in 0..3 {
            let tree = d.join(format!("test-dir.0-0/mdtest_tree.{rank}.0"));
            let n = std::fs::read_dir(&tree).unwrap().count() as u64;
            assert_eq!(
                n, agreed,
                "rank {rank} made the agreed count, no more, no fewer"
            );
        }
        let run = export(&lab, "1");
        assert_eq!(ops(&run, "file creation"), 3 * agreed);
        let at_wall = metric(&run, "items at stonewall");
        let spread = metric(&run, "straggler spread");
        let wear = metric(&run, "wear-out items");
        assert_eq!(at_wall + wear, 3.0 * agreed as f64, "{}", run["metrics"]);
        assert!(spread >= 0.0 && spread <= agreed as f64);
        assert!(metric(&run, "stonewall rate") > 0.0);
        assert!(metric(&run, "stonewall time") >= 1.0);
        let per_rank: f64 = (0..3)
            .map(|r| metric(&run, &format!("items at stonewall, rank {r}")))
            .sum();
        assert_eq!(
            per_rank, at_wall,
            "each rank's count is kept, and they add up"
        );
        // A later run on the same ranks stats and removes the kept count.
        let o = mpirun(
            &lab,
            3,
            &["-n", "5000000", "-F", "-u", "-T", "-r", "-x", xs, "-d", ds],
        );
        assert!(o.status.success(), "{}", stderr(&o));
        let run = export(&lab, "2");
        assert_eq!(ops(&run, "file stat"), 3 * agreed);
        assert_eq!(ops(&run, "file removal"), 3 * agreed);
        assert_eq!(
            std::fs::read_dir(&d).unwrap().count(),
            0,
            "everything removed"
        );
    }
}
