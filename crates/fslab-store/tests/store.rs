//! The store against a real SQLite file, through the Recorder trait.

use fslab_model::*;
use fslab_store::Store;

fn info() -> RunInfo {
    RunInfo {
        workload: "fsmark".into(),
        command_line: vec!["fslab".into(), "fsmark".into(), "-d".into(), "/x".into()],
        fslab_version: "0.1.0".into(),
        kernel: "6.18".into(),
        hostname: "h".into(),
        started_at: "2026-11-21T00:00:00Z".into(),
        target: TargetInfo {
            path: "/x".into(),
            fs_type: "tmpfs".into(),
            ..Default::default()
        },
        params: serde_json::json!({"files": 10}),
    }
}

#[test]
fn a_run_round_trips_and_survives_reopening() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sub/results.sqlite");
    let id;
    {
        let mut s = Store::open(&path).unwrap();
        id = s.begin_run(&info()).unwrap();
        let row = LoopRow {
            index: 0,
            count: 10,
            files: 10,
            files_per_sec: 123.5,
            complete: true,
            ..Default::default()
        };
        s.record_metrics(id, &row.metrics("fsmark")).unwrap();
        s.record_series(
            id,
            &SeriesPoint {
                phase_index: 0,
                t_s: 1.0,
                ops: 7,
                total_ops: 7,
            },
        )
        .unwrap();
        let mut h = LatencyHistogram::new();
        h.record(1500);
        h.record(2500);
        s.record_latency(id, "create", "creat", &h).unwrap();
        s.record_phase(
            id,
            &PhaseResult {
                phase: "create".into(),
                ops: 10,
                ..Default::default()
            },
        )
        .unwrap();
        // No finish_run: the process "died" here; everything so far must be kept.
    }
    let s = Store::open(&path).unwrap();
    assert_eq!(s.schema_version(), fslab_store::SCHEMA_VERSION);
    let runs = s.list_runs().unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].status, RunStatus::Running);
    assert_eq!(runs[0].command_line[1], "fsmark");
    let r = s.run(id).unwrap();
    assert_eq!(LoopRow::from_metrics(&r.metrics)[0].files_per_sec, 123.5);
    assert_eq!(r.series[0].ops, 7);
    assert_eq!(r.latency[0].count, 2);
    assert_eq!(r.latency[0].max_ns, 2500);
    assert_eq!(r.phases[0].phase, "create");
    let csv = r.to_csv();
    assert!(csv.starts_with("run_id,table,phase,op,index,metric,value\n"));
    assert!(
        csv.contains(&format!(
            "{id},metric,loop 0,fsmark,,Files/sec (files/s),123.5\n"
        )),
        "{csv}"
    );
    assert!(csv.contains(&format!("{id},latency,create,creat,,max_ns,2500\n")));
}

#[test]
fn finish_sets_status_and_missing_runs_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Store::open(&dir.path().join("r.sqlite")).unwrap();
    let id = s.begin_run(&info()).unwrap();
    s.finish_run(id, RunStatus::Interrupted, None).unwrap();
    let r = s.run(id).unwrap();
    assert_eq!(r.run.status, RunStatus::Interrupted);
    assert!(r.run.finished_at.is_some());
    assert_eq!(
        s.run(999).unwrap_err().to_string(),
        "no run with id 999 in the results store"
    );
}

#[test]
fn a_newer_schema_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.sqlite");
    drop(Store::open(&path).unwrap());
    let c = rusqlite::Connection::open(&path).unwrap();
    c.pragma_update(None, "user_version", 99).unwrap();
    drop(c);
    let e = Store::open(&path).err().unwrap().to_string();
    assert!(e.contains("newer fslab"), "{e}");
}

