//! `stacks`: ten times a second, the kernel stacks of the workload's
//! threads (a command workload's: its program's and their descendants')
//! and of the device's kernel threads that are blocked (D); per
//! phase the top stacks by share of samples.

use std::path::Path;
use std::time::Duration;

use crate::notes::{Note, StacksTop};
use crate::plugin::{Described, Evidence, Needs, Plugin, Table};
use crate::probe::{Ctx, PhaseOut, Probe, Reading};
use crate::stacks::StackCounts;

/// The stacks kept a phase, most frequent first.
const TOP: usize = 20;
/// The workload's threads' kind.
const WORKLOAD: &str = "workload";

#[derive(Default)]
pub struct Stacks {
    counts: StackCounts,
}

impl Probe for Stacks {
    fn period(&self) -> Duration {
        Duration::from_millis(100)
    }

    fn phase_start(&mut self, _ctx: &Ctx) -> Vec<Reading> {
        self.counts.clear();
        Vec::new()
    }

    fn sample(&mut self, ctx: &Ctx, _dt: f64) -> Vec<Reading> {
        for pid in ctx.workers {
            self.counts.sample_process(ctx.source, *pid, WORKLOAD);
        }
        for (pid, comm) in ctx.kthreads {
            self.counts.sample_task(
                ctx.source,
                &Path::new("/proc").join(pid.to_string()),
                &format!("kthread {comm}"),
            );
        }
        self.counts.round();
        Vec::new()
    }

    fn phase_end(&mut self, ctx: &Ctx, _secs: f64) -> PhaseOut {
        PhaseOut {
            notes: vec![ctx.phase_note(&StacksTop {
                rounds: self.counts.samples,
                stacks: self.counts.top(TOP),
                workload_blocked: self.counts.blocked(WORKLOAD),
                worker_states: self.counts.worker_states.clone(),
            })],
            metrics: Vec::new(),
        }
    }
}

/// The `stacks` probe.
pub struct StacksPlugin;

