//! Issue 34's rules proven on real filesystems: a workload made to hit
//! each limiter names it (in `fslab run`'s closing text and in `fslab
//! compare`), runs that differ only in a confounder name it before their
//! verdicts, a bad wait class is refused in one line, and a run's machine
//! facts are shown and exported. Root needed (loop devices, mkfs, wait
//! stacks).

use crate::support::*;

/// The image directory and a 2 GiB ext4 image of one cell.
const DEVICE: &str = "[device]\nsize = \"2G\"\nimage_dir = \"IMAGES\"\n";

/// `fslab run` of experiment `text` in `lab`: its closing text.
fn run(lab: &Lab, name: &str, text: &str) -> String {
    let f = lab.experiment(name, text);
    let o = lab.run_cmd().arg("run").arg(&f).output().unwrap();
    assert!(o.status.success(), "{}\n{}", stdout(&o), stderr(&o));
    assert_eq!(lab.leftovers(), Vec::<String>::new());
    stdout(&o)
}

/// `fslab compare` (text) of `args` in `lab`.
fn compare(lab: &Lab, args: &[&str]) -> String {
    let o = lab.run(&[&["compare"], args].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    stdout(&o)
}

/// The limiter line of `group`'s `phase` (`GROUP, PHASE: limiter: ...`).
fn limiter<'a>(text: &'a str, group: &str, phase: &str) -> &'a str {
    let head = format!("  {group}, {phase}: limiter: ");
    text.lines()
        .find(|l| l.starts_with(&head))
        .map(|l| &l[head.len()..])
        .unwrap_or_else(|| panic!("no limiter for {group}, {phase}:\n{text}"))
}

/// Runs `text` (one ext4 cell) and checks the limiter of `phase` starts
/// with `words`, in the run's closing text and in `compare`, and is
/// followed by `evidence`.
fn names_its_limiter(name: &str, text: &str, phase: &str, words: &str, evidence: &str) {
    let lab = Lab::new();
    let closing = run(&lab, &format!("{name}.toml"), text);
    let cell = "ext4";
    for (what, out) in [("run", closing), ("compare", compare(&lab, &[]))] {
        let l = limiter(&out, cell, phase);
        assert!(l.starts_with(words), "{what}: {l}\n{out}");
        assert!(l.contains(evidence), "{what}: {l}");
        // The machines were checked before the verdicts.
        let checked = out.find("before the verdicts:\n").unwrap();
        assert!(
            checked < out.find(&format!("{phase} rate")).unwrap(),
            "{out}"
        );
    }
}

#[test]
fn a_create_in_the_page_cache_is_limited_by_cpu() {
    if !privileged("fslab run on a loop device") {
        return;
    }
    names_its_limiter(
        "cpu",
        &format!("name = \"cpu-bound\"\n{DEVICE}[workload]\nkind = \"fsmark\"\nargs = [\"-S0\", \"-s\", \"0\", \"-n\", \"100000\", \"-t\", \"1\", \"-L\", \"1\"]\n[[target]]\nfs = \"ext4\"\n"),
        "create",
        "limited by CPU: workers running or runnable",
        "CPUs",
    );
}

#[test]
fn fsync_per_file_on_a_small_journal_is_limited_by_the_journal() {
    if !privileged("fslab run on a loop device") {
        return;
    }
    names_its_limiter(
        "journal",
        &format!("name = \"journal-bound\"\n{DEVICE}[workload]\nkind = \"fsmark\"\nargs = [\"-S1\", \"-s\", \"4096\", \"-n\", \"300\", \"-t\", \"4\", \"-L\", \"1\"]\n[[target]]\nfs = \"ext4\"\nlabel = \"ext4\"\nmkfs_options = [\"-J size=4\"]\n"),
        "create",
        "limited by the journal: workers blocked",
        "of blocked samples in journal waits (jbd2_log_wait_commit), commits",
    );
}

#[test]
fn a_memory_cgroup_far_below_the_working_set_is_limited_by_reclaim() {
    if !privileged("fslab run on a loop device") {
        return;
    }
    names_its_limiter(
        "reclaim",
        &format!("name = \"reclaim-bound\"\n{DEVICE}[machine]\nmemory_limit = \"48M\"\n[workload]\nkind = \"fsmark\"\nargs = [\"-S0\", \"-s\", \"65536\", \"-n\", \"3000\", \"-t\", \"2\", \"-L\", \"1\"]\n[[target]]\nfs = \"ext4\"\n"),
        "create",
        "limited by memory reclaim: the memory limit hit",
        "memory pressure",
    );
}