#[test]
fn experiments_keep_cells_and_repetitions() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Store::open(&dir.path().join("r.sqlite")).unwrap();
    assert_eq!(s.latest_experiment().unwrap(), None);
    let e = s
        .begin_experiment(&ExperimentInfo {
            name: "seed001".into(),
            file: "builtin:seed001".into(),
            text: "name = \"seed001\"".into(),
            scale: 0.01,
            repetitions: 2,
            command_line: vec![],
            fslab_version: "0".into(),
            kernel: "k".into(),
            hostname: "h".into(),
            started_at: "t".into(),
        })
        .unwrap();
    s.record_cell(
        e,
        &CellInfo {
            index: 0,
            label: "ext4".into(),
            fs_type: "ext4".into(),
            ..Default::default()
        },
    )
    .unwrap();
    let run = s.begin_run(&info()).unwrap();
    s.record_cell_run(
        e,
        &CellRunInfo {
            cell: 0,
            repetition: 1,
            run_id: Some(run),
            status: Some(RunStatus::Complete),
            unmount_s: Some(0.5),
            ..Default::default()
        },
    )
    .unwrap();
    // A warm-up (repetition 0): kept apart, never one of the cell's runs.
    let warm = s.begin_run(&info()).unwrap();
    s.record_cell_run(
        e,
        &CellRunInfo {
            cell: 0,
            repetition: fslab_model::WARM_UP,
            run_id: Some(warm),
            status: Some(RunStatus::Complete),
            ..Default::default()
        },
    )
    .unwrap();
    s.finish_experiment(e, RunStatus::Complete).unwrap();
    assert_eq!(s.latest_experiment().unwrap(), Some(e));
    let x = s.experiment(e).unwrap();
    assert_eq!(x.cell_runs.len(), 1, "{:?}", x.cell_runs);
    assert_eq!(x.warm_ups.len(), 1);
    assert_eq!(x.warm_ups[0].run_id, Some(warm));
    let listed = s.list_experiments().unwrap();
    assert_eq!((listed[0].runs, listed[0].completed), (1, 1));
    assert_eq!(
        (x.name.as_str(), x.status.as_str(), x.cells.len()),
        ("seed001", "complete", 1)
    );
    assert_eq!(x.cell_runs[0].run_id, Some(run));
    assert_eq!(x.cell_runs[0].unmount_s, Some(0.5));
}

#[test]
fn an_old_database_is_migrated_without_losing_runs() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.sqlite");
    {
        // A database as the first fslab wrote it: schema 1 and one run.
        let c = rusqlite::Connection::open(&path).unwrap();
        c.execute_batch(fslab_store::migration_sql(1).unwrap())
            .unwrap();
        c.pragma_update(None, "user_version", 1).unwrap();
        c.execute(
            "INSERT INTO runs (workload, command_line, fslab_version, kernel, hostname, started_at, status,
                target_path, fs_type, mount_source, mount_point, mount_options, params)
             VALUES ('fsmark', '[\"fslab\"]', '0.0.1', 'k', 'h', 't', 'complete', '/x', 'ext4', '/dev/loop0', '/x', 'rw', '{}')",
            [],
        )
        .unwrap();
    }
    let mut s = Store::open(&path).unwrap();
    assert_eq!(s.schema_version(), fslab_store::SCHEMA_VERSION);
    let runs = s.list_runs().unwrap();
    assert_eq!(
        (runs.len(), runs[0].fs_type.as_str(), runs[0].status),
        (1, "ext4", RunStatus::Complete)
    );
    // The new tables work on the old database.
    s.record_probe_points(
        runs[0].id,
        &[ProbePoint {
            phase_index: 0,
            t_s: 1.0,
            probe: "cpu".into(),
            metric: "sys_pct".into(),
            value: 50.0,
        }],
    )
    .unwrap();
    assert_eq!(s.probe_point_summary(runs[0].id).unwrap()[0].mean, 50.0);
}

#[test]
fn four_processes_opening_a_new_store_at_once_all_succeed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("new.sqlite");
    let barrier = std::sync::Arc::new(std::sync::Barrier::new(4));
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let (path, barrier) = (path.clone(), barrier.clone());
            std::thread::spawn(move || {
                barrier.wait();
                Store::open(&path).map(|s| s.schema_version())
            })
        })
        .collect();
    for h in handles {
        assert_eq!(
            h.join().unwrap().unwrap(),
            fslab_store::SCHEMA_VERSION,
            "every opener sees the whole schema"
        );
    }
}

