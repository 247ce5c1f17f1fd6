//! Whether and how an experiment's images go on a host XFS
//! ([`fslab_lab::image_host`], which makes and undoes it): `image_host`
//! of the experiment's `[device]`, checked before anything is made.

use std::path::Path;

use fslab_lab::image::{fits, host_fs};
pub use fslab_lab::image_host::{HostFs, HOST_IMAGE_SIZE};
use fslab_lab::mkfs::find_tool;
use fslab_lab::{human_bytes, LabResult};

use crate::safety::Preflight;
use crate::spec::{Device, Experiment, ImageHost};

/// Whether the experiment's images go on a host XFS: always for `xfs`,
/// and for `auto` when `image_dir` cannot hold a file of the image's size.
pub fn needed(device: &Device) -> LabResult<bool> {
    let Device::Image {
        size, dir, host, ..
    } = device
    else {
        return Ok(false);
    };
    match host {
        ImageHost::None => Ok(false),
        ImageHost::Xfs => Ok(true),
        ImageHost::Auto => Ok(!fits(dir, *size)?),
    }
}

/// What `fslab run` checks before it makes a host: mkfs.xfs is here, and
/// the image directory can hold the host's image.
pub fn preflight(dir: &Path) -> Result<(), Preflight> {
    if find_tool("mkfs.xfs").is_none() {
        return Err(Preflight::Machine(
            "device.image_host: the image host is XFS and mkfs.xfs is missing: install xfsprogs"
                .into(),
        ));
    }
    if !fits(dir, HOST_IMAGE_SIZE)? {
        return Err(Preflight::Input(format!(
            "device.image_host: {} ({}) cannot hold the host image of {}",
            dir.display(),
            host_fs(dir),
            human_bytes(HOST_IMAGE_SIZE)
        )));
    }
    Ok(())
}

/// The experiment with its images in the host.
pub fn hosting(host: &HostFs, exp: &Experiment) -> Experiment {
    let mut e = exp.clone();
    if let Device::Image { dir, .. } = &mut e.device {
        *dir = host.dir().to_path_buf();
    }
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    fn image(host: ImageHost, size: u64, dir: &Path) -> Device {
        Device::Image {
            size,
            dir: dir.to_path_buf(),
            direct_io: false,
            host,
            scheduler: None,
        }
    }

    #[test]
    fn a_host_is_made_when_asked_or_when_the_image_does_not_fit() {
        let d = tempfile::tempdir().unwrap();
        let ext4 = host_fs(d.path()) == "ext4";
        assert!(!needed(&image(ImageHost::None, 100 << 40, d.path())).unwrap());
        assert!(needed(&image(ImageHost::Xfs, 1 << 30, d.path())).unwrap());
        assert!(!needed(&image(ImageHost::Auto, 1 << 30, d.path())).unwrap());
        assert_eq!(
            needed(&image(ImageHost::Auto, 100 << 40, d.path())).unwrap(),
            ext4,
            "a 100 TiB image needs a host on ext4 only"
        );
        let dir = Device::Directory {
            path: d.path().to_path_buf(),
        };
        assert!(!needed(&dir).unwrap());
        // The probe files are gone.
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
    }
}
