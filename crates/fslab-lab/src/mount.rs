//! Mounting and unmounting, with the kernel's own words when a mount fails
//! and a check that the mount really is the new filesystem.

use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rustix::fs::{Mode, OFlags};
use rustix::io::Errno;
use rustix::mount::{MountFlags, UnmountFlags};

use fslab_model::mountinfo::{self, MountEntry};

use crate::{LabError, LabResult};

/// Splits `-o` style options into mount(2) flags and the filesystem's data string.
pub fn split_options(options: &str) -> (MountFlags, String) {
    let mut flags = MountFlags::empty();
    let mut data = Vec::new();
    for o in options.split(',').map(str::trim).filter(|o| !o.is_empty()) {
        let f = match o {
            "ro" => MountFlags::RDONLY,
            "rw" | "defaults" => MountFlags::empty(),
            "noatime" => MountFlags::NOATIME,
            "nodiratime" => MountFlags::NODIRATIME,
            "relatime" => MountFlags::RELATIME,
            "strictatime" => MountFlags::STRICTATIME,
            "lazytime" => MountFlags::LAZYTIME,
            "sync" => MountFlags::SYNCHRONOUS,
            "dirsync" => MountFlags::DIRSYNC,
            "nosuid" => MountFlags::NOSUID,
            "nodev" => MountFlags::NODEV,
            "noexec" => MountFlags::NOEXEC,
            other => {
                data.push(other.to_string());
                continue;
            }
        };
        flags |= f;
    }
    (flags, data.join(","))
}

/// Reads kernel log records written after it was started (`/dev/kmsg`), to
/// give the kernel's reason when a mount fails.
pub struct KernelLog {
    fd: Option<std::os::fd::OwnedFd>,
}

impl KernelLog {
    pub fn start() -> KernelLog {
        let fd = rustix::fs::open(
            "/dev/kmsg",
            OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .ok();
        if let Some(fd) = &fd {
            let _ = rustix::fs::seek(fd, rustix::fs::SeekFrom::End(0));
        }
        KernelLog { fd }
    }

    /// Messages since `start` (text after the record header).
    pub fn read(&self) -> Vec<String> {
        let mut out = Vec::new();
        let Some(fd) = &self.fd else { return out };
        let mut buf = vec![0u8; 8192];
        loop {
            match rustix::io::read(fd, &mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    let rec = String::from_utf8_lossy(&buf[..n]);
                    if let Some((_, msg)) = rec.split_once(';') {
                        out.push(msg.lines().next().unwrap_or("").trim().to_string());
                    }
                }
                Err(Errno::PIPE) => continue, // overwritten records: skip
                Err(_) => break,
            }
        }
        out
    }
}

/// A filesystem this run mounted; unmounted on drop.
#[derive(Debug)]
pub struct Mount {
    target: PathBuf,
    source: PathBuf,
    fstype: String,
    kernel_options: String,
    /// st_dev of the mounted root (btrfs gives an anonymous device, not the block device's number).
    root_dev: u64,
    mounted: bool,
}

/// `mount -t FSTYPE -o OPTIONS SOURCE TARGET` as a command line, for the record.
pub fn mount_argv(source: &Path, target: &Path, fstype: &str, options: &str) -> Vec<String> {
    let mut v = vec!["mount".to_string(), "-t".into(), fstype.into()];
    if !options.is_empty() {
        v.push("-o".into());
        v.push(options.into());
    }
    v.push(source.display().to_string());
    v.push(target.display().to_string());
    v
}

