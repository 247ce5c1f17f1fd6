//! dbench parity: Debian's dbench 4.0 and `fslab dbench` replay the same
//! operations, client by client, under the full call counter
//! (`fslab_bench::trace`), and make the same calls, kind by kind (stat,
//! lstat, fstat and statx apart), with the same failures and bytes.
//!
//! dbench runs for a time; each of its clients checks its parent with
//! `kill(parent, 0)` before each loadfile line, so a client's log splits
//! into operations at those calls. Every dbench client's log is cut after
//! the same number of operations, the fewest any client reached; fslab
//! replays exactly that many lines (`--loops 1` over the loadfile's lines
//! repeated in order, as dbench wraps around) with as many clients. The two
//! then did the same work, and their calls are compared exactly.

use std::path::Path;
use std::process::Command;

use fslab_bench::trace::{self, Call, Counts, Explained, Trace};

use crate::support::*;

const CLIENTS_DIR: &str = "fslab makes clients/ before the first operation (a filesystem \
     that cannot hold it stops the run with one clear error); the loadfile's Mkdir \\clients \
     then finds it, where dbench's first client to get there";

/// What differs between dbench's clients and fslab's, at most so much per
/// client, and why: nothing inside an operation but the one Mkdir.
const EXPLAINED: &[Explained] = &[
    Explained {
        what: "stat ENOENT (failed)",
        per_task: -1,
        why: "dbench's first client to reach Mkdir \\clients stats it and finds nothing",
    },
    Explained {
        what: "openat O_DIRECTORY",
        per_task: -1,
        why: "... then scans its parent for the name in another case (opendir)",
    },
    Explained {
        what: "fstat",
        per_task: -1,
        why: "... (opendir's fstat)",
    },
    Explained {
        what: "getdents64",
        per_task: -2,
        why: "... (readdir to the end)",
    },
    Explained {
        what: "close",
        per_task: -1,
        why: "... (closedir)",
    },
    Explained {
        what: "close",
        per_task: 32,
        why: "at the end of its replay fslab closes the handles the loadfile left open; \
              dbench's log is cut mid-run, where it still holds them",
    },
    Explained {
        what: "mkdir EEXIST (failed)",
        per_task: 1,
        why: CLIENTS_DIR,
    },
    Explained {
        what: "getxattr",
        per_task: 1,
        why: "with -x, fslab reads the attribute of the clients/ it found",
    },
    Explained {
        what: "getxattr ENODATA (failed)",
        per_task: 1,
        why: "... which has none",
    },
];

/// One dbench client's calls, cut after its `ops`-th operation: from its
/// first `kill(parent, 0)` up to (without) the `ops + 1`-th.
fn first_ops(calls: &[Call], ops: usize) -> Vec<Call> {
    let mut seen = 0;
    let mut out = Vec::new();
    for c in calls {
        if c.name == "kill" {
            seen += 1;
            if seen > ops {
                break;
            }
        }
        if seen > 0 {
            out.push(c.clone());
        }
    }
    out
}

/// dbench's clients: the tasks that checked their parent.
fn dbench_clients(t: &Trace) -> Vec<&Vec<Call>> {
    t.tasks
        .values()
        .filter(|calls| calls.iter().any(|c| c.name == "kill"))
        .collect()
}

/// Runs dbench (`flags`, `clients`, for `secs`) and fslab with the same
/// operations; asserts the same calls. Returns the operations compared.
fn dbench_parity(lab: &Lab, loadfile: &Path, dir: &Path, flags: &[&str], clients: usize) -> usize {
    let (orig, ours) = (dir.join("dbench"), dir.join("fslab"));
    for d in [&orig, &ours] {
        let _ = std::fs::remove_dir_all(d);
        std::fs::create_dir_all(d).unwrap();
    }
    let mut cmd = Command::new("dbench");
    cmd.args(["-t", "5", "--skip-cleanup", "-D"])
        .arg(&orig)
        .arg("-c")
        .arg(loadfile)
        .args(flags)
        .arg(clients.to_string());
    let (o, theirs) = trace::record(cmd, &trace::log_dir(lab.tmp.path(), "dbench"));
    assert!(o.status.success(), "dbench: {}", stderr(&o));
    let logs = dbench_clients(&theirs);
    assert_eq!(logs.len(), clients, "dbench's clients");
    let ops = logs
        .iter()
        .map(|l| l.iter().filter(|c| c.name == "kill").count())
        .min()
        .unwrap()
        .saturating_sub(1);
    assert!(
        ops > 200,
        "dbench's slowest client got through only {ops} operations"
    );
    let marker = orig.to_str().unwrap();
    let mut their_counts = Counts::default();
    let mut their_per: Vec<Counts> = logs
        .iter()
        .map(|l| Counts::of(&first_ops(l, ops), marker))
        .collect();
    for c in &their_per {
        their_counts.merge(c);
    }
    their_per.sort_by_key(Counts::total);
    // The same lines for fslab, as dbench wraps around the loadfile.
    let text = std::fs::read_to_string(loadfile).unwrap();
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let replay: String = (0..ops)
        .map(|i| format!("{}\n", lines[i % lines.len()]))
        .collect();
    let replay_file = lab.path("replay.txt");
    std::fs::write(&replay_file, replay).unwrap();
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("fslab"));
    cmd.arg("--db")
        .arg(lab.db())
        .args([
            "dbench",
            "--loops",
            "1",
            "--no-cleanup",
            "--probes",
            "none",
            "-c",
        ])
        .arg(&replay_file)
        .arg("-D")
        .arg(&ours)
        .args(flags)
        .arg(clients.to_string());
    let (o, mine) = trace::record(cmd, &trace::log_dir(lab.tmp.path(), "fslab"));
    assert!(o.status.success(), "fslab dbench: {}", stderr(&o));
    let mine_counts = mine.worker_counts(ours.to_str().unwrap());
    let (diffs, table) = trace::compare(
        &their_counts.compared(),
        &mine_counts.compared(),
        (ops * clients) as u64,
        clients as u64,
        EXPLAINED,
    );
    assert!(
        diffs.is_empty(),
        "dbench {flags:?} x{clients}: calls differ for {:?} over {ops} operations per client of {}:\n{table}",
        diffs.iter().map(|d| &d.what).collect::<Vec<_>>(),
        loadfile.display()
    );
    // Client by client too: each did the same work (but for the
    // explained calls).
    let theirs_per: Vec<u64> = their_per.iter().map(Counts::total).collect();
    let mut ours_per: Vec<u64> = mine_counts
        .per_task
        .iter()
        .map(|m| m.values().sum())
        .collect();
    ours_per.sort_unstable();
    let slack: u64 = EXPLAINED.iter().map(|e| e.per_task.unsigned_abs()).sum();
    assert_eq!(theirs_per.len(), ours_per.len(), "clients\n{table}");
    assert!(
        theirs_per
            .iter()
            .zip(&ours_per)
            .all(|(t, o)| t.abs_diff(*o) <= slack),
        "calls per client: dbench {theirs_per:?}, fslab {ours_per:?}\n{table}"
    );
    // fslab's main task makes no path-less call dbench's parent does not.
    let main = mine.main_counts(ours.to_str().unwrap());
    assert!(
        main.path_less.is_empty(),
        "fslab's main task: {:?}",
        main.path_less
    );
    ops
}