#[test]
fn direct_io_through_to_the_disk_is_limited_by_the_device() {
    if !privileged("fslab run on a loop device") {
        return;
    }
    names_its_limiter(
        "io",
        &format!("name = \"io-bound\"\n{}direct_io = true\n[workload]\nkind = \"tiotest\"\nargs = [\"-X\", \"-t\", \"2\", \"-f\", \"16\", \"-r\", \"15000\", \"-k\", \"1\", \"-k\", \"2\"]\n[[target]]\nfs = \"ext4\"\n", DEVICE),
        "random_read",
        "limited by the device: workers blocked",
        "in device queue waits",
    );
}

#[test]
fn many_threads_creating_in_one_directory_are_limited_by_its_lock() {
    if !privileged("fslab run on a loop device") {
        return;
    }
    // Each create holds the directory's lock while it waits for room in
    // a 4 MiB journal on a device written through to the disk: the other
    // fifteen threads wait for the lock.
    names_its_limiter(
        "lock",
        &format!("name = \"lock-bound\"\n{}direct_io = true\n[workload]\nkind = \"fsmark\"\nargs = [\"-S0\", \"-s\", \"0\", \"-n\", \"2500\", \"-t\", \"16\", \"-L\", \"1\"]\n[[target]]\nfs = \"ext4\"\nlabel = \"ext4\"\nmkfs_options = [\"-J size=4\"]\n", DEVICE),
        "create",
        "limited by lock contention: workers blocked",
        "of blocked samples in lock waits (path_openat)",
    );
}

/// The cells of one experiment differ only in vm.dirty_ratio (a variant's
/// sysctl): the machines are named first, and every verdict against the
/// baseline says so before its difference.
#[test]
fn cells_differing_only_in_a_dirty_ratio_name_it_before_their_verdicts() {
    if !privileged("fslab run on a loop device") {
        return;
    }
    // Its cells set vm.dirty_ratio: one test at a time touches it.
    let _lock = machine_lock();
    let lab = Lab::new();
    let text = format!("name = \"dirty\"\n{DEVICE}[workload]\nkind = \"fsmark\"\nargs = [\"-S0\", \"-s\", \"4096\", \"-n\", \"2000\", \"-t\", \"2\"]\n[[target]]\nfs = \"ext4\"\n[[variant]]\nname = \"dirty20\"\nsysctl = {{ \"vm.dirty_ratio\" = 20 }}\n[[variant]]\nname = \"dirty30\"\nsysctl = {{ \"vm.dirty_ratio\" = 30 }}\n");
    let closing = run(&lab, "dirty.toml", &text);
    for (what, out) in [("run", closing), ("compare", compare(&lab, &[]))] {
        let named = "ext4 [dirty30]: confounder: its machine differs from ext4 [dirty20]'s in vm.dirty_ratio\n    vm.dirty_ratio: 20 vs 30\n";
        let at = out.find(named).unwrap_or_else(|| panic!("{what}:\n{out}"));
        let verdict = out
            .find("[machines differ: vm.dirty_ratio]")
            .unwrap_or_else(|| panic!("{what}: no verdict names it:\n{out}"));
        assert!(at < verdict, "{what}: named after a verdict:\n{out}");
    }
}

/// Two experiments that differ only in the loop device's scheduler,
/// compared: the scheduler is named before any verdict.
#[test]
fn experiments_differing_only_in_the_scheduler_name_it_before_their_verdicts() {
    if !privileged("fslab run on a loop device") {
        return;
    }
    let lab = Lab::new();
    let exp = |sched: &str| {
        format!("name = \"sched\"\n{DEVICE}scheduler = \"{sched}\"\n[workload]\nkind = \"fsmark\"\nargs = [\"-S1\", \"-s\", \"4096\", \"-n\", \"200\", \"-t\", \"2\"]\n[[target]]\nfs = \"ext4\"\n")
    };
    run(&lab, "none.toml", &exp("none"));
    let first = lab.latest_experiment();
    run(&lab, "deadline.toml", &exp("mq-deadline"));
    let second = lab.latest_experiment();
    let out = compare(
        &lab,
        &[
            "--experiment",
            &first.to_string(),
            "--experiment",
            &second.to_string(),
        ],
    );
    let named = out
        .find("device scheduler: none vs mq-deadline")
        .unwrap_or_else(|| panic!("{out}"));
    let first_verdict = out
        .find("[machines differ: device scheduler")
        .unwrap_or_else(|| panic!("{out}"));
    assert!(
        named < first_verdict && named < out.find("create rate").unwrap(),
        "{out}"
    );
}

