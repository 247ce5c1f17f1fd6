//! Where a rank's work runs: a phase made on the calling thread moved, for
//! its duration, to the CPU on which the rank's previous phase ended.
//!
//! mdtest's rank is one thread: its tree removal runs on the CPU whose
//! caches still hold the directories its file removal just emptied.
//! fslab's item phases run on a worker thread, so the calling thread that
//! then removes the tree usually sits on the other CPU: on tmpfs, 1 rank,
//! that one `rmdir` ran at 0.75x mdtest's rate, and at 1.0x with both
//! programs kept on one CPU (`taskset -c 1`). The move is made before the
//! phase's time starts and undone after it ends.

use rustix::thread::{sched_getaffinity, sched_getcpu, sched_setaffinity, CpuSet};

/// The CPU the calling thread runs on now (read by a worker as its phase
/// ends: one `getcpu` system call a phase, not an item).
#[inline(always)]
pub fn this_cpu() -> usize {
    sched_getcpu()
}

/// The calling thread kept on one CPU until dropped, its former CPU set
/// put back then.
pub struct OnCpu {
    before: CpuSet,
}

impl OnCpu {
    /// Moves the calling thread to `cpu` (it runs there when this returns);
    /// `None` when the thread may not run there or the move failed, the
    /// thread left where it was.
    pub fn move_to(cpu: usize) -> Option<OnCpu> {
        let before = sched_getaffinity(None).ok()?;
        if cpu >= CpuSet::MAX_CPU || !before.is_set(cpu) {
            return None;
        }
        let mut only = CpuSet::new();
        only.set(cpu);
        sched_setaffinity(None, &only).ok()?;
        Some(OnCpu { before })
    }
}

impl Drop for OnCpu {
    fn drop(&mut self) {
        let _ = sched_setaffinity(None, &self.before);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_moved_thread_runs_on_its_cpu_and_gets_its_cpu_set_back() {
        let before = sched_getaffinity(None).unwrap();
        let cpus: Vec<usize> = (0..CpuSet::MAX_CPU).filter(|&c| before.is_set(c)).collect();
        let last = *cpus.last().unwrap();
        {
            let _on = OnCpu::move_to(last).expect("a CPU of this thread's set");
            assert_eq!(this_cpu(), last);
            assert_eq!(sched_getaffinity(None).unwrap().count(), 1);
        }
        assert_eq!(sched_getaffinity(None).unwrap(), before);
    }

    #[test]
    fn a_cpu_outside_the_set_is_refused_and_nothing_changes() {
        let before = sched_getaffinity(None).unwrap();
        assert!(OnCpu::move_to(CpuSet::MAX_CPU).is_none());
        assert_eq!(sched_getaffinity(None).unwrap(), before);
    }
}
