//! fslab run as root, tried as a hostile or careless user would: every
//! dangerous input is refused before anything is made (one line, exit 2),
//! and every fault leaves nothing behind and a record that says what
//! happened.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use fslab_lab::image::Image;
use fslab_lab::loopdev::LoopDevice;
use fslab_lab::mkfs::{mkfs_argv, run_mkfs, FsType};
use fslab_lab::mount::Mount;
use rustix::process::{kill_process, kill_process_group, Pid, Signal};

use crate::support::*;

/// A loop device fslab did not make, holding an ext4 with a known file,
/// not mounted: what a hostile experiment would try to format.
struct Victim {
    dev: Option<LoopDevice>,
    _image: Image,
    _dir: tempfile::TempDir,
    digest: Vec<u8>,
}

const PRECIOUS: &[u8] = b"the victim's data, which fslab must never touch\n";

impl Victim {
    fn new() -> Victim {
        let dir = tempfile::tempdir().unwrap();
        let image = Image::create(&dir.path().join("victim.img"), 256 << 20).unwrap();
        let dev = LoopDevice::attach(image.path(), false).unwrap();
        run_mkfs(&mkfs_argv(&FsType::Ext4, &[], dev.path())).unwrap();
        let mnt = tempfile::tempdir().unwrap();
        {
            let m = Mount::mount(dev.path(), mnt.path(), "ext4", "").unwrap();
            std::fs::write(mnt.path().join("precious"), PRECIOUS).unwrap();
            m.unmount().unwrap();
        }
        let mut v = Victim {
            dev: Some(dev),
            _image: image,
            _dir: dir,
            digest: Vec::new(),
        };
        v.digest = v.head();
        v
    }

    fn path(&self) -> PathBuf {
        self.dev.as_ref().unwrap().path().to_path_buf()
    }

    /// The first 8 MiB of the device (superblocks, journal start, the file).
    fn head(&self) -> Vec<u8> {
        let mut f = std::fs::File::open(self.path()).unwrap();
        let mut buf = vec![0u8; 8 << 20];
        f.read_exact(&mut buf).unwrap();
        buf
    }

    fn assert_intact(&self) {
        assert!(
            self.head() == self.digest,
            "the victim device was written to"
        );
        let mnt = tempfile::tempdir().unwrap();
        let m = Mount::mount(&self.path(), mnt.path(), "ext4", "ro").unwrap();
        assert_eq!(
            std::fs::read(mnt.path().join("precious")).unwrap(),
            PRECIOUS
        );
        m.unmount().unwrap();
    }
}

impl Drop for Victim {
    fn drop(&mut self) {
        drop(self.dev.take());
    }
}

fn one_line_refusal(o: &std::process::Output, what: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "{what}: {err}");
    let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "{what}: one line: {err}");
    assert!(lines[0].starts_with("fslab: "), "{what}: {err}");
}

/// What an experiment asks for that is not there (an image directory, a
/// sysctl this kernel lacks) is bad input, refused in one line with status
/// 2 before anything is made; what the machine lacks is not.
#[test]
fn what_an_experiment_asks_for_that_is_not_there_is_bad_input() {
    if !privileged("fslab run's preflight as root") {
        return;
    }
    let lab = Lab::new();
    let missing = lab.path("no-such-dir");
    let exp = |dir: &Path, target: &str| {
        format!(
            "name = \"p\"\n[device]\nsize = \"1G\"\nimage_dir = \"{}\"\n[workload]\nkind = \"fsmark\"\nargs = [\"-n\", \"10\"]\n[[target]]\nfs = \"ext4\"\n{target}",
            dir.display()
        )
    };
    let f = lab.experiment("p1.toml", &exp(&missing, ""));
    let o = lab.run_cmd().arg("run").arg(&f).output().unwrap();
    one_line_refusal(&o, "a missing image_dir");
    assert!(
        stderr(&o).contains(&format!(
            "device.image_dir {} does not exist",
            missing.display()
        )),
        "{}",
        stderr(&o)
    );
    let f = lab.experiment(
        "p2.toml",
        &exp(
            &lab.images(),
            "sysctl = { \"vm.no_such_knob_fslab\" = 1 }\n",
        ),
    );
    let o = lab.run_cmd().arg("run").arg(&f).output().unwrap();
    one_line_refusal(&o, "a sysctl the kernel lacks");
    assert!(
        stderr(&o).contains("vm.no_such_knob_fslab"),
        "{}",
        stderr(&o)
    );
    assert_eq!(lab.leftovers(), Vec::<String>::new());
}