/// A wait class that names no function, an unknown class, a malformed
/// entry: one line naming it, exit 2, the dry run too, nothing made.
#[test]
fn a_bad_wait_class_is_one_line_exit_2_in_the_dry_run_too() {
    let lab = Lab::new();
    let head = "name = \"w\"\n[workload]\nkind = \"fsmark\"\nargs = [\"-n\", \"10\"]\n[[target]]\nfs = \"ext4\"\n";
    for (what, entry, says) in [
        (
            "empty",
            "[[wait_class]]\nclass = \"lock\"\nstack = []\n",
            "stack names no function",
        ),
        (
            "unknown class",
            "[[wait_class]]\nclass = \"jornal\"\nstack = [\"x\"]\n",
            "unknown class \"jornal\"",
        ),
        (
            "malformed",
            "[[wait_class]]\nclass = \"lock\"\nstack = \"x\"\n",
            "w.toml:9",
        ),
    ] {
        let f = lab.experiment("w.toml", &format!("{head}{entry}"));
        for dry in [true, false] {
            let mut c = lab.run_cmd();
            c.arg("run").arg(&f);
            if dry {
                c.arg("--dry-run");
            }
            let o = c.output().unwrap();
            assert_eq!(
                o.status.code(),
                Some(2),
                "{what} (dry {dry}): {}",
                stderr(&o)
            );
            let err = stderr(&o);
            assert_eq!(err.trim_end().lines().count(), 1, "{what}: {err}");
            assert!(err.contains(says), "{what}: {err}");
        }
    }
    assert!(!lab.db().exists());
}

/// A standalone workload records its machine: `results show` lists the
/// facts (an unreadable one as unknown, with why), the JSON export
/// carries them (and validates), each phase says its clock.
#[test]
fn a_runs_machine_facts_are_shown_and_exported() {
    let lab = Lab::new();
    let dir = lab.path("files");
    let o = lab
        .fslab()
        .args([
            "fsmark", "-S0", "-s", "0", "-n", "200", "-L", "1", "--probes", "cpu", "-d",
        ])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let show = stdout(&lab.run(&["results", "show", "1"]));
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
    for want in [
        "machine ",
        "cpu model",
        "crc32c driver",
        "vm.dirty_ratio",
        "machine: clock ",
        "machine: at the start, page cache ",
    ] {
        assert!(show.contains(want), "{want:?} missing:\n{show}");
    }
    assert!(
        show.lines()
            .any(|l| l.starts_with("  kernel ") && l.ends_with(release.trim())),
        "{show}"
    );
    // A fact not read says why, never guesses (this VM has no cpufreq
    // driver; a machine that has one names its governor).
    let governor = show
        .lines()
        .find(|l| l.starts_with("  cpu governor "))
        .unwrap_or_else(|| panic!("{show}"));
    let cpufreq = std::path::Path::new("/sys/devices/system/cpu/cpu0/cpufreq").exists();
    assert_eq!(
        governor.contains("unknown (no cpufreq driver"),
        !cpufreq,
        "{governor}"
    );
    let doc: serde_json::Value = serde_json::from_str(&stdout(
        &lab.run(&["results", "export", "1", "--format", "json"]),
    ))
    .unwrap();
    assert_eq!(run_schema_errors(&doc), Vec::<String>::new());
    let facts = doc["machine"]["hosts"][0]["facts"].as_array().unwrap();
    assert!(facts
        .iter()
        .any(|f| f["name"] == "cpus" && f["value"].is_string()));
    assert!(doc["machine"]["phases"][0]["clock_source"].is_string());
}

