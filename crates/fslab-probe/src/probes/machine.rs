//! `machine`: what the machine did during each phase, always on (it is
//! part of the run's facts, not an instrument one asks for): the CPUs'
//! clock measured over the phase (cycles counted over busy time where the
//! CPU has counters, else the frequency the kernel reports, sampled once a
//! second and at both ends), the page cache, dirty and writeback pages at
//! the phase's start, and the pressure stall shares (/proc/pressure) over
//! the phase, the machine's and the workload's cgroup's where its cgroup
//! has them. One [`PhaseFacts`] note a phase.

use std::path::{Path, PathBuf};

use fslab_model::{PhaseFacts, Pressure};

use crate::facts::meminfo_kib;
use crate::plugin::{Described, Plugin};
use crate::probe::{Ctx, PhaseOut, Probe, Reading};
use crate::procfs;
use crate::source::{CycleCounter, Source};

const MIB_PER_KIB: f64 = 1.0 / 1024.0;

/// The resources of pressure stall information, in [`Pressure`]'s order:
/// (file, line) for cpu some, io some, io full, memory some, memory full.
const PSI: [(&str, &str); 5] = [
    ("cpu", "some"),
    ("io", "some"),
    ("io", "full"),
    ("memory", "some"),
    ("memory", "full"),
];

#[derive(Default)]
pub struct Machine {
    facts: PhaseFacts,
    counter: Option<Box<dyn CycleCounter>>,
    /// Cycles and busy CPU ticks at the phase's start.
    cycles_at: Option<(u64, u64)>,
    /// Why there are no cycle counts.
    no_counter: String,
    /// Sampled clock readings (MHz, mean over CPUs) and where they came from.
    mhz: Vec<f64>,
    mhz_from: &'static str,
    psi_at: [Option<u64>; 5],
    cgroup_dir: Option<PathBuf>,
    cgroup_psi_at: [Option<u64>; 5],
}

/// The `total=` (microseconds stalled since boot) of line `kind` (`some`,
/// `full`) of a pressure file.
pub fn pressure_total(text: &str, kind: &str) -> Option<u64> {
    text.lines()
        .find(|l| l.split_whitespace().next() == Some(kind))?
        .split_whitespace()
        .find_map(|w| w.strip_prefix("total="))?
        .parse()
        .ok()
}

fn totals(source: &dyn Source, dir: &Path, suffix: &str) -> [Option<u64>; 5] {
    PSI.map(|(file, kind)| {
        source
            .read(&dir.join(format!("{file}{suffix}")))
            .and_then(|t| pressure_total(&t, kind))
    })
}

/// The clock now, MHz, mean over the CPUs: cpufreq's current frequency
/// where there is a cpufreq driver, else /proc/cpuinfo's `cpu MHz`.
pub fn sampled_mhz(source: &dyn Source) -> Option<(f64, &'static str)> {
    let cpus = source.list(Path::new("/sys/devices/system/cpu"));
    let khz: Vec<f64> = cpus
        .iter()
        .filter(|c| {
            c.strip_prefix("cpu")
                .is_some_and(|n| n.parse::<u32>().is_ok())
        })
        .filter_map(|c| {
            source.read(
                &Path::new("/sys/devices/system/cpu")
                    .join(c)
                    .join("cpufreq/scaling_cur_freq"),
            )
        })
        .filter_map(|t| t.trim().parse::<f64>().ok())
        .collect();
    if !khz.is_empty() {
        return Some((
            khz.iter().sum::<f64>() / khz.len() as f64 / 1000.0,
            "cpufreq scaling_cur_freq",
        ));
    }
    let info = source.read(Path::new("/proc/cpuinfo"))?;
    let mhz: Vec<f64> = info
        .lines()
        .filter_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim() == "cpu MHz").then(|| v.trim().parse().ok())?
        })
        .collect();
    (!mhz.is_empty()).then(|| {
        (
            mhz.iter().sum::<f64>() / mhz.len() as f64,
            "/proc/cpuinfo cpu MHz",
        )
    })
}

/// Busy CPU ticks of the whole machine (user, nice, system, irq, softirq).
fn busy_ticks(source: &dyn Source) -> Option<u64> {
    let t = procfs::parse_cpu(&source.read(Path::new("/proc/stat"))?)?;
    Some(t.user + t.nice + t.system + t.irq + t.softirq)
}

