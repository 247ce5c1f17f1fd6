//! Every way `fslab run` ends leaves the machine clean and the record
//! true: two signals (the workload killed, everything torn down, the
//! experiment interrupted), three (exit at once, saying what is left, which
//! `fslab cleanup` removes), a cell past its time limit (failed, the next
//! one runs), and a dry run that refuses what the run refuses.

use std::path::{Path, PathBuf};
use std::process::{Child, Output, Stdio};
use std::time::Duration;

use rustix::process::{kill_process, Pid, Signal};

use crate::support::*;

/// Everything the journals in the lab's state directory list now, as
/// (kind, path) pairs.
fn journalled(lab: &Lab) -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(lab.state())
        .into_iter()
        .flatten()
        .flatten()
    {
        let Ok(text) = std::fs::read_to_string(e.path()) else {
            continue;
        };
        let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) else {
            continue;
        };
        for r in v["resources"].as_array().into_iter().flatten() {
            let r = &r[1];
            let path = r["path"]
                .as_str()
                .or(r["target"].as_str())
                .or(r["backing"].as_str());
            if let (Some(kind), Some(path)) = (r["kind"].as_str(), path) {
                out.push((kind.to_string(), PathBuf::from(path)));
            }
        }
    }
    out
}

fn has(seen: &[(String, PathBuf)], kind: &str) -> bool {
    seen.iter().any(|(k, _)| k == kind)
}

/// Nothing that was journalled is left: no cgroup, tracefs instance or
/// mount, no image, loop device or journal (the lab's leftovers).
fn assert_nothing_left(lab: &Lab, seen: &[(String, PathBuf)]) {
    assert_eq!(lab.leftovers(), Vec::<String>::new());
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    for (kind, path) in seen {
        match kind.as_str() {
            "mount" | "tracefs_mount" => assert!(
                !mounts.contains(path.to_str().unwrap()),
                "{kind} {} is still mounted",
                path.display()
            ),
            "sysctl" => {}
            _ => assert!(!path.exists(), "{kind} {} is left", path.display()),
        }
    }
}

fn signal(pid: u32, n: usize) {
    for i in 0..n {
        if i > 0 {
            std::thread::sleep(Duration::from_millis(200));
        }
        kill_process(Pid::from_raw(pid as i32).unwrap(), Signal::INT).unwrap();
    }
}

/// Waits up to `secs` for the run to end and returns its output.
fn ended_within(child: Child, secs: u64) -> Output {
    let mut child = child;
    let ended = wait_for(secs, || child.try_wait().unwrap().is_some());
    if !ended {
        let _ = child.kill();
    }
    let out = child.wait_with_output().unwrap();
    assert!(ended, "still running after {secs} s: {}", stderr(&out));
    out
}

fn experiment(lab: &Lab, id: i64) -> fslab_store::ExperimentRecord {
    fslab_store::Store::open_read(&lab.db())
        .unwrap()
        .experiment(id)
        .unwrap()
}

/// alloctest of 256 MiB under a 48 MiB memory limit: the cell thrashes.
const STARVED: &str = "name = \"starved\"\n[device]\nsize = \"1G\"\nimage_dir = \"IMAGES\"\n\
[machine]\nmemory_limit = \"48M\"\n[workload]\nkind = \"alloctest\"\nargs = [\"{dir}/big\", \"256M\"]\n\
[[target]]\nfs = \"ext3\"\n";

#[test]
fn a_double_ctrl_c_during_a_starved_workload_kills_it_and_leaves_nothing_behind() {
    if !privileged("fslab run with a memory cgroup and tracing") {
        return;
    }
    let _lock = machine_lock();
    let lab = Lab::new();
    let f = lab.experiment("d.toml", STARVED);
    let child = lab.spawn_run(&f, Stdio::piped(), Stdio::piped());
    let pid = child.id();
    let mut seen = Vec::new();
    assert!(
        wait_for(60, || {
            seen = journalled(&lab);
            children_with(pid, "alloctest").len() == 1
                && has(&seen, "tracefs_instance")
                && has(&seen, "cgroup")
                && has(&seen, "mount")
        }),
        "the workload never started beside its probes: {seen:?}"
    );
    // Starved for a while, then stopped: a workload that does not answer
    // (the first signal alone would not end it).
    std::thread::sleep(Duration::from_secs(2));
    let workload = children_with(pid, "alloctest")[0];
    kill_process(Pid::from_raw(workload as i32).unwrap(), Signal::STOP).unwrap();
    seen = journalled(&lab);
    signal(pid, 2);
    let out = ended_within(child, 45);
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("interrupted by a second signal"),
        "{}",
        stderr(&out)
    );
    assert_nothing_left(&lab, &seen);
    let e = experiment(&lab, 1);
    assert_eq!(e.status, fslab_model::RunStatus::Interrupted);
    let cell = &e.cell_runs[0];
    assert_eq!(cell.status.map(|s| s.as_str()), Some("interrupted"));
    assert!(
        cell.error
            .as_deref()
            .unwrap_or("")
            .starts_with("interrupted by a second signal: the workload was killed"),
        "{:?}",
        cell.error
    );
}

