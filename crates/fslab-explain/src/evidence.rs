//! What a run's instruments say about one phase, typed: the input of the
//! limiter rules. [`RunEvidence`] is one run as the store (or a workload
//! that just ran) gives it; [`PhaseEvidence::pool`] adds up a phase over
//! the runs of a group, so that a cell's repetitions speak together.

use std::collections::BTreeMap;

use fslab_model::facts::{names, Machine};
use fslab_model::{Metric, PhaseResult, Pressure, ProbeNote};
use fslab_probe::notes::{BlockioSummary, DiskSummary, Jbd2Commits, Note, StacksTop};
use serde::Serialize;

use crate::waits::WaitTable;

/// One operation's time in a phase (from its latency histogram).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OpTime {
    pub phase: String,
    pub op: String,
    pub count: u64,
    /// The sum of its latencies, seconds.
    pub total_s: f64,
}

/// One run, as the explanations read it.
#[derive(Debug, Clone, Default)]
pub struct RunEvidence {
    pub machine: Machine,
    pub phases: Vec<PhaseResult>,
    pub notes: Vec<ProbeNote>,
    /// Its metrics (the probes' among them: the memory limit's hits).
    pub metrics: Vec<Metric>,
    pub ops: Vec<OpTime>,
}

impl RunEvidence {
    /// The note of type `T` of phase `index`.
    pub fn note<T: Note>(&self, index: u32) -> Option<T> {
        self.notes
            .iter()
            .find(|n| n.phase_index == Some(index) && T::is(&n.probe, &n.key))
            .map(|n| T::from_value(&n.value))
    }

    /// The position of phase `name`.
    pub fn phase_index(&self, name: &str) -> Option<u32> {
        self.phases
            .iter()
            .position(|p| p.phase == name)
            .map(|i| i as u32)
    }

    /// The block device under the filesystem (its facts' name).
    pub fn device(&self) -> Option<&str> {
        self.machine.first()?.value(names::DEVICE)
    }
}

/// Blocked samples of one wait class.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClassShare {
    pub class: String,
    pub samples: u64,
    /// The function that decided it most often.
    pub function: String,
}

/// One phase's evidence over the runs of a group.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct PhaseEvidence {
    pub phase: String,
    pub runs: usize,
    /// Wall time, seconds (all runs).
    pub wall_s: f64,
    /// The workers' CPU, user + system, seconds (all runs).
    pub cpu_s: f64,
    pub cpus_online: Option<u32>,
    /// Wait-stack sampling rounds.
    pub rounds: u64,
    /// Worker-thread samples by scheduler state (R, D, S, ...).
    pub states: BTreeMap<String, u64>,
    /// The workload's blocked samples (kept stacks or not).
    pub blocked: u64,
    /// Blocked samples by wait class, most first; stacks of no class
    /// are `unclassified` (its function: the innermost frame).
    pub classes: Vec<ClassShare>,
    /// Each jbd2 commit's own time (locked + flushing + logging), ms.
    pub commits_ms: Vec<f64>,
    /// The filesystem's device: % of the phase with IO in flight.
    pub util_pct: Option<f64>,
    /// Mean requests in flight, and mean request size (KiB).
    pub queue_depth: Option<f64>,
    pub io_kib: Option<f64>,
    pub pressure: Option<Pressure>,
    pub cgroup_pressure: Option<Pressure>,
    /// The memory cgroup's limit was hit this many times.
    pub limit_hits: Option<f64>,
}

/// The online CPUs of a list like `0-1,4`.
pub fn cpu_count(list: &str) -> Option<u32> {
    let mut n = 0;
    for part in list.trim().split(',').filter(|p| !p.is_empty()) {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let (a, b) = (a.trim().parse::<u32>().ok()?, b.trim().parse::<u32>().ok()?);
        n += b.checked_sub(a)? + 1;
    }
    (n > 0).then_some(n)
}

/// A jbd2 commit's own time (ms) from a `jbd2_run_stats` line.
pub fn commit_ms(line: &str) -> Option<f64> {
    let body = line.split("jbd2_run_stats:").nth(1)?;
    let f = fslab_probe::journal::parse_jbd2(body)?;
    let get = |k: &str| f.iter().find(|(n, _)| *n == k).map(|(_, v)| *v);
    Some(get("locked")? + get("flushing")? + get("logging")?)
}

/// Adds `b` (weighted `wb`) into the running mean `a` (weighted `wa`).
fn mean_into(a: &mut Option<f64>, wa: f64, b: Option<f64>, wb: f64) {
    if let Some(b) = b {
        *a = Some(match *a {
            Some(a) if wa + wb > 0.0 => (a * wa + b * wb) / (wa + wb),
            _ => b,
        });
    }
}

fn pressure_into(a: &mut Option<Pressure>, wa: f64, b: Option<Pressure>, wb: f64) {
    let Some(b) = b else { return };
    let mut p = a.unwrap_or_default();
    let first = a.is_none();
    let w = if first { 0.0 } else { wa };
    mean_into(&mut p.cpu_some_pct, w, b.cpu_some_pct, wb);
    mean_into(&mut p.io_some_pct, w, b.io_some_pct, wb);
    mean_into(&mut p.io_full_pct, w, b.io_full_pct, wb);
    mean_into(&mut p.memory_some_pct, w, b.memory_some_pct, wb);
    mean_into(&mut p.memory_full_pct, w, b.memory_full_pct, wb);
    *a = Some(p);
}