#[test]
fn reading_opens_write_nothing_and_refuse_what_is_not_a_store() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.sqlite");
    std::fs::write(&empty, b"").unwrap();
    let e = Store::open_read(&empty).err().unwrap().to_string();
    assert!(e.contains("not an fslab results store"), "{e}");
    assert_eq!(
        std::fs::metadata(&empty).unwrap().len(),
        0,
        "no schema written"
    );
    let missing = dir.path().join("missing.sqlite");
    assert!(Store::open_read(&missing).is_err());
    assert!(!missing.exists());

    let path = dir.path().join("r.sqlite");
    let id = Store::open(&path).unwrap().begin_run(&info()).unwrap();
    let r = Store::open_read(&path).unwrap();
    assert_eq!(r.run(id).unwrap().run.workload, "fsmark");
}

#[test]
fn a_run_whose_process_died_is_marked_interrupted_on_the_next_open() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("d.sqlite");
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .unwrap()
        .trim()
        .to_string();
    let mine = RunInfo {
        hostname: host.clone(),
        ..info()
    };
    let (alive, dead) = {
        let mut s = Store::open(&path).unwrap();
        (s.begin_run(&mine).unwrap(), s.begin_run(&mine).unwrap())
    };
    // The second run's process is gone: a pid that cannot be alive.
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute("UPDATE runs SET pid = 999999999 WHERE id = ?1", [dead])
        .unwrap();
    let s = Store::open(&path).unwrap();
    assert_eq!(s.run(alive).unwrap().run.status, RunStatus::Running);
    let d = s.run(dead).unwrap().run;
    assert_eq!(d.status, RunStatus::Interrupted);
    assert!(d.error.unwrap_or_default().contains("pid 999999999"));
}

#[test]
fn probe_notes_keep_blobs_in_memory_and_spooled_ones_alike() {
    use std::io::{Seek, Write};
    let dir = tempfile::tempdir().unwrap();
    let mut s = Store::open(&dir.path().join("r.sqlite")).unwrap();
    let id = s.begin_run(&info()).unwrap();
    // 3 MiB that do not compress, spooled to an unnamed file.
    let data: Vec<u8> = (0..3u64 << 20)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    let mut f = tempfile::tempfile().unwrap();
    f.write_all(&data).unwrap();
    f.write_all(b"past the end").unwrap();
    f.rewind().unwrap();
    let note = |key: &str, blob| ProbeNote {
        phase_index: None,
        probe: "blockio".into(),
        key: key.into(),
        value: serde_json::json!({"kept": 1}),
        blob,
    };
    s.record_probe_note(
        id,
        &note(
            "events",
            Some(Blob::Spooled {
                file: std::sync::Arc::new(std::sync::Mutex::new(f)),
                len: data.len() as u64,
            }),
        ),
    )
    .unwrap();
    s.record_probe_note(id, &note("small", Some(Blob::Bytes(vec![1, 2, 3]))))
        .unwrap();
    s.record_probe_note(id, &note("none", None)).unwrap();
    let notes = s.probe_notes(id).unwrap();
    assert_eq!(notes.len(), 3);
    assert_eq!(notes[0].blob.as_deref(), Some(&data[..]));
    assert_eq!(notes[1].blob.as_deref(), Some(&[1u8, 2, 3][..]));
    assert_eq!(notes[2].blob, None);
    assert_eq!(notes[0].value, serde_json::json!({"kept": 1}));
}

#[test]
fn under_sudo_the_store_is_the_invoking_users() {
    use std::os::unix::fs::MetadataExt;
    let home = tempfile::tempdir().unwrap();
    let uid = std::fs::metadata(home.path()).unwrap().uid();
    let passwd = format!(
        "root:x:0:0:root:/root:/bin/bash\nalice:x:{uid}:{uid}:Alice:{}:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
        home.path().display()
    );
    let env = |user: &'static str, id: u32| {
        move |k: &str| match k {
            "SUDO_USER" => Some(user.to_string()),
            "SUDO_UID" | "SUDO_GID" => Some(id.to_string()),
            _ => None,
        }
    };
    let u = fslab_store::sudo_user_in(&env("alice", uid), &passwd).unwrap();
    assert_eq!((u.home.as_path(), u.uid, u.gid), (home.path(), uid, uid));
    // Not sudo from root, not a home that is missing, not a uid that differs.
    assert_eq!(fslab_store::sudo_user_in(&env("root", 0), &passwd), None);
    assert_eq!(
        fslab_store::sudo_user_in(&env("nobody", 65534), &passwd),
        None
    );
    assert_eq!(
        fslab_store::sudo_user_in(&env("alice", uid + 1), &passwd),
        None
    );
    assert_eq!(fslab_store::sudo_user_in(&|_| None, &passwd), None);
}

