//! Scale-out over MPI: the real binary under Open MPI's mpirun, several
//! ranks on this machine. Built only with the `mpi` feature (the suite's
//! script turns it on); under CI=true a build without it fails here.

#[cfg(not(feature = "mpi"))]
#[test]
fn the_suite_is_built_with_mpi() {
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "CI=true but the tests were built without `--features mpi`: the MPI tests cannot run"
    );
    eprintln!("skipping the MPI tests: built without `--features mpi`");
}

#[cfg(feature = "mpi")]
mod with_mpi {
    use std::path::Path;
    use std::process::{Command, Output};
    use std::time::{Duration, Instant};

    use fslab_lab::mkfs::FsType;

    use crate::support::{count_files, need_tool, privileged, stderr, stdout, Lab, LoopFs, Tmpfs};

    /// `mpirun -np N fslab --db DB ARGS`, as root allows it, with a time
    /// limit so that a hang fails the test instead of stalling the suite.
    fn mpirun(lab: &Lab, n: usize, args: &[&str]) -> (Output, Duration) {
        let t = Instant::now();
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
        (out, t.elapsed())
    }

    fn json(lab: &Lab, id: i64) -> serde_json::Value {
        let o = lab.run(&["results", "export", &id.to_string()]);
        assert!(o.status.success(), "{}", stderr(&o));
        serde_json::from_slice(&o.stdout).unwrap()
    }

