//! fslab's instruments, recorded on the workload's clock.
//!
//! A [`ProbeSet`] implements [`fslab_model::Monitor`]: it is told when
//! phases start and end, and its points are drained once a second. It runs
//! beside the workload: in `fslab run`'s process for a cell (the workload's
//! phase messages drive it, [`ProbeSet::watch`] names the workload's process
//! and memory cgroup), or on threads of its own in a standalone workload
//! command. The probes sample on their own thread (every second; wait
//! stacks ten times a second), and a second thread reads a private tracefs instance for block
//! IO, jbd2 commits and writeback starts. Every probe implements
//! [`probe::Probe`] in its own module under [`probes`] and reads the machine
//! through a [`source::Source`]; the sampler only schedules them. A probe
//! is a plug-in ([`plugin::Plugin`]): one file and one line in
//! [`registry`], which `--probes`, the sampler, `results show`, the report
//! and the findings' evidence iterate. Each probe that cannot start says
//! why in a note and on stderr, and the run goes on without it.
//!
//! | probe | source |
//! |---|---|
//! | `cpu` | the workload process's usr/sys (/proc/PID/stat), the device's kernel threads, the machine's usr/sys/iowait/irq/softirq/steal (/proc/stat), as % of one CPU |
//! | `disk` | /proc/diskstats of the filesystem's device and of the host device under its image |
//! | `mem` | /proc/meminfo (dirty, writeback, cache, slab), the memory cgroup's usage and limit hits |
//! | `blockio` | `block:block_rq_issue`/`complete`: IOPS, MB/s, sizes, sequential share, latency, queue depth; every completion spooled ([`trace::Spool`]) |
//! | `frag` | FIEMAP extent count of the image behind a loop device, and its final extent map |
//! | `journal` | `jbd2:jbd2_run_stats` (ext3/ext4), XFS log counters, btrfs commit_stats |
//! | `writeback` | `writeback:writeback_start` reasons |
//! | `stacks` | kernel stacks of blocked (D) workload and filesystem threads |
//! | `perf` | `perf record -a -g` per phase: top symbols and call chains (not on by default) |
//! | `machine` | always on: the CPUs' clock, the page cache at the phase's start, /proc/pressure over it ([`fslab_model::PhaseFacts`]) |

pub mod blockio;
pub use fslab_model::cgroup;
pub mod devices;
mod error;
pub mod facts;
pub use fslab_layout::{frag, htree};
pub mod journal;
pub mod names;
pub mod needs;
pub mod notes;
pub mod perf;
pub mod plugin;
pub mod probe;
pub mod probes;
pub mod procfs;
pub mod registry;
pub mod source;
pub mod stacks;
pub mod trace;
pub mod tracefs;

mod sampler;

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use fslab_model::{Monitor, ProbeNote, ProbePoint};

pub use devices::{resolve, Targets, TargetsNote};
pub use error::ProbeError;
pub use plugin::Plugin;
pub use registry::{all, always, parse_list, register, ProbeRef, UnknownProbe};

enum Cmd {
    Watch(Watched),
    /// A program the workload started: watched with its descendants.
    Program(u32),
    /// Answered once the probes took their baselines.
    PhaseStart(u32, String, Instant, mpsc::Sender<()>),
    PhaseEnd(mpsc::Sender<Vec<ProbeNote>>),
    Finish(mpsc::Sender<Vec<ProbeNote>>),
}

/// The workload the probes watch, when it is not this process: its
/// process (CPU, wait stacks) and memory cgroup.
#[derive(Debug, Clone)]
pub struct Watched {
    pub pid: u32,
    pub memory_cgroup: Option<cgroup::MemoryCgroup>,
}

/// CLOCK_MONOTONIC now, in ns (the clock of `Instant` on Linux).
pub fn mono_ns() -> u64 {
    fslab_sys::clock::monotonic_ns()
}

/// `at` as CLOCK_MONOTONIC ns, to send to another process.
pub fn mono_ns_of(at: Instant) -> u64 {
    mono_ns().saturating_sub(at.elapsed().as_nanos() as u64)
}

/// The instant of CLOCK_MONOTONIC time `ns` (sent by another process).
pub fn instant_of_mono(ns: u64) -> Instant {
    let ago = Duration::from_nanos(mono_ns().saturating_sub(ns));
    Instant::now().checked_sub(ago).unwrap_or_else(Instant::now)
}

/// The probes of one run.
pub struct ProbeSet {
    points: Arc<Mutex<Vec<ProbePoint>>>,
    metrics: Arc<Mutex<Vec<fslab_model::Metric>>>,
    tx: Option<mpsc::Sender<Cmd>>,
    thread: Option<std::thread::JoinHandle<()>>,
    /// Probes that could not start and should be said on stderr: every
    /// failure, and with `explicit` also probes that do not apply here. All
    /// of them are in the run's notes either way.
    pub problems: Vec<String>,
    /// What the probes watch, as resolved once from the workload's
    /// directory (the run's facts read the same, with no call of their own).
    pub targets: Option<Targets>,
}

