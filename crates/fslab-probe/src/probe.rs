//! The one interface every probe's instrument implements (made by its
//! [`crate::plugin::Plugin`]), and what the sampler hands it: where to read ([`Source`]), what to watch, the trace reader's state
//! and the phase. Each probe lives in its own module under
//! [`crate::probes`]; the sampler only schedules them.

use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;

use fslab_model::{Metric, ProbeNote};

use crate::cgroup::MemoryCgroup;
use crate::devices::Targets;
use crate::notes::Note;
use crate::source::Source;
use crate::trace::TraceState;

/// The phase being watched.
#[derive(Debug, Clone, Default)]
pub struct PhaseInfo {
    pub index: u32,
    pub name: String,
    /// CLOCK_MONOTONIC of its start, ns (the trace's clock).
    pub start_mono_ns: u64,
}

/// What a probe may look at.
pub struct Ctx<'a> {
    pub source: &'a dyn Source,
    pub targets: &'a Targets,
    /// The workload's process.
    pub pid: u32,
    /// The workload's processes: `pid`, and a program it started (a command
    /// workload's benchmark) with that program's descendants, found by one
    /// scan of /proc at most once a second (see
    /// [`crate::probes::descendants`]).
    pub processes: &'a [u32],
    /// The processes doing the workload's work: those of a program the
    /// workload started that started no other (a process that did
    /// coordinates, as a main thread does its workers; the workload's own
    /// process then only waits and reads the program's output), else the
    /// workload's own process.
    pub workers: &'a [u32],
    /// The workload's memory cgroup.
    pub memory_cgroup: Option<&'a MemoryCgroup>,
    /// What the trace reader gathered (None when nothing is traced).
    pub trace: Option<&'a Mutex<TraceState>>,
    /// Events the kernel's trace buffer dropped so far.
    pub trace_dropped: u64,
    pub phase: &'a PhaseInfo,
    /// CLOCK_MONOTONIC of the first phase's start, ns: time zero of the trace.
    pub first_mono_ns: u64,
    /// CLOCK_MONOTONIC now, ns.
    pub now_mono_ns: u64,
    /// Where scratch files go (a profile's data).
    pub scratch: &'a Path,
    /// The kernel threads working for the filesystem's device, (pid, comm):
    /// found by one scan of /proc at most once a second, for every probe
    /// (see [`crate::probes::device_kthreads`]).
    pub kthreads: &'a [(u32, String)],
}

impl Ctx<'_> {
    /// The trace reader's state, locked.
    pub fn trace_state(&self) -> Option<std::sync::MutexGuard<'_, TraceState>> {
        self.trace
            .map(|t| t.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// A note of this phase.
    pub fn phase_note<T: Note>(&self, value: &T) -> ProbeNote {
        typed_note(Some(self.phase.index), value)
    }
}

/// One sampled value: `metric` (a name from [`crate::names`]) at the
/// sample's time, or at `at_s` seconds into the phase (a journal commit).
#[derive(Debug, Clone, PartialEq)]
pub struct Reading {
    pub metric: String,
    pub value: f64,
    pub at_s: Option<f64>,
}

impl Reading {
    pub fn now(metric: impl Into<String>, value: f64) -> Reading {
        Reading {
            metric: metric.into(),
            value,
            at_s: None,
        }
    }

    pub fn at(metric: impl Into<String>, value: f64, at_s: f64) -> Reading {
        Reading {
            metric: metric.into(),
            value,
            at_s: Some(at_s),
        }
    }
}

/// What a probe says when a phase ends.
#[derive(Debug, Default)]
pub struct PhaseOut {
    pub notes: Vec<ProbeNote>,
    pub metrics: Vec<Metric>,
}

/// An instrument: told when phases start and end, sampled every
/// [`Probe::period`] while one runs.
pub trait Probe: Send {
    /// How often [`Probe::sample`] is called during a phase.
    fn period(&self) -> Duration {
        Duration::from_secs(1)
    }
    /// A phase starts: take baselines; values at the phase's start.
    fn phase_start(&mut self, _ctx: &Ctx) -> Vec<Reading> {
        Vec::new()
    }
    /// `dt` seconds since the last sample (or the phase's start).
    fn sample(&mut self, ctx: &Ctx, dt: f64) -> Vec<Reading>;
    /// The phase ended after `secs` seconds: its summaries and metrics.
    fn phase_end(&mut self, ctx: &Ctx, secs: f64) -> PhaseOut;
    /// The run ended: whole-run notes.
    fn finish(&mut self, _ctx: &Ctx) -> Vec<ProbeNote> {
        Vec::new()
    }
}

/// The note of a typed value.
pub fn typed_note<T: Note>(phase: Option<u32>, value: &T) -> ProbeNote {
    note(phase, T::PROBE, T::KEY, value.to_value())
}

/// A note of `probe` under `key`.
pub fn note(phase: Option<u32>, probe: &str, key: &str, value: serde_json::Value) -> ProbeNote {
    ProbeNote {
        phase_index: phase,
        probe: probe.into(),
        key: key.into(),
        value,
        blob: None,
    }
}
