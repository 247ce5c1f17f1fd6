//! `fslab run`: matrices of real filesystems on loop devices (root needed),
//! and the parts that need no root (dry runs, bad files, directory devices).

use std::process::Stdio;

use fslab_store::Store;

use crate::support::*;

const TWO_FS: &str = r#"
name = "two-fs"
repetitions = 2
[device]
size = "600M"
image_dir = "IMAGES"
[workload]
kind = "fsmark"
args = ["-n", "300", "-s", "4096", "-S0", "-t", "2", "--phases", "create,stat,unlink"]
dirs = 2
[[target]]
fs = "ext4"
[[target]]
fs = "xfs"
"#;

#[test]
fn a_two_filesystem_matrix_with_repetitions_is_run_and_recorded() {
    if !privileged("fslab run on loop devices") || !need_tool("mkfs.xfs") {
        return;
    }
    let lab = Lab::new();
    let f = lab.experiment("two.toml", TWO_FS);
    let o = lab.run_cmd().arg("run").arg(&f).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("4 of 4 runs completed"), "{out}");
    // The summary's header (the machines' lines before it name the cells
    // too: "  ext4: note: CPU clock ...").
    let header = out
        .lines()
        .find(|l| l.trim_start().starts_with("ext4") && !l.contains(": "))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(header.contains("xfs"), "{header}");
    assert!(
        out.contains("create rate (ops/s)") && out.contains("(n=2)") && out.contains("unmount (s)"),
        "{out}"
    );

    let store = Store::open(&lab.db()).unwrap();
    let id = store.latest_experiment().unwrap().unwrap();
    let e = store.experiment(id).unwrap();
    assert_eq!(e.cells.len(), 2);
    assert_eq!(
        e.cells[0].mkfs_version.split_whitespace().next(),
        Some("mke2fs")
    );
    assert_eq!(e.cell_runs.len(), 4);
    for r in &e.cell_runs {
        assert_eq!(r.status.map(|s| s.as_str()), Some("complete"), "{r:?}");
        assert!(r.loop_device.starts_with("/dev/loop"), "{r:?}");
        assert!(r.unmount_s.is_some() && r.remount_s.is_some());
        assert!(r.output.contains("FSUse%"), "the workload's table is kept");
        let run = store.run(r.run_id.unwrap()).unwrap();
        let fs = &e.cells[r.cell as usize].fs_type;
        assert_eq!(&run.run.fs_type, fs);
        assert_eq!(run.run.mount_source, r.loop_device);
        assert_eq!(run.phases.len(), 3);
        assert_eq!(run.phases[0].ops, 600);
        if fs == "ext4" {
            assert!(
                r.kernel_mount_options.contains("noinit_itable"),
                "{}",
                r.kernel_mount_options
            );
            assert_eq!(r.mkfs_argv[..3], ["mkfs.ext4", "-F", "-q"]);
        }
    }
    // Interleaved order: repetition 1 of both cells before repetition 2.
    assert_eq!(lab.leftovers(), Vec::<String>::new());
}

#[test]
fn a_failing_cell_does_not_stop_the_others() {
    if !privileged("fslab run on loop devices") || !need_tool("mkfs.xfs") {
        return;
    }
    let lab = Lab::new();
    let f = lab.experiment(
        "v4.toml",
        r#"
name = "v4"
[device]
size = "512M"
image_dir = "IMAGES"
[workload]
kind = "fsmark"
args = ["-n", "100", "-s", "0", "-S0"]
[[target]]
fs = "xfs"
mkfs_options = ["-m crc=0"]
[[target]]
fs = "ext4"
"#,
    );
    let o = lab.run_cmd().arg("run").arg(&f).output().unwrap();
    // The other cell runs and the summary is printed; the exit status says
    // that not every run completed.
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("1 of 2 runs failed"), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("1 of 2 runs completed"), "{out}");
    let failed = out
        .lines()
        .find(|l| l.starts_with("failed: cell 0"))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(
        failed.contains("Deprecated V4"),
        "the kernel's reason is given: {failed}"
    );
    let store = Store::open(&lab.db()).unwrap();
    let e = store.experiment(1).unwrap();
    assert_eq!(e.status, fslab_model::RunStatus::Failed);
    assert!(e.cell_runs[0]
        .error
        .as_deref()
        .unwrap()
        .contains("Deprecated V4"));
    assert_eq!(e.cell_runs[1].status.map(|s| s.as_str()), Some("complete"));
    assert_eq!(lab.leftovers(), Vec::<String>::new());
    // The report shows the failed cell with the kernel's reason.
    drop(store);
    let o = lab.run_cmd().args(["report", "-o", "-"]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let page = stdout(&o);
    assert!(
        page.contains("did not complete"),
        "the report says a run failed"
    );
    assert!(page.contains("Deprecated V4"), "with its error");
    // compare says which cell it left out, and refuses a selection with
    // no completed run instead of printing an empty table.
    let o = lab.run_cmd().arg("compare").output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("no completed run, left out of the comparison"),
        "{}",
        stderr(&o)
    );
    let only = lab.experiment(
        "v4-only.toml",
        r#"
name = "v4-only"
[device]
size = "512M"
image_dir = "IMAGES"
[workload]
kind = "fsmark"
args = ["-n", "100", "-s", "0", "-S0"]
[[target]]
fs = "xfs"
mkfs_options = ["-m crc=0"]
"#,
    );
    let o = lab.run_cmd().arg("run").arg(&only).output().unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let o = lab.run_cmd().arg("compare").output().unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("nothing to compare") && stdout(&o).is_empty(),
        "{}{}",
        stdout(&o),
        stderr(&o)
    );
}