#[test]
fn hostile_experiments_are_refused_before_anything_is_made() {
    if !privileged("a victim loop device") || !need_tool("mkfs.btrfs") || !need_tool("mkfs.xfs") {
        return;
    }
    let lab = Lab::new();
    let victim = Victim::new();
    let v = victim.path().display().to_string();
    let canary = lab.path("canary");
    let c = canary.display().to_string();
    let pid = std::process::id();
    let sysctl_victim = format!(".tmp.fslab_victim_{pid}");
    let dir_dev = |p: &str| {
        format!(
            "name = \"h\"\n[device]\nkind = \"directory\"\npath = \"{p}\"\n[workload]\nkind = \"fsmark\"\nargs = [\"-n\", \"10\"]\n"
        )
    };
    let image = |target: &str, workload: &str| {
        format!(
            "name = \"h\"\n[device]\nsize = \"1G\"\nimage_dir = \"IMAGES\"\n[workload]\n{workload}\n[[target]]\n{target}\n"
        )
    };
    let fsmark = "kind = \"fsmark\"\nargs = [\"-n\", \"10\", \"-s\", \"0\"]";
    let fsmark_with = |a: &str| format!("kind = \"fsmark\"\nargs = [{a}]");
    let corpus: Vec<(&str, String)> = vec![
        ("mkfs.btrfs given another device", image(&format!("fs = \"btrfs\"\nmkfs_options = [\"{v}\"]"), fsmark)),
        ("xfs external log on another device", image(&format!("fs = \"xfs\"\nmkfs_options = [\"-l logdev={v}\"]"), fsmark)),
        ("ext4 populated from a host directory", image("fs = \"ext4\"\nmkfs_options = [\"-d /etc\"]", fsmark)),
        ("mkfs.btrfs given a bare file name", image("fs = \"btrfs\"\nmkfs_options = [\"..\"]", fsmark)),
        ("mount option naming another device", image(&format!("fs = \"xfs\"\nmount_options = [\"logdev={v}\"]"), fsmark)),
        ("ext4 journal_path mount option", image(&format!("fs = \"ext4\"\nmount_options = [\"journal_path={v}\"]"), fsmark)),
        ("ext4 journal_dev by number", image("fs = \"ext4\"\nmount_options = [\"journal_dev=1792\"]", fsmark)),
        ("a sysctl name that maps to an absolute path", image(&format!("fs = \"ext4\"\nsysctl = {{ \"{sysctl_victim}\" = \"x\" }}"), fsmark)),
        ("a sysctl that runs programs as root", image("fs = \"ext4\"\nsysctl = { \"kernel.core_pattern\" = \"|/bin/true\" }", fsmark)),
        ("a sysctl that panics the machine", image("fs = \"ext4\"\nsysctl = { \"vm.panic_on_oom\" = 1 }", fsmark)),
        ("after_mkfs through a shell", image(&format!("fs = \"ext4\"\nafter_mkfs = [\"sh -c touch {c}\"]"), fsmark)),
        ("after_mkfs on another device", image(&format!("fs = \"ext4\"\nafter_mkfs = [\"tune2fs -O ^has_journal {v}\"]"), fsmark)),
        ("after_mkfs by path", image("fs = \"ext4\"\nafter_mkfs = [\"/sbin/tune2fs -l {device}\"]", fsmark)),
        ("fsmark -d in joined form", image("fs = \"ext4\"", &fsmark_with("\"-d/tmp/x\""))),
        ("fsmark log file outside", image("fs = \"ext4\"", &fsmark_with(&format!("\"-l\", \"{c}\"")))),
        ("fsmark --db of another store", image("fs = \"ext4\"", &fsmark_with(&format!("\"--db\", \"{c}\"")))),
        ("fsmark --text-to", image("fs = \"ext4\"", &fsmark_with(&format!("\"--text-to={c}\"")))),
        ("fsmark -n abc", image("fs = \"ext4\"", &fsmark_with("\"-n\", \"abc\""))),
        ("fsmark --bogus", image("fs = \"ext4\"", &fsmark_with("\"--bogus\""))),
        ("createmany climbing out of the cell", image("fs = \"ext4\"", "kind = \"createmany\"\nargs = [\"-m\", \"{dir}/../../../x\", \"10\"]")),
        ("alloctest file outside", image("fs = \"ext4\"", &format!("kind = \"alloctest\"\nargs = [\"{{dir}}/../../../../../../../..{c}\", \"1M\"]"))),
        ("dbench in /", image("fs = \"ext4\"", "kind = \"dbench\"\nargs = [\"-D\", \"{dir}/../../../../../../../..\", \"-t\", \"1\", \"1\"]")),
        ("images in /proc", "name = \"h\"\n[device]\nimage_dir = \"/proc\"\n[workload]\nkind = \"fsmark\"\nargs = [\"-n\", \"10\"]\n[[target]]\nfs = \"ext4\"\n".to_string()),
        ("a directory device at /", dir_dev("/")),
        ("a directory device at /tmp", dir_dev("/tmp")),
        ("a directory device at /etc", dir_dev("/etc")),
    ];
    for (what, text) in &corpus {
        let f = lab.experiment("hostile.toml", text);
        let dry = lab
            .run_cmd()
            .arg("run")
            .arg(&f)
            .arg("--dry-run")
            .output()
            .unwrap();
        one_line_refusal(&dry, &format!("{what} (dry run)"));
        let real = lab.run_cmd().arg("run").arg(&f).output().unwrap();
        one_line_refusal(&real, what);
        assert_eq!(lab.leftovers(), Vec::<String>::new(), "{what}");
        assert!(!canary.exists(), "{what}: wrote {c}");
        assert!(
            !Path::new(&format!("/tmp/fslab_victim_{pid}")).exists(),
            "{what}"
        );
    }
    victim.assert_intact();
    // Nothing was recorded: the store was never even opened.
    assert!(!lab.db().exists());
}