#[test]
fn the_store_made_for_a_sudo_user_is_theirs() {
    use std::os::unix::fs::MetadataExt;
    let home = tempfile::tempdir().unwrap();
    let root_owned = std::fs::metadata(home.path()).unwrap().uid() == 0;
    let path = home.path().join(".local/share/fslab/results.sqlite");
    drop(Store::open(&path).unwrap());
    if !root_owned {
        // Giving files away needs root; CI runs as root and must not skip.
        assert_ne!(std::env::var("CI").as_deref(), Ok("true"), "needs root");
        return;
    }
    let u = fslab_store::SudoUser {
        home: home.path().to_path_buf(),
        uid: 65534,
        gid: 65534,
    };
    fslab_store::give_to(&path, &u);
    for p in [
        path.clone(),
        home.path().join(".local/share/fslab"),
        home.path().join(".local/share"),
        home.path().join(".local"),
    ] {
        let m = std::fs::metadata(&p).unwrap();
        assert_eq!((m.uid(), m.gid()), (65534, 65534), "{}", p.display());
    }
    assert_eq!(
        std::fs::metadata(home.path()).unwrap().uid(),
        0,
        "the home is left alone"
    );
    // Outside the user's home: nothing is given away.
    let elsewhere = tempfile::tempdir().unwrap();
    let f = elsewhere.path().join("x.sqlite");
    std::fs::write(&f, "").unwrap();
    fslab_store::give_to(&f, &u);
    assert_eq!(std::fs::metadata(&f).unwrap().uid(), 0);
}

/// A store whose schema version says 1 while its tables are the newest
/// (a version set back by hand, or by a foreign tool) is refused in one
/// line naming the version, not with the SQL of the migration that failed,
/// and is left as it was.
#[test]
fn a_store_whose_schema_version_lies_is_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.sqlite");
    drop(Store::open(&path).unwrap());
    let c = rusqlite::Connection::open(&path).unwrap();
    c.pragma_update(None, "user_version", 1).unwrap();
    drop(c);
    for e in [Store::open(&path).err(), Store::open_read(&path).err()] {
        let e = e.expect("refused").to_string();
        assert_eq!(e.lines().count(), 1, "{e}");
        assert!(
            e.contains("schema version 1") && e.contains("does not match its tables"),
            "{e}"
        );
        assert!(!e.contains("CREATE") && !e.contains("ALTER"), "{e}");
    }
    let c = rusqlite::Connection::open(&path).unwrap();
    let v: i64 = c
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    assert_eq!(v, 1, "not written to");
}

#[test]
fn a_metrics_exact_flag_is_kept_and_older_rows_read_back_not_exact() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.sqlite");
    let count = |name: &str| Metric::new("fsmark", None, name, 100.0, Unit::Count, Better::Neither);
    {
        // A store of schema 7 (before the flag) with one metric in it.
        let c = rusqlite::Connection::open(&path).unwrap();
        for n in 1..=7 {
            c.execute_batch(fslab_store::migration_sql(n).unwrap())
                .unwrap();
        }
        c.pragma_update(None, "user_version", 7).unwrap();
        c.execute(
            "INSERT INTO runs (workload, command_line, fslab_version, kernel, hostname, started_at, status,
                target_path, fs_type, mount_source, mount_point, mount_options, params)
             VALUES ('fsmark', '[\"fslab\"]', '0.0.1', 'k', 'h', 't', 'complete', '/x', 'ext4', '/dev/loop0', '/x', 'rw', '{}')",
            [],
        )
        .unwrap();
        c.execute(
            "INSERT INTO metrics (run_id, source, phase, name, value, unit, better, detail)
             VALUES (1, 'fsmark', NULL, 'old count', 100.0, 'count', 'neither', 0)",
            [],
        )
        .unwrap();
    }
    let mut s = Store::open(&path).unwrap();
    assert_eq!(s.schema_version(), fslab_store::SCHEMA_VERSION);
    assert_eq!(s.metrics(1).unwrap(), vec![count("old count")]);
    let id = s.begin_run(&info()).unwrap();
    let written = vec![count("files created").exact(), count("image extents")];
    s.record_metrics(id, &written).unwrap();
    drop(s);
    let s = Store::open(&path).unwrap();
    let back = s.metrics(id).unwrap();
    assert_eq!(back, written);
    assert_eq!(
        back.iter().map(|m| m.exact).collect::<Vec<_>>(),
        [true, false]
    );
    // The export's JSON carries it too.
    let json = serde_json::to_value(s.run(id).unwrap()).unwrap();
    assert_eq!(json["metrics"][0]["exact"], true, "{json}");
    assert_eq!(json["metrics"][1]["exact"], false, "{json}");
}