/// An ext4 experiment whose fs_mark (fsync after every 4 KiB file) lasts minutes.
const LONG: &str = "name = \"long\"\n[device]\nsize = \"1G\"\nimage_dir = \"IMAGES\"\n\
[workload]\nkind = \"fsmark\"\nargs = [\"-n\", \"200000\", \"-s\", \"4096\", \"-S1\"]\n\
[[target]]\nfs = \"ext4\"\n";

#[test]
fn a_triple_ctrl_c_exits_at_once_saying_what_it_left_and_cleanup_removes_it() {
    if !privileged("fslab run on loop devices") {
        return;
    }
    let _lock = machine_lock();
    let lab = Lab::new();
    let f = lab.experiment("t.toml", LONG);
    let child = lab.spawn_run(&f, Stdio::piped(), Stdio::piped());
    let pid = child.id();
    let mut seen = Vec::new();
    assert!(
        wait_for(60, || {
            seen = journalled(&lab);
            !children_with(pid, "fsmark").is_empty() && has(&seen, "mount")
        }),
        "the workload never started: {seen:?}"
    );
    // The mount is kept busy, so teardown is slow (3 s of retries).
    let target = seen.iter().find(|(k, _)| k == "mount").unwrap().1.clone();
    let busy = std::fs::File::open(&target).unwrap();
    seen = journalled(&lab);
    signal(pid, 3);
    let out = ended_within(child, 10);
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("exiting at once (third signal), leaving"),
        "{err}"
    );
    for what in [
        format!("mount {}", target.display()),
        "loop device /dev/loop".to_string(),
        "image ".to_string(),
        "`fslab cleanup` removes them all".to_string(),
    ] {
        assert!(err.contains(&what), "{what}: {err}");
    }
    assert!(!lab.leftovers().is_empty(), "it did leave them");
    assert_eq!(
        experiment(&lab, 1).status,
        fslab_model::RunStatus::Running,
        "until cleanup"
    );
    drop(busy);
    let o = lab.run_cmd().arg("cleanup").output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("unmounted"), "{}", stdout(&o));
    assert_nothing_left(&lab, &seen);
    assert_eq!(
        experiment(&lab, 1).status,
        fslab_model::RunStatus::Interrupted
    );
}

#[test]
fn a_cell_past_its_time_limit_fails_with_time_limit_and_the_next_cell_completes() {
    if !privileged("fslab run with a memory cgroup") {
        return;
    }
    let _lock = machine_lock();
    let lab = Lab::new();
    // The starved alloctest first, a small one after it.
    let f = lab.experiment(
        "l.toml",
        &(STARVED
            .replace(
                "name = \"starved\"\n",
                "name = \"starved\"\ntime_limit = \"6s\"\norder = \"sequential\"\n",
            )
            .replace("\"256M\"]", "]")
            + "[[variant]]\nname = \"starved\"\nworkload_args = [\"256M\"]\n\
               [[variant]]\nname = \"fits\"\nworkload_args = [\"4M\"]\n"),
    );
    let t = std::time::Instant::now();
    let child = lab.spawn_run(&f, Stdio::piped(), Stdio::piped());
    let out = ended_within(child, 90);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("reclaiming at its memory limit") || err.contains("at its memory limit:"),
        "the memory pressure is shown: {err}"
    );
    let e = experiment(&lab, 1);
    assert_eq!(e.status, fslab_model::RunStatus::Failed);
    assert_eq!(e.cell_runs.len(), 2, "{:?}", e.cell_runs);
    let (starved, fits) = (&e.cell_runs[0], &e.cell_runs[1]);
    assert_eq!(starved.status.map(|s| s.as_str()), Some("failed"));
    let why = starved.error.as_deref().unwrap_or("");
    assert!(
        why.starts_with(
            "time limit 6 s reached: the workload was stopped (memory limit 48 MiB hit"
        ),
        "{why}"
    );
    assert_eq!(
        fits.status.map(|s| s.as_str()),
        Some("complete"),
        "{:?}",
        fits.error
    );
    // What the starved cell measured is kept: its run, closed as failed.
    let run = fslab_store::Store::open_read(&lab.db())
        .unwrap()
        .run(starved.run_id.expect("the starved workload's run"))
        .unwrap();
    assert_eq!(run.run.status.as_str(), "failed");
    assert!(run.run.error.unwrap_or_default().contains("time limit"));
    assert_eq!(lab.leftovers(), Vec::<String>::new());
    assert!(t.elapsed() < Duration::from_secs(60), "{:?}", t.elapsed());
}

