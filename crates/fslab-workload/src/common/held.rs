//! Records a run keeps in memory for a while: [`RunCtx::hold`] and
//! [`RunCtx::release`].
//!
//! Why: the store's writes at a phase's end (a few SQLite transactions,
//! some 0.5 ms of system calls and page writes) leave the CPU's caches
//! cold for whatever comes next. A phase of thousands of items does not
//! notice; a phase of one call does: mdtest's tree removal (one `rmdir` of
//! a tmpfs directory, 9-10 us) spent 1.6-1.8x the kernel time of the same
//! call in mdtest, which writes nothing between its phases (docs/speed.md).
//! A workload whose phases follow each other back to back holds each
//! phase's records and releases them before a phase of many items, where
//! the writes used to be, not before a phase of a few calls.

use fslab_model::{
    LatencyHistogram, Metric, PhaseResult, ProbeNote, ProbePoint, RecordError, SeriesPoint,
};

use super::{LatencyEntry, RunCtx};

/// One record held back, in the order it was made.
pub(super) enum Held {
    Series(SeriesPoint),
    ProbePoints(Vec<ProbePoint>),
    Note(ProbeNote),
    Metrics(Vec<Metric>),
    Phase(PhaseResult),
    /// Stored and summarised for the report when released (the summary
    /// reads the whole histogram, 36 KiB).
    Latency {
        phase: String,
        op: String,
        hist: LatencyHistogram,
    },
}

impl RunCtx<'_, '_> {
    /// Keeps the records made from now on (seconds' points, probe points
    /// and notes, metrics, phase results, latency distributions) in memory
    /// until [`RunCtx::release`]; the report's lists still grow at once,
    /// but for the latency summaries. The run's end releases them, and so
    /// does a run dropped on an error or a panic.
    pub fn hold(&mut self) {
        self.held.get_or_insert_with(Vec::new);
    }

    /// Stores the records held since [`RunCtx::hold`], in the order they
    /// were made, and records as it goes again. Stops at the first store
    /// error (the rest are lost with the store).
    pub fn release(&mut self) -> Result<(), RecordError> {
        for h in self.held.take().unwrap_or_default() {
            self.apply(h)?;
        }
        Ok(())
    }

    /// Stores `h` now, or keeps it while held.
    pub(super) fn put(&mut self, h: Held) -> Result<(), RecordError> {
        match self.held.as_mut() {
            Some(v) => {
                v.push(h);
                Ok(())
            }
            None => self.apply(h),
        }
    }

    fn apply(&mut self, h: Held) -> Result<(), RecordError> {
        let run = self.out.run_id;
        match h {
            Held::Series(p) => self.rec.record_series(run, &p),
            Held::ProbePoints(p) => self.rec.record_probe_points(run, &p),
            Held::Note(n) => self.rec.record_probe_note(run, &n),
            Held::Metrics(m) => self.rec.record_metrics(run, &m),
            Held::Phase(p) => self.rec.record_phase(run, &p),
            Held::Latency { phase, op, hist } => {
                self.rec.record_latency(run, &phase, &op, &hist)?;
                self.out.latency.push(LatencyEntry {
                    phase,
                    op,
                    summary: hist.summary(),
                });
                Ok(())
            }
        }
    }
}

impl Drop for RunCtx<'_, '_> {
    /// A run ended by an error or a panic before its end still stores
    /// what it held (the error that ended it is the one reported).
    fn drop(&mut self) {
        let _ = self.release();
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicBool;

    use fslab_model::{PhaseResult, SeriesPoint, SharedMem};

    use crate::{Hooks, Start};

    fn point(i: u32) -> SeriesPoint {
        SeriesPoint {
            phase_index: i,
            t_s: 1.0,
            ops: 10,
            total_ops: 10,
        }
    }

    fn hist() -> fslab_model::LatencyHistogram {
        let mut h = fslab_model::LatencyHistogram::new();
        h.record(1_000);
        h
    }

    /// Runs `body` on a run begun in `rec`, then drops the run (as an error
    /// or a panic would) without finishing it.
    fn on_run(rec: &SharedMem, body: impl FnOnce(&mut super::RunCtx)) {
        let (stop, mut hooks, mut out) = (AtomicBool::new(false), Hooks::default(), Vec::new());
        let argv = vec!["fslab".to_string()];
        let mut writer = rec.clone();
        let start = Start {
            argv: &argv,
            stop: &stop,
            out: &mut out,
            rec: &mut writer,
            hooks: &mut hooks,
            cluster: &fslab_cluster::Solo,
        };
        let mut b = start.begin("test", std::path::Path::new("/"), &()).unwrap();
        body(&mut b.ctx);
    }

    /// Series points, phases and latencies stored so far.
    fn counts(rec: &SharedMem) -> (usize, usize, usize) {
        let r = rec.0.borrow();
        (r.series.len(), r.phases.len(), r.latencies.len())
    }

    #[test]
    fn held_records_reach_the_store_only_when_released_and_in_order() {
        let rec = SharedMem::default();
        on_run(&rec, |ctx| {
            ctx.second("a", point(0));
            assert_eq!(counts(&rec), (1, 0, 0), "not held: stored at once");
            ctx.hold();
            ctx.second("a", point(1));
            ctx.record_phase(PhaseResult::timed("a", 10, 1.0)).unwrap();
            ctx.keep_latency("a", "stat", hist()).unwrap();
            assert_eq!(counts(&rec), (1, 0, 0), "held: nothing stored");
            assert_eq!(ctx.out.phases.len(), 1, "the report's list grows at once");
            assert!(ctx.out.latency.is_empty(), "the summary waits");
            ctx.release().unwrap();
            assert_eq!(counts(&rec), (2, 1, 1));
            assert_eq!(ctx.out.latency[0].summary.count, 1);
            ctx.record_phase(PhaseResult::timed("b", 10, 1.0)).unwrap();
            assert_eq!(counts(&rec), (2, 2, 1), "released: stored at once again");
        });
        let rec = rec.0.borrow();
        let order: Vec<u32> = rec.series.iter().map(|p| p.phase_index).collect();
        assert_eq!(order, [0, 1]);
    }

    #[test]
    fn a_run_dropped_while_holding_stores_what_it_held() {
        let rec = SharedMem::default();
        on_run(&rec, |ctx| {
            ctx.hold();
            ctx.record_phase(PhaseResult::timed("a", 10, 1.0)).unwrap();
            ctx.keep_latency("a", "stat", hist()).unwrap();
        });
        assert_eq!(counts(&rec), (0, 1, 1));
        assert!(rec.0.borrow().finished.is_none(), "dropped, not finished");
    }
}
