//! dbench through the real binary: every operation of a loadfile with its
//! statuses, the model and real loadfiles, options on ext4 and bad input.

use fslab_lab::mkfs::FsType;

use crate::support::*;
use crate::workloads::{s, shm};

/// A loadfile using every operation, whose statuses check the namespace.
const EVERY_OP: &str = r#"# every operation once or more
Deltree "\clients\client1" NT_STATUS_OK
Mkdir "\clients" NT_STATUS_OK
NTCreateX "\clients\client1" 0x1 0x2 1 NT_STATUS_OK
Close 1 NT_STATUS_OK
Mkdir "\clients\client1\sub" NT_STATUS_OK
NTCreateX "\clients\client1\a.txt" 0x40 0x2 2 NT_STATUS_OK
NTCreateX "\clients\client1\a.txt" 0x40 0x2 9 NT_STATUS_OBJECT_NAME_COLLISION
WriteX 2 0 65536 65536 NT_STATUS_OK
WriteX 2 65536 4000 4000 NT_STATUS_OK
Flush 2 NT_STATUS_OK
QUERY_FILE_INFORMATION 2 1004 NT_STATUS_OK
SET_FILE_INFORMATION 2 1004 NT_STATUS_OK
LockX 2 0 1 NT_STATUS_OK
ReadX 2 0 4096 4096 NT_STATUS_OK
UnlockX 2 0 1 NT_STATUS_OK
Close 2 NT_STATUS_OK
Close 2 NT_STATUS_INVALID_HANDLE
QUERY_PATH_INFORMATION "\clients\client1\a.txt" 1004 NT_STATUS_OK
QUERY_PATH_INFORMATION "\clients\client1\nothere" 1004 NT_STATUS_OBJECT_NAME_NOT_FOUND
QUERY_PATH_INFORMATION "\clients\client1\nodir\x" 1004 NT_STATUS_OBJECT_PATH_NOT_FOUND
QUERY_FS_INFORMATION 1 NT_STATUS_OK
FIND_FIRST "\clients\client1\A.*" 260 1366 0 NT_STATUS_OK
FIND_FIRST "\clients\client1\*.zip" 260 1366 0 NT_STATUS_NO_SUCH_FILE
Rename "\clients\client1\a.txt" "\clients\client1\sub\b.txt" NT_STATUS_OK
Rename "\clients\client1\a.txt" "\clients\client1\c.txt" NT_STATUS_OBJECT_NAME_NOT_FOUND
NTCreateX "\clients\client1\sub\b.txt" 0x40 0x1 3 NT_STATUS_OK
ReadX 3 65536 4096 4000 NT_STATUS_OK
Close 3 NT_STATUS_OK
NTCreateX "\clients\client1\keep.dat" 0x40 0x5 4 NT_STATUS_OK
WriteX 4 0 1000 1000 NT_STATUS_OK
Close 4 NT_STATUS_OK
Mkdir "\clients\client1\gone" NT_STATUS_OK
Rmdir "\clients\client1\gone" NT_STATUS_OK
Rmdir "\clients\client1\gone" NT_STATUS_OBJECT_NAME_NOT_FOUND
Unlink "\clients\client1\sub\b.txt" 0x6 NT_STATUS_OK
Unlink "\clients\client1\sub\b.txt" 0x6 NT_STATUS_OBJECT_NAME_NOT_FOUND
"#;