#[test]
fn a_directory_that_holds_other_files_needs_force() {
    let lab = Lab::new();
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    std::fs::write(dir.path().join("precious"), b"x").unwrap();
    let f = lab.experiment(
        "d.toml",
        &format!(
            "name = \"d\"\n[device]\nkind = \"directory\"\npath = \"{}\"\n[workload]\nkind = \"fsmark\"\nargs = [\"-n\", \"10\", \"-s\", \"0\"]\n",
            dir.path().display()
        ),
    );
    let o = lab.run_cmd().arg("run").arg(&f).output().unwrap();
    one_line_refusal(&o, "a foreign directory");
    assert!(stderr(&o).contains("--force"), "{}", stderr(&o));
    let o = lab
        .run_cmd()
        .args(["run", "--force"])
        .arg(&f)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read(dir.path().join("precious")).unwrap(), b"x");
}

#[test]
fn sysctls_and_programs_outside_the_language_need_a_flag_and_are_shown() {
    let lab = Lab::new();
    let f = lab.experiment(
        "s.toml",
        "name = \"s\"\n[device]\nsize = \"1G\"\nimage_dir = \"IMAGES\"\n[machine]\nsysctl = { \"kernel.sched_autogroup_enabled\" = 1 }\n[workload]\nkind = \"fsmark\"\nargs = [\"-n\", \"10\"]\n[[target]]\nfs = \"ext4\"\nafter_mkfs = [\"dumpe2fs -h {device}\"]\n",
    );
    let o = lab
        .run_cmd()
        .arg("run")
        .arg(&f)
        .arg("--dry-run")
        .output()
        .unwrap();
    one_line_refusal(&o, "kernel.* sysctl");
    assert!(stderr(&o).contains("--allow-sysctl kernel.sched_autogroup_enabled"));
    let o = lab
        .run_cmd()
        .args([
            "run",
            "--dry-run",
            "--allow-sysctl",
            "kernel.sched_autogroup_enabled",
        ])
        .arg(&f)
        .output()
        .unwrap();
    one_line_refusal(&o, "dumpe2fs");
    assert!(stderr(&o).contains("--allow-command dumpe2fs"));
    let o = lab
        .run_cmd()
        .args([
            "run",
            "--dry-run",
            "--allow-sysctl",
            "kernel.sched_autogroup_enabled",
            "--allow-command",
            "dumpe2fs",
        ])
        .arg(&f)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("allowed on the command line: sysctl kernel.sched_autogroup_enabled"),
        "{out}"
    );
    assert!(
        out.contains("allowed on the command line: after_mkfs: dumpe2fs -h {device}"),
        "{out}"
    );
}