/// ext4 against xfs with the perf probe on both sides: compare prints
/// each phase's differential profile (perf diff's change in points and
/// ratio), in the text and the JSON; the profiles are of the workload's
/// samples alone, not of a busy loop beside it.
#[test]
fn a_comparison_with_perf_on_both_sides_prints_the_differential_profile() {
    if !privileged("fslab run on a loop device with perf") {
        return;
    }
    let lab = Lab::new();
    // Someone else's work on the machine: a busy loop beside the run.
    let mut busy = std::process::Command::new("dash")
        .args(["-c", "while :; do :; done"])
        .spawn()
        .unwrap();
    let text = format!("name = \"profile\"\n{DEVICE}[workload]\nkind = \"fsmark\"\nprobes = [\"default\", \"perf\"]\nargs = [\"-S0\", \"-s\", \"0\", \"-n\", \"100000\", \"-t\", \"1\", \"-L\", \"1\"]\n[[target]]\nfs = \"ext4\"\n[[target]]\nfs = \"xfs\"\n");
    let f = lab.experiment("profile.toml", &text);
    let o = lab.run_cmd().arg("run").arg(&f).output().unwrap();
    let _ = busy.kill();
    let _ = busy.wait();
    assert!(o.status.success(), "{}\n{}", stdout(&o), stderr(&o));
    assert_eq!(lab.leftovers(), Vec::<String>::new());
    let out = compare(&lab, &[]);
    let head = "  xfs, create: profile: perf against ext4 (";
    let at = out.find(head).unwrap_or_else(|| panic!("{out}"));
    // The samples each side's shares are of, stated: thousands here.
    let counts: Vec<u64> = out[at + head.len()..]
        .split(" samples): the shares that moved most: ")
        .next()
        .unwrap()
        .split(" and ")
        .map(|n| n.parse().unwrap_or_else(|_| panic!("{n}: {out}")))
        .collect();
    assert!(
        counts.len() == 2 && counts.iter().all(|n| *n > 100),
        "{counts:?}"
    );
    let evidence: Vec<&str> = out[at..]
        .lines()
        .skip(1)
        .take_while(|l| l.starts_with("    "))
        .map(str::trim)
        .collect();
    // Each filesystem's own functions moved: xfs's came, ext4's went
    // (xfs_buf_get_map, xlog_cil_commit; __ext4_read_dirblock, ext4fs_dirhash,
    // or its journal's jbd2_write_access_granted, as the samples fall).
    for (fs, prefixes) in [
        ("xfs", &["xfs", "xlog"][..]),
        ("ext4", &["ext4", "jbd2"][..]),
    ] {
        assert!(
            evidence.iter().any(|l| {
                let f = l.trim_start_matches('_');
                prefixes.iter().any(|p| f.starts_with(p)) && l.contains(" points, ratio ")
            }),
            "{fs}: {evidence:#?}"
        );
    }
    // Each run's profile is the workload's: the busy loop is not in it.
    let store = fslab_store::Store::open_read(&lab.db()).unwrap();
    for run in [1, 2] {
        let tops: Vec<String> = store
            .note_values(run)
            .unwrap()
            .into_iter()
            .filter(|n| n.probe == "perf" && n.key == "top")
            .map(|n| n.value.to_string())
            .collect();
        assert!(!tops.is_empty(), "run {run}: no profile");
        assert!(
            tops.iter().all(|t| !t.contains("\"dash\"")),
            "run {run}: {tops:?}"
        );
    }
    let j: serde_json::Value =
        serde_json::from_str(&stdout(&lab.run(&["compare", "--format", "json"]))).unwrap();
    let kinds: Vec<&str> = j["explanations"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["kind"].as_str())
        .collect();
    assert!(kinds.contains(&"profile"), "{kinds:?}");
}

