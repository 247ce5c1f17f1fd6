//! Sparse image files.

use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use rustix::fs::{Mode, OFlags};
use rustix::io::Errno;

use crate::{human_bytes, LabError, LabResult};

/// Names of filesystem types by statfs magic, for messages.
pub fn fs_name_of_magic(magic: i64) -> &'static str {
    match magic as u32 {
        0xEF53 => "ext4",
        0x5846_5342 => "xfs",
        0x9123_683E => "btrfs",
        0x0102_1994 => "tmpfs",
        0x6969 => "nfs",
        0x794C_7630 => "overlayfs",
        _ => "unknown",
    }
}

/// The host filesystem's type (by name) for the directory holding `path`.
pub fn host_fs(dir: &Path) -> String {
    rustix::fs::statfs(dir)
        .map(|s| fs_name_of_magic(s.f_type).to_string())
        .unwrap_or_else(|_| "unknown".into())
}

/// Why an image of `size` bytes cannot be made in `dir`.
pub fn too_large(dir: &Path, size: u64) -> String {
    let host = host_fs(dir);
    format!(
        "image of {} does not fit on {} ({host}{}): put image_dir on a filesystem that allows files this large, such as XFS or tmpfs (/dev/shm)",
        human_bytes(size),
        dir.display(),
        if host == "ext4" { ", whose largest file is 16 TiB - 4 KiB" } else { "" },
    )
}

/// Whether `dir`'s filesystem can hold a sparse file of `size` bytes,
/// tried with a probe file that is removed again.
pub fn fits(dir: &Path, size: u64) -> LabResult<bool> {
    let probe = dir.join(format!(".fslab-size-probe-{}", std::process::id()));
    let fd: OwnedFd = rustix::fs::open(
        &probe,
        OFlags::CREATE | OFlags::EXCL | OFlags::RDWR | OFlags::CLOEXEC,
        Mode::from_bits_truncate(0o600),
    )
    .map_err(|e| {
        LabError::Failed(format!(
            "cannot create {}: {}",
            probe.display(),
            std::io::Error::from(e)
        ))
    })?;
    let r = rustix::fs::ftruncate(&fd, size);
    drop(fd);
    let _ = std::fs::remove_file(&probe);
    match r {
        Ok(()) => Ok(true),
        Err(Errno::FBIG | Errno::INVAL) => Ok(false),
        Err(e) => Err(LabError::Failed(format!(
            "cannot size a probe file in {} to {}: {}",
            dir.display(),
            human_bytes(size),
            std::io::Error::from(e)
        ))),
    }
}

/// A sparse image file made by this run; removed on drop unless kept.
#[derive(Debug)]
pub struct Image {
    path: PathBuf,
    size: u64,
    keep: bool,
    removed: bool,
}

impl Image {
    /// Creates `path` (which must not exist) as a sparse file of `size` bytes.
    pub fn create(path: &Path, size: u64) -> LabResult<Image> {
        let dir = path.parent().unwrap_or(Path::new("."));
        if !dir.is_dir() {
            return Err(LabError::Failed(format!(
                "image directory {} does not exist",
                dir.display()
            )));
        }
        let fd: OwnedFd = rustix::fs::open(
            path,
            OFlags::CREATE | OFlags::EXCL | OFlags::RDWR | OFlags::CLOEXEC,
            Mode::from_bits_truncate(0o600),
        )
        .map_err(|e| match e {
            Errno::EXIST => LabError::Refused(format!(
                "image {} already exists: fslab only formats images it creates (remove it or choose another image_dir)",
                path.display()
            )),
            e => LabError::Failed(format!("cannot create image {}: {}", path.display(), std::io::Error::from(e))),
        })?;
        let image = Image {
            path: path.to_path_buf(),
            size,
            keep: false,
            removed: false,
        };
        if let Err(e) = rustix::fs::ftruncate(&fd, size) {
            let msg = if e == Errno::FBIG || e == Errno::INVAL {
                too_large(dir, size)
            } else {
                format!(
                    "cannot size image {} to {}: {}",
                    path.display(),
                    human_bytes(size),
                    std::io::Error::from(e)
                )
            };
            return Err(LabError::Failed(msg));
        }
        Ok(image)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn size(&self) -> u64 {
        self.size
    }

    /// Keep the file when this value is dropped.
    pub fn keep(&mut self) {
        self.keep = true;
    }

    /// Bytes the image really occupies on the host.
    pub fn allocated(&self) -> u64 {
        rustix::fs::stat(&self.path)
            .map(|s| s.st_blocks as u64 * 512)
            .unwrap_or(0)
    }

    /// Removes the file now (unless kept).
    pub fn remove(mut self) -> LabResult<()> {
        self.remove_now()
    }

    fn remove_now(&mut self) -> LabResult<()> {
        if self.keep || self.removed {
            return Ok(());
        }
        self.removed = true;
        match std::fs::remove_file(&self.path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(LabError::Failed(format!(
                "cannot remove image {}: {e}",
                self.path.display()
            ))),
        }
    }
}

impl Drop for Image {
    fn drop(&mut self) {
        let _ = self.remove_now();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sparse_image_costs_nothing_and_is_removed() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("a.img");
        let img = Image::create(&p, 1 << 30).unwrap();
        assert_eq!(std::fs::metadata(&p).unwrap().len(), 1 << 30);
        assert!(img.allocated() < 1 << 20);
        drop(img);
        assert!(!p.exists());
    }

    #[test]
    fn fits_tells_what_the_host_can_hold_and_leaves_nothing() {
        let d = tempfile::tempdir().unwrap();
        assert!(fits(d.path(), 1 << 30).unwrap());
        // ext4 (with 4 KiB blocks) holds 16 TiB - 4 KiB at most; XFS, btrfs and tmpfs more.
        let ext4 = host_fs(d.path()) == "ext4";
        assert_eq!(fits(d.path(), 16 << 40).unwrap(), !ext4);
        assert!(fits(d.path(), (16 << 40) - 4096).unwrap());
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
        let e = fits(&d.path().join("nope"), 1 << 20)
            .unwrap_err()
            .to_string();
        assert!(e.contains("nope"), "{e}");
    }

    #[test]
    fn existing_file_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("b.img");
        std::fs::write(&p, b"precious").unwrap();
        let e = Image::create(&p, 1 << 20).unwrap_err();
        assert!(e.is_refusal(), "{e:?}");
        assert!(e.to_string().contains("already exists"), "{e}");
        assert_eq!(std::fs::read(&p).unwrap(), b"precious");
    }
}
