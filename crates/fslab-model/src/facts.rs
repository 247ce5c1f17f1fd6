//! The machine a run ran on, as facts: what a reader of a regression report
//! asks before believing a number (the CPU and its clock policy, the
//! kernel and its debug options, the mitigations, the security modules,
//! the checksum driver, the device under test and its queue, the
//! writeback settings). Each fact is a name, its value as the machine
//! said it, and where it was read; a fact that could not be read has no
//! value and says why, so nothing is guessed.
//!
//! Read by `fslab_probe::facts` (through its `Source`), kept by the store
//! (table `facts`, one row per fact and host), shown by `results show`,
//! the JSON documents and the report, compared by `fslab_explain`.

use serde::{Deserialize, Serialize};

/// One fact about the machine.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fact {
    /// What it is (one of [`names`], or `mitigation NAME`).
    pub name: String,
    /// Its value as read; None when it could not be read.
    pub value: Option<String>,
    /// Where it was read (`/proc/cpuinfo`), or why it is unknown.
    pub source: String,
}

impl Fact {
    /// A fact read from `source`.
    pub fn known(name: &str, value: impl Into<String>, source: &str) -> Fact {
        Fact {
            name: name.into(),
            value: Some(value.into()),
            source: source.into(),
        }
    }

    /// A fact that could not be read, and why.
    pub fn unknown(name: &str, why: impl Into<String>) -> Fact {
        Fact {
            name: name.into(),
            value: None,
            source: why.into(),
        }
    }

    /// The value, or `unknown` (what every listing prints).
    pub fn shown(&self) -> &str {
        self.value.as_deref().unwrap_or(UNKNOWN)
    }
}

/// How a fact that could not be read is printed.
pub const UNKNOWN: &str = "unknown";

/// The facts of one host.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MachineFacts {
    pub host: String,
    pub facts: Vec<Fact>,
}

impl MachineFacts {
    /// The fact named `name`, if it was looked for.
    pub fn get(&self, name: &str) -> Option<&Fact> {
        self.facts.iter().find(|f| f.name == name)
    }

    /// The value of `name`, if it was read.
    pub fn value(&self, name: &str) -> Option<&str> {
        self.get(name).and_then(|f| f.value.as_deref())
    }
}

/// What a run recorded of its machine: what the store gives back, and
/// what every JSON document of a run carries under `machine`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Machine {
    /// Each host's facts, in the order recorded (one host but for a
    /// merged MPI run).
    pub hosts: Vec<MachineFacts>,
    /// What was measured in each phase (on the run's own host).
    pub phases: Vec<PhaseMachine>,
}

/// The machine in one phase.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PhaseMachine {
    pub phase_index: u32,
    #[serde(flatten)]
    pub facts: PhaseFacts,
}

impl Machine {
    /// The first host's facts (the run's own host).
    pub fn first(&self) -> Option<&MachineFacts> {
        self.hosts.first()
    }

    /// What was measured in phase `index`.
    pub fn phase(&self, index: u32) -> Option<&PhaseFacts> {
        self.phases
            .iter()
            .find(|p| p.phase_index == index)
            .map(|p| &p.facts)
    }
}

/// What was measured of the machine during one phase (the `machine`
/// probe's note [`PHASE_PROBE`]/[`PHASE_KEY`]): the CPU clock, the page
/// cache at the phase's start, and pressure stall shares over the phase.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct PhaseFacts {
    /// The CPUs' clock over the phase, MHz.
    pub clock_mhz: Option<f64>,
    /// How it was measured (cycles counted over busy time, or the sampled
    /// frequency the kernel reports), or why it is unknown.
    pub clock_source: String,
    /// The page cache at the phase's start, MiB (/proc/meminfo Cached).
    pub page_cache_mib: Option<f64>,
    /// Dirty pages at the phase's start, MiB (/proc/meminfo Dirty).
    pub dirty_mib: Option<f64>,
    /// Pages under writeback at the phase's start, MiB.
    pub writeback_mib: Option<f64>,
    /// The machine's pressure stall information over the phase.
    pub pressure: Option<Pressure>,
    /// The workload's cgroup's, where its cgroup has pressure files.
    pub cgroup_pressure: Option<Pressure>,
    /// Which cgroup's pressure files were read, or why none.
    pub cgroup_pressure_source: String,
}

