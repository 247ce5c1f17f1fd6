//! Which devices a workload directory's IO goes to: the block device under
//! its filesystem, and for a loop device, the image file behind it and the
//! host device that holds the image.

use std::path::{Path, PathBuf};

use fslab_model::mountinfo::{self, MountEntry};

/// A block device: its dev_t as the tracer writes it, and its name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Device {
    pub major: u32,
    pub minor: u32,
    /// e.g. `loop3`, `vda`.
    pub name: String,
}

impl Device {
    /// `major << 20 | minor`, the `dev` of block trace events.
    pub fn trace_dev(&self) -> u32 {
        (self.major << 20) | self.minor
    }

    /// The device's size in 512-byte sectors, from sysfs.
    pub fn sectors(&self) -> Option<u64> {
        std::fs::read_to_string(format!("/sys/block/{}/size", self.name))
            .ok()?
            .trim()
            .parse()
            .ok()
    }

    pub fn from_numbers(major: u32, minor: u32) -> Option<Device> {
        let uevent =
            std::fs::read_to_string(format!("/sys/dev/block/{major}:{minor}/uevent")).ok()?;
        let name = uevent
            .lines()
            .find_map(|l| l.strip_prefix("DEVNAME="))?
            .to_string();
        Some(Device { major, minor, name })
    }
}

/// What the probes watch.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Targets {
    /// The filesystem's block device (e.g. the loop device).
    pub device: Option<Device>,
    /// The file behind a loop device.
    pub image: Option<PathBuf>,
    /// The device holding that file.
    pub host: Option<Device>,
    /// The filesystem type.
    pub fs_type: String,
}

/// Works out the targets of `dir` from mountinfo and sysfs.
pub fn resolve(dir: &Path) -> Targets {
    let mut t = Targets::default();
    let Some(MountEntry {
        source, fs_type, ..
    }) = mountinfo::holding(dir)
    else {
        return t;
    };
    t.fs_type = fs_type;
    if let Ok(st) = rustix::fs::stat(source.as_str()) {
        if rustix::fs::FileType::from_raw_mode(st.st_mode) == rustix::fs::FileType::BlockDevice {
            t.device =
                Device::from_numbers(rustix::fs::major(st.st_rdev), rustix::fs::minor(st.st_rdev));
        }
    }
    if let Some(d) = &t.device {
        if let Ok(b) = std::fs::read_to_string(format!("/sys/block/{}/loop/backing_file", d.name)) {
            let img = PathBuf::from(b.trim_end());
            if let Ok(st) = rustix::fs::stat(&img) {
                t.host = Device::from_numbers(
                    rustix::fs::major(st.st_dev),
                    rustix::fs::minor(st.st_dev),
                );
            }
            t.image = Some(img);
        }
    }
    t
}

/// What a run's probes watched: the `probes`/`targets` note, written by the
/// sampler and read back by `trace show` and the report.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct TargetsNote {
    /// The filesystem's block device (`loop3`).
    pub device: Option<String>,
    /// Its `MAJ,MIN`.
    pub device_dev: Option<String>,
    pub device_sectors: Option<u64>,
    /// The image behind a loop device.
    pub image: Option<String>,
    /// The device holding the image.
    pub host: Option<String>,
    pub host_dev: Option<String>,
    pub fs_type: String,
    pub probes: Vec<String>,
}

impl TargetsNote {
    /// What probes `probes` (by name) watch among `t`.
    pub fn of(t: &Targets, probes: &[&str]) -> TargetsNote {
        let numbers = |d: &Device| format!("{},{}", d.major, d.minor);
        TargetsNote {
            device: t.device.as_ref().map(|d| d.name.clone()),
            device_dev: t.device.as_ref().map(numbers),
            device_sectors: t.device.as_ref().and_then(|d| d.sectors()),
            image: t.image.as_ref().map(|p| p.display().to_string()),
            host: t.host.as_ref().map(|d| d.name.clone()),
            host_dev: t.host.as_ref().map(numbers),
            fs_type: t.fs_type.clone(),
            probes: probes.iter().map(|p| p.to_string()).collect(),
        }
    }

    /// The filesystem's device as the kernel's trace events number it
    /// (`major << 20 | minor`).
    pub fn device_number(&self) -> Option<u32> {
        let (a, b) = self.device_dev.as_deref()?.split_once(',')?;
        Some((a.parse::<u32>().ok()? << 20) | b.parse::<u32>().ok()?)
    }
}
