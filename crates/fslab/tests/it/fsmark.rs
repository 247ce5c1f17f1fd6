//! `fslab fsmark` on tmpfs: output format, sync methods, subdirectory
//! modes, phases, Ctrl-C and bad input.

use std::path::Path;

use crate::support::*;

fn shm() -> tempfile::TempDir {
    tempfile::tempdir_in("/dev/shm").unwrap()
}

fn d(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Splits a data row at fs_mark's printf widths: %6u %12u %12u %12.1f %16llu.
fn columns(row: &str) -> Vec<&str> {
    assert!(row.len() >= 62, "row too short: {row:?}");
    let cols = vec![
        &row[0..6],
        &row[7..19],
        &row[20..32],
        &row[33..45],
        &row[46..62],
    ];
    for (i, c) in cols.iter().enumerate() {
        assert!(
            !c.starts_with(' ') || c.trim_start().len() < c.len(),
            "column {i} of {row:?}"
        );
        assert!(
            !c.trim().is_empty() && !c.trim().contains(' '),
            "column {i} of {row:?} is not right-aligned in its width"
        );
    }
    cols
}

#[test]
fn output_matches_fs_mark_line_by_line() {
    let lab = Lab::new();
    let dir = shm();
    let a = dir.path().join("a");
    let o = lab.run(&[
        "fsmark",
        "-d",
        d(&a),
        "-n",
        "100",
        "-s",
        "0",
        "-S0",
        "-L",
        "2",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "");
    assert!(
        lines[1].starts_with("#  ")
            && lines[1].contains(" fsmark  -d  ")
            && lines[1].ends_with(" -L  2 "),
        "{:?}",
        lines[1]
    );
    let v = lines[2]
        .strip_prefix("#\tVersion 3.3, 1 thread(s) starting at ")
        .expect(lines[2]);
    assert_eq!(v.split_whitespace().count(), 5, "ctime has 5 fields: {v:?}");
    assert_eq!(
        lines[3],
        "#\tSync method: NO SYNC: Test does not issue sync() or fsync() calls."
    );
    assert_eq!(lines[4], "#\tDirectories:  no subdirectories used");
    assert!(
        lines[5].starts_with("#\tFile names: 40 bytes long, (16 initial bytes: the time stamp in "),
        "{}",
        lines[5]
    );
    assert_eq!(
        lines[6],
        "#\tFiles info: size 0 bytes, written with an IO size of 16384 bytes per write"
    );
    assert_eq!(
        lines[7],
        "#\tApp overhead is time in microseconds spent in the test not doing file writing related system calls."
    );
    assert_eq!(lines[8], "");
    assert_eq!(
        lines[9],
        "FSUse%        Count         Size    Files/sec     App Overhead"
    );
    assert_eq!(lines.len(), 12, "{out}");
    for (i, row) in lines[10..].iter().enumerate() {
        let c = columns(row);
        assert_eq!(
            c[1].trim(),
            ((i + 1) * 100).to_string(),
            "Count is cumulative"
        );
        assert_eq!(c[2].trim(), "0");
        let rate: f64 = c[3].trim().parse().unwrap();
        assert!(rate > 0.0 && c[3].trim().split('.').nth(1).unwrap().len() == 1);
        c[4].trim().parse::<u64>().unwrap();
    }
    assert_eq!(count_files(&a), 200);

    // The log file gets the same lines, with fs_mark's extra "#" before the column header.
    let log = std::fs::read_to_string(lab.path("fs_log.txt")).unwrap();
    let log_lines: Vec<&str> = log.lines().collect();
    assert_eq!(log_lines[8], "#");
    assert_eq!(&log_lines[9..], &lines[9..]);
    // ...and appended to on the next run.
    assert!(lab
        .run(&["fsmark", "-d", d(&a), "-n", "10", "-s", "0", "-S0", "-k"])
        .status
        .success());
    let log2 = std::fs::read_to_string(lab.path("fs_log.txt")).unwrap();
    assert!(log2.starts_with(&log) && log2.len() > log.len());
}

#[test]
fn verbose_adds_call_columns() {
    let lab = Lab::new();
    let dir = shm();
    let o = lab.run(&[
        "fsmark",
        "-d",
        d(dir.path()),
        "-n",
        "50",
        "-s",
        "8192",
        "-w",
        "4096",
        "-S",
        "1",
        "-v",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[8],
        "#\tAll system call times are reported in microseconds."
    );
    let header = lines[10];
    assert!(header.starts_with(
        "FSUse%        Count         Size    Files/sec     App Overhead        CREAT (Min/Avg/Max)"
    ));
    assert!(header.ends_with("       UNLINK (Min/Avg/Max)"));
    let row = lines[11];
    assert_eq!(row.split_whitespace().count(), 23, "{row}");
    columns(row);
    // Without -k the files are unlinked after the loop, so UNLINK has a maximum.
    let unlink_max: u64 = row.split_whitespace().last().unwrap().parse().unwrap();
    let _ = unlink_max;
    assert_eq!(count_files(dir.path()), 0);
}

#[test]
fn every_sync_method_leaves_the_right_files() {
    let dir = shm();
    for method in 0..=6 {
        let lab = Lab::new();
        let a = dir.path().join(format!("s{method}a"));
        let b = dir.path().join(format!("s{method}b"));
        let m = method.to_string();
        let o = lab.run(&[
            "fsmark",
            "-d",
            d(&a),
            "-d",
            d(&b),
            "-t",
            "4",
            "-n",
            "30",
            "-s",
            "1000",
            "-w",
            "300",
            "-S",
            &m,
            "-k",
        ]);
        assert!(o.status.success(), "-S {method}: {}", stderr(&o));
        assert!(stdout(&o)
            .lines()
            .nth(3)
            .unwrap()
            .starts_with("#\tSync method: "));
        assert_eq!(count_files(&a) + count_files(&b), 4 * 30, "-S {method}");
        for e in std::fs::read_dir(&a).unwrap().flatten() {
            assert_eq!(e.metadata().unwrap().len(), 1000);
        }
        // Without -k every file is removed after its loop.
        let c = dir.path().join(format!("s{method}c"));
        assert!(lab
            .run(&["fsmark", "-d", d(&c), "-n", "20", "-s", "100", "-S", &m])
            .status
            .success());
        assert_eq!(count_files(&c), 0, "-S {method} without -k");
    }
}

#[test]
fn round_robin_subdirectories_take_n_files_each() {
    let lab = Lab::new();
    let dir = shm();
    let o = lab.run(&[
        "fsmark",
        "-d",
        d(dir.path()),
        "-D",
        "4",
        "-N",
        "10",
        "-n",
        "100",
        "-s",
        "0",
        "-S",
        "0",
        "-k",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains(
        "#\tDirectories:  Round Robin between directories across 4 subdirectories with 10 files per subdirectory."
    ));
    let mut counts: Vec<(String, usize)> = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                count_files(&e.path()),
            )
        })
        .collect();
    counts.sort();
    let names: Vec<&str> = counts.iter().map(|c| c.0.as_str()).collect();
    assert_eq!(names, ["00", "01", "02", "03"]);
    let mut n: Vec<usize> = counts.iter().map(|c| c.1).collect();
    n.sort();
    assert_eq!(n, [20, 20, 30, 30]);
}

#[test]
fn time_hash_moves_to_the_next_subdirectory_after_its_seconds() {
    let lab = Lab::new();
    let dir = shm();
    // One subdirectory for the whole (short) run with fs_mark's 180 s...
    let a = dir.path().join("a");
    let o = lab.run(&[
        "fsmark",
        "-d",
        d(&a),
        "-D",
        "3",
        "-n",
        "200",
        "-s",
        "0",
        "-S",
        "0",
        "-k",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("Time based hash between directories across 3 subdirectories with 180 seconds per subdirectory."));
    assert_eq!(std::fs::read_dir(&a).unwrap().count(), 1);
    assert_eq!(count_files(&a), 200);
    // ...and several when each subdirectory lasts 1 s and the run lasts over 3 s
    // (16 KiB files written one byte per call: about 10 ms a file).
    let b = dir.path().join("b");
    let o = lab.run(&[
        "fsmark",
        "-d",
        d(&b),
        "-D",
        "50",
        "--subdir-secs",
        "1",
        "-n",
        "400",
        "-s",
        "16384",
        "-w",
        "1",
        "-S",
        "0",
        "-k",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        std::fs::read_dir(&b).unwrap().count() >= 2,
        "the run should have moved on at least once"
    );
    assert_eq!(count_files(&b), 400);
}

#[test]
fn stat_and_unlink_phases_walk_everything_created() {
    let lab = Lab::new();
    let dir = shm();
    let a = dir.path().join("a");
    let b = dir.path().join("b");
    std::fs::create_dir(&a).unwrap();
    std::fs::write(a.join("notes.txt"), "not fs_mark's").unwrap();
    let o = lab.run(&[
        "fsmark",
        "-d",
        d(&a),
        "-d",
        d(&b),
        "-t",
        "4",
        "-n",
        "250",
        "-s",
        "0",
        "-S",
        "0",
        "-D",
        "3",
        "-N",
        "40",
        "--phases",
        "create,stat,unlink",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    for phase in ["create", "stat", "unlink"] {
        let line = out
            .lines()
            .find(|l| l.starts_with(&format!("#\t{phase} ")))
            .unwrap_or_else(|| panic!("no {phase} line in {out}"));
        let f: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(f[2], "1000", "{line}");
    }
    // Everything fsmark made is gone, including its subdirectories; the user's file stays.
    assert_eq!(std::fs::read_dir(&b).unwrap().count(), 0);
    let left: Vec<String> = std::fs::read_dir(&a)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, ["notes.txt"]);

    // The store has all three phases with their latency distributions.
    let o = lab.run(&["results", "export", "1", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let phases = phase_names(&v);
    assert_eq!(phases, ["create", "stat", "unlink"]);
    let ops: Vec<(String, String, u64)> = v["latency"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l["phase"].as_str().unwrap().into(),
                l["op"].as_str().unwrap().into(),
                l["count"].as_u64().unwrap(),
            )
        })
        .collect();
    assert!(
        ops.contains(&("create".into(), "creat".into(), 1000)),
        "{ops:?}"
    );
    assert!(
        ops.contains(&("stat".into(), "stat".into(), 1000)),
        "{ops:?}"
    );
    assert!(
        ops.contains(&("unlink".into(), "unlink".into(), 1000)),
        "{ops:?}"
    );
    // Each walk says how often a call got ENOMEM and was made again (none here).
    for phase in ["stat", "unlink"] {
        let m = v["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["phase"] == phase && m["name"] == "ENOMEM retries")
            .unwrap_or_else(|| panic!("no {phase} ENOMEM retries in {}", v["metrics"]));
        assert_eq!(m["value"], 0.0, "{m}");
    }
}

#[test]
fn json_report_has_loops_phases_and_latency() {
    let lab = Lab::new();
    let dir = shm();
    let o = lab.run(&[
        "fsmark",
        "-d",
        d(dir.path()),
        "-n",
        "300",
        "-s",
        "0",
        "-S",
        "0",
        "-L",
        "2",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value =
        serde_json::from_slice(&o.stdout).expect("stdout is one JSON document");
    let text = stdout(&o);
    assert!(
        text.starts_with(&format!(
            "{{\n  \"fslab_schema\": {},",
            fslab_model::json::SCHEMA_VERSION
        )),
        "the schema version comes first: {text}"
    );
    assert_eq!(v["run"]["status"], "complete");
    let loops = crate::support::loops(&v);
    assert_eq!(loops.len(), 2);
    assert_eq!(loops[1].count, 600);
    assert_eq!(v["phases"][0]["ops"], 300 * 2);
    assert_eq!(v["run"]["fs_type"], "tmpfs");
    let creat = v["latency"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["op"] == "creat")
        .unwrap();
    assert_eq!(creat["count"], 600);
    assert!(creat["p99_ns"].as_u64().unwrap() >= creat["p50_ns"].as_u64().unwrap());
}

#[test]
fn ctrl_c_stops_cleanly_and_keeps_what_was_measured() {
    let lab = Lab::new();
    let dir = shm();
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("fslab"))
        .current_dir(lab.tmp.path())
        .args([
            "--db",
            d(&lab.db()),
            "fsmark",
            "-d",
            d(dir.path()),
            "-n",
            "20000",
            "-s",
            "0",
            "-S",
            "0",
            "-L",
            "100000",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(2500));
    rustix::process::kill_process(
        rustix::process::Pid::from_child(&child),
        rustix::process::Signal::INT,
    )
    .unwrap();
    let start = std::time::Instant::now();
    let out = child.wait_with_output().unwrap();
    assert!(
        start.elapsed().as_secs() < 10,
        "fslab took too long to stop"
    );
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    let text = stdout(&out);
    let rows: Vec<&str> = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty() && !l.starts_with("FSUse%"))
        .collect();
    assert!(
        !rows.is_empty(),
        "rows printed before the interrupt: {text}"
    );
    assert!(stderr(&out).contains("interrupted"), "{}", stderr(&out));
    assert_eq!(stderr(&out).lines().count(), 1);

    let v: serde_json::Value =
        serde_json::from_slice(&lab.run(&["results", "export", "1"]).stdout).unwrap();
    assert_eq!(v["run"]["status"], "interrupted");
    let metrics: Vec<fslab_model::Metric> = serde_json::from_value(v["metrics"].clone()).unwrap();
    assert_eq!(
        fslab_model::LoopRow::from_metrics(&metrics).len(),
        rows.len(),
        "every printed row is stored"
    );
    assert!(
        !v["series"].as_array().unwrap().is_empty(),
        "per-second series stored"
    );
    let last = rows
        .last()
        .unwrap()
        .split_whitespace()
        .nth(1)
        .unwrap()
        .parse::<usize>()
        .unwrap();
    assert_eq!(
        count_files(dir.path()),
        last,
        "the files on disk are the files counted"
    );
}

#[test]
fn bad_input_gets_one_line_and_status_2() {
    let lab = Lab::new();
    let dir = shm();
    let p = d(dir.path());
    let cases: &[(&[&str], &str)] = &[
        (&["fsmark", "-d", p, "-S", "7"], "-S 7"),
        (&["fsmark", "-d", p, "-n", "0"], "-n 0"),
        (&["fsmark", "-d", p, "-n", "-5"], "-n -5"),
        (&["fsmark", "-d", p, "-n", "many"], "many"),
        (&["fsmark", "-d", p, "-t", "5000"], "-t 5000"),
        (&["fsmark", "-d", p, "-s", "12Q"], "12Q"),
        (&["fsmark", "-d", p, "-w", "2M"], "-w 2097152"),
        (&["fsmark", "-d", p, "-D", "1"], "-D 1"),
        (&["fsmark", "-d", p, "-N", "5"], "-N needs -D"),
        (&["fsmark", "-d", p, "-r", "50"], "-r 50"),
        (&["fsmark", "-d", p, "--phases", "create,fly"], "fly"),
        (&["fsmark", "-d", "/nonexistent/x/y"], "/nonexistent/x/y"),
        (
            &["fsmark", "-d", p, "-l", "/nonexistent/dir/log"],
            "/nonexistent/dir/log",
        ),
        (&["fsmark", "-d", p, "-Z"], "-Z"),
        (&["fsmark"], "-d"),
        (&["results", "show", "12"], "12"),
        (&["results", "export", "1", "--format", "xml"], "xml"),
    ];
    // Refused options make no store: none is left where there was none.
    for (args, _) in &cases[..cases.len() - 2] {
        let o = lab.run(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(!lab.db().exists(), "{args:?} left a store behind");
    }
    // A store must exist for the results cases.
    assert!(lab
        .run(&["fsmark", "-d", p, "-n", "1", "-s", "0", "-S", "0"])
        .status
        .success());
    for (args, bad) in cases {
        let o = lab.run(args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(
            err.lines().count(),
            1,
            "{args:?} should give one line: {err}"
        );
        assert!(
            err.starts_with("fslab: ") && err.contains(bad),
            "{args:?}: {err:?} should name {bad:?}"
        );
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn a_name_collision_is_refused_not_truncated() {
    let lab = Lab::new();
    let dir = shm();
    // -r 0: every file made in the same second gets the same name.
    let o = lab.run(&[
        "fsmark",
        "-d",
        d(dir.path()),
        "-n",
        "5",
        "-s",
        "10",
        "-r",
        "0",
        "-S",
        "0",
        "-k",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("File exists") && stderr(&o).contains("-r 1"),
        "{}",
        stderr(&o)
    );
    // The one file made is intact (fs_mark would have truncated and rewritten it).
    assert_eq!(count_files(dir.path()), 1);
}
