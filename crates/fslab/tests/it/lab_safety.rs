//! fslab run as root must never leave anything behind, nor touch what it
//! did not make: Ctrl-C, SIGKILL + `fslab cleanup`, existing devices, and
//! mounts that are not what they seem.

use std::process::Stdio;

use fslab_lab::image::Image;
use fslab_lab::loopdev::LoopDevice;
use fslab_lab::mkfs::{mkfs_argv, run_mkfs, FsType};
use fslab_lab::mount::{ensure_on, Mount};
use rustix::process::{kill_process, Pid, Signal};

use crate::support::*;

/// An ext4 cell whose workload (fsync after every 4 KiB file) lasts minutes,
/// with a sysctl and a memory cgroup, so there is something of each kind to undo.
fn long_cell(lab: &Lab) -> std::path::PathBuf {
    let ratio = std::fs::read_to_string("/proc/sys/vm/dirty_background_ratio")
        .unwrap()
        .trim()
        .parse::<u32>()
        .unwrap();
    lab.experiment(
        "long.toml",
        &format!(
            r#"
name = "long"
[device]
size = "1G"
image_dir = "IMAGES"
[machine]
sysctl = {{ "vm.dirty_background_ratio" = {} }}
memory_limit = "512M"
[workload]
kind = "fsmark"
args = ["-n", "200000", "-s", "4096", "-S1"]
[[target]]
fs = "ext4"
"#,
            ratio + 1
        ),
    )
}

/// The workload runs: its process is there, something is set up, and its
/// run is in the store.
fn started(lab: &Lab, parent: u32) -> bool {
    wait_for(60, || {
        !children_with(parent, "fsmark").is_empty()
            && !lab.leftovers().is_empty()
            && fslab_store::Store::open_read(&lab.db())
                .ok()
                .and_then(|s| s.list_runs().ok())
                .is_some_and(|r| !r.is_empty())
    })
}

/// Starts `fslab run EXPERIMENT`, SIGKILLs it once its workload runs, and
/// waits for the workload to die with its parent (so nothing keeps the
/// filesystems busy, and its own tracing is gone).
fn kill_9_once_started(lab: &Lab, experiment: &std::path::Path) {
    let mut child = lab.spawn_run(experiment, Stdio::null(), Stdio::null());
    let pid = child.id();
    assert!(started(lab, pid), "the workload never started");
    let workers = children_with(pid, "fsmark");
    kill_process(Pid::from_raw(pid as i32).unwrap(), Signal::KILL).unwrap();
    child.wait().unwrap();
    assert!(
        wait_for(10, || workers
            .iter()
            .all(|w| !std::path::Path::new(&format!("/proc/{w}")).exists())),
        "workload survived its parent"
    );
}

#[test]
fn ctrl_c_in_the_middle_of_a_cell_leaves_nothing_behind() {
    if !privileged("fslab run on loop devices") {
        return;
    }
    let _lock = machine_lock();
    let lab = Lab::new();
    let before = std::fs::read_to_string("/proc/sys/vm/dirty_background_ratio").unwrap();
    let f = long_cell(&lab);
    let child = lab.spawn_run(&f, Stdio::piped(), Stdio::piped());
    let pid = child.id();
    assert!(started(&lab, pid), "the workload never started");
    std::thread::sleep(std::time::Duration::from_millis(1500));
    kill_process(Pid::from_raw(pid as i32).unwrap(), Signal::INT).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert!(stderr(&out).contains("interrupted"), "{}", stderr(&out));
    assert_eq!(lab.leftovers(), Vec::<String>::new());
    assert_eq!(
        std::fs::read_to_string("/proc/sys/vm/dirty_background_ratio").unwrap(),
        before
    );
    let e = fslab_store::Store::open(&lab.db())
        .unwrap()
        .experiment(1)
        .unwrap();
    assert_eq!(e.status, fslab_model::RunStatus::Interrupted);
    let cg = e.cell_runs[0].cgroup.clone().unwrap();
    assert!(!std::path::Path::new(&cg).exists(), "cgroup {cg} removed");
    let run = fslab_store::Store::open(&lab.db())
        .unwrap()
        .run(e.cell_runs[0].run_id.unwrap())
        .unwrap();
    assert_eq!(run.run.status.as_str(), "interrupted");
    assert!(
        !fslab_model::LoopRow::from_metrics(&run.metrics).is_empty(),
        "what was measured is kept"
    );
}