impl Plugin for StacksPlugin {
    fn name(&self) -> &'static str {
        "stacks"
    }

    fn needs(&self) -> Needs {
        Needs {
            root: Some("reading kernel stacks (/proc/PID/task/TID/stack)"),
            ..Needs::default()
        }
    }

    fn make(&self) -> Box<dyn Probe> {
        Box::<Stacks>::default()
    }

    /// The phase's three most frequent stacks.
    fn describe_phase(&self, phase: &Described) -> Vec<String> {
        phase
            .note::<StacksTop>()
            .unwrap_or_default()
            .stacks
            .iter()
            .take(3)
            .map(|st| {
                let frames: Vec<&str> = st.frames.iter().map(String::as_str).take(5).collect();
                format!(
                    "blocked {:>5.1}% {}: {}",
                    st.share_pct,
                    st.thread,
                    frames.join(" <- ")
                )
            })
            .collect()
    }

    /// Each phase's five most frequent stacks.
    fn tables(&self, run: &Described) -> Vec<Table> {
        let mut rows = Vec::new();
        for (phase, top) in run.notes_of::<StacksTop>() {
            for s in top.stacks.iter().take(5) {
                let frames: Vec<&str> = s.frames.iter().map(String::as_str).take(6).collect();
                rows.push(vec![
                    run.phase_name(phase).to_string(),
                    s.thread.clone(),
                    format!("{:.1}%", s.share_pct),
                    frames.join(" <- "),
                ]);
            }
        }
        if rows.is_empty() {
            return Vec::new();
        }
        vec![Table {
            head: ["phase", "blocked thread", "share", "kernel stack"]
                .map(String::from)
                .to_vec(),
            rows,
        }]
    }

    /// Each phase's top stacks (seed 004's mechanism).
    fn evidence(&self) -> Evidence {
        Evidence {
            notes: vec![StacksTop::KEY],
            series: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::bed::*;
    use super::*;
    use crate::notes::Note;

    #[test]
    fn blocked_workload_and_device_threads_but_not_the_probes() {
        let b = Bed::new();
        let fsync = "[<0>] jbd2_log_wait_commit+0xe6/0x140\n[<0>] ext4_sync_file+0x1b4/0x380\n";
        // The workload: one thread in fsync (D), one running, a probe thread in D.
        b.source.set(
            "/proc/4242/task/4242/stat",
            pid_stat(4242, "fslab", 'D', 1, 0, 0),
        );
        b.source.set("/proc/4242/task/4242/stack", fsync);
        b.source.set(
            "/proc/4242/task/4243/stat",
            pid_stat(4243, "fslab", 'R', 1, 0, 0),
        );
        b.source.set(
            "/proc/4242/task/4244/stat",
            pid_stat(4244, "fslab-trace", 'D', 1, 0, 0),
        );
        b.source.set("/proc/4242/task/4244/comm", "fslab-trace\n");
        b.source
            .set("/proc/4242/task/4244/stack", "[<0>] __vm_munmap+0x1/0x2\n");
        // The device's journal thread, blocked writing; another device's.
        b.source
            .set("/proc/10/stat", pid_stat(10, "jbd2/loop3-8", 'D', 2, 0, 0));
        b.source.set(
            "/proc/10/stack",
            "[<0>] jbd2_journal_commit_transaction+0x1/0x2\n",
        );
        b.source
            .set("/proc/11/stat", pid_stat(11, "jbd2/sda1-8", 'D', 2, 0, 0));
        b.source.set("/proc/11/stack", "[<0>] elsewhere+0x1/0x2\n");
        let mut p = Stacks::default();
        p.phase_start(&b.ctx());
        for _ in 0..4 {
            p.sample(&b.ctx(), 0.1);
        }
        let top = StacksTop::from_value(&p.phase_end(&b.ctx(), 0.4).notes[0].value);
        assert_eq!(top.rounds, 4);
        let threads: Vec<&str> = top.stacks.iter().map(|s| s.thread.as_str()).collect();
        assert_eq!(threads.len(), 2, "{top:?}");
        assert!(threads.contains(&"workload") && threads.contains(&"kthread jbd2/loop3-8"));
        let w = top.stacks.iter().find(|s| s.thread == "workload").unwrap();
        assert_eq!(w.frames, ["jbd2_log_wait_commit", "ext4_sync_file"]);
        assert_eq!((w.samples, w.per_round, w.share_pct), (4, 1.0, 50.0));
        assert_eq!(top.workload_blocked, 4);
        // The workers: 4242 is the main thread, so 4243 (running) alone...
        // and 4242 blocked in fsync is the main thread: not a worker.
        assert_eq!(
            top.worker_states.into_iter().collect::<Vec<_>>(),
            [("R".to_string(), 4)]
        );
    }

    #[test]
    fn a_program_the_workload_started_is_sampled_in_its_place() {
        let mut b = Bed::new();
        // fslab (4242) waits for its program (5000), whose child (5001)
        // writes: the workers are the program's, not fslab's wait.
        b.processes = vec![4242, 5000, 5001];
        b.workers = vec![5001];
        b.source.set(
            "/proc/4242/task/4242/stat",
            pid_stat(4242, "fslab", 'S', 1, 0, 0),
        );
        b.source.set(
            "/proc/5000/task/5000/stat",
            pid_stat(5000, "fio", 'S', 4242, 0, 0),
        );
        b.source.set(
            "/proc/5001/task/5001/stat",
            pid_stat(5001, "fio", 'D', 5000, 0, 0),
        );
        b.source.set(
            "/proc/5001/task/5001/stack",
            "[<0>] blk_mq_get_tag+0x1/0x2\n[<0>] submit_bio+0x1/0x2\n",
        );
        let mut p = Stacks::default();
        p.phase_start(&b.ctx());
        p.sample(&b.ctx(), 0.1);
        let top = StacksTop::from_value(&p.phase_end(&b.ctx(), 0.1).notes[0].value);
        assert_eq!(top.stacks[0].thread, "workload");
        assert_eq!(top.stacks[0].frames, ["blk_mq_get_tag", "submit_bio"]);
        assert_eq!(top.workload_blocked, 1);
        // The forked job is the worker: neither fslab's sleeping wait for
        // the program nor the program's wait for its job is one.
        assert_eq!(
            top.worker_states.into_iter().collect::<Vec<_>>(),
            [("D".to_string(), 1)]
        );
    }

    #[test]
    fn a_process_of_one_thread_is_its_own_worker() {
        let b = Bed::new();
        b.source.set(
            "/proc/4242/task/4242/stat",
            pid_stat(4242, "fslab", 'D', 1, 0, 0),
        );
        b.source
            .set("/proc/4242/task/4242/stack", "[<0>] io_schedule+0x1/0x2\n");
        let mut p = Stacks::default();
        p.phase_start(&b.ctx());
        p.sample(&b.ctx(), 0.1);
        let top = StacksTop::from_value(&p.phase_end(&b.ctx(), 0.1).notes[0].value);
        assert_eq!(top.worker_states.get("D"), Some(&1));
    }
}