#[test]
fn sysctls_hold_during_the_cell_and_are_restored() {
    if !privileged("sysctls") {
        return;
    }
    let _lock = machine_lock();
    let lab = Lab::new();
    let before = std::fs::read_to_string("/proc/sys/vm/dirty_ratio")
        .unwrap()
        .trim()
        .to_string();
    let want = (before.parse::<u32>().unwrap() + 3).to_string();
    let f = lab.experiment(
        "sysctl.toml",
        &format!(
            r#"
name = "sysctl"
[device]
size = "1G"
image_dir = "IMAGES"
[machine]
sysctl = {{ "vm.dirty_ratio" = {want} }}
[workload]
kind = "fsmark"
args = ["-n", "300", "-s", "4096", "-S1"]
[[target]]
fs = "ext4"
"#
        ),
    );
    let mut child = lab.spawn_run(&f, Stdio::null(), Stdio::piped());
    let seen = wait_for(60, || {
        std::fs::read_to_string("/proc/sys/vm/dirty_ratio")
            .unwrap()
            .trim()
            == want
    });
    let st = child.wait().unwrap();
    assert!(seen, "vm.dirty_ratio was never {want} during the run");
    assert!(st.success());
    assert_eq!(
        std::fs::read_to_string("/proc/sys/vm/dirty_ratio")
            .unwrap()
            .trim(),
        before,
        "restored"
    );
    let e = Store::open(&lab.db()).unwrap().experiment(1).unwrap();
    assert_eq!(e.cells[0].sysctl.get("vm.dirty_ratio"), Some(&want));
    assert_eq!(
        e.cell_runs[0].sysctl_before.get("vm.dirty_ratio"),
        Some(&before)
    );
    assert_eq!(lab.leftovers(), Vec::<String>::new());
}

#[test]
fn the_workload_runs_in_its_memory_cgroup() {
    if !privileged("memory cgroups") {
        return;
    }
    let lab = Lab::new();
    let f = lab.experiment(
        "mem.toml",
        r#"
name = "mem"
[device]
size = "1G"
image_dir = "IMAGES"
[machine]
memory_limit = "300M"
[workload]
kind = "fsmark"
args = ["-n", "400", "-s", "4096", "-S1"]
[[target]]
fs = "ext4"
"#,
    );
    let mut child = lab.spawn_run(&f, Stdio::null(), Stdio::piped());
    let parent = child.id();
    let mut cgroup_seen = None;
    let found = wait_for(60, || {
        // The child is `fslab job JSON`: its options, the cgroup too, in the JSON.
        for pid in children_with(parent, "\"cgroup\":\"/") {
            let text = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).unwrap_or_default();
            if let Some(line) = text.lines().find(|l| {
                l.split(':')
                    .nth(1)
                    .is_some_and(|c| c.split(',').any(|x| x == "memory"))
            }) {
                let path = line.splitn(3, ':').nth(2).unwrap().to_string();
                if path.ends_with(&format!("fslab-{parent}-c0-r1")) {
                    let limit = std::fs::read_to_string(format!(
                        "/sys/fs/cgroup/memory{path}/memory.limit_in_bytes"
                    ))
                    .unwrap_or_default();
                    cgroup_seen = Some((path, limit.trim().to_string()));
                    return true;
                }
            }
        }
        false
    });
    let st = child.wait().unwrap();
    assert!(found, "the workload process was never seen in its cgroup");
    assert!(st.success());
    let (path, limit) = cgroup_seen.unwrap();
    assert_eq!(limit, (300u64 << 20).to_string());
    assert!(
        !std::path::Path::new(&format!("/sys/fs/cgroup/memory{path}")).exists(),
        "cgroup removed"
    );
    let e = Store::open(&lab.db()).unwrap().experiment(1).unwrap();
    let r = &e.cell_runs[0];
    assert!(r.cgroup.as_deref().unwrap().ends_with(&path), "{r:?}");
    assert!(r.memory_max_usage_bytes.unwrap() > 0);
    assert_eq!(e.cells[0].memory_limit_bytes, Some(300 << 20));
}

