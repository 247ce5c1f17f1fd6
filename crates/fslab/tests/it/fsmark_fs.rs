//! `fslab fsmark` on real filesystems: ext4 on a loop device, and tmpfs
//! mounts with limits for full-filesystem behaviour (root needed).

use fslab_lab::mkfs::FsType;

use crate::support::*;

#[test]
fn runs_on_ext4_on_a_loop_device_with_every_sync_method() {
    if !privileged("ext4 on a loop device") {
        return;
    }
    let fs = LoopFs::new(FsType::Ext4, 256 << 20, &[]);
    let lab = Lab::new();
    for method in 0..=6 {
        let dir = fs.path().join(format!("s{method}"));
        let m = method.to_string();
        let o = lab.run(&[
            "fsmark",
            "-d",
            dir.to_str().unwrap(),
            "-n",
            "40",
            "-s",
            "4096",
            "-S",
            &m,
            "-k",
            "-D",
            "2",
            "-N",
            "7",
        ]);
        assert!(o.status.success(), "-S {method}: {}", stderr(&o));
        assert_eq!(count_files(&dir), 40, "-S {method}");
    }
    let o = lab.run(&["results", "show", "1"]);
    let text = stdout(&o);
    assert!(text.contains("ext4"), "{text}");
    assert!(
        text.contains(fs.dev_path().to_str().unwrap()),
        "the run records its loop device: {text}"
    );
    let v: serde_json::Value =
        serde_json::from_slice(&lab.run(&["results", "export", "7"]).stdout).unwrap();
    assert_eq!(v["run"]["fs_type"], "ext4");
    // fsync happened: -S 6 recorded sync and fsync latencies.
    let ops: Vec<&str> = v["latency"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["op"].as_str().unwrap())
        .collect();
    assert!(ops.contains(&"sync") && ops.contains(&"fsync"), "{ops:?}");
}

#[test]
fn enospc_mid_run_stops_with_the_partial_result_kept() {
    if !privileged("a tmpfs with an inode limit") {
        return;
    }
    let t = Tmpfs::mount("size=16m,nr_inodes=60");
    let lab = Lab::new();
    let dir = t.path().join("d");
    let o = lab.run(&[
        "fsmark",
        "-d",
        dir.to_str().unwrap(),
        "-n",
        "100",
        "-s",
        "0",
        "-S",
        "0",
        "-L",
        "3",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("No space left on device") && err.contains("kept as run 1"),
        "{err}"
    );
    let out = stdout(&o);
    let row = out.lines().last().unwrap();
    let created: usize = row.split_whitespace().nth(1).unwrap().parse().unwrap();
    assert!(created > 0 && created < 100, "{row}");
    assert_eq!(count_files(&dir), created);
    let v: serde_json::Value =
        serde_json::from_slice(&lab.run(&["results", "export", "1"]).stdout).unwrap();
    assert_eq!(v["run"]["status"], "failed");
    assert!(v["run"]["error"]
        .as_str()
        .unwrap()
        .contains("No space left"));
    let loops = crate::support::loops(&v);
    assert_eq!(loops[0].files, created as u64, "{v}");
    assert!(!loops[0].complete, "{v}");
}

#[test]
fn fill_mode_runs_until_the_filesystem_is_full() {
    if !privileged("a tmpfs with an inode limit") {
        return;
    }
    let t = Tmpfs::mount("size=16m,nr_inodes=130");
    let lab = Lab::new();
    let dir = t.path().join("d");
    let o = lab.run(&[
        "fsmark",
        "-d",
        dir.to_str().unwrap(),
        "-n",
        "50",
        "-s",
        "0",
        "-S",
        "0",
        "-F",
    ]);
    assert!(
        o.status.success(),
        "filling the filesystem is -F's normal end: {}",
        stderr(&o)
    );
    assert!(stderr(&o).contains("filesystem full"), "{}", stderr(&o));
    let rows: Vec<String> = stdout(&o)
        .lines()
        .filter(|l| l.starts_with(' '))
        .map(String::from)
        .collect();
    assert_eq!(rows.len(), 3, "two full loops and a partial one: {rows:?}");
    let last: usize = rows[2].split_whitespace().nth(1).unwrap().parse().unwrap();
    assert_eq!(count_files(&dir), last);
    // Insufficient space for the next loop's data ends -F runs too.
    let t = Tmpfs::mount("size=1m");
    let dir = t.path().join("e");
    let o = lab.run(&[
        "fsmark",
        "-d",
        dir.to_str().unwrap(),
        "-n",
        "10",
        "-s",
        "40k",
        "-S",
        "0",
        "-F",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("Insufficient free space in"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn a_read_only_directory_is_bad_input() {
    if !privileged("a read-only tmpfs") {
        return;
    }
    let t = Tmpfs::mount("ro,size=1m");
    let lab = Lab::new();
    let o = lab.run(&["fsmark", "-d", t.path().to_str().unwrap(), "-n", "1"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("not writable"), "{}", stderr(&o));
}