/// Why a workload's cgroup has no pressure files of its own; `v1`: its
/// memory cgroup is cgroup v1 (said first).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
enum NoPressure {
    #[error("{}the workload is in no cgroup v2 cgroup", v1_said(*.0))]
    NoCgroup(bool),
    #[error("{}the workload's cgroup v2 cgroup is the root: its pressure is the machine's", v1_said(*.0))]
    Root(bool),
    #[error("{}no cgroup v2 hierarchy is mounted", v1_said(*.0))]
    NotMounted(bool),
}

fn v1_said(v1: bool) -> &'static str {
    if v1 {
        "its memory cgroup is cgroup v1, which has no pressure files; "
    } else {
        ""
    }
}

/// The v2 cgroup directory of process `pid`, or why there is none with
/// pressure files of its own.
fn cgroup_dir(ctx: &Ctx) -> Result<PathBuf, NoPressure> {
    let v1 = ctx.memory_cgroup.is_some();
    let own = ctx
        .source
        .read(&Path::new("/proc").join(ctx.pid.to_string()).join("cgroup"))
        .and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("0::").map(String::from))
        })
        .ok_or(NoPressure::NoCgroup(v1))?;
    if own.trim() == "/" {
        return Err(NoPressure::Root(v1));
    }
    let mount = ctx
        .source
        .read(Path::new("/proc/self/mountinfo"))
        .and_then(|t| {
            t.lines()
                .filter_map(fslab_model::mountinfo::parse_line)
                .find(|m| m.fs_type == "cgroup2")
        })
        .ok_or(NoPressure::NotMounted(v1))?;
    Ok(Path::new(&mount.mount_point).join(own.trim().trim_start_matches('/')))
}

/// Percent of `secs` that a stall total grew by (microseconds).
fn share(before: Option<u64>, after: Option<u64>, secs: f64) -> Option<f64> {
    let d = after?.checked_sub(before?)?;
    Some((d as f64 / 1e6 / secs * 100.0).min(100.0))
}

fn pressure(before: &[Option<u64>; 5], after: &[Option<u64>; 5], secs: f64) -> Option<Pressure> {
    let v: Vec<Option<f64>> = (0..5).map(|i| share(before[i], after[i], secs)).collect();
    v.iter().any(Option::is_some).then(|| Pressure {
        cpu_some_pct: v[0],
        io_some_pct: v[1],
        io_full_pct: v[2],
        memory_some_pct: v[3],
        memory_full_pct: v[4],
    })
}

impl Machine {
    fn sample_clock(&mut self, source: &dyn Source) {
        if self.counter.is_some() {
            return;
        }
        if let Some((mhz, from)) = sampled_mhz(source) {
            self.mhz.push(mhz);
            self.mhz_from = from;
        }
    }

    fn clock(&self, source: &dyn Source) -> (Option<f64>, String) {
        if let (Some(c), Some((c0, b0))) = (&self.counter, self.cycles_at) {
            if let (Some(c1), Some(b1)) = (c.cycles(), busy_ticks(source)) {
                let busy_s = b1.saturating_sub(b0) as f64 / procfs::user_hz();
                if busy_s > 0.0 {
                    let mhz = c1.saturating_sub(c0) as f64 / busy_s / 1e6;
                    return (
                        Some(mhz),
                        format!("perf cycles over {busy_s:.2} s of busy CPU time"),
                    );
                }
            }
        }
        if self.mhz.is_empty() {
            return (
                None,
                format!(
                    "{}; and no frequency is reported (no cpufreq, no cpu MHz in /proc/cpuinfo)",
                    self.no_counter
                ),
            );
        }
        let mean = self.mhz.iter().sum::<f64>() / self.mhz.len() as f64;
        (
            Some(mean),
            format!(
                "sampled {} ({} samples; {})",
                self.mhz_from,
                self.mhz.len(),
                self.no_counter
            ),
        )
    }
}

