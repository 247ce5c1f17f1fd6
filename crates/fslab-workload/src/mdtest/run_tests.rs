//! mdtest's run on a temporary directory: one process, and ranks as
//! threads (fslab_cluster::LocalCluster) for the stonewall.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use fslab_cluster::{Cluster, LocalCluster, Solo};
use fslab_model::{MemRecorder, RunStatus};

use super::tests::opts;
use super::{run, MdtestReport};
use crate::{Hooks, Start};

fn mdtest(args: &str, c: &dyn Cluster) -> (MdtestReport, String, MemRecorder) {
    let o = opts(args);
    let mut rec = MemRecorder::default();
    let mut hooks = Hooks::default();
    let stop = AtomicBool::new(false);
    let mut out = Vec::new();
    let argv: Vec<String> = ["fslab", "mdtest"].iter().map(|s| s.to_string()).collect();
    let start = Start {
        argv: &argv,
        cluster: c,
        stop: &stop,
        out: &mut out,
        rec: &mut rec,
        hooks: &mut hooks,
    };
    let r = run(&o, start).unwrap();
    (r, String::from_utf8(out).unwrap(), rec)
}

fn entries(d: &Path) -> usize {
    std::fs::read_dir(d).map(|r| r.count()).unwrap_or(0)
}

#[test]
fn every_phase_runs_in_mdtests_order_and_leaves_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().join("out");
    let (r, text, rec) = mdtest(
        &format!("-n 6 -z 1 -b 2 -w 10 -e 10 -d {}", d.display()),
        &Solo,
    );
    assert_eq!(
        r.outcome.status,
        RunStatus::Complete,
        "{:?}",
        r.outcome.error
    );
    let phases: Vec<&str> = rec.phases.iter().map(|p| p.phase.as_str()).collect();
    assert_eq!(
        phases,
        [
            "tree creation",
            "directory creation",
            "directory stat",
            "directory rename",
            "directory removal",
            "file creation",
            "file stat",
            "file read",
            "file removal",
            "tree removal"
        ]
    );
    // 6 items over 3 directories: 2 each.
    assert!(
        rec.phases[1..9].iter().all(|p| p.ops == 6),
        "{:?}",
        rec.phases
    );
    assert_eq!(rec.phases[0].ops, 3);
    assert_eq!(rec.phases[5].bytes, 60);
    assert!(
        !d.exists(),
        "the run removes what it made, -d's directory too"
    );
    assert!(
        text.contains("SUMMARY rate (in ops/sec): (of 1 iterations)"),
        "{text}"
    );
    assert!(text.contains("1 tasks, 6 files/directories"), "{text}");
    assert_eq!(r.rates.len(), 10);
    let names: Vec<String> = rec
        .metrics
        .iter()
        .filter(|m| !m.detail)
        .map(|m| m.label())
        .collect();
    assert!(
        names.contains(&"file creation rate (ops/s)".to_string()),
        "{names:?}"
    );
}

#[test]
fn create_only_leaves_the_items_for_a_later_run_to_stat_and_remove() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().join("out");
    let (r, _, rec) = mdtest(&format!("-n 5 -F -C -d {}", d.display()), &Solo);
    assert_eq!(r.outcome.status, RunStatus::Complete);
    assert_eq!(rec.phases.len(), 2, "tree creation and file creation");
    assert_eq!(entries(&d.join("test-dir.0-0/mdtest_tree.0")), 5);
    let (r, _, rec) = mdtest(&format!("-n 5 -F -T -r -d {}", d.display()), &Solo);
    assert_eq!(
        r.outcome.status,
        RunStatus::Complete,
        "{:?}",
        r.outcome.error
    );
    let phases: Vec<&str> = rec.phases.iter().map(|p| p.phase.as_str()).collect();
    assert_eq!(phases, ["file stat", "file removal", "tree removal"]);
    assert_eq!(entries(&d), 0);
}

#[test]
fn a_missing_item_fails_the_run_naming_the_phase_and_the_item() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().join("out");
    mdtest(&format!("-n 3 -F -C -d {}", d.display()), &Solo);
    std::fs::remove_file(d.join("test-dir.0-0/mdtest_tree.0/file.mdtest.0.1")).unwrap();
    let (r, text, _) = mdtest(&format!("-n 3 -F -T -d {}", d.display()), &Solo);
    assert_eq!(r.outcome.status, RunStatus::Failed);
    let e = r.outcome.error.unwrap();
    assert!(
        e.starts_with("file stat: 1 of 3 items failed (first: stat "),
        "{e}"
    );
    assert!(e.contains("file.mdtest.0.1"), "{e}");
    assert!(text.contains("WARNING: file stat: 1 of 3"), "{text}");
}