#[test]
fn a_db_option_naming_a_missing_directory_creates_nothing() {
    let lab = Lab::new();
    let missing = lab.path("no/such/dir");
    let o = std::process::Command::new(assert_cmd::cargo::cargo_bin("fslab"))
        .arg("--db")
        .arg(missing.join("x.sqlite"))
        .args(["results", "list"])
        .output()
        .unwrap();
    one_line_refusal(&o, "--db in a missing directory");
    assert!(!lab.path("no").exists());
}

/// An ext4 experiment whose fs_mark (fsync after every 4 KiB file) lasts minutes.
fn long_experiment(lab: &Lab, name: &str, extra: &str) -> PathBuf {
    lab.experiment(
        name,
        &format!(
            "name = \"long\"\n[device]\nsize = \"1G\"\nimage_dir = \"IMAGES\"\n{extra}\n[workload]\nkind = \"fsmark\"\nargs = [\"-n\", \"200000\", \"-s\", \"4096\", \"-S1\"]\n[[target]]\nfs = \"ext4\"\n"
        ),
    )
}

fn journals_named(dir: &Path, prefix: &str) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.path())
                .filter(|p| {
                    p.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| n.starts_with(prefix) && n.ends_with(".json"))
                })
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_workload_killed_like_the_oom_killer_does_leaves_no_tracefs_instance() {
    if !privileged("fslab run with tracing") {
        return;
    }
    let _lock = machine_lock();
    let lab = Lab::new();
    let f = long_experiment(&lab, "k.toml", "");
    let child = lab.spawn_run(&f, Stdio::piped(), Stdio::piped());
    let pid = child.id();
    assert!(
        wait_for(60, || !journals_named(&lab.state(), "probes-").is_empty()
            && children_with(pid, "fsmark").len() == 1),
        "the probes never journalled a tracefs instance, or the workload never started"
    );
    let workload = children_with(pid, "fsmark");
    assert_eq!(workload.len(), 1, "{workload:?}");
    // The probes run in fslab run, beside the workload, not inside it.
    let threads = |pid: u32| -> Vec<String> {
        std::fs::read_dir(format!("/proc/{pid}/task"))
            .unwrap()
            .flatten()
            .filter_map(|t| std::fs::read_to_string(t.path().join("comm")).ok())
            .map(|c| c.trim().to_string())
            .collect()
    };
    let (inside, beside) = (threads(workload[0]), threads(pid));
    assert!(
        !inside.iter().any(|t| t.starts_with("fslab-")),
        "{inside:?}"
    );
    assert!(beside.iter().any(|t| t == "fslab-trace"), "{beside:?}");
    let journal = std::fs::read_to_string(&journals_named(&lab.state(), "probes-")[0]).unwrap();
    assert!(journal.contains("tracefs_instance"), "{journal}");
    kill_process(Pid::from_raw(workload[0] as i32).unwrap(), Signal::KILL).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("signal 9"), "{}", stderr(&out));
    assert_eq!(lab.leftovers(), Vec::<String>::new());
    let e = fslab_store::Store::open_read(&lab.db())
        .unwrap()
        .experiment(1)
        .unwrap();
    assert_eq!(e.status, fslab_model::RunStatus::Failed);
    assert!(
        e.cell_runs[0]
            .error
            .as_deref()
            .unwrap_or("")
            .contains("signal 9"),
        "{:?}",
        e.cell_runs[0].error
    );
}