    fn phase<'a>(run: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
        run["phases"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["phase"] == name)
            .unwrap_or_else(|| panic!("no phase {name} in {run}"))
    }

    #[test]
    fn fsmark_on_three_ranks_is_one_merged_run() {
        if !need_tool("mpirun") {
            return;
        }
        let lab = Lab::new();
        let dir = lab.path("shared");
        let d = dir.to_str().unwrap();
        let (o, _) = mpirun(
            &lab,
            3,
            &[
                "fsmark",
                "-d",
                d,
                "-n",
                "400",
                "-s",
                "1024",
                "-t",
                "2",
                "-L",
                "2",
                "--phases",
                "create,stat,unlink",
                "--probes",
                "none",
            ],
        );
        assert!(o.status.success(), "{}", stderr(&o));
        let out = stdout(&o);
        let lines: Vec<&str> = out.lines().collect();
        let host = rustix::system::uname()
            .nodename()
            .to_string_lossy()
            .into_owned();
        assert_eq!(
            lines[0],
            format!("fslab fsmark: 3 MPI ranks on 1 host: {host} (3 ranks)")
        );
        assert!(lines[1].starts_with("SUMMARY rate (ops/s)"), "{out}");
        for (i, name) in ["create", "stat", "unlink"].iter().enumerate() {
            let row: Vec<&str> = lines[2 + i].split_whitespace().collect();
            assert_eq!(&row[..2], [*name, ":"], "{out}");
            let (agg, max, min): (f64, f64, f64) = (
                row[2].parse().unwrap(),
                row[3].parse().unwrap(),
                row[4].parse().unwrap(),
            );
            // Every rank does the same work, so the slowest rank's rate is
            // the lowest and the aggregate (all work over the slowest time)
            // is three times it; the fastest rank may beat the aggregate
            // when the ranks are uneven.
            assert!(max >= min && min > 0.0, "{out}");
            assert!((agg - 3.0 * min).abs() <= agg * 1e-3, "{out}");
        }
        // fs_mark's table for all ranks follows: cumulative counts of 3
        // ranks x 2 threads x 400 files per loop.
        let rows: Vec<Vec<&str>> = lines
            .iter()
            .skip_while(|l| !l.trim_start().starts_with("FSUse%"))
            .skip(1)
            .map(|l| l.split_whitespace().collect())
            .collect();
        assert_eq!(rows.len(), 2, "{out}");
        assert_eq!(
            (rows[0][1], rows[1][1], rows[0][2]),
            ("2400", "4800", "1024"),
            "{out}"
        );
        assert!(
            rows.iter().all(|r| r[3].parse::<f64>().unwrap() > 0.0),
            "{out}"
        );
        // One run in the store, holding every rank's files: 3 ranks x 2
        // threads x 400 files x 2 loops.
        let o = lab.run(&["results", "list"]);
        assert_eq!(
            stdout(&o).lines().count(),
            2,
            "a header and one run: {}",
            stdout(&o)
        );
        assert!(
            stdout(&o).trim_end().ends_with(" ops/s (3 MPI ranks)"),
            "{}",
            stdout(&o)
        );
        let run = json(&lab, 1);
        for p in ["create", "stat", "unlink"] {
            assert_eq!(phase(&run, p)["ops"], 4800, "{p}: {run}");
        }
        assert_eq!(run["run"]["params"]["mpi"]["ranks"], 3);
        let loops = crate::support::loops(&run);
        assert_eq!(loops.len(), 2, "{run}");
        assert_eq!(loops[1].count, 4800);
        let creat = run["latency"]
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["phase"] == "create" && l["op"] == "creat")
            .unwrap();
        assert_eq!(creat["count"], 4800);
        // Each rank worked in its own directory, and left it empty and gone.
        assert_eq!(count_files(&dir), 0);
        assert!(!Path::new(&dir).join("rank0000").exists());
        let show = stdout(&lab.run(&["results", "show", "1"]));
        assert!(show.contains("mpi:       3 ranks on"), "{show}");
        // The HTML report shows the ranks' spread beside the aggregate.
        let page = lab.path("r.html");
        let o = lab.run(&["report", "--runs", "1", "-o", page.to_str().unwrap()]);
        assert!(o.status.success(), "{}", stderr(&o));
        let html = std::fs::read_to_string(&page).unwrap();
        assert!(html.contains("merged from 3 MPI ranks on"), "{html}");
        assert!(html.contains("<th>rank sd</th>"), "{html}");
    }

    #[test]
    fn on_a_loop_device_ext4_rank_0_watches_the_filesystem_for_all() {
        if !need_tool("mpirun") || !privileged("a loop-device ext4") {
            return;
        }
        let fs = LoopFs::new(FsType::Ext4, 256 << 20, &[]);
        let lab = Lab::new();
        let dir = fs.path().join("t");
        let (o, _) = mpirun(
            &lab,
            2,
            &[
                "fsmark",
                "-d",
                dir.to_str().unwrap(),
                "-n",
                "300",
                "-s",
                "4096",
                "-S",
                "1",
                "--probes",
                "disk,journal",
            ],
        );
        assert!(o.status.success(), "{}", stderr(&o));
        let run = json(&lab, 1);
        assert_eq!(run["run"]["fs_type"], "ext4");
        assert_eq!(run["run"]["mount_source"], fs.dev_path().to_str().unwrap());
        assert_eq!(phase(&run, "create")["ops"], 600);
        let show = stdout(&lab.run(&["results", "show", "1"]));
        assert!(
            show.contains("jbd2"),
            "rank 0's journal probe saw the commits: {show}"
        );
    }

    #[test]
    fn createmany_and_tiotest_split_their_work_by_rank() {
        if !need_tool("mpirun") {
            return;
        }
        let lab = Lab::new();
        let dir = lab.path("many");
        std::fs::create_dir(&dir).unwrap();
        let fmt = dir.join("f%05d");
        let (o, _) = mpirun(
            &lab,
            2,
            &[
                "createmany",
                "-m",
                fmt.to_str().unwrap(),
                "3000",
                "--probes",
                "none",
            ],
        );
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(
            stdout(&o).contains("   create             : "),
            "{}",
            stdout(&o)
        );
        for r in ["rank0000", "rank0001"] {
            let names = std::fs::read_dir(dir.join(r)).unwrap().count();
            assert_eq!(names, 3000, "{r}");
            assert!(dir.join(r).join("f02999").exists());
        }
        let (o, _) = mpirun(
            &lab,
            2,
            &[
                "tiotest",
                "-t",
                "2",
                "-f",
                "4",
                "-r",
                "100",
                "-d",
                lab.path("tio").to_str().unwrap(),
                "--probes",
                "none",
                "--json",
            ],
        );
        assert!(o.status.success(), "{}", stderr(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let write = phase(&v, "write");
        assert_eq!(write["bytes"], (2 * 2 * 4) << 20, "{v}");
        assert_eq!(
            (v["run"]["status"].as_str(), v["run"]["id"].as_i64()),
            (Some("complete"), Some(2))
        );
        // The run's one shape (the ranks' own numbers in its params' mpi).
        let errors = crate::support::run_schema_errors(&v);
        assert!(errors.is_empty(), "{errors:?}");
        let mpi = &v["run"]["params"]["mpi"];
        assert_eq!(mpi["ranks"], 2);
        assert_eq!(mpi["rates"][0]["ranks"], 2);
        let reads = v["latency"]
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["phase"] == "read")
            .unwrap();
        assert_eq!(reads["count"], 2 * 2 * 1024, "{v}");
    }

    #[test]
    fn createmany_ranks_can_share_one_directory() {
        if !need_tool("mpirun") {
            return;
        }
        let lab = Lab::new();
        let dir = lab.path("one");
        std::fs::create_dir(&dir).unwrap();
        let fmt = dir.join("test");
        let fmt = fmt.to_str().unwrap();
        let (o, _) = mpirun(
            &lab,
            3,
            &[
                "createmany",
                "-m",
                fmt,
                "10",
                "500",
                "--shared-dir",
                "--probes",
                "none",
            ],
        );
        assert!(o.status.success(), "{}", stderr(&o));
        // Rank R made test(10 + 500R) .. test(509 + 500R): 1500 names, no gaps.
        let mut names: Vec<u64> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| {
                e.unwrap().file_name().to_str().unwrap()[4..]
                    .parse()
                    .unwrap()
            })
            .collect();
        names.sort();
        assert_eq!(names, (10..1510).collect::<Vec<u64>>());
        assert_eq!(phase(&json(&lab, 1), "create")["ops"], 1500);
        // Without COUNT the blocks have no size.
        let (o, _) = mpirun(
            &lab,
            2,
            &["createmany", "-m", fmt, "-t", "1", "--shared-dir"],
        );
        assert_eq!(o.status.code(), Some(2));
        assert!(
            stderr(&o).contains("fslab: createmany: --shared-dir needs COUNT: rank R takes the numbers from START + R x COUNT"),
            "{}",
            stderr(&o)
        );
    }

    #[test]
    fn a_rank_that_fails_mid_run_stops_the_others_and_what_was_measured_is_kept() {
        if !need_tool("mpirun") || !privileged("a small tmpfs") {
            return;
        }
        let lab = Lab::new();
        let dir = lab.path("d");
        std::fs::create_dir(&dir).unwrap();
        // Rank 1's directory is a full-in-no-time filesystem.
        let small = Tmpfs::mount("size=1m");
        std::os::unix::fs::symlink(small.path(), dir.join("rank0001")).unwrap();
        let (o, took) = mpirun(
            &lab,
            2,
            &[
                "fsmark",
                "-d",
                dir.to_str().unwrap(),
                "-n",
                "100",
                "-s",
                "64k",
                "-L",
                "2",
                "--phases",
                "create,stat,unlink",
                "--probes",
                "none",
            ],
        );
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        assert!(took < Duration::from_secs(60));
        let out = stdout(&o);
        assert!(out.contains("rank 0: interrupted"), "{out}");
        assert!(
            out.contains("rank 1: failed: Insufficient free space in"),
            "{out}"
        );
        let err = stderr(&o);
        assert!(err.contains("fslab: fsmark: stopped: rank 1 ("), "{err}");
        assert!(err.contains("kept as run 1 in"), "{err}");
        let run = json(&lab, 1);
        assert_eq!(run["run"]["status"], "failed");
        // Rank 0 made all its files before it learnt that rank 1 had stopped.
        assert_eq!(phase(&run, "create")["ops"], 200);
        assert_eq!(phase(&run, "create")["complete"], false);
    }

    #[test]
    fn an_experiment_runs_its_workload_on_ranks_on_each_fresh_filesystem() {
        if !need_tool("mpirun") || !privileged("fslab run on loop devices") {
            return;
        }
        let lab = Lab::new();
        let f = lab.experiment(
            "ranks.toml",
            r#"
name = "ranks"
[device]
size = "300M"
image_dir = "IMAGES"
[workload]
kind = "createmany"
args = ["-m", "{dir}/f", "2000"]
ranks = 2
[[target]]
fs = "ext4"
"#,
        );
        let o = lab
            .run_cmd()
            .args(["run", "--dry-run"])
            .arg(&f)
            .output()
            .unwrap();
        assert!(
            stdout(&o).contains(
                "    workload: mpirun --allow-run-as-root --oversubscribe --mca odls_base_sigkill_timeout 6 -np 2 fslab createmany -m MNT/"
            ),
            "{}",
            stdout(&o)
        );
        let o = lab.run_cmd().arg("run").arg(&f).output().unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(
            stdout(&o).contains("1 of 1 runs completed"),
            "{}",
            stdout(&o)
        );
        let store = fslab_store::Store::open(&lab.db()).unwrap();
        let e = store
            .experiment(store.latest_experiment().unwrap().unwrap())
            .unwrap();
        let r = &e.cell_runs[0];
        assert_eq!(r.status.map(|s| s.as_str()), Some("complete"), "{r:?}");
        assert!(r.output.contains("SUMMARY rate (ops/s)"), "{}", r.output);
        let run = store.run(r.run_id.unwrap()).unwrap();
        assert_eq!(run.run.fs_type, "ext4");
        assert_eq!(run.run.mount_source, r.loop_device);
        assert_eq!(run.phases[0].ops, 4000, "both ranks' names");
        assert_eq!(run.run.params["mpi"]["ranks"], 2);
        assert_eq!(lab.leftovers(), Vec::<String>::new());
    }

    /// The pid of the process of MPI rank `rank` whose command line holds
    /// `word`.
    fn rank_pid(rank: usize, word: &str) -> Option<u32> {
        let want = format!("OMPI_COMM_WORLD_RANK={rank}");
        std::fs::read_dir("/proc").ok()?.flatten().find_map(|e| {
            let pid: u32 = e.file_name().to_string_lossy().parse().ok()?;
            let cmd = std::fs::read(e.path().join("cmdline")).ok()?;
            let env = std::fs::read(e.path().join("environ")).ok()?;
            let env = String::from_utf8_lossy(&env);
            (String::from_utf8_lossy(&cmd).contains(word) && env.split('\0').any(|v| v == want))
                .then_some(pid)
        })
    }

    #[test]
    fn a_rank_killed_in_an_experiment_is_named_once_mpirun_has_ended() {
        // fslab run merges what the surviving ranks kept after mpirun ends
        // (`fslab rescue`), so that no rank still keeping its part is named
        // lost.
        if !need_tool("mpirun") || !privileged("fslab run on loop devices") {
            return;
        }
        let lab = Lab::new();
        let f = lab.experiment(
            "killed.toml",
            r#"
name = "killed"
[device]
size = "2G"
image_dir = "IMAGES"
[workload]
kind = "fsmark"
args = ["-n", "400000", "-s", "0", "-L", "1", "-S", "0"]
ranks = 3
probes = ["none"]
[[target]]
fs = "ext4"
mkfs_options = ["-N 1300000"]
"#,
        );
        let child = lab.spawn_run(
            &f,
            std::process::Stdio::piped(),
            std::process::Stdio::piped(),
        );
        let db = lab.db();
        // Once the ranks have kept the run's description (past the start's
        // collectives) and are making files, rank 2 is killed.
        assert!(crate::support::ranks_described(&db, 60), "no spool");
        std::thread::sleep(Duration::from_secs(2));
        let pid = rank_pid(2, db.to_str().unwrap()).expect("rank 2 runs");
        let _ = Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status();
        let o = child.wait_with_output().unwrap();
        let (out, err) = (stdout(&o), stderr(&o));
        assert_eq!(o.status.code(), Some(1), "{out}\n{err}");
        let store = fslab_store::Store::open(&lab.db()).unwrap();
        let e = store
            .experiment(store.latest_experiment().unwrap().unwrap())
            .unwrap();
        let r = &e.cell_runs[0];
        let error = r.error.clone().unwrap_or_default();
        assert!(
            error.contains("failed or disappeared (rank 2 sent no results)"),
            "{r:?}\n{out}\n{err}"
        );
        assert!(
            !error.contains("rank 0") && !error.contains("ranks"),
            "{error}"
        );
        // Ranks 0 and 1's files made before the signal are kept.
        let run = store.run(r.run_id.expect("the rescued run")).unwrap();
        assert_eq!(run.run.status.as_str(), "failed");
        let create = &run.phases[0];
        assert!(create.ops > 0 && create.ops < 600_000, "{}", create.ops);
        let status: Vec<String> = run.run.params["mpi"]["rank_status"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s[1].as_str().unwrap().to_string())
            .collect();
        assert_eq!(status, ["interrupted", "interrupted", "failed"]);
        assert!(fslab_cluster::rescue::Spool::beside(&db).is_empty());
        assert_eq!(lab.leftovers(), Vec::<String>::new());
    }

    #[test]
    fn only_workload_commands_run_on_ranks() {
        if !need_tool("mpirun") {
            return;
        }
        let lab = Lab::new();
        let (o, _) = mpirun(&lab, 2, &["run", "seed004", "--dry-run"]);
        assert_eq!(o.status.code(), Some(2));
        assert!(
            stderr(&o)
                .contains("fslab: started as one of 2 MPI ranks, but only the workload commands"),
            "{}",
            stderr(&o)
        );
    }

    #[test]
    fn a_rank_that_cannot_start_ends_every_rank() {
        if !need_tool("mpirun") {
            return;
        }
        let lab = Lab::new();
        let dir = lab.path("d");
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("rank0001"), b"in the way").unwrap();
        let (o, took) = mpirun(
            &lab,
            2,
            &["fsmark", "-d", dir.to_str().unwrap(), "-n", "10"],
        );
        assert_eq!(o.status.code(), Some(1));
        assert!(took < Duration::from_secs(60));
        let err = stderr(&o);
        assert!(
            err.contains("fslab: fsmark: cannot make ")
                && err.contains(
                    "rank0001: File exists (os error 17) (rank 1 of 2: ending every rank)"
                ),
            "{err}"
        );
        let o = lab.run(&["results", "list"]);
        assert_eq!(stdout(&o).trim(), "", "nothing was stored");
    }
}

#[test]
fn rescue_refuses_a_directory_that_is_no_spool_in_one_line() {
    let lab = crate::support::Lab::new();
    let dir = lab.path("not-a-spool");
    std::fs::create_dir(&dir).unwrap();
    for d in [dir.clone(), lab.path("missing")] {
        let o = lab.run(&["rescue", d.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2));
        let err = crate::support::stderr(&o);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.starts_with(&format!(
                "fslab: rescue: {} is not a spool of fslab's ranks: ",
                d.display()
            )),
            "{err}"
        );
    }
    // A description naming no workload fslab has.
    std::fs::write(
        dir.join("run.json"),
        r#"{"workload": "nosuch", "common": {}}"#,
    )
    .unwrap();
    let o = lab.run(&["rescue", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", crate::support::stderr(&o));
}
