//! How the run shows its progress: a terminal display in `fslab run`,
//! [`NoProgress`] in tests.

use crate::spec::Cell;

/// Shows the run's progress (a terminal display, or nothing in tests).
pub trait Progress {
    /// Run `k` of `total` starts: repetition `rep` of `cell`.
    fn cell_start(&mut self, k: usize, total: usize, cell: &Cell, rep: u32, reps: u32);
    /// A setup or teardown step.
    fn step(&mut self, what: &str);
    /// The workload's current phase, its rate over the last second, its
    /// operations so far and the count it will make, when known.
    fn rate(&mut self, phase: &str, ops_per_s: f64, total: u64, expected: Option<u64>);
    /// The run ended; `message` says how.
    fn cell_end(&mut self, ok: bool, message: &str);
    /// Something about the whole experiment (outside any cell).
    fn note(&mut self, _what: &str) {}
    /// The workload's memory pressure now (None: none, or it is gone).
    fn pressure(&mut self, _now: Option<&str>) {}
}

/// A [`Progress`] that shows nothing.
pub struct NoProgress;

impl Progress for NoProgress {
    fn cell_start(&mut self, _: usize, _: usize, _: &Cell, _: u32, _: u32) {}
    fn step(&mut self, _: &str) {}
    fn rate(&mut self, _: &str, _: f64, _: u64, _: Option<u64>) {}
    fn cell_end(&mut self, _: bool, _: &str) {}
}