/// Migration 9: the loops table of a store made before it (written here by
/// hand, as fs_mark's runs left it) is read as ordinary metrics, named as a
/// workload records them now; the loops' older metrics give way, others stay.
#[test]
fn old_loop_rows_become_the_metrics_a_loop_is_recorded_as_now() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.sqlite");
    {
        let c = rusqlite::Connection::open(&path).unwrap();
        for n in 1..=8 {
            c.execute_batch(fslab_store::migration_sql(n).unwrap())
                .unwrap();
        }
        c.pragma_update(None, "user_version", 8).unwrap();
        for workload in ["fsmark", "dbench"] {
            c.execute(
                "INSERT INTO runs (workload, command_line, fslab_version, kernel, hostname, started_at, status,
                    target_path, fs_type, mount_source, mount_point, mount_options, params)
                 VALUES (?1, '[\"fslab\"]', '0.0.1', 'k', 'h', 't', 'complete', '/x', 'ext4', '/dev/loop0', '/x', 'rw', '{}')",
                [workload],
            )
            .unwrap();
        }
        let calls = r#"[["creat",{"min_us":1,"avg_us":2,"max_us":30}],["close",{"min_us":0,"avg_us":1,"max_us":4}]]"#;
        for (idx, count, complete) in [(0, 100, 1), (1, 180, 0)] {
            c.execute(
                "INSERT INTO loops VALUES (1, ?1, 7, ?2, 100, 4096, 2500.5, 2000.25, 0.05, 1234, ?3, ?4)",
                rusqlite::params![idx, count, calls, complete],
            )
            .unwrap();
        }
        // What fs_mark recorded beside them: the loops' Files/sec and App
        // Overhead, and its totals; and another run's breakdown row.
        for (run, phase, name, detail) in [
            (1, Some("loop 0"), "Files/sec", 1),
            (1, Some("loop 0"), "App Overhead", 1),
            (1, Some("loop 1"), "Files/sec", 1),
            (1, None, "files created", 0),
            (2, Some("NTCreateX"), "Count", 1),
        ] {
            c.execute(
                "INSERT INTO metrics (run_id, source, phase, name, value, unit, better, detail)
                 VALUES (?1, 'x', ?2, ?3, 180.0, 'count', 'neither', ?4)",
                rusqlite::params![run, phase, name, detail],
            )
            .unwrap();
        }
    }
    let s = Store::open(&path).unwrap();
    assert_eq!(s.schema_version(), fslab_store::SCHEMA_VERSION);
    let call = |min_us, avg_us, max_us| CallStats {
        min_us,
        avg_us,
        max_us,
    };
    let row = |index: u32, count: u64, complete: bool| LoopRow {
        index,
        fs_use_pct: 7,
        count,
        files: 100,
        file_size: 4096,
        files_per_sec: 2500.5,
        wall_files_per_sec: 2000.25,
        wall_s: 0.05,
        app_overhead_us: 1234,
        calls: vec![
            ("creat".into(), call(1, 2, 30)),
            ("close".into(), call(0, 1, 4)),
        ],
        complete,
    };
    let rows = [row(0, 100, true), row(1, 180, false)];
    let metrics = s.metrics(1).unwrap();
    let mut expected: Vec<Metric> = vec![Metric::new(
        "x",
        None,
        "files created",
        180.0,
        Unit::Count,
        Better::Neither,
    )];
    expected.extend(rows.iter().flat_map(|r| r.metrics("fsmark")));
    assert_eq!(metrics, expected);
    assert_eq!(LoopRow::from_metrics(&metrics), rows);
    assert_eq!(s.metrics(2).unwrap().len(), 1, "other runs keep theirs");
    let c = rusqlite::Connection::open(&path).unwrap();
    let loops: i64 = c
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE name = 'loops'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(loops, 0, "the loops table is gone");
}