#[test]
fn cleanup_undoes_what_a_killed_run_left() {
    if !privileged("fslab run on loop devices") {
        return;
    }
    let _lock = machine_lock();
    let lab = Lab::new();
    let before = std::fs::read_to_string("/proc/sys/vm/dirty_background_ratio").unwrap();
    let f = long_cell(&lab);
    kill_9_once_started(&lab, &f);
    let left = lab.leftovers();
    assert!(left.iter().any(|l| l.starts_with("mount ")), "{left:?}");
    assert!(left.iter().any(|l| l.starts_with("image ")), "{left:?}");

    let journal: String = std::fs::read_dir(lab.state())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".json"))
        .map(|e| std::fs::read_to_string(e.path()).unwrap())
        .collect();
    let o = lab.run_cmd().arg("cleanup").output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let report = stdout(&o) + &journal;
    // The loop device is bound with autoclear: the unmount releases it.
    for want in [
        "unmounted",
        "removed image",
        "restored vm.dirty_background_ratio",
        "removed cgroup",
    ] {
        assert!(
            report.contains(want),
            "cleanup should have {want:?}: {report}"
        );
    }
    assert_eq!(
        lab.leftovers(),
        Vec::<String>::new(),
        "after cleanup: {report}"
    );
    assert_eq!(
        std::fs::read_to_string("/proc/sys/vm/dirty_background_ratio").unwrap(),
        before
    );
    // A second cleanup finds nothing.
    let o = lab.run_cmd().arg("cleanup").output().unwrap();
    assert!(
        stdout(&o).starts_with("nothing to clean up"),
        "{}",
        stdout(&o)
    );
    // The killed run and its experiment are no longer "running".
    let e = fslab_store::Store::open_read(&lab.db())
        .unwrap()
        .experiment(1)
        .unwrap();
    assert_eq!(e.status, fslab_model::RunStatus::Interrupted);
    // (The cell's record is written when the cell ends: the killed one has
    // none, but its workload's run is in the store.)
    assert!(e.cell_runs.is_empty());
    let store = fslab_store::Store::open_read(&lab.db()).unwrap();
    let runs = store.list_runs().unwrap();
    assert_eq!(runs.len(), 1);
    let run = store.run(runs[0].id).unwrap();
    assert_eq!(run.run.status.as_str(), "interrupted");
    assert!(
        run.run
            .error
            .unwrap_or_default()
            .contains("ended without finishing"),
        "the record says what happened"
    );
}

#[test]
fn an_existing_device_is_formatted_only_when_named_and_empty() {
    if !privileged("loop devices") {
        return;
    }
    let lab = Lab::new();
    let img_dir = tempfile::tempdir().unwrap();
    let img = Image::create(&img_dir.path().join("dev.img"), 600 << 20).unwrap();
    let dev = LoopDevice::attach(img.path(), false).unwrap();
    run_mkfs(&mkfs_argv(&FsType::Ext4, &[], dev.path())).unwrap();
    let f = lab.experiment(
        "block.toml",
        &format!(
            "name = \"b\"\n[device]\nkind = \"block\"\npath = \"{}\"\n[workload]\nkind = \"fsmark\"\nargs = [\"-n\", \"50\", \"-s\", \"0\", \"-S0\"]\n[[target]]\nfs = \"ext4\"\n",
            dev.path().display()
        ),
    );
    let run = |extra: &[&str]| {
        lab.run_cmd()
            .arg("run")
            .arg(&f)
            .args(extra)
            .output()
            .unwrap()
    };
    let o = run(&[]);
    assert!(
        stdout(&o).contains("only when told so with --format-device"),
        "{}",
        stdout(&o)
    );
    let d = dev.path().to_str().unwrap();
    let o = run(&["--format-device", d]);
    assert!(
        stdout(&o).contains("holds an ext2/ext3/ext4 filesystem: refusing"),
        "{}",
        stdout(&o)
    );
    // Mounted: refused even with --force.
    let mnt = tempfile::tempdir().unwrap();
    let m = Mount::mount(dev.path(), mnt.path(), "ext4", "").unwrap();
    let o = run(&["--format-device", d, "--force"]);
    assert!(stdout(&o).contains("is in use"), "{}", stdout(&o));
    drop(m);
    // Named and forced: formatted, used, and left unmounted.
    let o = run(&["--format-device", d, "--force"]);
    assert!(
        o.status.success() && stdout(&o).contains("1 of 1 runs completed"),
        "{}{}",
        stdout(&o),
        stderr(&o)
    );
    assert!(!fslab_lab::mount::is_mount_point(mnt.path()));
}

