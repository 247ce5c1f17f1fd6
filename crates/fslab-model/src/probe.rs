//! What probes record, and the [`Monitor`] a workload drives them through.

use std::io::{Read, Seek, Write};
use std::sync::{Arc, Mutex};
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
    pub blob: Option<Blob>,
}

/// A note's binary data: in memory, or spooled to a file of its own (a long
/// block trace), so that it is never all in memory; the store copies a
/// spooled blob in pieces.
#[derive(Debug, Clone)]
pub enum Blob {
    Bytes(Vec<u8>),
    /// `len` bytes from the start of `file` (an unnamed file, gone when
    /// the last handle closes).
    Spooled {
        file: Arc<Mutex<std::fs::File>>,
        len: u64,
    },
}

impl PartialEq for Blob {
    fn eq(&self, other: &Blob) -> bool {
        match (self, other) {
            (Blob::Bytes(a), Blob::Bytes(b)) => a == b,
            (Blob::Spooled { file: a, .. }, Blob::Spooled { file: b, .. }) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }
}

impl Blob {
    pub fn len(&self) -> u64 {
        match self {
            Blob::Bytes(b) => b.len() as u64,
            Blob::Spooled { len, .. } => *len,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Writes the bytes to `out`, a piece at a time.
    pub fn copy_to(&self, out: &mut dyn Write) -> std::io::Result<()> {
        match self {
            Blob::Bytes(b) => out.write_all(b),
            Blob::Spooled { file, len } => {
                let mut f = file.lock().unwrap_or_else(|e| e.into_inner());
                f.rewind()?;
                let copied = std::io::copy(&mut (&mut *f).take(*len), out)?;
                if copied != *len {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::UnexpectedEof,
                        format!("spool holds {copied} of {len} bytes"),
                    ));
                }
                Ok(())
            }
        }
    }

    /// The bytes, all in memory (for small blobs and tests).
    pub fn to_vec(&self) -> std::io::Result<Vec<u8>> {
        let mut v = Vec::with_capacity(self.len() as usize);
        self.copy_to(&mut v)?;
        Ok(v)
    }
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
    /// The probes' own metrics of the phases ended since the last call
    /// (guest against backend IO, say), recorded beside the tool's.
    fn metrics(&mut self) -> Vec<crate::Metric> {
        Vec::new()
    }
    /// How to tell the instruments, from any thread, that the workload
    /// started program `pid` (a command workload's benchmark): from then on
    /// the per-process instruments watch it and its descendants beside the
    /// workload's own process. None: no instrument watches processes.
    fn program_watch(&mut self) -> Option<ProgramWatch> {
        None
    }
}

/// Tells the instruments a program's pid (see [`Monitor::program_watch`]).
pub type ProgramWatch = Box<dyn Fn(u32) + Send + Sync>;

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
