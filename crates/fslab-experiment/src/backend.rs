//! Making a cell's filesystem: [`setup`] maps one repetition of a cell of
//! the experiment (its device, filesystem, options) to the lab's steps
//! ([`fslab_lab::cellfs`]: image, loop device, mkfs, mount, or a fresh
//! directory), each journalled before it is used; [`Prepared::teardown`]
//! undoes them. And what is measured on the filesystem after the workload
//! ([`after_workload`]).

use std::path::Path;

use fslab_lab::cellfs::NewFs;
pub use fslab_lab::cellfs::{DeviceConsent, Prepared, Versions};
use fslab_lab::image::host_fs;
use fslab_lab::{LabError, LabResult};
use fslab_model::journal::Journal;
use fslab_model::CellRunInfo;

use crate::plan::mount_options;
use crate::spec::{Cell, Device, Experiment};

/// Makes and mounts the filesystem for repetition `rep` of `cell`. If a
/// step fails, what the earlier steps made is undone before returning.
pub fn setup(
    exp: &Experiment,
    cell: &Cell,
    rep: u32,
    consent: &DeviceConsent,
    journal: &mut Journal,
    info: &mut CellRunInfo,
) -> LabResult<Prepared> {
    let mut p = Prepared::empty();
    match build(&mut p, exp, cell, rep, consent, journal, info) {
        Ok(()) => Ok(p),
        Err(e) => {
            // Undo, but keep the timings of a run that never happened out of the record.
            let mut scratch = CellRunInfo::default();
            let _ = p.teardown_quietly(journal, &mut scratch);
            info.image_allocated = scratch.image_allocated;
            info.image_extents = scratch.image_extents;
            Err(e)
        }
    }
}

fn build(
    p: &mut Prepared,
    exp: &Experiment,
    cell: &Cell,
    rep: u32,
    consent: &DeviceConsent,
    journal: &mut Journal,
    info: &mut CellRunInfo,
) -> LabResult<()> {
    let tag = format!("fslab-{}-c{}-r{}", std::process::id(), cell.index, rep);
    if let Some(path) = &cell.path {
        // An existing directory: a fresh subdirectory per repetition,
        // removed after it; nothing else there is touched.
        return p.fresh_dir(path, &tag, journal, info);
    }
    let dev_path = match &exp.device {
        Device::Directory { path } => {
            if !path.is_dir() {
                return Err(LabError::Failed(format!(
                    "device.path {} is not a directory",
                    path.display()
                )));
            }
            // The directory is fslab's from now on (see safety::directory_device_error).
            let marker = path.join(crate::safety::DIRECTORY_MARKER);
            if !marker.exists() {
                std::fs::write(
                    &marker,
                    "made by fslab run: a directory device's cells work here\n",
                )
                .map_err(|e| LabError::Failed(format!("cannot write {}: {e}", marker.display())))?;
            }
            return p.fresh_dir(path, &tag, journal, info);
        }
        Device::Image {
            size,
            dir,
            direct_io,
            scheduler,
            ..
        } => {
            let path = dir.join(format!("{tag}.img"));
            info.host_fs = host_fs(dir);
            info.image_path = path.display().to_string();
            info.image_size = *size;
            let lo = p.attach_new_image(&path, *size, *direct_io, consent.keep_images, journal)?;
            info.loop_device = lo.path().display().to_string();
            info.direct_io = lo.direct_io();
            let dev = lo.path().to_path_buf();
            p.set_scheduler(scheduler.as_deref(), &path, journal, info)?;
            dev
        }
        Device::Block { path } => {
            fslab_lab::cellfs::check_block_device(path, consent)?;
            info.loop_device = path.display().to_string();
            path.clone()
        }
    };
    let fs = cell
        .fs
        .clone()
        .ok_or_else(|| LabError::Failed("cell has no filesystem type".into()))?;
    let mnt = journal
        .mount_base()
        .join(format!("c{}-r{}", cell.index, rep));
    let made = NewFs {
        fs,
        mkfs_options: &cell.mkfs_options,
        after_mkfs: &cell.after_mkfs,
        mount_options: mount_options(cell),
    };
    made.make(p, &dev_path, &mnt, journal, info)
}

/// The name under which summaries and comparisons show the htree depth of
/// the directory createmany filled: `htree levels`.
pub const HTREE_SOURCE: &str = "htree";
pub const HTREE_LEVELS: &str = "levels";

/// Measured after the workload on its filesystem, before unmount: on
/// ext4, the htree depth of `filled`, the directory the workload filled
/// with entries ([`fslab_workload::Workload::filled_dir`]: createmany's
/// name pattern's directory): `htree levels`, indirect levels + 1; 0 for
/// a directory too small to be indexed, read from the directory's dx_root
/// on the device.
pub fn after_workload(filled: Option<&Path>) -> Vec<fslab_model::Metric> {
    use fslab_model::{Better, Metric, Unit};
    let Some(dir) = filled else {
        return Vec::new();
    };
    match fslab_probe::htree::levels(dir) {
        Ok(Some(l)) => vec![Metric::new(
            HTREE_SOURCE,
            None,
            HTREE_LEVELS,
            f64::from(l),
            Unit::Count,
            Better::Neither,
        )],
        _ => Vec::new(),
    }
}