/// The experiments the run refuses before it makes anything, each with
/// what its refusal names.
fn refused_by_preflight(lab: &Lab, read_only: &Path) -> Vec<(&'static str, String, &'static str)> {
    let exp = |size: &str, dir: &Path, fs: &str, extra: &str| {
        format!(
            "name = \"p\"\n[device]\nsize = \"{size}\"\nimage_dir = \"{}\"\n[workload]\nkind = \"fsmark\"\n\
             args = [\"-n\", \"10\"]\n[[target]]\nfs = \"{fs}\"\n{extra}",
            dir.display()
        )
    };
    let images = lab.images();
    vec![
        (
            "an image directory that does not exist",
            exp("1G", &lab.path("no-such-dir"), "ext4", ""),
            "does not exist",
        ),
        (
            "a sysctl this kernel lacks",
            exp(
                "1G",
                &images,
                "ext4",
                "sysctl = { \"vm.no_such_knob_fslab\" = 1 }\n",
            ),
            "vm.no_such_knob_fslab",
        ),
        ("a 1 EiB image", exp("1E", &images, "ext4", ""), "1 EiB"),
        (
            "an image directory on a read-only filesystem",
            exp("1G", read_only, "ext4", ""),
            "cannot be written: Read-only file system",
        ),
        (
            "a filesystem type with no mkfs tool",
            exp("1G", &images, "nosuchfs", ""),
            "mkfs.nosuchfs",
        ),
    ]
}

#[test]
fn every_preflight_refusal_is_also_a_dry_run_refusal() {
    if !privileged("fslab run's preflight as root") {
        return;
    }
    let lab = Lab::new();
    let read_only = Tmpfs::mount("ro");
    for (i, (what, text, names)) in refused_by_preflight(&lab, read_only.path())
        .into_iter()
        .enumerate()
    {
        let f = lab.experiment(&format!("p{i}.toml"), &text);
        let run = lab.run_cmd().arg("run").arg(&f).output().unwrap();
        let dry = lab
            .run_cmd()
            .args(["run", "--dry-run"])
            .arg(&f)
            .output()
            .unwrap();
        assert!(!run.status.success(), "{what}: the run refuses it");
        assert_eq!(
            (dry.status.code(), stderr(&dry)),
            (run.status.code(), stderr(&run)),
            "{what}: the dry run refuses it the same way"
        );
        assert_eq!(stderr(&run).lines().count(), 1, "{what}: {}", stderr(&run));
        assert!(stderr(&run).contains(names), "{what}: {}", stderr(&run));
        assert!(stdout(&dry).is_empty(), "{what}: no plan is printed");
    }
    assert_eq!(lab.leftovers(), Vec::<String>::new());
    assert!(!lab.db().exists(), "nothing was recorded");
}

#[test]
fn every_built_in_experiment_sets_a_time_limit() {
    let lab = Lab::new();
    let names = stdout(&lab.run_cmd().args(["run", "--list"]).output().unwrap());
    let names: Vec<&str> = names
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert!(names.len() >= 7, "{names:?}");
    for n in names {
        let o = lab
            .run_cmd()
            .args(["run", n, "--dry-run", "--yes", "--scale", "0.01"])
            .output()
            .unwrap();
        assert!(
            stdout(&o).contains("  time limit per cell: "),
            "{n}: {}{}",
            stdout(&o),
            stderr(&o)
        );
    }
}

#[test]
fn a_bad_cell_time_limit_is_refused_in_one_line() {
    let lab = Lab::new();
    for bad in ["0s", "1d", "soon"] {
        let o = lab
            .run_cmd()
            .args(["run", "seed004", "--dry-run", "--cell-time-limit", bad])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{bad}: {}", stderr(&o));
        assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
        assert!(
            stderr(&o).starts_with(&format!("fslab: --cell-time-limit \"{bad}\"")),
            "{}",
            stderr(&o)
        );
    }
    let o = lab
        .run_cmd()
        .args([
            "run",
            "seed004",
            "--dry-run",
            "--yes",
            "--cell-time-limit",
            "90m",
        ])
        .output()
        .unwrap();
    assert!(
        stdout(&o).contains("time limit per cell: 1 h 30 min"),
        "{}",
        stdout(&o)
    );
}
