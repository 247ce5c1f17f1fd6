//! `[device] scheduler`: the loop device's IO scheduler for a cell, set
//! after it is bound, recorded, and put back before it is detached (a loop
//! device keeps its scheduler afterwards), after a failed cell too.

use std::process::Stdio;

use fslab_lab::scheduler::{loop_file, loop_offered, read};
use fslab_store::Store;

use crate::support::*;

/// A scheduler the loop devices offer other than `none` (their default).
fn another_scheduler() -> String {
    let offered = loop_offered().expect("a loop device in /sys/block");
    offered
        .iter()
        .find(|o| *o == "mq-deadline")
        .or_else(|| offered.iter().find(|o| *o != "none"))
        .unwrap_or_else(|| panic!("only {offered:?} offered"))
        .clone()
}

/// The schedulers of the loop devices bound to images under `dir`.
fn schedulers_under(dir: &std::path::Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/sys/block").unwrap().flatten() {
        let Ok(b) = std::fs::read_to_string(e.path().join("loop/backing_file")) else {
            continue;
        };
        if b.starts_with(dir.to_str().unwrap()) {
            if let Ok(s) = read(&e.path().join("queue/scheduler")) {
                out.push((e.file_name().to_string_lossy().into_owned(), s.current));
            }
        }
    }
    out
}

#[test]
fn a_cells_loop_device_runs_with_the_chosen_scheduler_which_is_recorded_and_put_back_after_a_failed_cell_too(
) {
    if !privileged("loop devices") || !need_tool("mkfs.xfs") {
        return;
    }
    let want = another_scheduler();
    let lab = Lab::new();
    // xfs without CRCs (V4) is made, then refused at mount by this kernel:
    // the cell fails after its scheduler was set.
    let f = lab.experiment(
        "sched.toml",
        &format!(
            r#"
name = "sched"
order = "sequential"
[device]
size = "1G"
image_dir = "IMAGES"
scheduler = "{want}"
[workload]
kind = "fsmark"
args = ["-n", "2000", "-s", "4096", "-S1", "-t", "2"]
probes = ["none"]
[[target]]
fs = "ext4"
[[target]]
fs = "xfs"
mkfs_options = ["-m crc=0"]
"#
        ),
    );
    let mut child = lab.spawn_run(&f, Stdio::null(), Stdio::piped());
    let images = lab.images();
    let mut seen = Vec::new();
    wait_for(120, || {
        seen.extend(schedulers_under(&images));
        child.try_wait().unwrap().is_some()
    });
    let st = child.wait().unwrap();
    assert_eq!(st.code(), Some(1), "the xfs V4 cell fails");
    assert!(
        seen.iter().any(|(_, s)| *s == want),
        "no cell's loop device had {want} while it ran: {seen:?}"
    );
    let e = Store::open(&lab.db()).unwrap().experiment(1).unwrap();
    assert_eq!(e.cell_runs.len(), 2);
    for r in &e.cell_runs {
        assert_eq!(r.scheduler, want, "recorded: {r:?}");
        assert!(!r.scheduler_before.is_empty() && r.scheduler_before != want);
        let n: u32 = r
            .loop_device
            .trim_start_matches("/dev/loop")
            .parse()
            .unwrap();
        // Put back before detaching (unless another process bound it since).
        if fslab_lab::loopdev::backing_file(n).is_none() {
            assert_eq!(
                read(&loop_file(n)).unwrap().current,
                r.scheduler_before,
                "{} put back",
                r.loop_device
            );
        }
    }
    assert_eq!(e.cell_runs[0].status.map(|s| s.as_str()), Some("complete"));
    assert!(e.cell_runs[1].error.is_some(), "{:?}", e.cell_runs[1]);
    let o = lab
        .run_cmd()
        .args(["results", "show"])
        .arg(e.cell_runs[0].run_id.unwrap().to_string())
        .output()
        .unwrap();
    let out = stdout(&o);
    assert!(
        out.contains(&format!("scheduler:   {want} (was ")),
        "results show lists the scheduler: {out}"
    );
    assert_eq!(lab.leftovers(), Vec::<String>::new());
}

#[test]
fn a_scheduler_a_killed_runs_journal_lists_is_put_back_as_cleanup_undoes_it() {
    use fslab_lab::undo::{undo, Resource};
    if !privileged("loop devices") {
        return;
    }
    let want = another_scheduler();
    let lab = Lab::new();
    let img = lab.images().join("k.img");
    let image = fslab_lab::image::Image::create(&img, 64 << 20).unwrap();
    let lo = fslab_lab::loopdev::LoopDevice::attach(&img, false).unwrap();
    let file = loop_file(lo.number());
    let found = read(&file).unwrap().current;
    assert_ne!(found, want);
    fslab_lab::scheduler::write(&file, &want).unwrap();
    // What a killed run's journal lists, undone as `fslab cleanup` does.
    let r = Resource::Scheduler {
        number: lo.number(),
        backing: img.clone(),
        original: found.clone(),
    };
    let said = undo(&r).unwrap().unwrap();
    assert!(said.contains(&found), "{said}");
    assert_eq!(read(&file).unwrap().current, found);
    assert_eq!(
        undo(&r).unwrap(),
        None,
        "nothing left to do the second time"
    );
    lo.detach().unwrap();
    image.remove().unwrap();
}

#[test]
fn a_scheduler_the_loop_devices_do_not_offer_is_refused_in_the_dry_run_with_exit_status_2() {
    let lab = Lab::new();
    let f = lab.experiment(
        "bad.toml",
        r#"
name = "bad"
[device]
image_dir = "IMAGES"
scheduler = "cfq"
[workload]
kind = "fsmark"
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
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains(":5: device.scheduler: \"cfq\" is not an IO scheduler"),
        "{err}"
    );
    assert!(err.contains("none"), "names what is offered: {err}");
    assert!(stdout(&o).is_empty());
}