#[test]
fn a_workload_directory_off_the_new_filesystem_is_refused() {
    if !privileged("loop devices") {
        return;
    }
    let img_dir = tempfile::tempdir().unwrap();
    let img = Image::create(&img_dir.path().join("v.img"), 256 << 20).unwrap();
    let dev = LoopDevice::attach(img.path(), false).unwrap();
    run_mkfs(&mkfs_argv(&FsType::Ext4, &[], dev.path())).unwrap();
    let mnt = tempfile::tempdir().unwrap();
    let m = Mount::mount(dev.path(), mnt.path(), "ext4", "").unwrap();
    assert!(ensure_on(mnt.path(), m.root_dev()).is_ok());
    // A directory that is not on the filesystem fslab mounted (as when a
    // mount silently failed) is refused before any workload writes to it.
    let host = tempfile::tempdir().unwrap();
    let e = ensure_on(host.path(), m.root_dev()).unwrap_err();
    assert!(e.is_refusal(), "{e:?}");
    let e = e.to_string();
    assert!(
        e.contains("not on the new filesystem") && e.contains("refusing"),
        "{e}"
    );
    drop(m);
    // Mounting a device onto a target where something else then shows up is caught too.
    let e = ensure_on(mnt.path(), dev.rdev()).unwrap_err();
    assert!(e.is_refusal() && e.to_string().contains("refusing"), "{e}");
}

/// A 20 TiB image in a host XFS that fslab makes (ext4 holds 16 TiB at most).
fn hosted_cell(lab: &Lab, host: &str, fsmark: &[&str]) -> std::path::PathBuf {
    let args: Vec<String> = fsmark.iter().map(|a| format!("{a:?}")).collect();
    lab.experiment(
        &format!("hosted-{host}.toml"),
        &format!(
            r#"
name = "hosted"
[device]
size = "20T"
image_dir = "IMAGES"
image_host = "{host}"
[workload]
kind = "fsmark"
args = [{}]
[[target]]
fs = "xfs"
mkfs_options = ["-l size=64m"]
"#,
            args.join(", ")
        ),
    )
}

#[test]
fn an_image_larger_than_image_dir_holds_goes_on_a_host_xfs() {
    if !privileged("fslab run on loop devices") || !need_tool("mkfs.xfs") {
        return;
    }
    let lab = Lab::new();
    // auto: a host only when image_dir cannot hold a 20 TiB file (ext4 cannot).
    let needs_host = !fslab_lab::image::fits(&lab.images(), 20 << 40).unwrap();
    for host in ["xfs", "auto"] {
        let lab = Lab::new();
        let f = hosted_cell(&lab, host, &["-n", "2000", "-s", "0", "-S0"]);
        // With --keep-images the host stays too: the kept images are inside it.
        let keep = host == "xfs";
        let mut cmd = lab.run_cmd();
        cmd.arg("run").arg(&f);
        if keep {
            cmd.arg("--keep-images");
        }
        let o = cmd.output().unwrap();
        assert!(o.status.success(), "{host}: {}", stderr(&o));
        let hosted = host == "xfs" || needs_host;
        assert_eq!(
            stderr(&o).contains("images go on a host XFS: /dev/loop"),
            hosted,
            "{host}: {}",
            stderr(&o)
        );
        let show = stdout(&lab.fslab().args(["results", "show", "1"]).output().unwrap());
        assert!(
            show.contains("made by experiment 1 (hosted), cell 0"),
            "{show}"
        );
        assert!(show.contains("(20 TiB sparse"), "{show}");
        assert!(
            show.contains("mkfs:        mkfs.xfs -f -q -l size=64m /dev/loop"),
            "{show}"
        );
        assert_eq!(
            show.contains("image host:  xfs on /dev/loop"),
            hosted,
            "{show}"
        );
        if hosted {
            assert!(show.contains("16.0 TiB sparse"), "{show}");
            assert!(show.contains("written at the end) on xfs"), "{show}");
        }
        if keep {
            assert!(stderr(&o).contains("kept the image host"), "{}", stderr(&o));
            let kept: Vec<_> = std::fs::read_dir(lab.images())
                .unwrap()
                .flatten()
                .map(|e| e.path())
                .collect();
            assert_eq!(kept.len(), 1, "{kept:?}");
            assert!(kept[0].to_string_lossy().ends_with("-host.img"));
            std::fs::remove_file(&kept[0]).unwrap();
        }
        assert_eq!(lab.leftovers(), Vec::<String>::new(), "{host}");
    }
    // Without a host, a 20 TiB image on ext4 is refused before anything is
    // made: the experiment asks for what its image_dir cannot hold, bad
    // input (status 2).
    if needs_host {
        let f = hosted_cell(&lab, "none", &["-n", "10"]);
        let o = lab.run_cmd().arg("run").arg(&f).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(
            stderr(&o).contains("does not fit") && stderr(&o).contains("image_host = \"auto\""),
            "{}",
            stderr(&o)
        );
        assert_eq!(lab.leftovers(), Vec::<String>::new());
    }
}

