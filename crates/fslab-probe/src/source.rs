//! What the probes read: the machine's /proc and /sys files, the image's
//! extents and a kernel profiler. [`Machine`] reads the real ones;
//! [`FakeSource`] holds what a test put in it, so each probe's arithmetic
//! and the sampler's scheduling are tested without root or a filesystem.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use fslab_sys::fiemap::Extent;

use crate::notes::PerfTop;
use crate::ProbeError;

/// A kernel profile being recorded (see [`crate::perf`]).
pub trait Profiling: Send {
    /// Stops recording: (top symbols, call-graph text), of the samples of
    /// processes `pids` alone (their shares of those samples) when any are
    /// given: the workload's, not the rest of a shared machine's.
    fn finish(self: Box<Self>, pids: &[u32]) -> Result<(PerfTop, String), ProbeError>;
}

/// The CPUs' cycle counters, counting from when they were opened.
pub trait CycleCounter: Send {
    /// Cycles of every online CPU together since the counters were opened.
    fn cycles(&self) -> Option<u64>;
}

/// Where the probes read the machine.
/// Why a machine has no cycle counters.
#[derive(Debug, thiserror::Error)]
pub enum NoCycles {
    /// Which CPUs are online could not be read.
    #[error("/sys/devices/system/cpu/online: {0}")]
    Online(#[source] std::io::Error),
    /// A CPU without a hardware cycle counter (most VMs).
    #[error("no cycle counter on cpu {cpu} (perf_event_open: {source})")]
    Cpu {
        cpu: u32,
        #[source]
        source: std::io::Error,
    },
    /// A test's machine without them.
    #[error("no cycle counters (a fake machine without them)")]
    Fake,
}

pub trait Source: Send + Sync {
    /// A file's text (`/proc/stat`, `/proc/PID/stat`, a cgroup file), if it is there.
    fn read(&self, path: &Path) -> Option<String>;
    /// A file's bytes (`/proc/config.gz`, `/sys/kernel/notes`), if it is there.
    fn read_bytes(&self, path: &Path) -> Option<Vec<u8>> {
        self.read(path).map(String::into_bytes)
    }
    /// Cycle counters on every online CPU; Err says why there are none (a
    /// CPU without hardware counters, as in most VMs).
    fn cycle_counter(&self) -> Result<Box<dyn CycleCounter>, NoCycles>;
    /// The names in a directory (`/proc`, `/proc/PID/task`).
    fn list(&self, dir: &Path) -> Vec<String>;
    /// The image's extent count (FIEMAP, without keeping the extents).
    fn extent_count(&self, image: &Path) -> Option<u64>;
    /// The image's extents.
    fn extent_map(&self, image: &Path) -> Option<Vec<Extent>>;
    /// Whether a kernel profiler can be started at all.
    fn can_profile(&self) -> bool;
    /// Starts a kernel profile, its data in `dir`, tagged `tag`.
    fn profile(&self, dir: &Path, tag: &str) -> Result<Box<dyn Profiling>, ProbeError>;
}

/// The machine itself.
pub struct Machine;

impl Profiling for crate::perf::Profile {
    fn finish(self: Box<Self>, pids: &[u32]) -> Result<(PerfTop, String), ProbeError> {
        crate::perf::Profile::finish(*self, pids)
    }
}

/// One [`fslab_sys::perf_event::Cycles`] per online CPU.
struct CpuCycles(Vec<fslab_sys::perf_event::Cycles>);

impl CycleCounter for CpuCycles {
    fn cycles(&self) -> Option<u64> {
        self.0.iter().map(|c| c.read().ok()).sum()
    }
}

/// The CPUs in a list like `/sys/devices/system/cpu/online`'s (`0-3,6`).
pub fn cpu_list(text: &str) -> Vec<u32> {
    let mut v = Vec::new();
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        if let (Ok(a), Ok(b)) = (a.trim().parse::<u32>(), b.trim().parse::<u32>()) {
            v.extend(a..=b);
        }
    }
    v
}

impl Source for Machine {
    fn read(&self, path: &Path) -> Option<String> {
        std::fs::read_to_string(path).ok()
    }

    fn read_bytes(&self, path: &Path) -> Option<Vec<u8>> {
        std::fs::read(path).ok()
    }

    fn cycle_counter(&self) -> Result<Box<dyn CycleCounter>, NoCycles> {
        let online =
            std::fs::read_to_string("/sys/devices/system/cpu/online").map_err(NoCycles::Online)?;
        let counters = cpu_list(&online)
            .into_iter()
            .map(|cpu| {
                fslab_sys::perf_event::Cycles::on_cpu(cpu)
                    .map_err(|source| NoCycles::Cpu { cpu, source })
            })
            .collect::<Result<Vec<_>, NoCycles>>()?;
        Ok(Box::new(CpuCycles(counters)))
    }

