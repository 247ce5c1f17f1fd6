//! fsmark's and createmany's `--stonewall` (mdtest's `-W` is in
//! `mdtest`): bad values refused in one line, one process ending its loop
//! at the stonewall, and three MPI ranks on a tmpfs that stop, agree on
//! the largest count and all wear out to exactly it.

use crate::support::{stderr, Lab};

/// `fslab ARGS` on `lab`, from its directory.
fn fslab(lab: &Lab, args: &[&str]) -> std::process::Output {
    lab.fslab()
        .current_dir(lab.tmp.path())
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn a_stonewall_that_is_not_a_whole_number_of_seconds_is_refused_in_one_line() {
    let lab = Lab::new();
    let d = lab.path("d");
    std::fs::create_dir_all(&d).unwrap();
    let dir = d.to_str().unwrap();
    let f = d.join("f");
    let fmt = f.to_str().unwrap();
    for (args, named) in [
        (
            vec!["fsmark", "-d", dir, "--stonewall", "-1"],
            "--stonewall -1",
        ),
        (
            vec!["fsmark", "-d", dir, "--stonewall", "0"],
            "--stonewall 0",
        ),
        (vec!["fsmark", "-d", dir, "--stonewall", "1.5"], "1.5"),
        (vec!["fsmark", "-d", dir, "--stonewall", "soon"], "soon"),
        (
            vec!["fsmark", "-d", dir, "--phases", "stat", "--stonewall", "2"],
            "--stonewall 2",
        ),
        (
            vec!["createmany", "-m", "--stonewall", "-3", fmt],
            "--stonewall -3",
        ),
        (
            vec!["createmany", "-m", "--stonewall", "0", fmt],
            "--stonewall 0",
        ),
        (vec!["createmany", "-m", "--stonewall", "x1", fmt], "x1"),
        (
            vec!["createmany", "-m", "-t", "5", "--stonewall", "2", fmt],
            "-t 5",
        ),
        (vec!["createmany", "-u", "--stonewall", "2", fmt, "9"], "-u"),
    ] {
        let o = fslab(&lab, &args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(named), "{args:?} names {named}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    assert_eq!(std::fs::read_dir(&d).unwrap().count(), 0, "nothing ran");
}

#[test]
fn one_process_ends_its_create_loop_at_the_stonewall_with_nothing_to_wear_out() {
    let lab = Lab::new();
    let d = lab.path("d");
    std::fs::create_dir_all(&d).unwrap();
    let f = d.join("f");
    let t = std::time::Instant::now();
    // No COUNT: the stonewall alone ends the loop.
    let o = fslab(
        &lab,
        &[
            "createmany",
            "-m",
            "--probes",
            "none",
            "--stonewall",
            "1",
            f.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(t.elapsed().as_secs_f64() < 30.0);
    let text = crate::support::stdout(&o);
    let made = std::fs::read_dir(&d).unwrap().count() as u64;
    assert!(made > 0);
    assert!(
        text.contains(&format!(
            "Stonewall, run 1: {made} items at the stonewall in "
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!("wear-out to {made} items a thread: 0 items")),
        "{text}"
    );
}

/// Three ranks under Open MPI's mpirun on one tmpfs.
#[cfg(feature = "mpi")]
mod on_ranks {
    use std::path::Path;
    use std::process::{Command, Output};

    use crate::support::{count_files, need_tool, privileged, stderr, Lab, Tmpfs};

    fn mpirun(lab: &Lab, args: &[&str]) -> Output {
        let out = Command::new("timeout")
            .args([
                "120",
                "mpirun",
                "--allow-run-as-root",
                "--oversubscribe",
                "-np",
                "3",
            ])
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
        assert!(out.status.success(), "{}", stderr(&out));
        out
    }

    fn export(lab: &Lab) -> serde_json::Value {
        let o = lab.run(&["results", "export", "1"]);
        assert!(o.status.success(), "{}", stderr(&o));
        serde_json::from_slice(&o.stdout).unwrap()
    }

    /// The run's metric `name` of phase `phase`.
    fn metric(run: &serde_json::Value, phase: &str, name: &str) -> f64 {
        run["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == name && m["phase"] == phase)
            .unwrap_or_else(|| panic!("no metric {phase} {name} in {}", run["metrics"]))["value"]
            .as_f64()
            .unwrap()
    }

    /// Every rank's files (rank0000 .. rank0002 of `dir`).
    fn per_rank(dir: &Path) -> Vec<u64> {
        (0..3)
            .map(|r| count_files(&dir.join(format!("rank{r:04}"))) as u64)
            .collect()
    }

    /// The stonewall's numbers as mdtest names them: the items at the
    /// stonewall and those worn out after it make every rank's count, each
    /// rank's count at the stonewall is kept and they add up, both rates.
    fn check_numbers(run: &serde_json::Value, phase: &str, made: u64) {
        let at_wall = metric(run, phase, "items at stonewall");
        let wear = metric(run, phase, "wear-out items");
        assert_eq!(at_wall + wear, made as f64, "{}", run["metrics"]);
        let each: f64 = (0..3)
            .map(|r| metric(run, phase, &format!("items at stonewall, rank {r}")))
            .sum();
        assert_eq!(each, at_wall, "each rank's count is kept, and they add up");
        assert!(metric(run, phase, "stonewall rate") > 0.0);
        assert!(metric(run, phase, "stonewall time") >= 1.0);
        let wear_rate = metric(run, phase, "wear-out rate");
        assert!(wear == 0.0 || wear_rate > 0.0, "{}", run["metrics"]);
        assert!(metric(run, phase, "straggler spread") <= at_wall);
    }

    #[test]
    fn fsmark_ranks_stop_each_loop_at_the_stonewall_and_all_wear_out_to_the_agreed_count() {
        if !need_tool("mpirun") || !privileged("a tmpfs") {
            return;
        }
        let fs = Tmpfs::mount("size=1g,nr_inodes=1500k");
        let lab = Lab::new();
        let dir = fs.path().join("t");
        // Two threads a rank, two loops of at most 10M files a thread.
        mpirun(
            &lab,
            &[
                "fsmark",
                "-d",
                dir.to_str().unwrap(),
                "-n",
                "10000000",
                "-s",
                "0",
                "-S",
                "0",
                "-t",
                "2",
                "-L",
                "2",
                "--stonewall",
                "1",
                "--probes",
                "none",
            ],
        );
        let counts = per_rank(&dir);
        assert!(
            counts.iter().all(|c| *c == counts[0]),
            "every rank made the agreed count of every loop: {counts:?}"
        );
        let run = export(&lab);
        let loops = crate::support::loops(&run);
        assert_eq!(loops.len(), 2);
        for l in &loops {
            assert_eq!(
                l.files % 6,
                0,
                "3 ranks x 2 threads x the agreed count: {l:?}"
            );
            assert!(l.files < 60_000_000, "the stonewall stopped the loop");
            assert!(l.complete, "{l:?}");
        }
        assert_eq!(loops.iter().map(|l| l.files).sum::<u64>(), 3 * counts[0]);
        // The metrics are the loops' means: the first loop's count and
        // the second's, over two.
        let made = 3 * counts[0];
        let at_wall = metric(&run, "create", "items at stonewall");
        let wear = metric(&run, "create", "wear-out items");
        assert!(((at_wall + wear) * 2.0 - made as f64).abs() < 1e-6);
        assert!(metric(&run, "create", "stonewall rate") > 0.0);
        assert!(metric(&run, "create", "stonewall time") >= 1.0);
        assert!(metric(&run, "create", "wear-out rate") >= 0.0);
        assert!(metric(&run, "create", "straggler spread") >= 0.0);
        let create = run["phases"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["phase"] == "create")
            .unwrap();
        assert_eq!(create["ops"], made);
        assert_eq!(create["complete"], true);
    }

    #[test]
    fn createmany_ranks_stop_at_the_stonewall_and_all_wear_out_to_the_agreed_count() {
        if !need_tool("mpirun") || !privileged("a tmpfs") {
            return;
        }
        let fs = Tmpfs::mount("size=1g,nr_inodes=1500k");
        let lab = Lab::new();
        let dir = fs.path().join("t");
        std::fs::create_dir(&dir).unwrap();
        let fmt = dir.join("f");
        mpirun(
            &lab,
            &[
                "createmany",
                "-m",
                "--stonewall",
                "1",
                "--probes",
                "none",
                fmt.to_str().unwrap(),
            ],
        );
        let counts = per_rank(&dir);
        assert!(counts[0] > 0);
        assert!(
            counts.iter().all(|c| *c == counts[0]),
            "every rank made the agreed count: {counts:?}"
        );
        let run = export(&lab);
        check_numbers(&run, "create", 3 * counts[0]);
        // One thread a rank: the agreed count is the most any rank had
        // made at the stonewall, and every rank made exactly that many.
        let most = (0..3)
            .map(|r| metric(&run, "create", &format!("items at stonewall, rank {r}")))
            .fold(0.0, f64::max);
        assert_eq!(counts[0] as f64, most, "{}", run["metrics"]);
        let create = run["phases"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["phase"] == "create")
            .unwrap();
        assert_eq!(create["ops"], 3 * counts[0]);
        assert_eq!(create["complete"], true);
    }
}