impl Probe for Machine {
    fn phase_start(&mut self, ctx: &Ctx) -> Vec<Reading> {
        let source = ctx.source;
        let meminfo = source.read(Path::new("/proc/meminfo")).unwrap_or_default();
        let mib = |k: &str| meminfo_kib(&meminfo, k).map(|v| v as f64 * MIB_PER_KIB);
        *self = Machine {
            facts: PhaseFacts {
                page_cache_mib: mib("Cached"),
                dirty_mib: mib("Dirty"),
                writeback_mib: mib("Writeback"),
                ..PhaseFacts::default()
            },
            psi_at: totals(source, Path::new("/proc/pressure"), ""),
            ..Machine::default()
        };
        match cgroup_dir(ctx) {
            Ok(dir) => {
                self.cgroup_psi_at = totals(source, &dir, ".pressure");
                self.facts.cgroup_pressure_source = dir.display().to_string();
                self.cgroup_dir = Some(dir);
            }
            Err(why) => self.facts.cgroup_pressure_source = why.to_string(),
        }
        match source.cycle_counter() {
            Ok(c) => {
                self.cycles_at = c.cycles().zip(busy_ticks(source));
                self.counter = Some(c);
            }
            Err(why) => self.no_counter = why.to_string(),
        }
        self.sample_clock(source);
        Vec::new()
    }

    fn sample(&mut self, ctx: &Ctx, _dt: f64) -> Vec<Reading> {
        self.sample_clock(ctx.source);
        Vec::new()
    }

    fn phase_end(&mut self, ctx: &Ctx, secs: f64) -> PhaseOut {
        let source = ctx.source;
        self.sample_clock(source);
        let mut facts = std::mem::take(&mut self.facts);
        (facts.clock_mhz, facts.clock_source) = self.clock(source);
        facts.pressure = pressure(
            &self.psi_at,
            &totals(source, Path::new("/proc/pressure"), ""),
            secs,
        );
        if let Some(dir) = &self.cgroup_dir {
            facts.cgroup_pressure =
                pressure(&self.cgroup_psi_at, &totals(source, dir, ".pressure"), secs);
            if facts.cgroup_pressure.is_none() {
                facts.cgroup_pressure_source = format!("{} has no pressure files", dir.display());
            }
        }
        PhaseOut {
            notes: vec![ctx.phase_note(&facts)],
            metrics: Vec::new(),
        }
    }
}

/// The `machine` probe: always on (see `crate::registry::always`).
pub struct MachinePlugin;

/// `what some% (full f%)` of a pressure share pair.
fn psi_words(what: &str, some: Option<f64>, full: Option<f64>) -> Option<String> {
    let some = some?;
    Some(match full {
        Some(f) => format!("{what} {some:.0}% (full {f:.0}%)"),
        None => format!("{what} {some:.0}%"),
    })
}

/// The pressure shares of a phase as words.
pub fn pressure_words(p: &Pressure) -> String {
    [
        psi_words("cpu", p.cpu_some_pct, None),
        psi_words("io", p.io_some_pct, p.io_full_pct),
        psi_words("memory", p.memory_some_pct, p.memory_full_pct),
    ]
    .into_iter()
    .flatten()
    .collect::<Vec<_>>()
    .join(", ")
}

impl Plugin for MachinePlugin {
    fn name(&self) -> &'static str {
        fslab_model::facts::PHASE_PROBE
    }

    fn make(&self) -> Box<dyn Probe> {
        Box::<Machine>::default()
    }

    /// The clock and how it was measured, the page cache at the start, the
    /// pressure over the phase.
    fn describe_phase(&self, phase: &Described) -> Vec<String> {
        let Some(f) = phase.note::<PhaseFacts>() else {
            return Vec::new();
        };
        let mut v = vec![match f.clock_mhz {
            Some(m) => format!("machine: clock {m:.0} MHz ({})", f.clock_source),
            None => format!("machine: clock unknown ({})", f.clock_source),
        }];
        let mib = |x: Option<f64>| x.map_or_else(|| "unknown".into(), |m| format!("{m:.0} MiB"));
        v.push(format!(
            "machine: at the start, page cache {}, dirty {}, writeback {}",
            mib(f.page_cache_mib),
            mib(f.dirty_mib),
            mib(f.writeback_mib)
        ));
        if let Some(p) = &f.pressure {
            v.push(format!(
                "machine: pressure (machine-wide) {}",
                pressure_words(p)
            ));
        }
        v.push(match &f.cgroup_pressure {
            Some(p) => format!(
                "machine: pressure of {}: {}",
                f.cgroup_pressure_source,
                pressure_words(p)
            ),
            None => format!("machine: no cgroup pressure: {}", f.cgroup_pressure_source),
        });
        v
    }
}

#[cfg(test)]
mod tests;