#[test]
fn dbench_replays_every_operation_with_the_loadfiles_statuses() {
    let lab = Lab::new();
    let d = shm();
    let lf = lab.path("every.txt");
    std::fs::write(&lf, EVERY_OP).unwrap();
    let o = lab.run(&[
        "dbench",
        "-t",
        "2",
        "--warmup",
        "1",
        "-D",
        &s(d.path()),
        "-c",
        &s(&lf),
        "3",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(!out.contains("returned another status"), "{out}");
    assert!(out.lines().any(|l| l.contains(" MB/sec  warmup ")), "{out}");
    let execute: Vec<&str> = out
        .lines()
        .filter(|l| l.contains(" MB/sec  execute "))
        .collect();
    assert!(!execute.is_empty(), "{out}");
    let f: Vec<&str> = execute[0].split_whitespace().collect();
    assert_eq!(
        (f[0], f[3], f[4], f[6], f[7]),
        ("3", "MB/sec", "execute", "sec", "latency"),
        "{}",
        execute[0]
    );
    assert!(out.contains("\n Operation                Count    AvgLat    MaxLat\n --------------------------------------------------\n"), "{out}");
    for op in [
        "NTCreateX",
        "Close",
        "Rename",
        "Unlink",
        "Deltree",
        "Rmdir",
        "Mkdir",
        "Qpathinfo",
        "Qfileinfo",
        "Qfsinfo",
        "Sfileinfo",
        "Find",
        "WriteX",
        "ReadX",
        "LockX",
        "UnlockX",
        "Flush",
    ] {
        assert!(
            out.lines().any(|l| l.starts_with(&format!(" {op} "))),
            "no {op} row: {out}"
        );
    }
    // The progress lines count operations per client, as dbench does: the
    // last one, times the clients, is about the operation table's total.
    let table_ops: u64 = out
        .lines()
        .skip_while(|l| !l.starts_with(" ----"))
        .skip(1)
        .take_while(|l| !l.is_empty())
        .map(|l| l.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap())
        .sum();
    let last: u64 = execute[execute.len() - 1]
        .split_whitespace()
        .collect::<Vec<_>>()[1]
        .parse()
        .unwrap();
    assert!(
        last * 3 <= table_ops && last * 3 * 10 >= table_ops * 9,
        "last progress {last} x 3 clients against {table_ops} operations: {out}"
    );
    let t = out.lines().find(|l| l.starts_with("Throughput ")).unwrap();
    let f: Vec<&str> = t.split_whitespace().collect();
    assert_eq!((f[2], f[4], f[6]), ("MB/sec", "clients", "procs"), "{t}");
    assert!(
        f[7].starts_with("max_latency=") && f[7].ends_with("ms") || f[8] == "ms",
        "{t}"
    );
    exact_passes_leave_the_loadfiles_trees(&lab, d.path(), &lf);
    let v: serde_json::Value =
        serde_json::from_slice(&lab.run(&["results", "export", "1"]).stdout).unwrap();
    let phases = phase_names(&v);
    assert_eq!(phases, ["warmup", "execute"]);
    assert_eq!(
        v["latency"].as_array().unwrap().len(),
        17,
        "a latency histogram per operation"
    );
}

/// `--loops 5`: exact passes leave every client's tree as the loadfile left it.
fn exact_passes_leave_the_loadfiles_trees(lab: &Lab, d: &std::path::Path, lf: &std::path::Path) {
    // Exact passes leave every client's tree as the loadfile left it.
    let o = lab.run(&[
        "dbench",
        "--loops",
        "5",
        "-D",
        &s(d),
        "-c",
        &s(lf),
        "--no-cleanup",
        "3",
    ]);
    assert!(
        o.status.success() && !stdout(&o).contains("returned another status"),
        "{}",
        stdout(&o)
    );
    let t = stdout(&o);
    let writes = t
        .lines()
        .find(|l| l.starts_with(" WriteX "))
        .unwrap()
        .split_whitespace()
        .nth(1)
        .unwrap()
        .to_string();
    assert_eq!(
        writes,
        (3 * 5 * 3).to_string(),
        "3 clients x 5 passes x 3 writes"
    );
    for c in 1..=3 {
        let root = d.join(format!("clients/client{c}"));
        assert_eq!(
            std::fs::metadata(root.join("keep.dat")).unwrap().len(),
            1000
        );
        assert!(
            root.join("sub").is_dir()
                && !root.join("sub/b.txt").exists()
                && !root.join("a.txt").exists()
                && !root.join("gone").exists()
        );
    }
}

#[test]
fn dbench_model_and_real_loadfiles_replay_cleanly() {
    let lab = Lab::new();
    let d = shm();
    let o = lab.run(&[
        "dbench",
        "-t",
        "2",
        "--warmup",
        "1",
        "-D",
        &s(d.path()),
        "2",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        !stdout(&o).contains("returned another status"),
        "{}",
        stdout(&o)
    );
    assert_eq!(
        std::fs::read_dir(d.path()).unwrap().count(),
        0,
        "the clients' trees are cleaned up"
    );
    let model = stdout(&lab.run(&["dbench", "--print-loadfile"]));
    assert!(
        model.lines().count() > 1000 && model.contains("NTCreateX \"\\clients\\client1\\~dmtmp")
    );
    let real = std::path::Path::new("/usr/share/dbench/client.txt");
    if real.exists() {
        let o = lab.run(&[
            "dbench",
            "-t",
            "3",
            "--warmup",
            "1",
            "-D",
            &s(d.path()),
            "-c",
            "/usr/share/dbench/client.txt",
            "2",
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(
            !stdout(&o).contains("returned another status"),
            "Debian's client.txt: {}",
            stdout(&o)
        );
    } else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI installs Debian's dbench for its client.txt"
        );
    }
}

#[test]
fn dbench_options_on_ext4_and_bad_input() {
    let lab = Lab::new();
    let bad = lab.path("bad.txt");
    std::fs::write(&bad, "Close 1 NT_STATUS_OK\nReadX 1 0 NT_STATUS_OK\n").unwrap();
    let unknown = lab.path("unknown.txt");
    std::fs::write(&unknown, "# c\nFrobnicate \"x\" NT_STATUS_OK\n").unwrap();
    for (args, want) in [
        (
            vec!["dbench", "-c", bad.to_str().unwrap(), "-D", "/dev/shm", "1"],
            "bad.txt:2: ReadX takes 4 arguments",
        ),
        (
            vec![
                "dbench",
                "-c",
                unknown.to_str().unwrap(),
                "-D",
                "/dev/shm",
                "1",
            ],
            "unknown.txt:2: unknown operation \"Frobnicate\"",
        ),
        (vec!["dbench", "-D", "/dev/shm", "0"], "NPROCS 0"),
        (vec!["dbench", "-D", "/nonexistent", "1"], "/nonexistent"),
        (
            vec!["dbench", "-c", "/nonexistent.txt", "-D", "/dev/shm", "1"],
            "/nonexistent.txt",
        ),
    ] {
        let o = lab.run(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(
            stderr(&o).contains(want) && stderr(&o).lines().count() == 1,
            "{args:?}: {}",
            stderr(&o)
        );
    }
    if !privileged("ext4 on a loop device") {
        return;
    }
    let fs = LoopFs::new(FsType::Ext4, 512 << 20, &[]);
    let lf = lab.path("every.txt");
    std::fs::write(&lf, EVERY_OP).unwrap();
    let o = lab.run(&[
        "dbench",
        "-t",
        "2",
        "--warmup",
        "0",
        "-D",
        &s(fs.path()),
        "-c",
        &s(&lf),
        "-s",
        "-S",
        "-F",
        "-x",
        "2",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        !stdout(&o).contains("returned another status"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn dbench_help_says_nprocs_is_required() {
    let lab = Lab::new();
    let o = lab.run(&["dbench", "--help"]);
    assert!(o.status.success());
    let usage = stdout(&o);
    assert!(
        usage.contains("Usage: fslab dbench [OPTIONS] NPROCS\n"),
        "{usage}"
    );
    assert!(
        !usage.contains("Usage: fslab dbench [OPTIONS] [NPROCS]"),
        "{usage}"
    );
    let o = lab.run(&["dbench"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("<NPROCS>"), "{}", stderr(&o));
}
