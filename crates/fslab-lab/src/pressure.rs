//! Whether a cell's workload is at its memory limit, for the progress line:
//! the memory cgroup's usage against its limit, and how often the limit was
//! hit (the kernel reclaiming to stay under it) since the last look. The
//! same counters the `mem` probe samples (cgroup usage and failcnt), read
//! once a second beside the workload.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::human_bytes;
use fslab_model::cgroup::MemoryCgroup;

/// At or above this share of its limit, a cell is "at its memory limit".
pub const AT_LIMIT: f64 = 0.95;

/// How a workload stands against its memory limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pressure {
    /// The limit was hit `hits` times in the last look's interval: the
    /// kernel is reclaiming the cell's memory to keep it under the limit.
    Reclaiming { hits: u64, usage: u64, limit: u64 },
    /// Charged at least [`AT_LIMIT`] of its limit, without hits.
    AtLimit { usage: u64, limit: u64 },
}

impl std::fmt::Display for Pressure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Pressure::Reclaiming { hits, usage, limit } => write!(
                f,
                "reclaiming at its memory limit: {} of {}, limit hit {hits} times in the last second",
                human_bytes(*usage),
                human_bytes(*limit)
            ),
            Pressure::AtLimit { usage, limit } => write!(
                f,
                "at its memory limit: {} of {}",
                human_bytes(*usage),
                human_bytes(*limit)
            ),
        }
    }
}

/// What one look at the counters says: `hits` is the rise of the limit
/// counter since the previous look.
pub fn judge(usage: u64, limit: u64, hits: u64) -> Option<Pressure> {
    if limit == 0 {
        return None;
    }
    if hits > 0 {
        return Some(Pressure::Reclaiming { hits, usage, limit });
    }
    (usage as f64 >= AT_LIMIT * limit as f64).then_some(Pressure::AtLimit { usage, limit })
}

/// Looks at a workload's memory cgroup once a second.
pub struct Watcher {
    cg: MemoryCgroup,
    limit: u64,
    last_hits: Option<u64>,
    last_look: Option<Instant>,
    /// The pressure seen at the last look.
    pub now: Option<Pressure>,
    /// The limit hits seen while watching.
    pub total_hits: u64,
    /// Looks in a row that found the cgroup's tasks waiting on an OOM that
    /// is over (see [`Watcher::wake_stalled`]), and the wakes made.
    stalled_looks: u32,
    pub woken: u32,
}

/// Below this share of its limit a cgroup v1 still "under OOM" has room:
/// its waiting tasks missed their wake-up.
const STALLED_BELOW: f64 = 0.9;

impl Watcher {
    /// Watches the memory cgroup at `path` (v1 or v2); None when it has no
    /// limit that can be read.
    pub fn new(path: &Path) -> Option<Watcher> {
        let v2 = !path.join("memory.limit_in_bytes").exists();
        let file = if v2 {
            "memory.max"
        } else {
            "memory.limit_in_bytes"
        };
        let limit: u64 = std::fs::read_to_string(path.join(file))
            .ok()?
            .trim()
            .parse()
            .ok()?;
        let cg = MemoryCgroup {
            path: path.to_path_buf(),
            v2,
        };
        Some(Watcher {
            last_hits: cg.limit_hits(),
            cg,
            limit,
            last_look: None,
            now: None,
            total_hits: 0,
            stalled_looks: 0,
            woken: 0,
        })
    }

    /// Under cgroup v1 with the OOM killer off, a task that hit the limit
    /// sleeps until the cgroup uncharges memory; a wake-up that comes
    /// before it sleeps is lost, and it sleeps for ever though the cgroup
    /// has room again (seen twice in the suite: 2 MiB charged of a 32 MiB
    /// limit, the workload in `mem_cgroup_oom_synchronize` for 19 min).
    /// Seen on two looks in a row, the limit is raised by a page and set
    /// back: raising it wakes the waiters (the kernel's own recovery), and
    /// they fault again with room to spare.
    fn wake_stalled(&mut self, usage: u64) {
        let path = &self.cg.path;
        let under_oom = !self.cg.v2
            && std::fs::read_to_string(path.join("memory.oom_control"))
                .is_ok_and(|t| t.lines().any(|l| l.trim() == "under_oom 1"));
        if !(under_oom && (usage as f64) < STALLED_BELOW * self.limit as f64) {
            self.stalled_looks = 0;
            return;
        }
        self.stalled_looks += 1;
        if self.stalled_looks < 2 {
            return;
        }
        let file = path.join("memory.limit_in_bytes");
        if std::fs::write(&file, (self.limit + 4096).to_string()).is_ok() {
            let _ = std::fs::write(&file, self.limit.to_string());
            self.woken += 1;
            self.stalled_looks = 0;
        }
    }