impl Mount {
    /// Mounts `source` on `target`, then checks that mountinfo shows
    /// `source` mounted at `target`, so a mount that silently did not happen
    /// is caught before any workload writes to the host.
    // `Mount::mount(...)` names the act: the value is the mount it made.
    #[allow(clippy::self_named_constructors)]
    pub fn mount(source: &Path, target: &Path, fstype: &str, options: &str) -> LabResult<Mount> {
        let (flags, data) = split_options(options);
        let data_c = CString::new(data)
            .map_err(|_| LabError::Failed("mount options contain a NUL byte".into()))?;
        let klog = KernelLog::start();
        if let Err(e) = rustix::mount::mount(source, target, fstype, flags, Some(data_c.as_c_str()))
        {
            let dev = source
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let said: Vec<String> = klog
                .read()
                .into_iter()
                .filter(|m| !dev.is_empty() && m.contains(&dev))
                .collect();
            let reason = if said.is_empty() {
                String::new()
            } else {
                format!("; kernel: {}", said.join(" / "))
            };
            return Err(LabError::Failed(format!(
                "`{}` failed: {}{reason}",
                mount_argv(source, target, fstype, options).join(" "),
                std::io::Error::from(e)
            )));
        }
        let mut m = Mount {
            target: target.to_path_buf(),
            source: source.to_path_buf(),
            fstype: fstype.to_string(),
            kernel_options: String::new(),
            root_dev: 0,
            mounted: true,
        };
        let want = std::fs::canonicalize(source).unwrap_or_else(|_| source.to_path_buf());
        match mount_entry(target) {
            Some(e)
                if std::fs::canonicalize(&e.source)
                    .unwrap_or_else(|_| PathBuf::from(&e.source))
                    == want =>
            {
                m.kernel_options = e.options;
            }
            Some(e) => {
                return Err(LabError::Refused(format!(
                    "{} shows {} mounted, not {}: refusing to go on",
                    target.display(),
                    e.source,
                    source.display()
                )))
            }
            None => {
                return Err(LabError::Failed(format!(
                    "{} is not a mount point after mounting {}",
                    target.display(),
                    source.display()
                )))
            }
        }
        m.root_dev = rustix::fs::stat(target)
            .map_err(|e| {
                LabError::Failed(format!(
                    "cannot stat {}: {}",
                    target.display(),
                    std::io::Error::from(e)
                ))
            })?
            .st_dev;
        Ok(m)
    }

    pub fn target(&self) -> &Path {
        &self.target
    }

    pub fn source(&self) -> &Path {
        &self.source
    }

    pub fn fstype(&self) -> &str {
        &self.fstype
    }

    /// st_dev of everything on this filesystem.
    pub fn root_dev(&self) -> u64 {
        self.root_dev
    }

    /// The options as the kernel reports them in mountinfo.
    pub fn kernel_options(&self) -> &str {
        &self.kernel_options
    }

    /// Unmounts, retrying while busy for a few seconds; returns the time
    /// the successful umount(2) took (the cost of writing back what the
    /// workload left).
    pub fn unmount(mut self) -> LabResult<Duration> {
        self.unmount_now()
    }

    fn unmount_now(&mut self) -> LabResult<Duration> {
        if !self.mounted {
            return Ok(Duration::ZERO);
        }
        let mut tries = 0;
        loop {
            let t = Instant::now();
            match rustix::mount::unmount(&self.target, UnmountFlags::empty()) {
                Ok(()) => {
                    self.mounted = false;
                    return Ok(t.elapsed());
                }
                Err(Errno::BUSY) if tries < 50 => {
                    tries += 1;
                    std::thread::sleep(Duration::from_millis(100));
                }
                Err(Errno::INVAL) | Err(Errno::NOENT) => {
                    self.mounted = false;
                    return Ok(Duration::ZERO);
                }
                Err(e) => {
                    return Err(LabError::Failed(format!(
                        "cannot unmount {}: {}",
                        self.target.display(),
                        std::io::Error::from(e)
                    )))
                }
            }
        }
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        if self.unmount_now().is_err() {
            // Last resort so the loop device can go: detach lazily.
            let _ = rustix::mount::unmount(&self.target, UnmountFlags::DETACH);
        }
    }
}

/// Fails unless `dir` is on the filesystem of device `dev`.
pub fn ensure_on(dir: &Path, dev: u64) -> LabResult<()> {
    let st = rustix::fs::stat(dir).map_err(|e| {
        LabError::Failed(format!(
            "cannot stat {}: {}",
            dir.display(),
            std::io::Error::from(e)
        ))
    })?;
    if st.st_dev != dev {
        return Err(LabError::Refused(format!(
            "{} is on device {}:{}, not on the new filesystem ({}:{}): refusing to run the workload on the host",
            dir.display(),
            rustix::fs::major(st.st_dev),
            rustix::fs::minor(st.st_dev),
            rustix::fs::major(dev),
            rustix::fs::minor(dev)
        )));
    }
    Ok(())
}

/// What mountinfo says of the mount at exactly `target` (the topmost one).
pub fn mount_entry(target: &Path) -> Option<MountEntry> {
    mountinfo::at(target)
}

/// Whether something is mounted exactly at `target`.
pub fn is_mount_point(target: &Path) -> bool {
    mount_entry(target).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_split_into_flags_and_data() {
        let (f, d) = split_options("noatime,nodatacow,ssd,ro");
        assert!(f.contains(MountFlags::NOATIME) && f.contains(MountFlags::RDONLY));
        assert_eq!(d, "nodatacow,ssd");
        assert_eq!(
            mount_argv(Path::new("/dev/loop1"), Path::new("/m"), "ext4", ""),
            ["mount", "-t", "ext4", "/dev/loop1", "/m"]
        );
    }
}
