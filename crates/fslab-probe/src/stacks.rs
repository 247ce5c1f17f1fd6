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

/// Counts of blocked-thread stacks, and of the workload's worker threads
/// by scheduler state.
#[derive(Default)]
pub struct StackCounts {
    /// (thread kind, frames) -> samples
    counts: HashMap<(String, Vec<String>), u64>,
    pub samples: u64,
    /// Worker-thread samples by state (`R` running or runnable, `D`
    /// blocked, `S` sleeping, ...): see [`StackCounts::sample_process`].
    pub worker_states: std::collections::BTreeMap<String, u64>,
}

/// A task's scheduler state letter from its /proc stat line.
fn state_of(stat: &str) -> &str {
    stat.rsplit(')')
        .next()
        .and_then(|r| r.split_whitespace().next())
        .unwrap_or("")
}

impl StackCounts {
    /// Samples every thread of `pid` but the probes' own; `kind` names it
    /// (e.g. `workload`). Its workers' states are counted too: the workers
    /// are its threads but the main one, which only coordinates while
    /// others work (the main thread alone is the worker of a process
    /// without others).
    pub fn sample_process(&mut self, source: &dyn Source, pid: u32, kind: &str) {
        let base = Path::new("/proc").join(pid.to_string()).join("task");
        let mut states: Vec<(bool, String)> = Vec::new();
        for tid in source.list(&base) {
            let task = base.join(&tid);
            // The probes' own threads, when they run in the workload's
            // process (a standalone workload command), are not the workload.
            let comm = source.read(&task.join("comm")).unwrap_or_default();
            if PROBE_THREADS.iter().any(|t| comm.trim() == *t) {
                continue;
            }
            if let Some(state) = self.sample_task(source, &task, kind) {
                states.push((tid == pid.to_string(), state));
            }
        }
        let alone = states.len() == 1;
        for (_, st) in states.into_iter().filter(|(main, _)| alone || !main) {
            *self.worker_states.entry(st).or_insert(0) += 1;
        }
    }

    /// Samples one thread directory, its stack if it is blocked (state
    /// D); its state (None when it is gone).
    pub fn sample_task(&mut self, source: &dyn Source, task: &Path, kind: &str) -> Option<String> {
        let stat = source.read(&task.join("stat"))?;
        let state = state_of(&stat).to_string();
        if state != "D" {
            return Some(state);
        }
        let f = source
            .read(&task.join("stack"))
            .map(|s| frames(&s))
            .unwrap_or_default();
        if !f.is_empty() {
            *self.counts.entry((kind.to_string(), f)).or_insert(0) += 1;
        }
        Some(state)
    }

    /// Blocked samples of threads of `kind`, kept stacks or not.
    pub fn blocked(&self, kind: &str) -> u64 {
        self.counts
            .iter()
            .filter(|((k, _), _)| k == kind)
            .map(|(_, c)| c)
            .sum()
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
        self.worker_states.clear();
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