impl PhaseFacts {
    /// Its numbers that were measured, named with their units
    /// (`clock_mhz`, `io_some_pct`; `cgroup_` before the cgroup's).
    pub fn numbers(&self) -> Vec<(&'static str, f64)> {
        let mut v: Vec<(&'static str, Option<f64>)> = vec![
            ("clock_mhz", self.clock_mhz),
            ("page_cache_mib", self.page_cache_mib),
            ("dirty_mib", self.dirty_mib),
            ("writeback_mib", self.writeback_mib),
        ];
        for (p, names) in [
            (
                &self.pressure,
                [
                    "cpu_some_pct",
                    "io_some_pct",
                    "io_full_pct",
                    "memory_some_pct",
                    "memory_full_pct",
                ],
            ),
            (
                &self.cgroup_pressure,
                [
                    "cgroup_cpu_some_pct",
                    "cgroup_io_some_pct",
                    "cgroup_io_full_pct",
                    "cgroup_memory_some_pct",
                    "cgroup_memory_full_pct",
                ],
            ),
        ] {
            if let Some(p) = p {
                v.extend(names.into_iter().zip(p.values()));
            }
        }
        v.into_iter()
            .filter_map(|(n, x)| x.map(|x| (n, x)))
            .collect()
    }
}

impl Pressure {
    /// cpu some, io some, io full, memory some, memory full.
    pub fn values(&self) -> [Option<f64>; 5] {
        [
            self.cpu_some_pct,
            self.io_some_pct,
            self.io_full_pct,
            self.memory_some_pct,
            self.memory_full_pct,
        ]
    }
}

/// The probe and key of [`PhaseFacts`] notes.
pub const PHASE_PROBE: &str = "machine";
pub const PHASE_KEY: &str = "phase";

/// Pressure stall shares over a phase (/proc/pressure/*): the percent of
/// the phase's wall time in which some (or all) runnable tasks were
/// stalled on the resource.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Pressure {
    pub cpu_some_pct: Option<f64>,
    pub io_some_pct: Option<f64>,
    pub io_full_pct: Option<f64>,
    pub memory_some_pct: Option<f64>,
    pub memory_full_pct: Option<f64>,
}

/// The names of the facts, once.
pub mod names {
    pub const CPU_MODEL: &str = "cpu model";
    pub const CPUS: &str = "cpus";
    pub const CPUS_ONLINE: &str = "cpus online";
    pub const GOVERNOR: &str = "cpu governor";
    pub const MEMORY: &str = "memory";
    pub const KERNEL: &str = "kernel";
    pub const KERNEL_VERSION: &str = "kernel version";
    pub const KERNEL_BUILD_ID: &str = "kernel build id";
    pub const KERNEL_CMDLINE: &str = "kernel command line";
    pub const PREEMPTION: &str = "preemption";
    pub const DEBUG_OPTIONS: &str = "kernel debug options";
    pub const LSM: &str = "security modules";
    pub const CRC32C: &str = "crc32c driver";
    /// A mitigation's fact is `mitigation NAME` (its file under
    /// /sys/devices/system/cpu/vulnerabilities).
    pub const MITIGATION_PREFIX: &str = "mitigation ";
    pub const DEVICE: &str = "device";
    pub const DEVICE_MODEL: &str = "device model";
    pub const ROTATIONAL: &str = "device rotational";
    pub const SCHEDULER: &str = "device scheduler";
    pub const QUEUE_DEPTH: &str = "device queue depth";
    pub const MAX_REQUEST: &str = "device max request";
    pub const BACKING_FS: &str = "loop backing filesystem";
    pub const BACKING_DEVICE: &str = "loop backing device";
    pub const DIRECT_IO: &str = "loop direct io";
    pub const DIRTY_RATIO: &str = "vm.dirty_ratio";
    pub const DIRTY_BACKGROUND_RATIO: &str = "vm.dirty_background_ratio";
    pub const DIRTY_BYTES: &str = "vm.dirty_bytes";
    pub const DIRTY_BACKGROUND_BYTES: &str = "vm.dirty_background_bytes";
    pub const DIRTY_EXPIRE: &str = "vm.dirty_expire_centisecs";
    pub const SWAPPINESS: &str = "vm.swappiness";
    pub const HUGEPAGES: &str = "vm.nr_hugepages";
    pub const THP: &str = "transparent hugepages";
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_fact_is_printed_unknown_and_keeps_why() {
        let f = Fact::unknown(names::GOVERNOR, "no cpufreq in this kernel");
        assert_eq!(f.shown(), "unknown");
        assert_eq!(f.source, "no cpufreq in this kernel");
        let m = MachineFacts {
            host: "h".into(),
            facts: vec![f, Fact::known(names::CPUS, "2", "/proc/cpuinfo")],
        };
        assert_eq!(m.value(names::CPUS), Some("2"));
        assert_eq!(m.value(names::GOVERNOR), None);
        assert!(m.get(names::GOVERNOR).is_some());
        let back: MachineFacts = serde_json::from_str(&serde_json::to_string(&m).unwrap()).unwrap();
        assert_eq!(back, m);
    }
}
