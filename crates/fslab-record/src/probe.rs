//! What probes record, and the [`Monitor`] a workload drives them through.

use std::time::Instant;

use serde::{Deserialize, Serialize};

/// One value of one probe metric at one second of a phase (long format).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbePoint {
    pub phase_index: u32,
    /// Seconds since the phase started (the same clock as [`crate::SeriesPoint`]).
    pub t_s: f64,
    pub probe: String,
    pub metric: String,
    pub value: f64,
}

/// A probe's summary of a phase or a run: JSON, plus optional binary data
/// (compressed raw events, an extent map).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbeNote {
    /// None for notes about the whole run.
    pub phase_index: Option<u32>,
    pub probe: String,
    pub key: String,
    pub value: serde_json::Value,
    #[serde(skip)]
    pub blob: Option<Vec<u8>>,
}

/// Instruments that watch a workload. The workload calls these from its
/// coordinating thread; implementations do their sampling elsewhere and
/// must return quickly.
pub trait Monitor {
    /// A phase starts now; `start` is the instant its series counts from.
    fn phase_start(&mut self, index: u32, phase: &str, start: Instant);
    /// Points gathered since the last call.
    fn drain(&mut self) -> Vec<ProbePoint>;
    /// The phase ended: its last points are drained after this, and its
    /// summaries returned.
    fn phase_end(&mut self, index: u32, phase: &str) -> Vec<ProbeNote>;
    /// The run ended: whole-run notes; every probe is stopped and cleaned up.
    fn finish(&mut self) -> Vec<ProbeNote>;
}

/// A [`Monitor`] with no probes.
pub struct NoMonitor;

impl Monitor for NoMonitor {
    fn phase_start(&mut self, _: u32, _: &str, _: Instant) {}
    fn drain(&mut self) -> Vec<ProbePoint> {
        Vec::new()
    }
    fn phase_end(&mut self, _: u32, _: &str) -> Vec<ProbeNote> {
        Vec::new()
    }
    fn finish(&mut self) -> Vec<ProbeNote> {
        Vec::new()
    }
}