fn target() -> (Option<LoopFs>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    if rustix::process::geteuid().is_root() {
        (
            Some(LoopFs::new(fslab_lab::mkfs::FsType::Ext4, 2 << 30, &[])),
            dir,
        )
    } else {
        (None, dir)
    }
}

/// The first lines of Debian's client.txt, dbench's own loadfile.
fn client_txt(lab: &Lab, lines: usize) -> std::path::PathBuf {
    let client: String = std::fs::read_to_string("/usr/share/dbench/client.txt")
        .unwrap()
        .lines()
        .take(lines)
        .map(|l| format!("{l}\n"))
        .collect();
    let f = lab.path("client.txt");
    std::fs::write(&f, client).unwrap();
    f
}

#[test]
fn dbench_makes_dbench_4s_every_call_per_operation_with_8_clients_and_xattrs() {
    if !need_tool("strace") || !need_tool("dbench") {
        return;
    }
    let lab = Lab::new();
    let (fs, tmp) = target();
    let dir: &Path = fs.as_ref().map(|f| f.path()).unwrap_or(tmp.path());
    let client = client_txt(&lab, 3000);
    dbench_parity(&lab, &client, &dir.join("x"), &["-x"], 8);
}

#[test]
fn dbench_makes_dbench_4s_every_call_per_operation_with_sync_options() {
    if !need_tool("strace") || !need_tool("dbench") {
        return;
    }
    let lab = Lab::new();
    let (fs, tmp) = target();
    let dir: &Path = fs.as_ref().map(|f| f.path()).unwrap_or(tmp.path());
    let client = client_txt(&lab, 3000);
    dbench_parity(&lab, &client, &dir.join("s"), &["-S", "-s"], 2);
    // fslab's own loadfile, one client, no options.
    let model = lab.path("model.txt");
    let o = lab.run(&["dbench", "--print-loadfile"]);
    std::fs::write(&model, &o.stdout).unwrap();
    dbench_parity(&lab, &model, &dir.join("m"), &[], 1);
}

/// dbench's warm-up flows into its measured period: the same client
/// threads run from start to end (the boundary moves their accounting
/// window and tells the probes, it does not stop them), so a traced run
/// has one thread per client, not one per client and phase.
#[test]
fn dbench_warmup_flows_into_the_measured_period_on_the_same_clients() {
    if !need_tool("strace") {
        return;
    }
    let lab = Lab::new();
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("fslab"));
    cmd.arg("--db")
        .arg(lab.db())
        .args([
            "dbench", "-t", "2", "--warmup", "1", "--probes", "default", "-D",
        ])
        .arg(dir.path())
        .arg("3");
    let (o, t) = trace::record(cmd, &trace::log_dir(lab.tmp.path(), "flow"));
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains(" warmup ") && out.contains(" execute "),
        "{out}"
    );
    let marker = dir.path().to_str().unwrap();
    let clients: Vec<u32> = t
        .tasks
        .iter()
        .filter(|(tid, calls)| {
            !t.is_main(**tid)
                && calls.iter().any(|c| {
                    c.name == "openat" && c.rest.contains(marker) && c.rest.contains("client")
                })
        })
        .map(|(tid, _)| *tid)
        .collect();
    assert_eq!(clients.len(), 3, "client threads {clients:?}:\n{out}");
}