/// A mixed workload's comparison shows each operation's share of the
/// phase's call time beside the verdicts, the shares adding up to 100%.
#[test]
fn a_mixed_workloads_operations_are_shown_with_their_share_of_the_time() {
    if !privileged("fslab run on a loop device") {
        return;
    }
    let lab = Lab::new();
    let text = format!(
        "name = \"mixed\"\nrepetitions = 2\n{DEVICE}[workload]\nkind = \"dbench\"\nargs = [\"-t\", \"2\", \"-D\", \"{{dir}}\", \"2\"]\n[[target]]\nfs = \"ext4\"\n[[target]]\nfs = \"xfs\"\n"
    );
    run(&lab, "mixed.toml", &text);
    let out = compare(&lab, &[]);
    let line = out
        .lines()
        .find(|l| l.contains("of the phase's call time: "))
        .unwrap_or_else(|| panic!("no operation shares:\n{out}"));
    let shares: Vec<(String, f64)> = line
        .split("of the phase's call time: ")
        .nth(1)
        .unwrap()
        .split(", ")
        .map(|s| {
            let (op, pct) = s.rsplit_once(' ').unwrap();
            (op.to_string(), pct.trim_end_matches('%').parse().unwrap())
        })
        .collect();
    assert!(
        shares.len() >= 5,
        "dbench's loadfile mixes many calls: {line}"
    );
    assert!(
        shares.iter().any(|(op, _)| op == "ReadX") && shares.iter().any(|(op, _)| op == "WriteX"),
        "{line}"
    );
    let sum: f64 = shares.iter().map(|(_, p)| p).sum();
    assert!(
        (sum - 100.0).abs() < 0.5 + 0.05 * shares.len() as f64,
        "{sum}: {line}"
    );
    assert!(
        shares.windows(2).all(|w| w[0].1 >= w[1].1),
        "largest first: {line}"
    );
}

/// A command workload's limiter is named from its program's own processes
/// (fio forks a process per job; fslab only waits for it): direct random
/// reads are limited by the device, a shell's busy loop by the CPU, whose
/// figure is the program's. The reads are 1 MiB: at 4 KiB fio's own CPU
/// an IO made the workers run about as much as they blocked on this VM,
/// and the suite's other tests holding the CPUs tipped it (blocked 38-67%
/// of their time; 78-80% at 1 MiB beside two busy loops).
#[test]
fn a_programs_limiter_is_named_from_its_own_processes() {
    if !privileged("fslab run on a loop device") || !need_tool("fio") {
        return;
    }
    names_its_limiter(
        "fio-io",
        &format!("name = \"fio-io-bound\"\n{DEVICE}direct_io = true\n[workload]\nkind = \"command\"\nargs = [\"fio\", \"--name=rr\", \"--directory={{dir}}\", \"--rw=randread\", \"--bs=1m\", \"--size=64m\", \"--direct=1\", \"--numjobs=2\", \"--time_based\", \"--runtime=3\", \"--output-format=json\"]\n[[target]]\nfs = \"ext4\"\n"),
        "fio",
        "limited by the device: workers blocked",
        "in device queue waits",
    );
    let lab = Lab::new();
    let text = format!("name = \"shell-cpu-bound\"\n{DEVICE}[workload]\nkind = \"command\"\nprobes = [\"cpu\", \"stacks\"]\nargs = [\"dash\", \"-c\", \"i=0; while [ $i -lt 3000000 ]; do i=$((i+1)); done\"]\n[[target]]\nfs = \"ext4\"\n");
    let f = lab.experiment("cpu.toml", &text);
    let o = lab
        .run_cmd()
        .arg("run")
        .arg(&f)
        .args(["--allow-command", "dash"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}\n{}", stdout(&o), stderr(&o));
    assert_eq!(lab.leftovers(), Vec::<String>::new());
    let closing = stdout(&o);
    let l = limiter(&closing, "ext4", "dash");
    assert!(
        l.starts_with("limited by CPU: workers running or runnable"),
        "{l}\n{closing}"
    );
    // The workload's CPU is the program's: a busy loop in usr.
    let shown = stdout(&lab.run(&["results", "show", "1"]));
    let cpu = shown
        .lines()
        .find(|l| l.contains("cpu, workload: usr "))
        .unwrap_or_else(|| panic!("{shown}"));
    // In CPU seconds, not a share of the wall time, which other work on
    // the machine (the suite's other tests) takes its part of: the loop's
    // three million rounds are seconds of dash's own usr time, and none of
    // it in the kernel.
    let seconds = |what: &str| -> f64 {
        cpu.split(&format!(" s {what}"))
            .next()
            .and_then(|r| r.rsplit([' ', '(']).next())
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("{what}: {cpu}"))
    };
    let (usr, sys) = (seconds("usr"), seconds("sys"));
    assert!(usr > 0.5 && usr > 10.0 * sys, "{cpu}");
}