impl PhaseEvidence {
    /// Phase `phase` over `runs` (those that have it), its blocked
    /// stacks classed by `waits`.
    pub fn pool(phase: &str, runs: &[&RunEvidence], waits: &WaitTable) -> PhaseEvidence {
        let mut e = PhaseEvidence {
            phase: phase.into(),
            ..Default::default()
        };
        let mut classes: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
        for r in runs {
            let Some(i) = r.phase_index(phase) else {
                continue;
            };
            let p = &r.phases[i as usize];
            let w = e.wall_s;
            e.runs += 1;
            e.wall_s += p.elapsed_s;
            e.cpu_s += p.usr_cpu_s + p.sys_cpu_s;
            if let Some(n) = r
                .machine
                .first()
                .and_then(|m| m.value(names::CPUS_ONLINE))
                .and_then(cpu_count)
            {
                e.cpus_online = Some(n);
            }
            if let Some(st) = r.note::<StacksTop>(i) {
                e.add_stacks(&st, waits, &mut classes);
            }
            if let Some(Jbd2Commits(lines)) = r.note::<Jbd2Commits>(i) {
                e.commits_ms
                    .extend(lines.iter().filter_map(|l| commit_ms(l)));
            }
            if let Some(dev) = r.device() {
                let util = r
                    .note::<DiskSummary>(i)
                    .and_then(|d| d.0.get(dev).map(|x| x.util_pct));
                mean_into(&mut e.util_pct, w, util, p.elapsed_s);
                if let Some(b) = r
                    .note::<BlockioSummary>(i)
                    .and_then(|b| b.devices.get(dev).cloned())
                {
                    mean_into(&mut e.queue_depth, w, Some(b.queue_depth), p.elapsed_s);
                    mean_into(&mut e.io_kib, w, Some(b.avg_io_kb), p.elapsed_s);
                }
            }
            if let Some(f) = r.machine.phase(i) {
                pressure_into(&mut e.pressure, w, f.pressure, p.elapsed_s);
                pressure_into(&mut e.cgroup_pressure, w, f.cgroup_pressure, p.elapsed_s);
            }
            let hits = r
                .metrics
                .iter()
                .find(|m| {
                    m.source == "mem"
                        && m.phase.as_deref() == Some(phase)
                        && m.name == fslab_probe::names::LIMIT_HITS
                })
                .map(|m| m.value);
            if let Some(h) = hits {
                *e.limit_hits.get_or_insert(0.0) += h;
            }
        }
        e.classes = classes
            .into_iter()
            .map(|(class, fns)| {
                let samples = fns.values().sum();
                let function = fns
                    .iter()
                    .max_by_key(|(_, n)| **n)
                    .map(|(f, _)| f.clone())
                    .unwrap_or_default();
                ClassShare {
                    class,
                    samples,
                    function,
                }
            })
            .collect();
        e.classes
            .sort_by(|a, b| b.samples.cmp(&a.samples).then(a.class.cmp(&b.class)));
        e
    }

    fn add_stacks(
        &mut self,
        st: &StacksTop,
        waits: &WaitTable,
        classes: &mut BTreeMap<String, BTreeMap<String, u64>>,
    ) {
        self.rounds += st.rounds;
        for (k, v) in &st.worker_states {
            *self.states.entry(k.clone()).or_insert(0) += v;
        }
        let mut kept = 0;
        for s in st.stacks.iter().filter(|s| s.thread == "workload") {
            kept += s.samples;
            let (class, function) = match waits.classify(&s.frames) {
                Some(m) => (m.class.to_string(), m.function),
                None => (
                    UNCLASSIFIED.to_string(),
                    s.frames.first().cloned().unwrap_or_default(),
                ),
            };
            *classes
                .entry(class)
                .or_default()
                .entry(function)
                .or_insert(0) += s.samples;
        }
        // Runs recorded before the total was kept: the kept stacks are all.
        self.blocked += st.workload_blocked.max(kept);
    }

    /// Worker-thread samples in all states.
    pub fn worker_samples(&self) -> u64 {
        self.states.values().sum()
    }

    /// The share (0-1) of worker samples in state `s`.
    pub fn state_share(&self, s: &str) -> f64 {
        let n = self.worker_samples();
        if n == 0 {
            return 0.0;
        }
        self.states.get(s).copied().unwrap_or(0) as f64 / n as f64
    }

    /// Mean worker threads seen per sampling round.
    pub fn workers(&self) -> Option<f64> {
        (self.rounds > 0 && self.worker_samples() > 0)
            .then(|| self.worker_samples() as f64 / self.rounds as f64)
    }

    /// The median commit time, ms.
    pub fn commit_median_ms(&self) -> Option<f64> {
        median(&self.commits_ms)
    }
}

/// The class of blocked stacks no pattern matched.
pub const UNCLASSIFIED: &str = "unclassified";

/// The median of `v` (None when empty).
pub fn median(v: &[f64]) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    Some(if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    })
}
