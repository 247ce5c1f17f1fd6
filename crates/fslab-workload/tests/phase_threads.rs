//! An mdtest phase of items starts and ends no thread inside its time: the
//! helper that takes its seconds (`measure::supervise_here`) is already
//! there at the phase's opening barrier and still there at its closing one
//! (started and joined inside the time it cost 50-170 us a phase,
//! docs/speed.md). A tree phase starts none. The CPU of a phase is its
//! items' (counted around them on the rank's thread, the helper's job
//! being the whole timed region).
//!
//! A test binary of its own: it counts this process's threads by name,
//! which other tests' helpers would change.

use std::cell::RefCell;
use std::sync::atomic::AtomicBool;

use clap::Parser;
use fslab_cluster::{Cluster, Solo};
use fslab_model::{MemRecorder, RunStatus};
use fslab_workload::mdtest::{run, MdtestArgs};
use fslab_workload::measure::HELPER;
use fslab_workload::{Hooks, Start};

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    a: MdtestArgs,
}

/// This process's threads named as the helper.
fn helpers() -> usize {
    std::fs::read_dir("/proc/self/task")
        .expect("/proc/self/task")
        .flatten()
        .filter(|t| {
            std::fs::read_to_string(t.path().join("comm")).is_ok_and(|c| c.trim_end() == HELPER)
        })
        .count()
}

/// One process whose barriers note the helpers there at each.
struct Noting<'a>(&'a RefCell<Vec<String>>);

/// Solo's, but for `sum` (the barrier).
impl Cluster for Noting<'_> {
    fn rank(&self) -> usize {
        Solo.rank()
    }
    fn size(&self) -> usize {
        Solo.size()
    }
    fn sum(&self, v: u64) -> u64 {
        self.0.borrow_mut().push(format!("barrier {}", helpers()));
        Solo.sum(v)
    }
    fn max(&self, v: u64) -> u64 {
        Solo.max(v)
    }
    fn gather(&self, bytes: &[u8]) -> Option<Vec<Vec<u8>>> {
        Solo.gather(bytes)
    }
    fn abort(&self, code: i32) -> ! {
        Solo.abort(code)
    }
    fn send_to(&self, to: usize, v: i64) {
        Solo.send_to(to, v);
    }
    fn recv_from(&self, from: usize) -> i64 {
        Solo.recv_from(from)
    }
}

#[test]
fn an_item_phases_helper_is_there_at_both_its_barriers_a_tree_phase_starts_none_and_the_items_cpu_counts(
) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("md");
    let args = format!("mdtest -n 200 -C -T -E -r -d {}", dir.display());
    let o = Cli::try_parse_from(args.split_whitespace())
        .unwrap()
        .a
        .validate()
        .unwrap();
    let events = RefCell::new(Vec::new());
    let mut rec = MemRecorder::default();
    let mut hooks = Hooks {
        before_phase: Some(Box::new(|p: &str| {
            events.borrow_mut().push(format!("phase {p}"));
        })),
        ..Hooks::default()
    };
    let stop = AtomicBool::new(false);
    let mut out = Vec::new();
    let argv = vec!["fslab".to_string(), "mdtest".to_string()];
    let cluster = Noting(&events);
    let r = run(
        &o,
        Start {
            argv: &argv,
            cluster: &cluster,
            stop: &stop,
            out: &mut out,
            rec: &mut rec,
            hooks: &mut hooks,
        },
    )
    .unwrap();
    assert_eq!(
        r.outcome.status,
        RunStatus::Complete,
        "{:?}",
        r.outcome.error
    );
    drop(hooks);
    let events = events.into_inner();
    // Each phase, then its opening and closing barriers.
    let mut phases = 0;
    for (i, e) in events.iter().enumerate() {
        let Some(phase) = e.strip_prefix("phase ") else {
            continue;
        };
        phases += 1;
        let at = |k: usize| {
            events
                .get(i + k)
                .and_then(|b| b.strip_prefix("barrier "))
                .and_then(|n| n.parse::<usize>().ok())
                .unwrap_or_else(|| panic!("{phase}: no barrier {k}: {events:?}"))
        };
        let (opening, closing) = (at(1), at(2));
        if phase.starts_with("tree") {
            // None started for it (the helper of the phase before may
            // still be ending when it begins).
            assert!(closing <= opening, "{phase}: {events:?}");
        } else {
            assert!(opening >= 1 && closing >= 1, "{phase}: {events:?}");
        }
    }
    assert_eq!(phases, 9, "{events:?}");
    // 200 creations each: their CPU is in the phase's figures.
    for name in ["directory creation", "file creation"] {
        let p = rec.phases.iter().find(|p| p.phase == name).unwrap();
        assert!(p.usr_cpu_s + p.sys_cpu_s > 0.0, "{name}: {p:?}");
    }
}