impl ProbeSet {
    /// Starts `kinds` for a workload working in `dir`. `scratch` holds
    /// private mounts and temporary files. `explicit`: the user named the
    /// probes (see [`ProbeSet::problems`]).
    pub fn start(kinds: &[ProbeRef], dir: &Path, scratch: &Path, explicit: bool) -> ProbeSet {
        let shared = (
            Arc::new(Mutex::new(Vec::new())),
            Arc::new(Mutex::new(Vec::new())),
        );
        let targets = resolve(dir);
        let (sampler, problems) = sampler::Sampler::new(
            kinds,
            targets.clone(),
            scratch.to_path_buf(),
            (Arc::clone(&shared.0), Arc::clone(&shared.1)),
            explicit,
            Box::new(source::Machine),
        );
        let mut set = ProbeSet::spawn(sampler, shared, problems);
        set.targets = Some(targets);
        set
    }

    /// The given probes (fakes, in tests) reading `source`, watching
    /// `targets`, scheduled as [`ProbeSet::start`] schedules its own.
    pub fn with_probes(
        probes: Vec<(ProbeRef, Box<dyn probe::Probe>)>,
        source: Box<dyn source::Source>,
        targets: Targets,
        scratch: &Path,
    ) -> ProbeSet {
        let shared = (
            Arc::new(Mutex::new(Vec::new())),
            Arc::new(Mutex::new(Vec::new())),
        );
        let sampler = sampler::Sampler::with_probes(
            probes,
            source,
            targets,
            scratch.to_path_buf(),
            (Arc::clone(&shared.0), Arc::clone(&shared.1)),
        );
        ProbeSet::spawn(sampler, shared, Vec::new())
    }

    fn spawn(
        sampler: sampler::Sampler,
        (points, metrics): (
            sampler::Shared<ProbePoint>,
            sampler::Shared<fslab_model::Metric>,
        ),
        problems: Vec<String>,
    ) -> ProbeSet {
        let (tx, rx) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name(stacks::PROBE_THREADS[0].into())
            .spawn(move || sampler.run(rx))
            .ok();
        ProbeSet {
            points,
            metrics,
            tx: Some(tx),
            thread,
            problems,
            targets: None,
        }
    }

    /// From now on, watch process `w.pid` (not this one) and its memory
    /// cgroup: `fslab run` starts the probes, then the workload.
    pub fn watch(&mut self, w: Watched) {
        if let Some(tx) = &self.tx {
            let _ = tx.send(Cmd::Watch(w));
        }
    }

    fn ask(&mut self, make: impl FnOnce(mpsc::Sender<Vec<ProbeNote>>) -> Cmd) -> Vec<ProbeNote> {
        let (rtx, rrx) = mpsc::channel();
        match &self.tx {
            Some(tx) if tx.send(make(rtx)).is_ok() => rrx.recv().unwrap_or_default(),
            _ => Vec::new(),
        }
    }
}

impl Monitor for ProbeSet {
    fn phase_start(&mut self, index: u32, phase: &str, start: Instant) {
        if let Some(tx) = &self.tx {
            // Synchronous: what the workload does next belongs to this phase.
            let (rtx, rrx) = mpsc::channel();
            if tx
                .send(Cmd::PhaseStart(index, phase.to_string(), start, rtx))
                .is_ok()
            {
                let _ = rrx.recv();
            }
        }
    }

    fn metrics(&mut self) -> Vec<fslab_model::Metric> {
        std::mem::take(&mut *self.metrics.lock().unwrap_or_else(|e| e.into_inner()))
    }

    fn drain(&mut self) -> Vec<ProbePoint> {
        std::mem::take(&mut *self.points.lock().unwrap_or_else(|e| e.into_inner()))
    }

    fn phase_end(&mut self, _index: u32, _phase: &str) -> Vec<ProbeNote> {
        self.ask(Cmd::PhaseEnd)
    }

    fn program_watch(&mut self) -> Option<fslab_model::ProgramWatch> {
        let tx = self.tx.clone()?;
        Some(Box::new(move |pid| {
            let _ = tx.send(Cmd::Program(pid));
        }))
    }

    fn finish(&mut self) -> Vec<ProbeNote> {
        let notes = self.ask(Cmd::Finish);
        self.tx = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        notes
    }
}

impl Drop for ProbeSet {
    fn drop(&mut self) {
        if self.thread.is_some() {
            let _ = self.finish();
        }
    }
}

/// Where probes keep private mounts and scratch files: the state
/// directory ([`fslab_model::journal::state_dir`]), else the temp directory.
pub fn scratch_dir() -> PathBuf {
    let d = fslab_model::journal::state_dir();
    if std::fs::create_dir_all(&d).is_ok() {
        d
    } else {
        std::env::temp_dir()
    }
}