#[test]
fn cleanup_touches_only_what_its_own_journals_list() {
    if !privileged("tracing") {
        return;
    }
    let fs = LoopFs::new(FsType::Ext4, 1 << 30, &[]);
    let lab = Lab::new();
    let elsewhere = lab.path("other-state");
    let mut run = lab
        .run_cmd()
        .args(["fsmark", "-n", "200000", "-s", "4096", "-S1", "-d"])
        .arg(fs.path().join("d"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // The journal lists the instance once it is made (when tracefs is not
    // mounted, after the mount fslab makes for it first).
    let instance = || -> Option<PathBuf> {
        let journal = journals_named(&lab.state(), "probes-").into_iter().next()?;
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(journal).ok()?).ok()?;
        v["resources"]
            .as_array()?
            .iter()
            .find(|r| r[1]["kind"] == "tracefs_instance")
            .map(|r| PathBuf::from(r[1]["path"].as_str().unwrap_or_default()))
    };
    assert!(
        wait_for(60, || instance().is_some()),
        "no probes journal with a tracefs instance"
    );
    let instance = instance().unwrap();
    assert!(instance.exists());
    // Another state directory's cleanup has nothing to do with it ...
    let o = lab
        .run_cmd()
        .env("FSLAB_STATE_DIR", &elsewhere)
        .arg("cleanup")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(instance.exists(), "{}", stdout(&o));
    // ... and its own leaves a live process alone.
    let o = lab.run_cmd().arg("cleanup").output().unwrap();
    assert!(stdout(&o).contains("still running"), "{}", stdout(&o));
    assert!(instance.exists());
    kill_process(Pid::from_raw(run.id() as i32).unwrap(), Signal::INT).unwrap();
    run.wait().unwrap();
    assert!(!instance.exists(), "the workload removed its own instance");
    assert!(journals_named(&lab.state(), "probes-").is_empty());
}

#[test]
fn a_state_journal_that_cannot_be_written_acquires_nothing() {
    if !privileged("tmpfs and loop devices") {
        return;
    }
    let lab = Lab::new();
    // Room for the journal alone: its next rewrite (a temporary file) finds no inode.
    let state = Tmpfs::mount("nr_inodes=2");
    let f = long_experiment(&lab, "j.toml", "");
    let o = lab
        .run_cmd()
        .env("FSLAB_STATE_DIR", state.path())
        .arg("run")
        .arg(&f)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let all = stdout(&o) + &stderr(&o);
    assert!(all.contains("cannot write the state journal"), "{all}");
    assert_eq!(lab.leftovers(), Vec::<String>::new());
    let images: Vec<_> = std::fs::read_dir(lab.images()).unwrap().collect();
    assert!(images.is_empty(), "{images:?}");
}

fn sysctl(name: &str) -> String {
    std::fs::read_to_string(format!("/proc/sys/{}", name.replace('.', "/")))
        .unwrap()
        .trim()
        .to_string()
}

#[test]
fn two_runs_never_fight_over_one_sysctl() {
    if !privileged("sysctls") {
        return;
    }
    let _lock = machine_lock();
    let before = sysctl("vm.dirty_background_ratio");
    let b: u32 = before.parse().unwrap();
    let (a_val, b_val) = ((b + 1).to_string(), (b + 2).to_string());
    // Two labs: two state directories, one machine.
    let (lab_a, lab_b) = (Lab::new(), Lab::new());
    let fa = long_experiment(
        &lab_a,
        "a.toml",
        &format!("[machine]\nsysctl = {{ \"vm.dirty_background_ratio\" = {a_val} }}"),
    );
    let fb = lab_b.experiment(
        "b.toml",
        &format!(
            "name = \"short\"\n[device]\nsize = \"1G\"\nimage_dir = \"IMAGES\"\n[machine]\nsysctl = {{ \"vm.dirty_background_ratio\" = {b_val} }}\n[workload]\nkind = \"fsmark\"\nargs = [\"-n\", \"100\", \"-s\", \"0\"]\n[[target]]\nfs = \"ext4\"\n"
        ),
    );
    let mut a = lab_a
        .run_cmd()
        .arg("run")
        .arg(&fa)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    assert!(wait_for(60, || sysctl("vm.dirty_background_ratio") == a_val));
    let bproc = lab_b
        .run_cmd()
        .arg("run")
        .arg(&fb)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_secs(2));
    assert_eq!(sysctl("vm.dirty_background_ratio"), a_val, "B waits for A");
    kill_process(Pid::from_raw(a.id() as i32).unwrap(), Signal::INT).unwrap();
    assert_eq!(a.wait().unwrap().code(), Some(130), "A was interrupted");
    let out_b = bproc.wait_with_output().unwrap();
    assert!(out_b.status.success(), "{}", stderr(&out_b));
    assert!(
        stderr(&out_b).contains("waiting for sysctl vm.dirty_background_ratio"),
        "{}",
        stderr(&out_b)
    );
    assert_eq!(sysctl("vm.dirty_background_ratio"), before, "restored");
    let e = fslab_store::Store::open_read(&lab_b.db())
        .unwrap()
        .experiment(1)
        .unwrap();
    let r = &e.cell_runs[0];
    assert_eq!(
        r.sysctl_before["vm.dirty_background_ratio"], before,
        "the true original"
    );
    assert_eq!(
        r.sysctl_during["vm.dirty_background_ratio"], b_val,
        "what the cell ran with"
    );
}

