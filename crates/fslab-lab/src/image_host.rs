//! A host XFS for images larger than `image_dir` can hold.
//!
//! Seed 000 made its filesystems on a 100 TiB sparse file, and ext4 (the
//! usual root filesystem) holds files of 16 TiB at most. With
//! `image_host = "xfs"` (or `"auto"` when the image does not fit), fslab
//! makes one XFS for the whole experiment on a sparse image of
//! [`HOST_IMAGE_SIZE`] in `image_dir`, behind its own loop device, and the
//! cells' images are made in it. Every piece is journalled like a cell's,
//! before the cells' own, so teardown and `fslab cleanup` undo the cells'
//! pieces first.

use std::path::Path;

use fslab_model::journal::Journal;
use fslab_model::{CellRunInfo, ImageHostFacts};

use crate::cellfs::Prepared;
use crate::image::host_fs;
use crate::mkfs::{mkfs_argv, run_mkfs, FsType};
use crate::{human_bytes, LabError, LabResult};

/// The host image: a little under the 16 TiB - 4 KiB an ext4 file can be.
pub const HOST_IMAGE_SIZE: u64 = (16 << 40) - (1 << 20);

/// The host's mkfs options: no discard pass over 16 TiB, and a small log
/// (the default 2 GiB one would be written out in full).
const HOST_MKFS_OPTIONS: [&str; 3] = ["-K", "-l", "size=256m"];

/// The host XFS, mounted; undone by [`HostFs::teardown`] (or, after a
/// panic, by dropping it and closing the journal). It is made and undone as
/// a cell's filesystem is ([`Prepared`]), on its own image and mount point.
pub struct HostFs {
    fs: Prepared,
    facts: ImageHostFacts,
}

impl HostFs {
    /// Makes the host image in `dir`, attaches it, makes an XFS on it and
    /// mounts it under the journal's mount base. A failed step undoes the
    /// earlier ones. With `keep` (`--keep-images`) the host image stays
    /// after the run, since the kept cell images are inside it.
    pub fn make(dir: &Path, journal: &mut Journal, keep: bool) -> LabResult<HostFs> {
        let mut fs = Prepared::empty();
        match build(&mut fs, dir, journal, keep) {
            Ok(facts) => Ok(HostFs { fs, facts }),
            Err(e) => {
                let _ = fs.teardown_quietly(journal, &mut CellRunInfo::default());
                Err(LabError::Failed(format!("image host: {e}")))
            }
        }
    }

    /// Where the cells' images go.
    pub fn dir(&self) -> &Path {
        self.fs.workdir()
    }

    /// What was made, for the record and the messages.
    pub fn facts(&self) -> &ImageHostFacts {
        &self.facts
    }

    /// One line for the user.
    pub fn describe(&self) -> String {
        format!(
            "images go on a host XFS: {} of {} on {} ({}), mounted at {}",
            self.facts.loop_device,
            human_bytes(HOST_IMAGE_SIZE),
            self.facts.image,
            self.facts.on,
            self.dir().display()
        )
    }

    /// Unmounts, detaches and removes the host, striking each piece out
    /// of the journal.
    pub fn teardown(mut self, journal: &mut Journal) -> LabResult<()> {
        self.fs
            .teardown_quietly(journal, &mut CellRunInfo::default())
    }
}

fn build(
    fs: &mut Prepared,
    dir: &Path,
    journal: &mut Journal,
    keep: bool,
) -> LabResult<ImageHostFacts> {
    let path = dir.join(format!("fslab-{}-host.img", std::process::id()));
    // Direct IO: the host's writes skip image_dir's page cache, so the
    // cells' data is cached once (by the host XFS), not twice.
    let lo = fs.attach_new_image(&path, HOST_IMAGE_SIZE, true, keep, journal)?;
    let dev = lo.path().to_path_buf();
    let direct_io = lo.direct_io();
    let options: Vec<String> = HOST_MKFS_OPTIONS.iter().map(|s| s.to_string()).collect();
    let argv = mkfs_argv(&FsType::Xfs, &options, &dev);
    run_mkfs(&argv)?;
    let mnt = journal.mount_base().join("image-host");
    fs.mount_new(&dev, &mnt, &FsType::Xfs, "", journal)?;
    Ok(ImageHostFacts {
        fs: "xfs".into(),
        image: path.display().to_string(),
        image_size: HOST_IMAGE_SIZE,
        on: host_fs(dir),
        loop_device: dev.display().to_string(),
        direct_io,
        mkfs_argv: argv,
        mount_point: mnt.display().to_string(),
        kept: keep,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_host_image_fits_on_ext4() {
        let d = tempfile::tempdir().unwrap();
        assert!(crate::image::fits(d.path(), HOST_IMAGE_SIZE).unwrap());
    }
}
