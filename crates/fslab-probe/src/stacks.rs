//! Where blocked threads wait: samples of /proc/PID/task/TID/stack for the
//! workload's threads and the filesystem's kernel threads that are in
//! uninterruptible sleep (D), aggregated into the top stacks by their
//! share of samples (seed 004's "where is the create thread waiting?").

use std::collections::HashMap;
use std::path::Path;

use crate::notes::BlockedStack;
use crate::source::Source;

/// Function names of a kernel stack, innermost first (`[<0>] fn+0x1/0x2`).
pub fn frames(stack: &str) -> Vec<String> {
    stack
        .lines()
        .filter_map(|l| l.split_whitespace().nth(1))
        .map(|f| f.split('+').next().unwrap_or(f).to_string())
        .collect()
}

/// The names of the probes' own threads (see [`crate::ProbeSet`]).
pub const PROBE_THREADS: [&str; 2] = ["fslab-probes", "fslab-trace"];

/// Counts of blocked-thread stacks.
#[derive(Default)]
pub struct StackCounts {
    /// (thread kind, frames) -> samples
    counts: HashMap<(String, Vec<String>), u64>,
    pub samples: u64,
}

impl StackCounts {
    /// Samples every thread of `pid` but the probes' own; `kind` names it
    /// (e.g. `workload`).
    pub fn sample_process(&mut self, source: &dyn Source, pid: u32, kind: &str) {
        let base = Path::new("/proc").join(pid.to_string()).join("task");
        for tid in source.list(&base) {
            let task = base.join(tid);
            // The probes' own threads, when they run in the workload's
            // process (a standalone workload command), are not the workload.
            let comm = source.read(&task.join("comm")).unwrap_or_default();
            if PROBE_THREADS.iter().any(|t| comm.trim() == *t) {
                continue;
            }
            self.sample_task(source, &task, kind);
        }
    }

    /// Samples one thread directory if it is blocked (state D).
    pub fn sample_task(&mut self, source: &dyn Source, task: &Path, kind: &str) {
        let Some(stat) = source.read(&task.join("stat")) else {
            return;
        };
        let state = stat
            .rsplit(')')
            .next()
            .and_then(|r| r.split_whitespace().next())
            .unwrap_or("");
        if state != "D" {
            return;
        }
        let Some(stack) = source.read(&task.join("stack")) else {
            return;
        };
        let f = frames(&stack);
        if f.is_empty() {
            return;
        }
        *self.counts.entry((kind.to_string(), f)).or_insert(0) += 1;
    }

    /// Marks one sampling round (the denominator of the shares).
    pub fn round(&mut self) {
        self.samples += 1;
    }

    /// The `n` most frequent stacks: thread kind, samples, share of all
    /// blocked-thread samples, threads blocked there per sampling round,
    /// frames (innermost first).
    pub fn top(&self, n: usize) -> Vec<BlockedStack> {
        let total: u64 = self.counts.values().sum();
        let mut v: Vec<_> = self.counts.iter().collect();
        v.sort_by(|a, b| b.1.cmp(a.1).then_with(|| a.0.cmp(b.0)));
        v.into_iter()
            .take(n)
            .map(|((kind, frames), c)| BlockedStack {
                thread: kind.clone(),
                samples: *c,
                share_pct: if total > 0 {
                    *c as f64 * 100.0 / total as f64
                } else {
                    0.0
                },
                per_round: if self.samples > 0 {
                    *c as f64 / self.samples as f64
                } else {
                    0.0
                },
                frames: frames.clone(),
            })
            .collect()
    }

    pub fn clear(&mut self) {
        self.counts.clear();
        self.samples = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_drop_offsets() {
        let s = "[<0>] jbd2_log_wait_commit+0xe6/0x140\n[<0>] ext4_sync_file+0x1b4/0x380\n[<0>] __x64_sys_fsync+0x33/0x60\n";
        assert_eq!(
            frames(s),
            ["jbd2_log_wait_commit", "ext4_sync_file", "__x64_sys_fsync"]
        );
    }
}
