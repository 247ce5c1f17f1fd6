//! One host's lab in a `[cluster]` experiment: what `fslab host-lab up`
//! makes on every host for a cell, from the experiment
//! ([`fslab_lab::host_lab`] makes, journals and undoes it on the host).

use std::path::Path;

use fslab_lab::host_lab::Up;
use fslab_model::journal::state_dir;
use fslab_model::process::ProcessId;

use crate::spec::{Cell, Device, Experiment};

/// Repetition `rep` of `cell` of `exp` (an image device) on every
/// host, mounted at `mnt`: what `fslab host-lab up` makes there.
pub fn up_job(exp: &Experiment, cell: &Cell, rep: u32, mnt: &Path, keep: bool) -> Option<Up> {
    let Device::Image {
        size,
        dir,
        direct_io,
        scheduler,
        ..
    } = &exp.device
    else {
        return None;
    };
    Some(Up {
        tag: format!("fslab-{}-c{}-r{}", std::process::id(), cell.index, rep),
        image_dir: dir.clone(),
        size: *size,
        direct_io: *direct_io,
        scheduler: scheduler.clone(),
        fs: cell.fs.as_ref()?.name().to_string(),
        mkfs_options: cell.mkfs_options.clone(),
        after_mkfs: cell.after_mkfs.clone(),
        mount_options: crate::plan::mount_options(cell),
        mnt: mnt.to_path_buf(),
        keep_images: keep,
        state_dir: state_dir(),
        parent: Some(ProcessId::current()),
        dirs: crate::plan::workload_dirs(exp, mnt),
    })
}