#[test]
fn ctrl_c_on_a_terminal_ends_the_cell_once_and_keeps_its_partial_loop() {
    if !privileged("fslab run on loop devices") {
        return;
    }
    let _lock = machine_lock();
    let lab = Lab::new();
    let f = long_experiment(&lab, "c.toml", "");
    // A terminal's Ctrl-C signals the whole foreground process group.
    let mut cmd = lab.run_cmd();
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let child = cmd
        .arg("run")
        .arg(&f)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    assert!(wait_for(60, || !children_with(pid, "fsmark").is_empty()));
    std::thread::sleep(std::time::Duration::from_millis(1500));
    kill_process_group(Pid::from_raw(pid as i32).unwrap(), Signal::INT).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    let e = fslab_store::Store::open_read(&lab.db())
        .unwrap()
        .experiment(1)
        .unwrap();
    assert_eq!(e.status, fslab_model::RunStatus::Interrupted);
    assert_eq!(
        e.cell_runs[0].status.map(|s| s.as_str()),
        Some("interrupted"),
        "{:?}",
        e.cell_runs[0].error
    );
    let run = fslab_store::Store::open_read(&lab.db())
        .unwrap()
        .run(e.cell_runs[0].run_id.unwrap())
        .unwrap();
    assert!(
        !fslab_model::LoopRow::from_metrics(&run.metrics).is_empty(),
        "the partial loop row is kept"
    );
    assert_eq!(lab.leftovers(), Vec::<String>::new());
}

