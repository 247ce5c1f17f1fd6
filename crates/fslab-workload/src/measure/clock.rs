use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use fslab_model::SeriesPoint;

#[repr(align(128))]
#[derive(Default)]
struct Slot(AtomicU64);

/// One progress counter per worker thread, each on its own cache line.
pub struct Progress {
    slots: Vec<Slot>,
}

impl Progress {
    pub fn new(threads: usize) -> Self {
        Progress {
            slots: (0..threads).map(|_| Slot::default()).collect(),
        }
    }

    /// Called by worker `thread` after each operation with its running total
    /// for the phase. A relaxed store: no read-modify-write, no contention.
    #[inline]
    pub fn set(&self, thread: usize, done: u64) {
        self.slots[thread].0.store(done, Ordering::Relaxed);
    }

    /// Operations completed by all workers in this phase.
    pub fn total(&self) -> u64 {
        self.slots.iter().map(|s| s.0.load(Ordering::Relaxed)).sum()
    }
}

/// Turns a phase's progress counters into one [`SeriesPoint`] per second.
pub struct PhaseClock {
    phase_index: u32,
    start: Instant,
    next_tick: Instant,
    last_total: u64,
    end: Option<Instant>,
}

impl PhaseClock {
    pub fn start(phase_index: u32) -> Self {
        let start = Instant::now();
        PhaseClock {
            phase_index,
            start,
            next_tick: start + Duration::from_secs(1),
            last_total: 0,
            end: None,
        }
    }

    /// Time left until the next one-second boundary.
    pub fn until_tick(&self) -> Duration {
        self.next_tick.saturating_duration_since(Instant::now())
    }

    /// Ends the phase's interval now: what the coordinator does afterwards
    /// (storing the last point, reading counters) is not the workload's time.
    pub fn stop(&mut self) {
        self.end.get_or_insert_with(Instant::now);
    }

    /// Ends the phase's interval at `end`, read while the clock was lent to
    /// a helper thread ([`crate::measure::supervise_here`]).
    pub fn stop_at(&mut self, end: Instant) {
        self.end.get_or_insert(end);
    }

    /// From the start to [`PhaseClock::stop`], or to now if not stopped.
    pub fn elapsed(&self) -> Duration {
        self.end.unwrap_or_else(Instant::now) - self.start
    }

    /// If a second boundary has passed, returns the point for it.
    pub fn tick(&mut self, total: u64) -> Option<SeriesPoint> {
        let now = Instant::now();
        if now < self.next_tick {
            return None;
        }
        // If the coordinator was late by whole seconds, they collapse into one point.
        while self.next_tick <= now {
            self.next_tick += Duration::from_secs(1);
        }
        Some(self.point(now, total))
    }

    /// The last, partial interval at the end of the phase.
    pub fn finish(&mut self, total: u64) -> Option<SeriesPoint> {
        let end = self.end.unwrap_or_else(Instant::now);
        (total > self.last_total).then(|| self.point(end, total))
    }

    fn point(&mut self, now: Instant, total: u64) -> SeriesPoint {
        let ops = total.saturating_sub(self.last_total);
        self.last_total = total;
        SeriesPoint {
            phase_index: self.phase_index,
            t_s: (now - self.start).as_secs_f64(),
            ops,
            total_ops: total,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_sums_threads() {
        let p = Progress::new(3);
        p.set(0, 5);
        p.set(2, 7);
        p.set(0, 6);
        assert_eq!(p.total(), 13);
    }

    #[test]
    fn clock_emits_one_point_per_elapsed_second() {
        let mut c = PhaseClock::start(1);
        assert!(c.tick(10).is_none());
        c.next_tick = Instant::now() - Duration::from_millis(1);
        let p = c.tick(10).unwrap();
        assert_eq!((p.phase_index, p.ops, p.total_ops), (1, 10, 10));
        assert!(c.tick(15).is_none());
        let last = c.finish(15).unwrap();
        assert_eq!((last.ops, last.total_ops), (5, 15));
        assert!(c.finish(15).is_none());
    }

    #[test]
    fn a_stopped_clock_no_longer_advances() {
        let mut c = PhaseClock::start(0);
        std::thread::sleep(Duration::from_millis(2));
        c.stop();
        let at_stop = c.elapsed();
        std::thread::sleep(Duration::from_millis(5));
        assert_eq!(c.elapsed(), at_stop);
        c.stop();
        assert_eq!(c.elapsed(), at_stop, "a second stop keeps the first end");
        let last = c.finish(3).unwrap();
        assert_eq!(last.t_s, at_stop.as_secs_f64());
    }
}
