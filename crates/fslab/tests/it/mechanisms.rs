//! Scale models that keep the seeds' mechanisms, shown by the run's own
//! numbers: seed 004's htree depth at 1 KiB blocks.

use fslab_store::Store;

use crate::support::*;

/// A run's stored metric `source phase name`.
fn metric(lab: &Lab, run: i64, source: &str, name: &str) -> Option<f64> {
    Store::open(&lab.db())
        .unwrap()
        .metrics(run)
        .unwrap()
        .into_iter()
        .find(|m| m.source == source && m.name == name)
        .map(|m| m.value)
}

#[test]
fn large_dir_takes_a_1k_block_directory_into_a_third_htree_level_where_the_default_stops_full_at_two(
) {
    if !privileged("loop devices and mkfs") {
        return;
    }
    let lab = Lab::new();
    let f = lab.experiment(
        "htree.toml",
        r#"
name = "htree"
order = "sequential"
[device]
size = "8G"
image_dir = "IMAGES"
[workload]
kind = "createmany"
args = ["-m", "{dir}/f", "480000"]
probes = ["none"]
[[target]]
fs = "ext4"
mkfs_options = ["-b 1024 -I 256"]
workload_args = ["--until-full"]
[[variant]]
name = "default"
[[variant]]
name = "large_dir"
mkfs_options = "-O large_dir"
"#,
    );
    let o = lab.run_cmd().arg("run").arg(&f).output().unwrap();
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    let e = Store::open(&lab.db()).unwrap().experiment(1).unwrap();
    let (default, large) = (
        e.cell_runs[0].run_id.unwrap(),
        e.cell_runs[1].run_id.unwrap(),
    );
    // Without large_dir the directory is full at two levels, said so, and the cell completes.
    assert_eq!(metric(&lab, default, "htree", "levels"), Some(2.0));
    let made = metric(&lab, default, "createmany", "total").unwrap();
    assert!((250_000.0..480_000.0).contains(&made), "{made}");
    assert!(
        e.cell_runs[0]
            .output
            .contains("the directory's htree is full: 2 levels"),
        "{}",
        e.cell_runs[0].output
    );
    assert!(metric(&lab, default, "createmany", "ops/second, 2-level htree").is_some());
    assert_eq!(
        metric(&lab, default, "createmany", "ops/second, 3-level htree"),
        None
    );
    // With it the directory grows a third level, and the rate there is its own number.
    assert_eq!(metric(&lab, large, "htree", "levels"), Some(3.0));
    assert_eq!(metric(&lab, large, "createmany", "total"), Some(480_000.0));
    assert!(metric(&lab, large, "createmany", "ops/second, 3-level htree").is_some());
    assert!(
        stdout(&o).contains("htree levels"),
        "the summary names it: {}",
        stdout(&o)
    );
    assert_eq!(lab.leftovers(), Vec::<String>::new());
}

/// Seed 000's built-in file with its `[machine]` memory lines replaced,
/// and its first pass's IO scheduler.
fn seed000_with(memory: &str, first_pass_scheduler: &str) -> String {
    let (_, text) = fslab_experiment::builtin::find("seed000-fsmark-sparse").unwrap();
    let mut out = String::new();
    let mut first_pass = false;
    for l in text.lines() {
        if l.starts_with("memory_limit") {
            continue;
        }
        if l.starts_with('[') {
            first_pass = l == "[first_pass]";
        }
        if first_pass && l.starts_with("scheduler") {
            out.push_str(&format!("scheduler = \"{first_pass_scheduler}\"\n"));
            continue;
        }
        out.push_str(l);
        out.push('\n');
        if l == "[machine]" {
            out.push_str(memory);
        }
        if l == "[device]" {
            out.push_str("image_dir = \"IMAGES\"\n");
        }
    }
    out
}

/// The finding `id` of the lab's latest experiment.
fn finding(lab: &Lab, id: &str) -> fslab_model::FindingResult {
    let s = Store::open(&lab.db()).unwrap();
    let e = s.experiment(lab.latest_experiment()).unwrap();
    e.findings
        .into_iter()
        .find(|f| f.id == id)
        .unwrap_or_else(|| panic!("no finding {id}"))
}

#[test]
fn seed000s_claims_are_not_judged_when_its_memory_limit_or_its_small_ios_are_taken_away() {
    if !privileged("loop devices, mkfs and a memory cgroup") {
        return;
    }
    use fslab_model::FindingOutcome::*;
    let lab = Lab::new();
    let run = |file: &str, text: String| {
        let f = lab.experiment(file, &text);
        lab.run_cmd()
            .args(["run", "--scale", "0.001", "--repetitions", "1"])
            .arg(&f)
            .output()
            .unwrap()
    };
    // With a memory limit the 50k files outgrow it: btrfs's first and
    // judged passes hit it. (At so small a limit xfs's workload may not
    // survive a loaded machine: only btrfs's mechanisms are asked for.)
    run(
        "kept.toml",
        seed000_with("memory_limit = \"32M\"\n", "none"),
    );
    for m in ["000-m1", "000-m6"] {
        let r = finding(&lab, m);
        assert_eq!(r.outcome, Happened, "{m}: {r:?}");
    }
    // Without one, nothing outgrows memory, and with the loop device's
    // scheduler in the first pass its IOs are merged (no small IOs, no
    // fragmented image): every claim resting on either is not judged,
    // naming the mechanism that did not happen.
    let o = run("broken.toml", seed000_with("", "mq-deadline"));
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    let m1 = finding(&lab, "000-m1");
    assert_eq!(m1.outcome, NotJudged, "{m1:?}");
    assert!(
        m1.why
            .contains("no value of \"mem create limit hits (count)\""),
        "{}",
        m1.why
    );
    for (claim, mechanism) in [
        ("000-a", "000-m7"),
        ("000-e", "000-m1"),
        ("000-e.2", "000-m3"),
    ] {
        let r = finding(&lab, claim);
        assert_eq!(r.outcome, NotJudged, "{claim}: {r:?}");
        assert!(
            r.why.starts_with(&format!(
                "the mechanism it rests on is not shown by this run: {mechanism} "
            )),
            "{claim}: {}",
            r.why
        );
    }
    // The flip rests on a kernel path this kernel has not: said first.
    let d = finding(&lab, "000-d");
    assert!(
        d.why.starts_with("not judgeable on this kernel: 000-m5"),
        "{}",
        d.why
    );
    assert_eq!(lab.leftovers(), Vec::<String>::new());
}
