//! fs_mark parity: Debian's fs_mark 3.3 and `fslab fsmark` run side by
//! side under the full call counter (`fslab_bench::trace`): every call of
//! every workload task, path-less ones (sync) too, each name apart, with
//! failures and bytes, compared exactly per file.

use std::path::Path;
use std::process::Command;

use fslab_bench::trace::{self, Counts, Explained};

use crate::support::*;

/// What differs between fs_mark's children and fslab's threads, at most so
/// much per task, and why: nothing inside the per-file loop.
const EXPLAINED: &[Explained] = &[
    Explained {
        what: "openat O_DIRECTORY",
        per_task: 1,
        why: "fslab opens the thread's directory once and creates names relative to it",
    },
    Explained {
        what: "fcntl",
        per_task: 2,
        why: "fslab duplicates that descriptor (F_DUPFD_CLOEXEC) for the create loop",
    },
    Explained {
        what: "close",
        per_task: 2,
        why: "fslab closes both directory descriptors when the thread ends",
    },
    Explained {
        what: "mkdir",
        per_task: -1,
        why: "fs_mark's child makes its top directory on start (EEXIST); fslab's main task does",
    },
    Explained {
        what: "mkdir EEXIST (failed)",
        per_task: -1,
        why: "the same mkdir",
    },
    Explained {
        what: "statfs",
        per_task: -1,
        why: "fs_mark's child reads the free space on start; fslab's main task does",
    },
];

/// Runs fs_mark and `fslab fsmark` with the same `args` (and `-d DIR` for
/// each of `dirs` directories under `base`), traced; returns both counts.
/// Each side's (workers, main task) counts.
type Sides = ((Counts, Counts), (Counts, Counts));

fn traced_pair(lab: &Lab, base: &Path, dirs: usize, args: &[&str]) -> Sides {
    let mut out = Vec::new();
    for (who, sub) in [("fs_mark", "orig"), ("fslab", "ours")] {
        let root = base.join(sub);
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).unwrap();
        let mut cmd = if who == "fs_mark" {
            Command::new("fs_mark")
        } else {
            let mut c = Command::new(assert_cmd::cargo::cargo_bin("fslab"));
            c.arg("--db")
                .arg(lab.db())
                .args(["fsmark", "--probes", "none"]);
            c
        };
        for i in 0..dirs {
            cmd.arg("-d").arg(root.join(format!("d{i}")));
        }
        cmd.arg("-l")
            .arg(lab.path(&format!("{sub}.log")))
            .args(args)
            .current_dir(lab.tmp.path());
        let logs = trace::log_dir(lab.tmp.path(), sub);
        let (o, t) = trace::record(cmd, &logs);
        assert!(o.status.success(), "{who} {args:?}: {}", stderr(&o));
        let marker = root.to_str().unwrap();
        out.push((t.worker_counts(marker), t.main_counts(marker)));
    }
    let ours = out.pop().unwrap();
    (out.pop().unwrap(), ours)
}

/// Asserts both sides' workers (fs_mark's children, fslab's threads) made
/// the same calls per file, kind by kind, bytes and failures included; and that the main tasks made the same
/// path-less calls (none: a sync() there would show). The main tasks' calls
/// on the directory are their own checks and free-space lines (fs_mark's
/// statfs, fslab's canonicalising readlink and access check), made before
/// and after the workers, outside the timed region: printed, not compared.
fn assert_same_calls(lab: &Lab, base: &Path, dirs: usize, args: &[&str], files: u64) {
    let ((theirs, their_main), (ours, our_main)) = traced_pair(lab, base, dirs, args);
    let tasks = ours.per_task.len().max(theirs.per_task.len()) as u64;
    let (diffs, table) = trace::compare(
        &theirs.compared(),
        &ours.compared(),
        files,
        tasks,
        EXPLAINED,
    );
    assert!(
        diffs.is_empty(),
        "fsmark {args:?} (-d x{dirs}): calls per file differ for {:?}:\n{table}",
        diffs.iter().map(|d| &d.what).collect::<Vec<_>>()
    );
    assert!(theirs.total() > 0, "{table}");
    let (diffs, main_table) =
        trace::compare(&their_main.path_less, &our_main.path_less, files, 1, &[]);
    assert!(
        diffs.is_empty(),
        "fsmark {args:?}: the main tasks' path-less calls differ:\n{main_table}\n\
         their main task on the directory: {:?}\nours: {:?}",
        their_main.calls,
        our_main.calls
    );
}

fn target() -> (Option<LoopFs>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    if rustix::process::geteuid().is_root() {
        (
            Some(LoopFs::new(fslab_lab::mkfs::FsType::Ext4, 1 << 30, &[])),
            dir,
        )
    } else {
        (None, dir)
    }
}

#[test]
fn fsmark_makes_fs_marks_every_call_per_file_in_every_sync_mode() {
    if !need_tool("strace") || !need_tool("fs_mark") {
        return;
    }
    let lab = Lab::new();
    let (fs, tmp) = target();
    let dir: &Path = fs.as_ref().map(|f| f.path()).unwrap_or(tmp.path());
    for (s, size, layout) in [
        ("0", "0", &["-D", "4", "-N", "10"][..]),
        ("1", "4096", &["-D", "4"][..]),
        ("2", "0", &[][..]),
        ("3", "4096", &["-D", "3", "-N", "7"][..]),
        ("4", "0", &["-D", "2"][..]),
        ("5", "4096", &[][..]),
        ("6", "4096", &["-D", "2", "-N", "50"][..]),
    ] {
        let mut args = vec!["-S", s, "-s", size, "-n", "120", "-L", "1"];
        args.extend_from_slice(layout);
        assert_same_calls(&lab, dir, 1, &args, 120);
    }
}

#[test]
fn fsmark_makes_fs_marks_every_call_with_threads_loops_and_name_options() {
    if !need_tool("strace") || !need_tool("fs_mark") {
        return;
    }
    let lab = Lab::new();
    let (fs, tmp) = target();
    let dir: &Path = fs.as_ref().map(|f| f.path()).unwrap_or(tmp.path());
    // Several threads over one directory, several loops, a sync mode with
    // sync(), and the name and write-size options.
    for (dirs, args, files) in [
        (1, &["-t", "3", "-L", "2", "-S", "4", "-s", "100"][..], 360),
        (
            2,
            &["-L", "3", "-S", "6", "-s", "8192", "-w", "1000"][..],
            360,
        ),
        (
            1,
            &["-t", "2", "-L", "2", "-S", "2", "-r", "8", "-p", "30"][..],
            240,
        ),
        (
            1,
            &["-S", "1", "-s", "9000", "-w", "4096", "-D", "5"][..],
            60,
        ),
    ] {
        let mut a = vec!["-n", "60"];
        a.extend_from_slice(args);
        assert_same_calls(&lab, dir, dirs, &a, files);
    }
}
