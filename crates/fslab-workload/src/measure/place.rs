//! Where a rank's work runs: a phase made on the calling thread starts on
//! the CPU on which the rank's previous phase ended.
//!
//! mdtest's rank is one thread: its tree removal runs on the CPU whose
//! caches still hold the directories its file removal just emptied.
//! fslab's item phases run on a worker thread, so the calling thread that
//! then removes the tree usually sits on the other CPU: on tmpfs, 1 rank,
//! that one `rmdir` ran at 0.75x mdtest's rate, and at 1.0x with both
//! programs kept on one CPU (`taskset -c 1`). The move is made before the
//! phase's time starts; the thread is not kept there.

use rustix::thread::{sched_getaffinity, sched_setaffinity, CpuSet};

/// The CPU the calling thread runs on now (read by a worker as its phase
/// ends: once a phase, not an item; `usize::MAX` if the kernel will not
/// say, which no move accepts).
#[inline(always)]
pub fn this_cpu() -> usize {
    fslab_sys::cpu::this_cpu().unwrap_or(usize::MAX)
}

/// Moves the calling thread to `cpu` and lets it free again: it runs on
/// `cpu` when this returns, with its former CPU set back, so the scheduler
/// may still move it when that CPU gets busy (kept there for the phase,
/// ext4's one-directory `rmdir`, 25 ms of journal and block work, ran at
/// 0.90 of the bare loop in one bench run; moved and let free, 0.97 in the
/// next: within that phase's run-to-run spread, but no reason to hold the
/// thread). False when the thread may not run there or a call failed
/// (the thread then runs where it was, its CPU set as it was).
pub fn move_to(cpu: usize) -> bool {
    let Ok(before) = sched_getaffinity(None) else {
        return false;
    };
    if cpu >= CpuSet::MAX_CPU || !before.is_set(cpu) {
        return false;
    }
    let mut only = CpuSet::new();
    only.set(cpu);
    let moved = sched_setaffinity(None, &only).is_ok();
    let back = sched_setaffinity(None, &before).is_ok();
    moved && back
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_moved_thread_runs_on_its_cpu_with_its_cpu_set_back() {
        let before = sched_getaffinity(None).unwrap();
        let cpus: Vec<usize> = (0..CpuSet::MAX_CPU).filter(|&c| before.is_set(c)).collect();
        for &cpu in [cpus[0], *cpus.last().unwrap()].iter() {
            assert!(move_to(cpu));
            assert_eq!(this_cpu(), cpu);
            assert_eq!(sched_getaffinity(None).unwrap(), before);
        }
    }

    #[test]
    fn a_cpu_outside_the_set_is_refused_and_nothing_changes() {
        let before = sched_getaffinity(None).unwrap();
        assert!(!move_to(CpuSet::MAX_CPU));
        assert_eq!(sched_getaffinity(None).unwrap(), before);
    }
}
