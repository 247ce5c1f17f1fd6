//! fs_mark's loops with a stonewall (`--stonewall S`, fslab's: fs_mark has
//! none). In each loop every worker thread stops after the file that passes
//! S seconds from the loop's start, the ranks agree on the most files any
//! thread of any rank made, and every thread creates files up to that count
//! before the loop's post-loop syncs: the loop's files are the agreed count
//! times the threads, and its table row says so (see [`crate::stonewall`]).
//!
//! The ranks decide together whether to run another loop (a sum of the
//! ranks that would stop), so that every rank makes the same collective
//! calls in the same order: one rank that stops (its filesystem full, an
//! error, a signal) stops them all at the next loop.

use fslab_cluster::Cluster;
use fslab_model::SeriesPoint;

use super::create::{LoopCtx, LoopOutcome, Worker};
use crate::measure::{supervise, PhaseClock, Progress};
use crate::stonewall::{agree, Check, Wall};

/// Whether every rank goes on to another loop, this one if `go`: a
/// collective every rank makes before each loop.
pub(super) fn all_go_on(c: &dyn Cluster, go: bool) -> bool {
    c.sum(u64::from(!go)) == 0
}

/// One loop of every worker with the stonewall `seconds` after its start:
/// each worker's outcome and the rank's stonewall (None when a rank had
/// ended: no agreement, and the loop ends where it stopped).
pub(super) fn one_loop(
    workers: &mut [Worker],
    in_loop: &LoopCtx,
    seconds: u64,
    c: &dyn Cluster,
    clock: &mut PhaseClock,
    progress: &Progress,
    on_point: &mut dyn FnMut(SeriesPoint),
) -> (Vec<Option<LoopOutcome>>, Option<Wall>) {
    let started = std::time::Instant::now();
    let first = LoopCtx {
        wall: Check::after(seconds),
        ..*in_loop
    };
    let jobs: Vec<Box<dyn FnOnce() -> u64 + Send + '_>> = workers
        .iter_mut()
        .map(|w| {
            let first = &first;
            Box::new(move || {
                w.begin_loop();
                w.create_more(first)
            }) as Box<dyn FnOnce() -> u64 + Send + '_>
        })
        .collect();
    let at: Vec<u64> = supervise(jobs, clock, progress, on_point)
        .into_iter()
        .map(Option::unwrap_or_default)
        .collect();
    let at_wall: u64 = at.iter().sum();
    // The agreement, on this (the main) thread: MPI is funneled.
    let agreed = agree(c, at.iter().copied().max().unwrap_or(0));
    let wall_s = started.elapsed().as_secs_f64();
    let rest = LoopCtx {
        wall: Check::NEVER,
        // Without an agreement nothing more is made.
        upto: agreed.unwrap_or(0),
        ..*in_loop
    };
    let jobs: Vec<Box<dyn FnOnce() -> LoopOutcome + Send + '_>> = workers
        .iter_mut()
        .map(|w| {
            let rest = &rest;
            Box::new(move || {
                w.create_more(rest);
                w.end_loop(rest)
            }) as Box<dyn FnOnce() -> LoopOutcome + Send + '_>
        })
        .collect();
    let outcomes = supervise(jobs, clock, progress, on_point);
    let at_end = outcomes.iter().flatten().map(|o| o.files).sum();
    let wall = agreed.map(|agreed| Wall {
        at_wall,
        agreed,
        wall_s,
        at_end,
    });
    (outcomes, wall)
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicBool;

    use fslab_cluster::{Cluster, LocalCluster};
    use fslab_model::MemRecorder;

    use crate::common::Outcome;

    use crate::fsmark::{run, RawOptions};
    use crate::{Hooks, Start};

    /// fs_mark's options for rank `rank`'s directory under `root`.
    fn opts(root: &std::path::Path, rank: usize, loops: i64) -> crate::fsmark::FsMarkOptions {
        RawOptions {
            dirs: vec![root.join(format!("r{rank}"))],
            threads: Some(2),
            files: Some(200_000_000),
            file_size: Some("0".into()),
            io_size: None,
            sync: Some(0),
            subdirs: None,
            per_subdir: None,
            subdir_secs: None,
            name_len: None,
            rand_len: None,
            loops: Some(loops),
            keep: true,
            fill: false,
            log_file: Some("/dev/null".into()),
            verbose: false,
            phases: None,
            stonewall: Some(1),
            seed: None,
        }
        .validate()
        .unwrap()
    }

    /// Each rank's run of fsmark (a rank's own options from `mine`), then
    /// the runtime's finish (a sum of 1 until every rank has ended): each
    /// rank's outcome (None when its run failed) and rank 0's recorded
    /// metrics. The ranks run on a
    /// thread of their own, given 60 s: a rank left waiting fails the test.
    fn ranks(
        mine: impl Fn(usize) -> crate::fsmark::FsMarkOptions + Send + Sync + 'static,
    ) -> (Vec<Option<Outcome>>, Vec<fslab_model::Metric>) {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let out = LocalCluster::run(3, |c| {
                let o = mine(c.rank());
                let mut rec = MemRecorder::default();
                let stop = AtomicBool::new(false);
                let r = run(
                    &o,
                    Start {
                        argv: &[],
                        cluster: c,
                        stop: &stop,
                        out: &mut std::io::sink(),
                        rec: &mut rec,
                        hooks: &mut Hooks::default(),
                    },
                );
                while c.sum(1) < 3 {}
                (r.ok().map(|r| r.outcome), rec.metrics)
            });
            let _ = tx.send(out);
        });
        let out = rx
            .recv_timeout(std::time::Duration::from_secs(60))
            .expect("the ranks hung: a rank that stopped left the others waiting");
        let metrics = out[0].1.clone();
        (out.into_iter().map(|(s, _)| s).collect(), metrics)
    }

    #[test]
    fn a_rank_that_runs_fewer_loops_stops_the_others_at_their_next_loop() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().to_path_buf();
        // Rank 1 runs one loop, the others would run three.
        let (outs, metrics) = ranks(move |r| opts(&root, r, if r == 1 { 1 } else { 3 }));
        let cut = |r: usize| {
            let o = outs[r].as_ref().expect("every rank's run ends");
            (o.phases[0].complete, o.notes.join("; "))
        };
        assert_eq!(cut(1), (true, String::new()));
        for r in [0, 2] {
            assert_eq!(
                cut(r),
                (
                    false,
                    "another rank ended the create phase before loop 1".into()
                ),
                "rank {r}"
            );
        }
        let files = |r: usize| {
            std::fs::read_dir(tmp.path().join(format!("r{r}")))
                .unwrap()
                .count()
        };
        assert!(files(0) > 0);
        assert!(
            (0..3).all(|r| files(r) == files(0)),
            "one loop each, worn out to the same count"
        );
        // Rank 0 summed the one loop every rank ran.
        let at_wall = metrics
            .iter()
            .find(|m| m.name == "items at stonewall")
            .expect("rank 0's stonewall metrics");
        assert!(at_wall.value > 0.0);
    }

    #[test]
    fn a_rank_that_cannot_start_stops_the_others_instead_of_hanging() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().to_path_buf();
        // Rank 2's log file cannot be opened: its run fails before its
        // first loop.
        let (outs, metrics) = ranks(move |r| {
            let mut o = opts(&root, r, 2);
            if r == 2 {
                o.log_file = root.join("no-such-dir/log");
            }
            o
        });
        assert!(outs[2].is_none(), "rank 2's run failed");
        for r in [0, 1] {
            let o = outs[r].as_ref().expect("ranks 0 and 1 end");
            assert_eq!(o.phases[0].phase, "create");
            assert!(!o.phases[0].complete, "rank {r}");
            assert_eq!(o.phases[0].ops, 0, "rank {r} ran no loop");
        }
        assert!(
            !metrics.iter().any(|m| m.name == "items at stonewall"),
            "no summary without every rank"
        );
    }
}