#[test]
fn stonewall_ranks_stop_agree_on_the_largest_count_and_all_wear_out_to_it() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().join("out");
    let x = tmp.path().join("stonewall");
    let args = format!(
        "-n 2000000 -F -u -C -W 1 -x {} -d {}",
        x.display(),
        d.display()
    );
    let runs = LocalCluster::run(3, |c| {
        let (r, text, rec) = mdtest(&args, c);
        (r, text, rec.phases)
    });
    let (r0, text, _) = &runs[0];
    assert_eq!(
        r0.outcome.status,
        RunStatus::Complete,
        "{:?}",
        r0.outcome.error
    );
    let w = &r0.stonewall[0];
    assert_eq!(w.per_rank.len(), 3);
    let most = *w.per_rank.iter().max().unwrap();
    assert_eq!(w.agreed, most, "{w:?}");
    assert!(most < 2_000_000, "the stonewall stopped the ranks: {w:?}");
    assert_eq!(w.items_at_stonewall, w.per_rank.iter().sum::<u64>());
    assert_eq!(w.wear_out_items, 3 * most - w.items_at_stonewall);
    // Every rank made exactly the agreed count, in its own tree.
    for (rank, (r, _, phases)) in runs.iter().enumerate() {
        assert_eq!(
            r.outcome.status,
            RunStatus::Complete,
            "rank {rank}: {:?}",
            r.outcome.error
        );
        let create = phases.iter().find(|p| p.phase == "file creation").unwrap();
        assert_eq!(create.ops, most, "rank {rank}");
        let tree = d.join(format!("test-dir.0-0/mdtest_tree.{rank}.0"));
        assert_eq!(entries(&tree) as u64, most, "rank {rank}");
    }
    assert_eq!(std::fs::read_to_string(&x).unwrap(), most.to_string());
    assert!(text.contains("straggler spread"), "{text}");
    // A later run stats and removes the kept count, every rank.
    let later = format!(
        "-n 2000000 -F -u -T -r -x {} -d {}",
        x.display(),
        d.display()
    );
    let runs = LocalCluster::run(3, |c| {
        let (r, _, rec) = mdtest(&later, c);
        (r.outcome.status, rec.phases)
    });
    for (status, phases) in &runs {
        assert_eq!(*status, RunStatus::Complete);
        assert!(phases[..2].iter().all(|p| p.ops == most), "{phases:?}");
    }
    assert_eq!(entries(&d), 0);
}

/// Nothing is stored between the phase before a tree phase and the tree
/// phase's calls (the store's writes there left the one `rmdir` of tmpfs's
/// tree removal colder than mdtest's: common/held.rs); a phase of items
/// starts after the phases before it are stored, and the run ends with
/// every phase stored.
#[test]
fn a_tree_phase_follows_the_phase_before_it_with_no_store_write_between() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().join("out");
    let o = opts(&format!("-n 4 -F -d {}", d.display()));
    let rec = fslab_model::SharedMem::default();
    let seen = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
    let (view, log) = (rec.clone(), seen.clone());
    let mut hooks = Hooks {
        before_phase: Some(Box::new(move |name: &str| {
            log.borrow_mut()
                .push((name.to_string(), view.0.borrow().phases.len()));
        })),
        ..Hooks::default()
    };
    let (stop, mut out, mut writer) = (AtomicBool::new(false), Vec::new(), rec.clone());
    let argv: Vec<String> = ["fslab", "mdtest"].iter().map(|s| s.to_string()).collect();
    let start = Start {
        argv: &argv,
        cluster: &Solo,
        stop: &stop,
        out: &mut out,
        rec: &mut writer,
        hooks: &mut hooks,
    };
    let r = run(&o, start).unwrap();
    assert_eq!(r.outcome.status, RunStatus::Complete);
    drop(hooks);
    // (phase about to start, phases stored by then)
    assert_eq!(
        *seen.borrow(),
        [
            ("tree creation".to_string(), 0),
            ("file creation".to_string(), 1),
            ("file stat".to_string(), 2),
            ("file read".to_string(), 3),
            ("file removal".to_string(), 4),
            ("tree removal".to_string(), 4),
        ]
    );
    assert_eq!(rec.0.borrow().phases.len(), 6);
    assert_eq!(rec.0.borrow().latencies.len(), 6);
}