#[test]
fn a_db_path_must_be_a_file_in_an_existing_directory() {
    let dir = tempfile::tempdir().unwrap();
    let ok = dir.path().join("results.sqlite");
    assert!(fslab_store::check_path(&ok).is_ok());
    assert!(fslab_store::check_path(std::path::Path::new("results.sqlite")).is_ok());
    let e = fslab_store::check_path(&dir.path().join("typo/results.sqlite")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Usage);
    assert!(e.to_string().contains("typo does not exist"), "{e}");
    let e = fslab_store::check_path(dir.path()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Usage);
    assert!(
        e.to_string()
            .ends_with("is a directory; give a file (results.sqlite)"),
        "{e}"
    );
}

#[test]
fn a_programs_output_and_its_reported_phases_are_kept_with_its_run() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.sqlite");
    let mut s = Store::open(&path).unwrap();
    let id = s.begin_run(&info()).unwrap();
    let fio = PhaseResult {
        reported: true,
        ..PhaseResult::timed("rw", 1024, 0.5)
    };
    let dd = PhaseResult {
        counted: false,
        ..PhaseResult::timed("dd", 0, 1.5)
    };
    s.record_phase(id, &dd).unwrap();
    s.record_phase(id, &fio).unwrap();
    s.record_output(id, "stdout", b"{\"jobs\": []}\n").unwrap();
    s.record_output(id, "stderr", b"\xff not utf-8").unwrap();
    s.finish_run(id, RunStatus::Complete, None).unwrap();
    drop(s);
    let s = Store::open_read(&path).unwrap();
    let back: Vec<PhaseResult> = s.phases(id).unwrap().into_iter().map(Into::into).collect();
    assert_eq!(back, [dd, fio]);
    assert_eq!(s.output(id, "stderr").unwrap().unwrap(), b"\xff not utf-8");
    assert_eq!(s.output(id, "result.txt").unwrap(), None);
    let rec = s.run(id).unwrap();
    let streams: Vec<(&str, u64)> = rec
        .outputs
        .iter()
        .map(|o| (o.stream.as_str(), o.bytes))
        .collect();
    assert_eq!(streams, [("stdout", 13), ("stderr", 11)]);
    let j: serde_json::Value = serde_json::from_str(&s.run_json(id).unwrap()).unwrap();
    assert_eq!(j["outputs"][0]["stream"], "stdout");
    assert_eq!(j["phases"][0]["counted"], false);
    assert_eq!(j["phases"][1]["reported"], true);
}

/// Another process's write that holds the store longer than SQLite's
/// usual patience (two experiments sharing one store): a run's write
/// waits for it rather than failing with "database is locked".
#[test]
fn a_write_waits_for_another_writers_long_transaction() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("shared.sqlite");
    let mut s = Store::open(&path).unwrap();
    let id = s.begin_run(&info()).unwrap();
    let other = rusqlite::Connection::open(&path).unwrap();
    other.execute_batch("BEGIN IMMEDIATE").unwrap();
    let held = std::time::Duration::from_secs(12);
    let t = std::thread::spawn(move || {
        std::thread::sleep(held);
        other.execute_batch("COMMIT").unwrap();
    });
    let started = std::time::Instant::now();
    let m = Metric::new(
        "fsmark",
        None,
        "files/sec",
        1.0,
        Unit::FilesPerSec,
        Better::Higher,
    );
    s.record_metrics(id, &[m]).unwrap();
    assert!(started.elapsed() >= held - std::time::Duration::from_secs(1));
    t.join().unwrap();
}