    fn list(&self, dir: &Path) -> Vec<String> {
        std::fs::read_dir(dir)
            .map(|rd| {
                rd.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default()
    }

    fn extent_count(&self, image: &Path) -> Option<u64> {
        crate::frag::count(image).ok()
    }

    fn extent_map(&self, image: &Path) -> Option<Vec<Extent>> {
        crate::frag::extents(image, false).ok()
    }

    fn can_profile(&self) -> bool {
        crate::perf::available()
    }

    fn profile(&self, dir: &Path, tag: &str) -> Result<Box<dyn Profiling>, ProbeError> {
        Ok(Box::new(crate::perf::Profile::start(dir, tag)?))
    }
}

/// A machine made of what a test put in it: files, image extents and a
/// profile's result.
#[derive(Default)]
pub struct FakeSource {
    files: Mutex<BTreeMap<PathBuf, String>>,
    bytes: Mutex<BTreeMap<PathBuf, Vec<u8>>>,
    /// What the cycle counters read, in turn (none: no counters).
    cycles: Arc<Mutex<Vec<u64>>>,
    extents: Mutex<BTreeMap<PathBuf, Vec<Extent>>>,
    profile: Mutex<Option<Result<(PerfTop, String), ProbeError>>>,
}

impl FakeSource {
    pub fn new() -> FakeSource {
        FakeSource::default()
    }

    /// Sets a file's text.
    pub fn set(&self, path: impl AsRef<Path>, text: impl Into<String>) {
        self.files
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(path.as_ref().to_path_buf(), text.into());
    }

    /// Removes a file (a process that exited).
    pub fn remove(&self, path: impl AsRef<Path>) {
        self.files
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(path.as_ref());
    }

    /// Sets an image's extents.
    pub fn set_extents(&self, image: impl AsRef<Path>, ext: Vec<Extent>) {
        self.extents
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(image.as_ref().to_path_buf(), ext);
    }

    /// Sets a file's bytes (a compressed file).
    pub fn set_bytes(&self, path: impl AsRef<Path>, bytes: Vec<u8>) {
        self.bytes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(path.as_ref().to_path_buf(), bytes);
    }

    /// What the cycle counters read, one value a read in turn (the last
    /// one again after that); none set: the machine has no counters.
    pub fn set_cycles(&self, reads: Vec<u64>) {
        *self.cycles.lock().unwrap_or_else(|e| e.into_inner()) = reads;
    }

    /// What the next profile returns (profiling is unavailable until set).
    pub fn set_profile(&self, result: Result<(PerfTop, String), ProbeError>) {
        *self.profile.lock().unwrap_or_else(|e| e.into_inner()) = Some(result);
    }
}

struct FakeProfile(Result<(PerfTop, String), ProbeError>);

impl Profiling for FakeProfile {
    fn finish(self: Box<Self>, _pids: &[u32]) -> Result<(PerfTop, String), ProbeError> {
        self.0
    }
}

/// The fake's cycle counter: its reads in turn.
struct FakeCycles(Arc<Mutex<Vec<u64>>>);

impl CycleCounter for FakeCycles {
    fn cycles(&self) -> Option<u64> {
        let mut v = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if v.len() > 1 {
            Some(v.remove(0))
        } else {
            v.first().copied()
        }
    }
}

impl Source for FakeSource {
    fn read_bytes(&self, path: &Path) -> Option<Vec<u8>> {
        let bytes = self.bytes.lock().unwrap_or_else(|e| e.into_inner());
        bytes
            .get(path)
            .cloned()
            .or_else(|| self.read(path).map(String::into_bytes))
    }

    fn cycle_counter(&self) -> Result<Box<dyn CycleCounter>, NoCycles> {
        if self
            .cycles
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_empty()
        {
            return Err(NoCycles::Fake);
        }
        Ok(Box::new(FakeCycles(Arc::clone(&self.cycles))))
    }

    fn read(&self, path: &Path) -> Option<String> {
        self.files
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(path)
            .cloned()
    }

    fn list(&self, dir: &Path) -> Vec<String> {
        let files = self.files.lock().unwrap_or_else(|e| e.into_inner());
        let mut names: Vec<String> = files
            .keys()
            .filter_map(|p| p.strip_prefix(dir).ok())
            .filter_map(|rest| rest.components().next())
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        names.dedup();
        names
    }

    fn extent_count(&self, image: &Path) -> Option<u64> {
        self.extent_map(image).map(|e| e.len() as u64)
    }

    fn extent_map(&self, image: &Path) -> Option<Vec<Extent>> {
        self.extents
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(image)
            .cloned()
    }

    fn can_profile(&self) -> bool {
        self.profile
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_some()
    }

    fn profile(&self, _dir: &Path, _tag: &str) -> Result<Box<dyn Profiling>, ProbeError> {
        let r = self
            .profile
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
            .ok_or_else(|| ProbeError::Perf("no profiler".into()))?;
        Ok(Box::new(FakeProfile(r)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fake_lists_and_reads_what_it_was_given() {
        let f = FakeSource::new();
        f.set("/proc/12/stat", "12 (a) S 2");
        f.set("/proc/12/task/12/stat", "12 (a) S 2");
        f.set("/proc/7/stat", "7 (b) S 2");
        f.set("/proc/stat", "cpu 1 2 3");
        let mut l = f.list(Path::new("/proc"));
        l.sort();
        assert_eq!(l, ["12", "7", "stat"]);
        assert_eq!(
            f.read(Path::new("/proc/7/stat")).as_deref(),
            Some("7 (b) S 2")
        );
        f.remove("/proc/7/stat");
        assert_eq!(f.read(Path::new("/proc/7/stat")), None);
        assert!(!f.can_profile());
    }
}
