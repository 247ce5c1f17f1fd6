//! createmany, tiotest and alloctest through the real binary, on tmpfs and
//! on real filesystems on loop devices.

use fslab_lab::mkfs::FsType;

use crate::support::*;

fn shm() -> tempfile::TempDir {
    tempfile::tempdir_in("/dev/shm").unwrap()
}

fn s(p: &std::path::Path) -> String {
    p.display().to_string()
}

/// Parses `total: N WHAT in S seconds: R ops/second`.
fn total_line(out: &str) -> (u64, String, f64) {
    let l = out
        .lines()
        .find(|l| l.starts_with("total: "))
        .unwrap_or_else(|| panic!("no total line in {out}"));
    let f: Vec<&str> = l.split_whitespace().collect();
    assert_eq!((f[3], f[5], f[7]), ("in", "seconds:", "ops/second"), "{l}");
    (
        f[1].parse().unwrap(),
        f[2].to_string(),
        f[6].parse().unwrap(),
    )
}

#[test]
fn createmany_modes_make_what_they_say() {
    let lab = Lab::new();
    let d = shm();
    let f = format!("{}/f", s(d.path()));
    let o = lab.run(&["createmany", "-m", &f, "25000"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let (n, what, rate) = total_line(&stdout(&o));
    assert_eq!((n, what.as_str()), (25000, "create"));
    assert!(rate > 0.0);
    assert_eq!(count_files(d.path()), 25000);
    assert!(
        std::path::Path::new(&format!("{f}24999")).exists()
            && !std::path::Path::new(&format!("{f}25000")).exists()
    );

    // Unlink them all (createmany -u alone), then create and unlink right away.
    let o = lab.run(&["createmany", "-u", &f, "25000"]);
    assert_eq!(total_line(&stdout(&o)).1, "unlink");
    assert_eq!(count_files(d.path()), 0);
    let o = lab.run(&[
        "createmany",
        "-o",
        "-u",
        &format!("{}/g%04d", s(d.path())),
        "10",
        "20",
    ]);
    assert_eq!(
        total_line(&stdout(&o)),
        (20, "open/close/unlink".into(), total_line(&stdout(&o)).2)
    );
    assert_eq!(count_files(d.path()), 0);

    // mkdir, and links to one target.
    let o = lab.run(&["createmany", "-d", &format!("{}/dir%d", s(d.path())), "30"]);
    assert_eq!(total_line(&stdout(&o)).1, "mkdir");
    assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 30);
    let target = d.path().join("target");
    std::fs::write(&target, "x").unwrap();
    let o = lab.run(&[
        "createmany",
        "-l",
        &s(&target),
        &format!("{}/dir0/l", s(d.path())),
        "40",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    use std::os::unix::fs::MetadataExt;
    assert_eq!(std::fs::metadata(&target).unwrap().nlink(), 41);

    // Keep every file open, then close them all.
    let o = lab.run(&[
        "createmany",
        "-o",
        "-k",
        &format!("{}/dir1/k", s(d.path())),
        "500",
    ]);
    let out = stdout(&o);
    assert_eq!(total_line(&out).1, "open/keep");
    assert!(
        out.lines().any(|l| l.starts_with("total: 500 close in ")),
        "{out}"
    );

    // Threads, in one directory and one each.
    let o = lab.run(&[
        "createmany",
        "-m",
        "--threads",
        "4",
        &format!("{}/dir2/t", s(d.path())),
        "1000",
    ]);
    assert_eq!(total_line(&stdout(&o)).0, 1000);
    assert_eq!(count_files(&d.path().join("dir2")), 1000);
    let o = lab.run(&[
        "createmany",
        "-m",
        "--threads",
        "3",
        "--dir-per-thread",
        &format!("{}/dir3/t", s(d.path())),
        "300",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    for t in 0..3 {
        assert_eq!(count_files(&d.path().join(format!("dir3/t{t}"))), 100);
    }
    // The store has the rate and the latency of mknod.
    let v: serde_json::Value =
        serde_json::from_slice(&lab.run(&["results", "export", "1"]).stdout).unwrap();
    assert_eq!(v["run"]["workload"], "createmany");
    assert_eq!(v["phases"][0]["ops"], 25000);
    assert_eq!(v["latency"][0]["op"], "mknod");
}

#[test]
fn createmany_open_options_shape_the_files() {
    if !privileged("ext4 on a loop device") {
        return;
    }
    let fs = LoopFs::new(FsType::Ext4, 256 << 20, &[]);
    let lab = Lab::new();
    let f = format!("{}/x", s(fs.path()));
    let o = lab.run(&[
        "createmany",
        "-o",
        "-x",
        "100",
        "-W",
        "1000",
        "-S",
        "5000",
        "-U",
        "1234",
        "-G",
        "4321",
        &f,
        "20",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(format!("{f}7")).unwrap();
    assert_eq!(
        m.len(),
        5005,
        "-S 5000 writes 5 bytes at 5000; -W 1000 writes 1000 at the start"
    );
    assert_eq!((m.uid(), m.gid()), (1234, 4321));
    let mut buf = vec![0u8; 512];
    let n = rustix::fs::getxattr(format!("{f}7").as_str(), "user.fslab", &mut buf).unwrap();
    assert_eq!(n, 100);
}

#[test]
fn createmany_time_limit_progress_and_errors() {
    let lab = Lab::new();
    let d = shm();
    let f = format!("{}/f", s(d.path()));
    let t = std::time::Instant::now();
    let o = lab.run(&["createmany", "-o", "-u", "-t", "3", &f]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(t.elapsed().as_secs_f64() < 6.0);
    let out = stdout(&o);
    let progress: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with(" - open/close/unlink "))
        .collect();
    assert!(!progress.is_empty(), "{out}");
    // As createmany: at every multiple of 10000 names (once 2 s have gone
    // by), with the time, the seconds since the start and the rate since
    // the line before.
    let mut last_total = 0.0;
    for l in progress {
        let f: Vec<&str> = l.split_whitespace().collect();
        assert_eq!((f[3], f[5], f[7]), ("(time", "total", "last"), "{l}");
        let n: u64 = f[2].parse().unwrap();
        assert_eq!(n % 10_000, 0, "{l}");
        let total: f64 = f[6].parse().unwrap();
        assert!(total >= 2.0 && total >= last_total && total < 4.0, "{l}");
        last_total = total;
        assert!(
            f[8].trim_end_matches(')').parse::<f64>().unwrap() > 0.0,
            "{l}"
        );
    }
    let cases: &[(&[&str], &str)] = &[
        (
            &["createmany", "-m", "/dev/shm/%d%d", "5"],
            "more than one conversion",
        ),
        (&["createmany", "-m", "/dev/shm/%s", "5"], "%s"),
        (&["createmany", "-m", "-k", "/dev/shm/f", "5"], "need -o"),
        (&["createmany", "-m", "/dev/shm/f", "0"], "COUNT 0"),
        (&["createmany", "-m", "/dev/shm/f"], "COUNT"),
        (&["createmany", "/dev/shm/f", "5"], "-o, -m, -d"),
        (
            &["createmany", "-l", "/nonexistent", "/dev/shm/f", "5"],
            "/nonexistent",
        ),
        (
            &["createmany", "-m", "/nonexistent/dir/f", "5"],
            "/nonexistent/dir",
        ),
        (&["createmany", "-m", "/dev/shm/f", "many"], "many"),
    ];
    for (args, want) in cases {
        let o = lab.run(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
        assert!(stderr(&o).contains(want), "{args:?}: {}", stderr(&o));
    }
}

#[test]
fn createmany_enospc_keeps_the_partial_result() {
    if !privileged("a tmpfs with an inode limit") {
        return;
    }
    let t = Tmpfs::mount("size=8m,nr_inodes=80");
    let lab = Lab::new();
    let o = lab.run(&["createmany", "-m", &format!("{}/f", s(t.path())), "1000"]);
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    assert!(
        out.contains("mknod(") && out.contains("No space left on device"),
        "{out}"
    );
    let (n, _, _) = total_line(&out);
    assert!(n > 0 && n < 1000);
    assert_eq!(count_files(t.path()), n as usize);
    let v: serde_json::Value =
        serde_json::from_slice(&lab.run(&["results", "export", "1"]).stdout).unwrap();
    assert_eq!(v["run"]["status"], "failed");
    assert_eq!(v["phases"][0]["ops"], n);
}

/// The rows of tiotest's first table: (item, MBs, secs, rate).
fn tio_rows(out: &str) -> Vec<(String, f64, f64, f64)> {
    out.lines()
        .filter(|l| l.starts_with("| ") && l.contains(" MBs |"))
        .map(|l| {
            assert_eq!(l.len(), 72.max(l.len()), "{l}");
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            let (item, mbs) = cells[1]
                .rsplit_once(' ')
                .map(|(a, _)| a.rsplit_once(' ').unwrap())
                .unwrap();
            (
                item.trim().to_string(),
                mbs.parse().unwrap(),
                cells[2].trim_end_matches(" s").parse().unwrap(),
                cells[3].trim_end_matches(" MB/s").parse().unwrap(),
            )
        })
        .collect()
}

#[test]
fn tiotest_tables_and_options() {
    let lab = Lab::new();
    let d = shm();
    let o = lab.run(&[
        "tiotest",
        "-t",
        "2",
        "-f",
        "4",
        "-r",
        "256",
        "-b",
        "4096",
        "-d",
        &s(d.path()),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "Tiotest results for 2 concurrent io threads:");
    assert_eq!(
        lines[1],
        ",----------------------------------------------------------------------."
    );
    assert_eq!(
        lines[2],
        "| Item                  | Time     | Rate         | Usr CPU  | Sys CPU |"
    );
    let rows = tio_rows(&out);
    let items: Vec<&str> = rows.iter().map(|r| r.0.as_str()).collect();
    assert_eq!(items, ["Write", "Random Write", "Read", "Random Read"]);
    assert_eq!(rows[0].1, 8.0, "2 threads x 4 MB");
    assert_eq!(rows[1].1, 2.0, "2 threads x 256 x 4 KiB");
    assert!(
        lines[4].starts_with("| Write           8 MBs | "),
        "{}",
        lines[4]
    );
    assert!(out.contains("Tiotest latency results:"));
    let lat: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("| ") && l.matches(" ms |").count() == 2)
        .collect();
    assert_eq!(lat.len(), 5, "four tests and the total: {out}");
    assert!(lat[4].starts_with("| Total        |"));
    assert!(out.contains("fslab latency percentiles:"));
    assert_eq!(
        std::fs::read_dir(d.path()).unwrap().count(),
        0,
        "tiotest removes its files"
    );

    // Skips, terse output, mmap, sequential writers, no latency table.
    let o = lab.run(&[
        "tiotest",
        "-t",
        "2",
        "-f",
        "2",
        "-r",
        "16",
        "-d",
        &s(d.path()),
        "-k",
        "1",
        "-k",
        "3",
        "-T",
        "-M",
        "-W",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let t: Vec<String> = stdout(&o)
        .lines()
        .map(|l| l.split(':').next().unwrap().to_string())
        .collect();
    assert_eq!(t, ["write", "read", "total"]);
    assert_eq!(stdout(&o).lines().next().unwrap().split(',').count(), 8);
    let o = lab.run(&["tiotest", "-t", "1", "-f", "1", "-d", &s(d.path()), "-L"]);
    assert!(!stdout(&o).contains("latency"), "{}", stdout(&o));

    let v: serde_json::Value =
        serde_json::from_slice(&lab.run(&["results", "export", "1"]).stdout).unwrap();
    let phases = phase_names(&v);
    assert_eq!(phases, ["write", "random_write", "read", "random_read"]);
    assert_eq!(v["phases"][0]["bytes"], 8 << 20);

    let cases: &[(&[&str], &str)] = &[
        (
            &["tiotest", "-f", "1", "-b", "2097152", "-d", "/dev/shm"],
            "larger than each file",
        ),
        (&["tiotest", "-t", "0", "-d", "/dev/shm"], "-t 0"),
        (&["tiotest", "-k", "7", "-d", "/dev/shm"], "-k 7"),
        (&["tiotest", "-d", "/nonexistent"], "/nonexistent"),
        (&["tiotest", "-X", "-b", "1000", "-d", "/dev/shm"], "512"),
    ];
    for (args, want) in cases {
        let o = lab.run(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(
            stderr(&o).contains(want) && stderr(&o).lines().count() == 1,
            "{args:?}: {}",
            stderr(&o)
        );
    }
}

#[test]
fn tiotest_direct_and_sync_io_on_ext4() {
    if !privileged("ext4 on a loop device") {
        return;
    }
    let fs = LoopFs::new(FsType::Ext4, 256 << 20, &[]);
    let lab = Lab::new();
    let o = lab.run(&[
        "tiotest",
        "-t",
        "2",
        "-f",
        "4",
        "-r",
        "64",
        "-d",
        &s(fs.path()),
        "-X",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(tio_rows(&stdout(&o)).len(), 4);
    let o = lab.run(&[
        "tiotest",
        "-t",
        "1",
        "-f",
        "1",
        "-r",
        "16",
        "-d",
        &s(fs.path()),
        "-S",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn alloctest_prints_the_seeds_lines_and_counts_extents() {
    if !privileged("ext3 and ext4 on loop devices") {
        return;
    }
    let fs = LoopFs::new(FsType::Ext4, 256 << 20, &[]);
    let lab = Lab::new();
    let big = fs.path().join("big");
    let o = lab.run(&["alloctest", "-t", &s(&big), "8M"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines[0].starts_with("streaming touched 2048 pages in "),
        "{out}"
    );
    assert!(
        lines[1].starts_with("touched 2048 pages in ") && lines[1].ends_with(" MB/s)"),
        "{out}"
    );
    for (i, start) in [
        "msync took ",
        "munmap took ",
        "close took ",
        "total throughput ",
    ]
    .iter()
    .enumerate()
    {
        assert!(lines[2 + i].starts_with(start), "{out}");
    }
    // filefrag's line, then the kernel's records and the seed's perfection.
    assert!(
        lines[6].starts_with(&format!("{}: ", big.display())) && lines[6].contains(" found"),
        "{out}"
    );
    let records = lines[7];
    let n: u64 = records.split_whitespace().nth(1).unwrap().parse().unwrap();
    assert!(
        records.starts_with(&format!("{}: ", big.display()))
            && records.contains(" FIEMAP record")
            && records.contains(", perfection would be "),
        "{records}"
    );
    let f = std::fs::File::open(&big).unwrap();
    let kernel = fslab_sys::fiemap::fiemap(std::os::fd::AsFd::as_fd(&f), 0, |_| {}).unwrap();
    assert_eq!(n, kernel);
    assert!(
        lines[8].starts_with("8388608 bytes (0.0 GB, 0.0 GiB) copied, "),
        "{out}"
    );
    let v: serde_json::Value =
        serde_json::from_slice(&lab.run(&["results", "export", "1"]).stdout).unwrap();
    let phases = phase_names(&v);
    assert_eq!(phases, ["stream", "touch", "msync", "readback"]);

    // posix_fallocate works on ext3 too, where it must write every block.
    let ext3 = LoopFs::new(FsType::Ext3, 256 << 20, &[]);
    let o = lab.run(&[
        "alloctest",
        "--fallocate",
        "-w",
        &s(&ext3.path().join("f")),
        "4M",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        !stdout(&o).contains("streaming"),
        "-w alone does not print the streaming line"
    );
    for (args, want) in [
        (vec!["alloctest", &s(&big) as &str, "8M"], "already exists"),
        (vec!["alloctest", "/dev/shm/x", "12Q"], "12Q"),
        (vec!["alloctest", "/dev/shm/x", "100"], "one page"),
    ] {
        let o = lab.run(&args);
        assert_eq!(o.status.code(), Some(2));
        assert!(stderr(&o).contains(want), "{}", stderr(&o));
    }
}

#[test]
fn crc32c_self_test_passes_with_the_standard_vectors() {
    let lab = Lab::new();
    let o = lab.run(&["crc32c", "--chunks", "300"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert!(!lines.is_empty());
    for l in &lines {
        let f: Vec<&str> = l.split_whitespace().collect();
        assert_eq!(&f[..3], ["crc32c:", "tests", "passed,"], "{l}");
        assert_eq!((f[4], f[5], f[7]), ("bytes", "in", "usec"), "{l}");
        assert!(f[3].parse::<u64>().unwrap() > 300);
    }
    assert!(lines[0].contains("software"));
    let o = lab.run(&["crc32c", "--chunks", "0"]);
    assert_eq!(o.status.code(), Some(2));
}

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
fn compilebench_makes_patches_compiles_reads_and_deletes_trees() {
    let lab = Lab::new();
    let d = shm();
    // A small tree to model: three files of known sizes.
    let model = lab.path("model");
    std::fs::create_dir_all(model.join("drivers/net")).unwrap();
    std::fs::write(model.join("Makefile"), vec![b'm'; 700]).unwrap();
    std::fs::write(model.join("drivers/net/e1000.c"), vec![b'c'; 5000]).unwrap();
    std::fs::write(model.join("drivers/net/e1000.h"), vec![b'h'; 1200]).unwrap();
    let o = lab.run(&[
        "compilebench",
        "-D",
        &s(d.path()),
        "-i",
        "3",
        "-r",
        "0",
        "-n",
        "--tree-from",
        &s(&model),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.starts_with(&format!(
            "using working directory {}, 3 intial dirs 0 runs\n",
            d.path().display()
        )),
        "{out}"
    );
    assert!(out.contains("intial create total runs 3 avg "), "{out}");
    for t in 0..3 {
        let root = d.path().join(format!("kernel-{t}"));
        assert_eq!(
            std::fs::metadata(root.join("drivers/net/e1000.c"))
                .unwrap()
                .len(),
            5000
        );
        assert_eq!(std::fs::metadata(root.join("Makefile")).unwrap().len(), 700);
        assert_eq!(count_files(&root), 3);
    }
    // Random operations: every kind appears with enough runs, trees change as they say.
    let d2 = shm();
    let o = lab.run(&[
        "compilebench",
        "-D",
        &s(d2.path()),
        "-i",
        "4",
        "-r",
        "60",
        "-n",
        "--tree-from",
        &s(&model),
        "--seed",
        "7",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let table: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.starts_with("test "))
        .collect();
    assert_eq!(table[1], "=".repeat(48));
    let runs: u64 = table[2..]
        .iter()
        .map(|l| l[24..30].trim().parse::<u64>().unwrap())
        .sum();
    assert_eq!(runs, 64, "{out}");
    for kind in [
        "create",
        "patch",
        "compile",
        "read tree",
        "delete tree",
        "stat tree",
    ] {
        assert!(
            table.iter().any(|l| l.starts_with(kind)),
            "no {kind} row: {out}"
        );
    }
    let v: serde_json::Value =
        serde_json::from_slice(&lab.run(&["results", "export", "2"]).stdout).unwrap();
    let res = v["run"]["params"].clone();
    assert_eq!(res["tree_files"], 3);
    // Every tree keeps the model's files; a deleted tree is left an empty
    // directory, as compilebench's rmrf leaves it.
    for e in std::fs::read_dir(d2.path()).unwrap().flatten() {
        let root = e.path();
        if std::fs::read_dir(&root).unwrap().next().is_none() {
            continue;
        }
        assert!(
            root.join("drivers/net/e1000.h").exists() && root.join("Makefile").exists(),
            "{}",
            root.display()
        );
    }
    the_same_seed_makes_the_same_choices(&lab, &model, &out);
    compilebench_refuses_bad_input(&lab);
}

/// `--seed 7` twice: the same operations in the same order.
fn the_same_seed_makes_the_same_choices(lab: &Lab, model: &std::path::Path, out: &str) {
    let same = lab.run(&[
        "compilebench",
        "-D",
        &s(shm().path()),
        "-i",
        "4",
        "-r",
        "60",
        "-n",
        "--tree-from",
        &s(model),
        "--seed",
        "7",
        "--cleanup",
    ]);
    let rows = |t: &str| {
        t.lines()
            .skip_while(|l| !l.starts_with("test "))
            .map(|l| l.get(..30).unwrap_or(l).to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        rows(&stdout(&same)),
        rows(out),
        "the same seed makes the same choices"
    );
}

/// Bad options: one line naming the value, exit 2.
fn compilebench_refuses_bad_input(lab: &Lab) {
    for (args, want) in [
        (vec!["compilebench", "-D", "/nonexistent"], "/nonexistent"),
        (vec!["compilebench", "-D", "/dev/shm", "-i", "-1"], "-i -1"),
        (vec!["compilebench", "-D", "/dev/shm", "-b", "0"], "-b 0"),
        (
            vec![
                "compilebench",
                "-D",
                "/dev/shm",
                "--tree-from",
                "/nonexistent",
            ],
            "--tree-from",
        ),
    ] {
        let o = lab.run(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(stderr(&o).contains(want), "{}", stderr(&o));
    }
}

/// fsmark's stat and unlink walks, and every phase of tiotest, print
/// nothing while they run: on a terminal they show a count on stderr,
/// erased when the phase ends.
#[test]
fn silent_phases_show_a_count_on_a_terminal_only() {
    if !need_tool("script") {
        return;
    }
    let lab = Lab::new();
    let d = shm();
    let args = |db: &str| {
        format!(
            "{} --db {db} fsmark -d {} -n 3000 -s 0 -S0 -L 2 --phases create,stat,unlink -l /dev/null --probes none",
            assert_cmd::cargo::cargo_bin("fslab").display(),
            d.path().join("w").display()
        )
    };
    // `script` gives the command a terminal and copies what it wrote.
    let o = std::process::Command::new("script")
        .args(["-qec", &args(&s(&lab.db())), "/dev/null"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let tty = stdout(&o);
    for phase in ["stat", "unlink"] {
        assert!(
            tty.contains(&format!("\r\x1b[K{phase}: 6000 done, ")),
            "{tty:?}"
        );
    }
    assert!(!tty.contains("create: "), "{tty:?}");
    // Erased before the phase summary.
    assert!(tty.contains("\r\x1b[K#"), "{tty:?}");
    // tiotest: every phase counts its blocks (2 threads x 1 MiB of 4 KiB
    // blocks sequentially, 2 x 50 at random), and its tables follow.
    let tio = format!(
        "{} --db {} tiotest -t 2 -f 1 -r 50 -d {} --probes none",
        assert_cmd::cargo::cargo_bin("fslab").display(),
        s(&lab.db()),
        d.path().display()
    );
    let o = std::process::Command::new("script")
        .args(["-qec", &tio, "/dev/null"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let tty = stdout(&o);
    for (phase, n) in [
        ("write", 512),
        ("random_write", 100),
        ("read", 512),
        ("random_read", 100),
    ] {
        assert!(
            tty.contains(&format!("\r\x1b[K{phase}: {n} done, ")),
            "{tty:?}"
        );
    }
    assert!(tty.contains("\r\x1b[KTiotest results"), "{tty:?}");
    // Not on a pipe.
    let o = lab.run(&[
        "fsmark",
        "-d",
        &s(&d.path().join("p")),
        "-n",
        "300",
        "-s",
        "0",
        "-S0",
        "--phases",
        "create,stat",
        "-l",
        "/dev/null",
        "--probes",
        "none",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stderr(&o).contains("stat: "), "{}", stderr(&o));
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