#[test]
fn cleanup_undoes_a_killed_run_and_its_image_host() {
    if !privileged("fslab run on loop devices") || !need_tool("mkfs.xfs") {
        return;
    }
    let _lock = machine_lock();
    let lab = Lab::new();
    let f = hosted_cell(&lab, "xfs", &["-n", "200000", "-s", "4096", "-S1"]);
    kill_9_once_started(&lab, &f);
    let left = lab.leftovers();
    // Two filesystems mounted (the host and the cell's; a killed workload's
    // private tracefs may be there too), the host image, two loop devices.
    assert_eq!(
        left.iter()
            .filter(|l| l.starts_with("mount ") && !l.contains(" - tracefs "))
            .count(),
        2,
        "{left:?}"
    );
    assert_eq!(
        left.iter().filter(|l| l.starts_with("loop ")).count(),
        2,
        "{left:?}"
    );
    assert!(left.iter().any(|l| l.starts_with("image ")), "{left:?}");
    // Cleanup undoes the cell's pieces before the host's.
    let o = lab.run_cmd().arg("cleanup").output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let report = stdout(&o);
    assert!(!report.contains("FAILED"), "{report}");
    let unmounts: Vec<&str> = report.lines().filter(|l| l.contains("unmounted")).collect();
    assert_eq!(unmounts.len(), 2, "{report}");
    assert!(unmounts[1].ends_with("image-host"), "{report}");
    assert_eq!(
        lab.leftovers(),
        Vec::<String>::new(),
        "after cleanup: {report}"
    );
}

#[test]
fn paths_with_spaces_are_read_back_from_mountinfo() {
    if !privileged("fslab run on loop devices") {
        return;
    }
    let lab = Lab::new();
    // mountinfo writes a space as \040: the mount check must undo that.
    let images = lab.images().join("with space");
    std::fs::create_dir(&images).unwrap();
    let state = lab.path("state dir");
    let f = lab.experiment(
        "space.toml",
        r#"
name = "space"
[device]
size = "512M"
image_dir = "IMAGES/with space"
[workload]
kind = "fsmark"
args = ["-n", "100", "-s", "0", "-S0"]
[[target]]
fs = "ext4"
"#,
    );
    let o = lab
        .run_cmd()
        .env("FSLAB_STATE_DIR", &state)
        .arg("run")
        .arg(&f)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let show = stdout(&lab.fslab().args(["results", "show", "1"]).output().unwrap());
    assert!(
        show.contains(&format!("mounted at {}/mnt-", state.display())),
        "{show}"
    );
    assert!(show.contains("(ext4, mounted at"), "{show}");
    assert_eq!(std::fs::read_dir(&state).unwrap().count(), 0);
    assert_eq!(std::fs::read_dir(&images).unwrap().count(), 0);
    assert!(!fslab_model::mountinfo::read()
        .iter()
        .any(|m| m.mount_point.starts_with(state.to_str().unwrap())));
}