#[test]
fn workloads_refuse_runs_that_cannot_work_and_leave_no_giant_file() {
    let lab = Lab::new();
    let ro = lab.path("ro");
    std::fs::create_dir(&ro).unwrap();
    let o = lab.run(&["dbench", "--loops", "0", "-D", ro.to_str().unwrap(), "1"]);
    one_line_refusal(&o, "dbench --loops 0");
    let big = lab.path("big");
    let o = lab.run(&["alloctest", big.to_str().unwrap(), "1E", "--probes", "none"]);
    assert_ne!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(!big.exists(), "a 1 EiB sparse file was left");
    if !privileged("a read-only tmpfs") {
        return;
    }
    let rofs = Tmpfs::mount("ro");
    let o = lab.run(&[
        "dbench",
        "--loops",
        "1",
        "-D",
        rofs.path().to_str().unwrap(),
        "--probes",
        "none",
        "1",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("cannot create"), "{}", stderr(&o));
}

#[test]
fn reading_commands_work_on_a_store_on_a_read_only_filesystem() {
    if !privileged("a read-only tmpfs") {
        return;
    }
    let lab = Lab::new();
    let fs = Tmpfs::mount("");
    let db = fs.path().join("results.sqlite");
    let work = lab.path("w");
    let o = std::process::Command::new(assert_cmd::cargo::cargo_bin("fslab"))
        .arg("--db")
        .arg(&db)
        .args([
            "fsmark",
            "-n",
            "50",
            "-s",
            "0",
            "--probes",
            "none",
            "-l",
            "/dev/null",
            "-d",
        ])
        .arg(&work)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    rustix::mount::mount_remount(fs.path(), rustix::mount::MountFlags::RDONLY, "").unwrap();
    for args in [
        &["results", "list"][..],
        &["results", "show", "1"],
        &["results", "experiments"],
    ] {
        let o = std::process::Command::new(assert_cmd::cargo::cargo_bin("fslab"))
            .arg("--db")
            .arg(&db)
            .args(args)
            .output()
            .unwrap();
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    }
    let o = std::process::Command::new(assert_cmd::cargo::cargo_bin("fslab"))
        .arg("--db")
        .arg(&db)
        .args(["results", "list"])
        .output()
        .unwrap();
    assert!(
        stdout(&o).lines().nth(1).unwrap().starts_with("1 "),
        "{}",
        stdout(&o)
    );
}

/// Random experiment files through the real binary: a dry run either
/// succeeds or refuses in one line with exit 2, and never panics.
#[test]
fn random_experiment_files_never_crash_the_binary() {
    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestRunner};
    let lab = Lab::new();
    let word = prop_oneof![
        Just("{dir}/f".to_string()),
        Just("/dev/loop0".to_string()),
        Just("-n".to_string()),
        Just("10".to_string()),
        Just("--bogus".to_string()),
        "[ -~]{0,10}",
    ];
    let strategy = (
        prop::sample::select(
            fslab_workload::plugin::all()
                .into_iter()
                .map(fslab_workload::WorkloadRef::name)
                .collect::<Vec<_>>(),
        ),
        prop::collection::vec(word.clone(), 0..6),
        prop::collection::vec(word, 0..3),
        "[a-z.]{0,16}",
    );
    let mut runner = TestRunner::new(Config {
        cases: 40,
        failure_persistence: None,
        ..Config::default()
    });
    runner
        .run(&strategy, |(kind, args, mkfs, sysctl)| {
            let q = |v: &[String]| v.iter().map(|w| format!("{w:?}")).collect::<Vec<_>>().join(", ");
            let f = lab.experiment(
                "r.toml",
                &format!(
                    "name = \"r\"\n[device]\nsize = \"1G\"\nimage_dir = \"IMAGES\"\n[machine]\nsysctl = {{ {sysctl:?} = 1 }}\n[workload]\nkind = {kind:?}\nargs = [{}]\n[[target]]\nfs = \"ext4\"\nmkfs_options = [{:?}]\n",
                    q(&args),
                    mkfs.join(" ")
                ),
            );
            let o = lab.run_cmd().args(["run", "--dry-run"]).arg(&f).output().unwrap();
            let err = stderr(&o);
            prop_assert!(!err.contains("internal error"), "{}", err);
            match o.status.code() {
                Some(0) => {}
                Some(2) => prop_assert_eq!(err.lines().filter(|l| !l.is_empty()).count(), 1, "{}", err),
                other => prop_assert!(false, "exit {:?}: {}", other, err),
            }
            Ok(())
        })
        .unwrap();
}
