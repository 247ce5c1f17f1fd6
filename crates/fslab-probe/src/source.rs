//! What the probes read: the machine's /proc and /sys files, the image's
//! extents and a kernel profiler. [`Machine`] reads the real ones;
//! [`FakeSource`] holds what a test put in it, so each probe's arithmetic
//! and the sampler's scheduling are tested without root or a filesystem.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use fslab_sys::fiemap::Extent;

use crate::notes::PerfTop;
use crate::ProbeError;

/// A kernel profile being recorded (see [`crate::perf`]).
pub trait Profiling: Send {
    /// Stops recording: (top symbols, call-graph text).
    fn finish(self: Box<Self>) -> Result<(PerfTop, String), ProbeError>;
}

/// Where the probes read the machine.
pub trait Source: Send + Sync {
    /// A file's text (`/proc/stat`, `/proc/PID/stat`, a cgroup file), if it is there.
    fn read(&self, path: &Path) -> Option<String>;
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
    fn finish(self: Box<Self>) -> Result<(PerfTop, String), ProbeError> {
        crate::perf::Profile::finish(*self)
    }
}

impl Source for Machine {
    fn read(&self, path: &Path) -> Option<String> {
        std::fs::read_to_string(path).ok()
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

    /// What the next profile returns (profiling is unavailable until set).
    pub fn set_profile(&self, result: Result<(PerfTop, String), ProbeError>) {
        *self.profile.lock().unwrap_or_else(|e| e.into_inner()) = Some(result);
    }
}

struct FakeProfile(Result<(PerfTop, String), ProbeError>);

impl Profiling for FakeProfile {
    fn finish(self: Box<Self>) -> Result<(PerfTop, String), ProbeError> {
        self.0
    }
}

impl Source for FakeSource {
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