    /// Looks again when a second has passed: Some(change) when the
    /// pressure is not what it was (None inside: it is gone).
    pub fn poll(&mut self) -> Option<Option<Pressure>> {
        if self
            .last_look
            .is_some_and(|t| t.elapsed() < Duration::from_secs(1))
        {
            return None;
        }
        self.last_look = Some(Instant::now());
        let usage = self.cg.usage()?;
        self.wake_stalled(usage);
        let hits_now = self.cg.limit_hits();
        let hits = match (hits_now, self.last_hits) {
            (Some(n), Some(l)) => n.saturating_sub(l),
            _ => 0,
        };
        self.last_hits = hits_now.or(self.last_hits);
        self.total_hits += hits;
        let p = judge(usage, self.limit, hits);
        let kind = |p: &Option<Pressure>| p.as_ref().map(std::mem::discriminant);
        let changed = kind(&p) != kind(&self.now);
        let shown = p.clone();
        self.now = p;
        // The numbers change every second; the line is updated then too.
        (changed || shown.is_some()).then_some(shown)
    }

    /// A summary for the cell's error when it ended under pressure.
    pub fn summary(&self) -> Option<String> {
        (self.total_hits > 0 || self.now.is_some()).then(|| {
            let mut s = format!(
                "memory limit {} hit {} times while it ran",
                human_bytes(self.limit),
                self.total_hits
            );
            if self.woken > 0 {
                s.push_str(&format!(
                    "; its tasks woken {} times from an OOM wait with room again",
                    self.woken
                ));
            }
            s
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pressure_is_reclaiming_when_the_limit_was_hit_and_at_limit_when_nearly_full() {
        let mib = 1u64 << 20;
        assert_eq!(judge(10 * mib, 48 * mib, 0), None);
        assert_eq!(
            judge(47 * mib, 48 * mib, 0),
            Some(Pressure::AtLimit {
                usage: 47 * mib,
                limit: 48 * mib
            })
        );
        let r = judge(48 * mib, 48 * mib, 312).unwrap();
        assert_eq!(
            r.to_string(),
            "reclaiming at its memory limit: 48 MiB of 48 MiB, limit hit 312 times in the last second"
        );
        assert_eq!(judge(5, 0, 3), None, "no limit, no pressure");
    }

    #[test]
    fn a_watcher_reads_a_v1_cgroup_and_reports_what_changed() {
        let d = tempfile::tempdir().unwrap();
        let w = |f: &str, v: &str| std::fs::write(d.path().join(f), v).unwrap();
        w("memory.limit_in_bytes", "1000\n");
        w("memory.usage_in_bytes", "100\n");
        w("memory.failcnt", "7\n");
        let mut watch = Watcher::new(d.path()).unwrap();
        assert_eq!(watch.poll(), None, "calm at first: nothing to show");
        assert!(watch.summary().is_none());
        w("memory.usage_in_bytes", "1000\n");
        w("memory.failcnt", "19\n");
        watch.last_look = None;
        assert_eq!(
            watch.poll(),
            Some(Some(Pressure::Reclaiming {
                hits: 12,
                usage: 1000,
                limit: 1000
            }))
        );
        w("memory.usage_in_bytes", "10\n");
        watch.last_look = None;
        assert_eq!(watch.poll(), Some(None), "the pressure is gone");
        assert_eq!(watch.total_hits, 12);
        assert!(watch.summary().unwrap().contains("hit 12 times"));
    }

    #[test]
    fn tasks_left_waiting_on_an_oom_that_is_over_are_woken_once_seen_twice() {
        let d = tempfile::tempdir().unwrap();
        let w = |f: &str, v: &str| std::fs::write(d.path().join(f), v).unwrap();
        w("memory.limit_in_bytes", "1000000\n");
        w("memory.usage_in_bytes", "950000\n");
        w("memory.failcnt", "7\n");
        w(
            "memory.oom_control",
            "oom_kill_disable 1\nunder_oom 1\noom_kill 0\n",
        );
        let mut watch = Watcher::new(d.path()).unwrap();
        // At its limit: a real wait for reclaim, left alone.
        for _ in 0..3 {
            watch.last_look = None;
            watch.poll();
        }
        assert_eq!(watch.woken, 0);
        // Room again (2 of 32 MiB in the suite) and still under OOM: the
        // second look in a row wakes it, the limit as it was.
        w("memory.usage_in_bytes", "20000\n");
        watch.last_look = None;
        watch.poll();
        assert_eq!(watch.woken, 0, "one look is not enough");
        watch.last_look = None;
        watch.poll();
        assert_eq!(watch.woken, 1);
        let limit = std::fs::read_to_string(d.path().join("memory.limit_in_bytes")).unwrap();
        assert_eq!(limit, "1000000");
        // Not under OOM: nothing to wake.
        w(
            "memory.oom_control",
            "oom_kill_disable 1\nunder_oom 0\noom_kill 0\n",
        );
        for _ in 0..3 {
            watch.last_look = None;
            watch.poll();
        }
        assert_eq!(watch.woken, 1);
    }
}
