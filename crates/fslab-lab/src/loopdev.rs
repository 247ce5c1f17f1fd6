//! Loop devices bound to images.
//!
//! A device is found with `LOOP_CTL_GET_FREE` and bound with
//! `LOOP_CONFIGURE` in one step (retrying when another process takes the
//! same device first), with `LO_FLAGS_AUTOCLEAR` so the kernel unbinds it
//! when its last user goes away, even after `kill -9`. Numbers are never
//! assumed.

use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use fslab_sys::loopdev;
use rustix::fs::{Mode, OFlags};

use crate::{LabError, LabResult};

/// A loop device this run bound; unbound on drop.
#[derive(Debug)]
pub struct LoopDevice {
    path: PathBuf,
    number: u32,
    fd: Option<OwnedFd>,
    rdev: u64,
    direct_io: bool,
}

impl LoopDevice {
    /// Binds `image` to a free loop device, with O_DIRECT IO to the image
    /// when `direct_io` (the kernel may refuse it for some host
    /// filesystems: see [`LoopDevice::direct_io`]).
    pub fn attach(image: &Path, direct_io: bool) -> LabResult<LoopDevice> {
        let backing = rustix::fs::open(image, OFlags::RDWR | OFlags::CLOEXEC, Mode::empty())
            .map_err(|e| {
                LabError::Failed(format!(
                    "cannot open image {}: {}",
                    image.display(),
                    std::io::Error::from(e)
                ))
            })?;
        let ctl = rustix::fs::open(
            "/dev/loop-control",
            OFlags::RDWR | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| {
            LabError::Failed(format!(
                "cannot open /dev/loop-control (is the loop module loaded?): {}",
                std::io::Error::from(e)
            ))
        })?;
        let mut flags = loopdev::FLAG_AUTOCLEAR;
        if direct_io {
            flags |= loopdev::FLAG_DIRECT_IO;
        }
        let name = image.to_string_lossy();
        let mut last = String::new();
        for _ in 0..50 {
            let n = loopdev::get_free(ctl.as_fd())
                .map_err(|e| LabError::Failed(format!("no free loop device: {e}")))?;
            let path = PathBuf::from(format!("/dev/loop{n}"));
            let fd = match rustix::fs::open(&path, OFlags::RDWR | OFlags::CLOEXEC, Mode::empty()) {
                Ok(fd) => fd,
                Err(e) => {
                    last = format!("{}: {}", path.display(), std::io::Error::from(e));
                    std::thread::sleep(Duration::from_millis(20));
                    continue;
                }
            };
            match loopdev::configure(fd.as_fd(), backing.as_fd(), flags, &name) {
                Ok(()) => {
                    let rdev = rustix::fs::fstat(&fd).map(|s| s.st_rdev).unwrap_or(0);
                    let st = loopdev::status(fd.as_fd()).ok();
                    let dio = st.is_some_and(|s| s.flags & loopdev::FLAG_DIRECT_IO != 0);
                    return Ok(LoopDevice {
                        path,
                        number: n,
                        fd: Some(fd),
                        rdev,
                        direct_io: dio,
                    });
                }
                // Another process bound this device between GET_FREE and CONFIGURE.
                Err(e) if e.raw_os_error() == Some(libc_ebusy()) => {
                    last = format!("{}: busy", path.display());
                    continue;
                }
                Err(e) => {
                    return Err(LabError::Failed(format!(
                        "cannot bind {} to {}: {e}",
                        image.display(),
                        path.display()
                    )))
                }
            }
        }
        Err(LabError::Failed(format!(
            "could not get a loop device after 50 tries (last: {last})"
        )))
    }

    /// `/dev/loopN`.
    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn number(&self) -> u32 {
        self.number
    }

    /// The device number (`st_rdev`); a filesystem on it has this `st_dev`.
    pub fn rdev(&self) -> u64 {
        self.rdev
    }

    /// `major:minor`.
    pub fn major_minor(&self) -> (u32, u32) {
        (rustix::fs::major(self.rdev), rustix::fs::minor(self.rdev))
    }

    /// Whether the kernel really does direct IO to the image.
    pub fn direct_io(&self) -> bool {
        self.direct_io
    }

    /// Unbinds the device and waits until the kernel has let it go (the
    /// unbinding is asynchronous). Call after unmounting.
    pub fn detach(mut self) -> LabResult<()> {
        self.detach_now(Duration::from_secs(10))
    }

    fn detach_now(&mut self, wait: Duration) -> LabResult<()> {
        let Some(fd) = self.fd.take() else {
            return Ok(());
        };
        // ENXIO: already unbound (autoclear after the last close).
        let _ = loopdev::clear(fd.as_fd());
        drop(fd);
        let backing = PathBuf::from(format!("/sys/block/loop{}/loop/backing_file", self.number));
        let start = Instant::now();
        while backing.exists() {
            if start.elapsed() > wait {
                return Err(LabError::Failed(format!(
                    "{} is still bound after {:?}: something still uses it",
                    self.path.display(),
                    wait
                )));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        Ok(())
    }
}

impl Drop for LoopDevice {
    fn drop(&mut self) {
        let _ = self.detach_now(Duration::from_secs(5));
    }
}

fn libc_ebusy() -> i32 {
    rustix::io::Errno::BUSY.raw_os_error()
}

/// The backing file of a bound loop device, from sysfs (None when unbound).
pub fn backing_file(number: u32) -> Option<PathBuf> {
    std::fs::read_to_string(format!("/sys/block/loop{number}/loop/backing_file"))
        .ok()
        .map(|s| PathBuf::from(s.trim_end()))
}
