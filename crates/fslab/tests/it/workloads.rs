//! createmany, tiotest and alloctest through the real binary, on tmpfs and
//! on real filesystems on loop devices.

use fslab_lab::mkfs::FsType;

use crate::support::*;

pub(crate) fn shm() -> tempfile::TempDir {
    tempfile::tempdir_in("/dev/shm").unwrap()
}

pub(crate) fn s(p: &std::path::Path) -> String {
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
    // Links past what one inode takes (ext4: 65,000): a new target, made
    // in turn, every N names.
    let turned = d.path().join("turned");
    let o = lab.run(&[
        "createmany",
        "-l",
        &s(&turned),
        "--links-per-target",
        "15",
        "--threads",
        "2",
        &format!("{}/dir1/t", s(d.path())),
        "40",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let nlink = |k: u32| {
        std::fs::metadata(d.path().join(format!("turned.{k}")))
            .unwrap()
            .nlink()
    };
    assert_eq!((nlink(0), nlink(1), nlink(2)), (16, 16, 11));
    assert!(!turned.exists());
    let o = lab.run(&["createmany", "-m", "--links-per-target", "5", "x", "1"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--links-per-target needs -l TARGET"),
        "{}",
        stderr(&o)
    );

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