#[test]
fn dry_run_prints_the_matrix_and_touches_nothing() {
    let lab = Lab::new();
    let f = lab.experiment("two.toml", TWO_FS);
    let o = lab
        .run_cmd()
        .arg("run")
        .arg(&f)
        .arg("--dry-run")
        .arg("--scale")
        .arg("0.5")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.starts_with(
            "experiment two-fs: 2 cell(s) x 2 repetition(s) = 4 runs, order interleaved, scale 0.5"
        ),
        "{out}"
    );
    assert!(out.contains("mkfs.ext4 -F -q /dev/loopN"), "{out}");
    assert!(
        out.contains("mount -t ext4 -o noinit_itable /dev/loopN MNT"),
        "{out}"
    );
    assert!(
        out.contains("fslab fsmark -d MNT/0 -d MNT/1 -t 2 -n 150 -s 4096"),
        "-n scaled by 0.5: {out}"
    );
    assert!(
        out.contains("order (cell.repetition): 0.1 1.1 0.2 1.2"),
        "{out}"
    );
    assert!(
        !lab.db().exists() && !lab.state().exists(),
        "a dry run creates nothing"
    );
}

#[test]
fn built_in_experiments_are_found_by_unique_prefix_only() {
    let lab = Lab::new();
    let o = lab.run_cmd().args(["run", "--list"]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let list = stdout(&o);
    let names: Vec<&str> = list.lines().map(|l| l.split(' ').next().unwrap()).collect();
    assert_eq!(names.len(), 8, "{list}");
    assert!(names.contains(&"io500-md"), "{list}");
    assert!(names.contains(&"seed001-compilebench"), "{list}");
    // Descriptions line up after the longest name and two spaces.
    let col = names.iter().map(|n| n.len()).max().unwrap() + 2;
    assert!(
        list.lines()
            .all(|l| l.as_bytes()[col - 1] == b' ' && l.as_bytes()[col] != b' '),
        "{list}"
    );
    let o = lab
        .run_cmd()
        .args(["run", "seed004", "--dry-run", "--yes"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).starts_with("experiment seed004-large-dir:"),
        "{}",
        stdout(&o)
    );
    // The dry run lists every claim with its id and the author's number,
    // the numbers it takes from them, the mechanisms it rests on, and why
    // one is not judged.
    for want in [
        "\n  004-b growing into a 3-level htree (large_dir) the rate drops (author: HDD to 11k/s, NVMe to 46k/s)\n",
        "\n    the author's numbers: 46k, 80k@004-a\n",
        "\n    rests on: 004-m1, 004-m3\n",
        "\n  004-g (an estimate) 207M entries",
        "\n    judged from: \"htree directory size (bytes)\" per \"createmany create total\", run by run, of ext4 [large_dir] against the author's value",
        "\n    an absolute rate of the author's disks",
    ] {
        assert!(stdout(&o).contains(want), "{want}: {}", stdout(&o));
    }
    let o = lab
        .run_cmd()
        .args(["run", "seed001", "--dry-run"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(
        stderr(&o).trim(),
        "fslab: seed001: names more than one built-in experiment: \
         seed001-crc-overhead, seed001-dbench, seed001-compilebench"
    );
    for name in ["seed001-dbench", "seed001-compilebench"] {
        let o = lab
            .run_cmd()
            .args(["run", name, "--dry-run", "--scale", "0.01"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        let kind = name.trim_start_matches("seed001-");
        assert!(
            stdout(&o).contains(&format!("fslab {kind} ")),
            "{}",
            stdout(&o)
        );
    }
}

#[test]
fn bad_experiment_files_name_the_file_line_and_field() {
    let lab = Lab::new();
    let cases: &[(&str, &str)] = &[
        ("name = \"x\"\n[workload]\nkind = \"fsmark\"\nbogus = 1\n", ":4: unknown field `bogus`"),
        ("name = \"x\"\n[device]\nsize = \"100X\"\n[workload]\nkind = \"fsmark\"\n[[target]]\nfs = \"ext4\"\n", ":3: device.size: \"100X\" is not a size"),
        ("name = \"x\"\norder = \"random\"\n[workload]\nkind = \"fsmark\"\n[[target]]\nfs = \"ext4\"\n", ":2: order: unknown order \"random\""),
        ("name = \"x\"\n[workload]\nkind = \"iozone\"\n[[target]]\nfs = \"ext4\"\n", ":3: workload.kind: unknown workload \"iozone\""),
        ("name = \"x\"\n[workload]\nkind = \"fsmark\"\n", "target: no [[target]]"),
        ("name = \"x\"\n[workload]\nkind = \"fsmark\"\n[[target]]\nfs = \"ext4\"\n[[finding]]\nid = \"000-a\"\nkind = \"bound\"\nsays = \"s\"\nauthor = \"a\"\n", ":8: finding.kind: unknown kind \"bound\""),
        ("name = \"x\"\n[machine]\nsysctl = { \"../etc/passwd\" = 1 }\n[workload]\nkind = \"fsmark\"\n[[target]]\nfs = \"ext4\"\n", ":3: machine.sysctl.\"../etc/passwd\""),
        ("name = \"x\"\nrepetitions = 0\n[workload]\nkind = \"fsmark\"\n[[target]]\nfs = \"ext4\"\n", ":2: repetitions: 0 is not from 1"),
        ("name = \"x\"\n[workload]\nkind = \"fsmark\"\nranks = 0\n[[target]]\nfs = \"ext4\"\n", ":4: workload.ranks: 0 is not from 1 to 1024"),
        ("name = \"x\"\n[device]\nimage_host = \"ext4\"\n[workload]\nkind = \"fsmark\"\n[[target]]\nfs = \"ext4\"\n", ":3: device.image_host: \"ext4\" is not one of none, auto, xfs"),
        ("name = \"x\"\n[device]\nkind = \"directory\"\npath = \"/tmp\"\nimage_host = \"xfs\"\n[workload]\nkind = \"fsmark\"\n", ":3: device.image_host: applies to kind = \"image\" only, not to kind = \"directory\""),
        ("name = \"x\"\n[device]\nkind = \"block\"\npath = \"/dev/sdz\"\nsize = \"1G\"\n[workload]\nkind = \"fsmark\"\n[[target]]\nfs = \"ext4\"\n", ":3: device.size: applies to kind = \"image\" only, not to kind = \"block\""),
    ];
    for (i, (text, want)) in cases.iter().enumerate() {
        let f = lab.experiment(&format!("bad{i}.toml"), text);
        let o = lab
            .run_cmd()
            .arg("run")
            .arg(&f)
            .arg("--dry-run")
            .output()
            .unwrap();
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{text}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.contains(&format!("bad{i}.toml")) && err.contains(want),
            "{err:?} should contain {want:?}"
        );
    }
    // A filesystem nobody knows is named with what to install.
    let f = lab.experiment(
        "ext5.toml",
        "name = \"x\"\n[workload]\nkind = \"fsmark\"\n[[target]]\nfs = \"ext5\"\n",
    );
    let o = lab.run_cmd().arg("run").arg(&f).output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("unknown filesystem type \"ext5\"") && stderr(&o).contains("install"),
        "{}",
        stderr(&o)
    );
    let o = lab
        .run_cmd()
        .args(["run", "no-such-experiment"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("seed001-crc-overhead"),
        "lists the built-ins: {}",
        stderr(&o)
    );
}

#[test]
fn a_directory_device_runs_without_mkfs() {
    let lab = Lab::new();
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let f = lab.experiment(
        "dir.toml",
        &format!(
            r#"
name = "dir"
repetitions = 2
[device]
kind = "directory"
path = "{}"
[workload]
kind = "fsmark"
args = ["-n", "200", "-s", "0", "-S0"]
dirs = 2
[[variant]]
name = "small"
[[variant]]
name = "big"
workload_args = ["-s", "8192"]
"#,
            dir.path().display()
        ),
    );
    let o = lab.run_cmd().arg("run").arg(&f).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("4 of 4 runs completed"), "{out}");
    assert!(
        out.lines()
            .any(|l| l.contains("small") && l.contains("big")),
        "{out}"
    );
    let left: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        left,
        [fslab_experiment::safety::DIRECTORY_MARKER],
        "the fresh directories are removed; fslab's marker stays"
    );
    let e = Store::open(&lab.db()).unwrap().experiment(1).unwrap();
    assert_eq!(e.cell_runs.len(), 4);
    let big = Store::open(&lab.db())
        .unwrap()
        .run(
            e.cell_runs
                .iter()
                .find(|r| r.cell == 1)
                .unwrap()
                .run_id
                .unwrap(),
        )
        .unwrap();
    assert_eq!(big.run.params["file_size"], 8192);
}

#[test]
fn the_built_in_experiments_complete_at_scale_0_01() {
    if !privileged("built-in experiments") || !need_tool("mkfs.xfs") || !need_tool("mkfs.btrfs") {
        return;
    }
    // seed002 sets the dirty limits: no other test reads or sets them meanwhile.
    let _lock = machine_lock();
    let lab = Lab::new();
    let images = lab.images();
    for (name, want) in [
        ("seed000", "3 of 3 runs completed"),
        ("seed001-crc", "3 of 3 runs completed"),
        ("seed002", "12 of 12 runs completed"),
        ("seed003", "10 of 10 runs completed"),
        ("seed004", "4 of 4 runs completed"),
        ("seed001-dbench", "3 of 3 runs completed"),
        ("seed001-compilebench", "2 of 2 runs completed"),
    ] {
        let o = lab
            .run_cmd()
            .env("FSLAB_IMAGE_DIR", &images)
            .args(["run", name, "--scale", "0.01", "--repetitions", "1"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        let out = stdout(&o);
        assert!(out.contains(want), "{name}: {out}");
        // Every stated finding is judged and printed with its id; with one
        // run a side, the rule judges no claim (mechanisms are checked).
        let is_finding = |l: &&str| {
            let t = l.strip_prefix("  ").unwrap_or_default();
            t.len() > 5 && t.as_bytes()[3] == b'-' && t[..3].bytes().all(|c| c.is_ascii_digit())
        };
        let stated = stdout(
            &lab.run_cmd()
                .args(["run", name, "--scale", "0.01", "--dry-run"])
                .output()
                .unwrap(),
        )
        .lines()
        .filter(is_finding)
        .count();
        let shown: Vec<&str> = out.lines().filter(is_finding).collect();
        assert_eq!(shown.len(), stated, "{name}: every finding judged: {out}");
        for l in &shown {
            let verdict = l.split_once(": ").map(|x| x.0).unwrap_or_default();
            assert!(
                verdict.ends_with(" not judged")
                    || verdict.ends_with(" happened")
                    || verdict.ends_with(" did not happen"),
                "{name}: one run a side judges nothing: {l}"
            );
            // A finding reads metrics its cell makes: one that names a
            // metric no run has is never judged at any scale (004-e read
            // "createmany create ..." where its links cell makes "link").
            assert!(
                !l.contains("no value of"),
                "{name}: a finding reads a metric its cell does not make: {l}"
            );
        }
        let id = lab.latest_experiment();
        let store = fslab_store::Store::open_read(&lab.db()).unwrap();
        assert_eq!(
            store.experiment(id).unwrap().findings.len(),
            stated,
            "{name}"
        );
    }
    // The outcome table, from the store: every experiment, every finding.
    let o = lab
        .run_cmd()
        .args(["results", "outcomes"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let table = stdout(&o);
    for name in [
        "seed000-fsmark-sparse",
        "seed002-mmap-fragmentation",
        "seed004-large-dir",
    ] {
        assert!(
            table.contains(&format!("#### {name} (experiment ")),
            "{table}"
        );
    }
    assert!(
        table.contains("| 000-a | btrfs fragments the image badly |"),
        "{table}"
    );
    assert_eq!(lab.leftovers(), Vec::<String>::new());
}

#[test]
fn probes_are_chosen_per_experiment_and_on_the_command_line() {
    let lab = Lab::new();
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let text = |probes: &str| {
        format!(
            "name = \"p\"\n[device]\nkind = \"directory\"\npath = \"{}\"\n[workload]\nkind = \"fsmark\"\nargs = [\"-n\", \"10\", \"-s\", \"0\"]\nprobes = [{probes}]\n",
            dir.path().display()
        )
    };
    let f = lab.experiment("p.toml", &text("\"cpu\", \"mem\""));
    let o = lab
        .run_cmd()
        .args(["run", "--dry-run"])
        .arg(&f)
        .output()
        .unwrap();
    // fslab run runs them beside the workload, which runs none itself.
    assert!(
        stdout(&o).contains("probes:   cpu,mem (run by fslab run, beside the workload)"),
        "{}",
        stdout(&o)
    );
    // Its harness's probes (none in the workload's process) are not part
    // of the command line shown.
    assert!(!stdout(&o).contains("--probes"), "{}", stdout(&o));
    let o = lab
        .run_cmd()
        .args(["run", "--dry-run", "--probes", "none"])
        .arg(&f)
        .output()
        .unwrap();
    assert!(stdout(&o).contains("probes:   none"), "{}", stdout(&o));
    // The cell's run watched what the experiment chose.
    let o = lab.run_cmd().arg("run").arg(&f).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let store = Store::open_read(&lab.db()).unwrap();
    let notes = store.probe_notes(1).unwrap();
    let targets = notes
        .iter()
        .find(|n| n.probe == "probes" && n.key == "targets")
        .map(|n| <fslab_probe::TargetsNote as fslab_probe::notes::Note>::from_value(&n.value))
        .unwrap();
    assert_eq!(targets.probes, ["cpu", "mem"]);
    // An unknown probe is bad input, in the file or on the command line;
    // a workload's own --probes is fslab run's to set.
    for (file, extra) in [
        (text("\"cpu\", \"gpu\""), None),
        (text("\"cpu\""), Some("gpu")),
    ] {
        let f = lab.experiment("bad.toml", &file);
        let mut c = lab.run_cmd();
        c.args(["run", "--dry-run"]).arg(&f);
        if let Some(p) = extra {
            c.args(["--probes", p]);
        }
        let o = c.output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains("\"gpu\""), "{}", stderr(&o));
    }
    let f = lab.experiment(
        "own.toml",
        &text("\"cpu\"").replace("\"-s\", \"0\"]", "\"-s\", \"0\", \"--probes\", \"all\"]"),
    );
    let o = lab
        .run_cmd()
        .args(["run", "--dry-run"])
        .arg(&f)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--probes"), "{}", stderr(&o));
}

#[test]
fn quiet_leaves_out_progress_and_remarks_but_not_results() {
    let lab = Lab::new();
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let w = dir.path().join("w");
    let fsmark = |quiet: bool| {
        let mut c = lab.run_cmd();
        if quiet {
            c.arg("--quiet");
        }
        c.args([
            "fsmark",
            "-n",
            "100",
            "-s",
            "0",
            "-S0",
            "-l",
            "/dev/null",
            "--probes",
            "none",
            "-d",
        ])
        .arg(&w)
        .output()
        .unwrap()
    };
    let loud = fsmark(false);
    assert!(
        stderr(&loud).contains("recorded as run 1"),
        "{}",
        stderr(&loud)
    );
    let quiet = fsmark(true);
    assert!(quiet.status.success());
    assert_eq!(stderr(&quiet), "", "nothing but results");
    assert!(stdout(&quiet).contains("Files/sec"), "{}", stdout(&quiet));
    // fslab run: no per-cell lines, the summary still.
    let d = tempfile::tempdir_in("/dev/shm").unwrap();
    let f = lab.experiment(
        "q.toml",
        &format!(
            "name = \"q\"\n[device]\nkind = \"directory\"\npath = \"{}\"\n[workload]\nkind = \"fsmark\"\nargs = [\"-n\", \"100\", \"-s\", \"0\", \"-S0\"]\nprobes = [\"none\"]\n",
            d.path().display()
        ),
    );
    let o = lab
        .run_cmd()
        .args(["run", "--quiet"])
        .arg(&f)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stderr(&o), "", "no progress, no remarks");
    assert!(
        stdout(&o).contains("1 of 1 runs completed"),
        "{}",
        stdout(&o)
    );
    let o = lab.run_cmd().arg("run").arg(&f).output().unwrap();
    assert!(stderr(&o).contains("repetition 1/1"), "{}", stderr(&o));
}
