//! A cell's filesystem: made on an image's loop device, a block device fslab
//! was told to format, or a fresh directory, and torn down again.
//!
//! [`Prepared`] holds each piece made (image, loop device, its IO
//! scheduler, mount point, mount, or a scratch directory); every piece is
//! noted in the [`Journal`] before it is used and struck out once undone,
//! and each is a value that undoes itself when dropped, so errors and
//! panics clean up. [`Prepared::teardown`] times the unmount and a
//! remount, then undoes everything. The experiment's `backend` maps a
//! cell to these steps; a cluster host's lab ([`crate::host_lab`]) and the
//! image host ([`crate::image_host`]) use them too.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use fslab_model::journal::{Journal, Resource};
use fslab_model::CellRunInfo;

use crate::image::Image;
use crate::loopdev::LoopDevice;
use crate::mkfs::{mkfs_argv, run_mkfs, tool_version, FsType};
use crate::mount::{ensure_on, is_mount_point, mount_argv, Mount};
use crate::{signature, LabError, LabResult};

/// How the user allowed fslab to use an existing block device.
#[derive(Debug, Clone, Default)]
pub struct DeviceConsent {
    /// `--format-device PATH`: the one block device fslab may format.
    pub format_device: Option<PathBuf>,
    /// `--force`: format it even if it holds a filesystem or data.
    pub force: bool,
    /// `--keep-images`: leave image files in place.
    pub keep_images: bool,
}

/// A cell's filesystem, ready for the workload.
pub struct Prepared {
    workdir: PathBuf,
    dev: Option<u64>,
    fs: Option<(FsType, PathBuf, String)>,
    mount: Option<(Mount, u64)>,
    mount_dir: Option<(PathBuf, u64)>,
    loopdev: Option<(LoopDevice, u64)>,
    /// The loop device's scheduler file and what it said before fslab set one.
    scheduler: Option<(PathBuf, String, u64)>,
    image: Option<(Image, u64)>,
    scratch: Option<(PathBuf, u64)>,
}

/// mkfs tool versions, looked up once per type.
#[derive(Default)]
pub struct Versions(HashMap<FsType, String>);

impl Versions {
    pub fn of(&mut self, fs: &FsType) -> String {
        self.0
            .entry(fs.clone())
            .or_insert_with(|| tool_version(fs).unwrap_or_else(|e| e.to_string()))
            .clone()
    }
}

impl Prepared {
    /// `dir/tag`, made fresh and journalled (removed with all it holds at
    /// teardown): the workload's directory on a filesystem fslab did not
    /// make, whose type the run records.
    pub fn fresh_dir(
        &mut self,
        dir: &Path,
        tag: &str,
        journal: &mut Journal,
        info: &mut CellRunInfo,
    ) -> LabResult<()> {
        let d = dir.join(tag);
        let id = journal.add(Resource::Tree { path: d.clone() })?;
        std::fs::create_dir(&d)
            .map_err(|e| LabError::Failed(format!("cannot create {}: {e}", d.display())))?;
        info.host_fs = fslab_model::TargetInfo::of(dir).fs_type;
        self.workdir = d.clone();
        self.scratch = Some((d, id));
        Ok(())
    }
}

/// A filesystem to make on a device and mount: a cell's, or one host's
/// of a cluster (see [`crate::host_lab`]).
pub struct NewFs<'a> {
    pub fs: FsType,
    pub mkfs_options: &'a [String],
    pub after_mkfs: &'a [Vec<String>],
    /// fslab's and the user's (the experiment's `plan::mount_options`).
    pub mount_options: String,
}

impl NewFs<'_> {
    /// mkfs on `dev`, the commands after it, then mounted at `mnt`.
    pub fn make(
        self,
        p: &mut Prepared,
        dev_path: &Path,
        mnt: &Path,
        journal: &mut Journal,
        info: &mut CellRunInfo,
    ) -> LabResult<()> {
        let fs = self.fs;
        let argv = mkfs_argv(&fs, self.mkfs_options, dev_path);
        info.mkfs_argv = argv.clone();
        info.mkfs_s = run_mkfs(&argv)?.as_secs_f64();
        for cmd in self.after_mkfs {
            let cmd: Vec<String> = cmd
                .iter()
                .map(|a| a.replace("{device}", &dev_path.display().to_string()))
                .collect();
            if cmd.is_empty() {
                continue;
            }
            info.after_mkfs.push(cmd.clone());
            crate::mkfs::run_tool(&cmd)?;
        }
        let opts = self.mount_options;
        info.mount_argv = mount_argv(dev_path, mnt, fs.name(), &opts);
        info.kernel_mount_options = p.mount_new(dev_path, mnt, &fs, &opts, journal)?.to_string();
        p.fs = Some((fs, dev_path.to_path_buf(), opts));
        Ok(())
    }
}

/// Refuses a block device unless the user named it with --format-device,
/// and unless --force, one that holds a filesystem, a partition table or
/// data. A device that is mounted or held open exclusively is always refused.
pub fn check_block_device(path: &Path, consent: &DeviceConsent) -> LabResult<()> {
    let canon = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let named = consent
        .format_device
        .as_ref()
        .map(|f| std::fs::canonicalize(f).unwrap_or_else(|_| f.clone()))
        .is_some_and(|f| f == canon);
    if !named {
        return Err(LabError::Refused(format!(
            "{} would be formatted: fslab formats an existing device only when told so with --format-device {}",
            path.display(),
            path.display()
        )));
    }
    let st = rustix::fs::stat(&canon).map_err(|e| {
        LabError::Failed(format!("{}: {}", path.display(), std::io::Error::from(e)))
    })?;
    if rustix::fs::FileType::from_raw_mode(st.st_mode) != rustix::fs::FileType::BlockDevice {
        return Err(LabError::Refused(format!(
            "{} is not a block device",
            path.display()
        )));
    }
    // O_EXCL on a block device fails with EBUSY while it is mounted or held.
    match rustix::fs::open(
        &canon,
        rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::EXCL | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    ) {
        Ok(fd) => drop(fd),
        Err(rustix::io::Errno::BUSY) => {
            return Err(LabError::Refused(format!(
                "{} is in use (mounted, or held by another program): refusing to format it",
                path.display()
            )))
        }
        Err(e) => {
            return Err(LabError::Failed(format!(
                "{}: {}",
                path.display(),
                std::io::Error::from(e)
            )))
        }
    }
    if !consent.force {
        if let Some(what) = signature::probe(&canon)
            .map_err(|e| LabError::Failed(format!("cannot read {}: {e}", path.display())))?
        {
            return Err(LabError::Refused(format!(
                "{} holds {what}: refusing to format it (add --force to destroy it)",
                path.display()
            )));
        }
    }
    Ok(())
}

impl Prepared {
    /// Nothing made yet.
    pub fn empty() -> Prepared {
        Prepared {
            workdir: PathBuf::new(),
            dev: None,
            fs: None,
            mount: None,
            mount_dir: None,
            loopdev: None,
            scheduler: None,
            image: None,
            scratch: None,
        }
    }

    /// Creates `path` as a sparse image of `size` bytes, checks it holds no
    /// signature and attaches it to a loop device, journalling each before
    /// use. `keep` (--keep-images) leaves the image in place afterwards.
    pub fn attach_new_image(
        &mut self,
        path: &Path,
        size: u64,
        direct_io: bool,
        keep: bool,
        journal: &mut Journal,
    ) -> LabResult<&LoopDevice> {
        let id = journal.add(Resource::Image {
            path: path.to_path_buf(),
            keep,
        })?;
        let mut image = match Image::create(path, size) {
            Ok(i) => i,
            Err(e) => {
                journal.done(id);
                return Err(e);
            }
        };
        if keep {
            image.keep();
        }
        self.image = Some((image, id));
        if let Some(what) = signature::probe(path)
            .map_err(|e| LabError::Failed(format!("cannot read {}: {e}", path.display())))?
        {
            return Err(LabError::Refused(format!(
                "new image {} already holds {what}",
                path.display()
            )));
        }
        // The loop number is known only once bound; the device is bound
        // with autoclear and held open, so if the journal cannot list it,
        // dropping it here detaches it.
        let lo = LoopDevice::attach(path, direct_io)?;
        let id = journal.add(Resource::Loop {
            number: lo.number(),
            backing: path.to_path_buf(),
        })?;
        Ok(&self.loopdev.insert((lo, id)).0)
    }

    /// Leaves everything made in place, journalled (a cluster host's lab,
    /// which `fslab host-lab down` undoes from its journal).
    pub fn leave(self) {
        std::mem::forget(self);
    }

    /// Sets the loop device's IO scheduler to `name` (journalled first, with
    /// what it was), or only records the one it has (None). Either way the
    /// cell's record holds the scheduler it ran with.
    pub fn set_scheduler(
        &mut self,
        name: Option<&str>,
        image: &Path,
        journal: &mut Journal,
        info: &mut CellRunInfo,
    ) -> LabResult<()> {
        let Some((lo, _)) = &self.loopdev else {
            return Ok(());
        };
        let file = crate::scheduler::loop_file(lo.number());
        let found = crate::scheduler::read(&file)?;
        info.scheduler_before = found.current.clone();
        info.scheduler = found.current.clone();
        let Some(name) = name.filter(|n| *n != found.current) else {
            return Ok(());
        };
        if !found.offered.iter().any(|o| o == name) {
            return Err(LabError::Refused(format!(
                "device.scheduler {name:?}: {} offers {}",
                lo.path().display(),
                found.offered.join(", ")
            )));
        }
        let id = journal.add(Resource::Scheduler {
            number: lo.number(),
            backing: image.to_path_buf(),
            original: found.current.clone(),
        })?;
        self.scheduler = Some((file.clone(), found.current, id));
        crate::scheduler::write(&file, name)?;
        info.scheduler = name.to_string();
        Ok(())
    }

    /// Puts IO scheduler `name` on the loop device, journalling the one it
    /// had first if fslab has not changed it yet (a first pass's scheduler,
    /// then the judged run's).
    pub fn use_scheduler(
        &mut self,
        name: &str,
        image: &Path,
        journal: &mut Journal,
        info: &mut CellRunInfo,
    ) -> LabResult<()> {
        match &self.scheduler {
            Some((file, _, _)) => crate::scheduler::write(file, name)?,
            None => self.set_scheduler(Some(name), image, journal, info)?,
        }
        info.scheduler = name.to_string();
        Ok(())
    }

    /// The scheduler the loop device had before fslab set one (None: it
    /// was never changed).
    pub fn original_scheduler(&self) -> Option<&str> {
        self.scheduler.as_ref().map(|(_, o, _)| o.as_str())
    }

    /// The image file, when the cell has one.
    pub fn image_path(&self) -> Option<&Path> {
        self.image.as_ref().map(|(i, _)| i.path())
    }

    /// Unmounts the filesystem (leaving its device and image), for a new
    /// one to be made on the same device ([`Prepared::remake`]).
    pub fn unmount_only(&mut self, journal: &mut Journal) -> LabResult<()> {
        if let Some((m, id)) = self.mount.take() {
            m.unmount()?;
            journal.done(id);
        }
        Ok(())
    }

    /// Makes the cell's filesystem again on its device and mounts it at the
    /// same place (after [`Prepared::unmount_only`]).
    pub fn remake(
        &mut self,
        mkfs_options: &[String],
        after_mkfs: &[Vec<String>],
        journal: &mut Journal,
        info: &mut CellRunInfo,
    ) -> LabResult<()> {
        let Some((fs, dev, opts)) = self.fs.clone() else {
            return Err(LabError::Failed("no filesystem to make again".into()));
        };
        let mnt = self.workdir.clone();
        NewFs {
            fs,
            mkfs_options,
            after_mkfs,
            mount_options: opts,
        }
        .make(self, &dev, &mnt, journal, info)
    }

    /// Makes mount point `mnt` (unless it is there: then it is left when
    /// undone) and mounts `dev` there (each journalled first); the
    /// workload directory becomes `mnt`. Returns the options the kernel
    /// reports.
    pub fn mount_new(
        &mut self,
        dev: &Path,
        mnt: &Path,
        fs: &FsType,
        opts: &str,
        journal: &mut Journal,
    ) -> LabResult<&str> {
        if !mnt.is_dir() {
            let id = journal.add(Resource::MountDir {
                path: mnt.to_path_buf(),
            })?;
            std::fs::create_dir_all(mnt).map_err(|e| {
                LabError::Failed(format!("cannot create mount point {}: {e}", mnt.display()))
            })?;
            self.mount_dir = Some((mnt.to_path_buf(), id));
        }
        let id = journal.add(Resource::Mount {
            target: mnt.to_path_buf(),
        })?;
        let m = match Mount::mount(dev, mnt, fs.name(), opts) {
            Ok(m) => m,
            Err(e) => {
                if !is_mount_point(mnt) {
                    journal.done(id);
                }
                return Err(e);
            }
        };
        self.dev = Some(m.root_dev());
        self.workdir = mnt.to_path_buf();
        Ok(self.mount.insert((m, id)).0.kernel_options())
    }

    /// The directory the workload works in.
    pub fn workdir(&self) -> &Path {
        &self.workdir
    }

    /// Checks, just before the workload starts, that its directory is on the
    /// new filesystem (a mount that silently failed would send the workload
    /// to the host).
    pub fn verify(&self, dir: &Path) -> LabResult<()> {
        match self.dev {
            Some(dev) => ensure_on(dir, dev),
            None => Ok(()),
        }
    }

    /// Times the unmount and a remount, then unmounts, detaches and removes
    /// everything, striking each resource out of the journal.
    pub fn teardown(mut self, journal: &mut Journal, info: &mut CellRunInfo) -> LabResult<()> {
        self.undo(journal, info, true)
    }

    /// Undoes everything without timing a remount (after a failed setup).
    pub fn teardown_quietly(
        &mut self,
        journal: &mut Journal,
        info: &mut CellRunInfo,
    ) -> LabResult<()> {
        self.undo(journal, info, false)
    }

    fn undo(
        &mut self,
        journal: &mut Journal,
        info: &mut CellRunInfo,
        remount: bool,
    ) -> LabResult<()> {
        let mut first_err: Option<LabError> = None;
        let mut note = |r: LabResult<()>| {
            if let Err(e) = r {
                first_err.get_or_insert(e);
            }
        };
        if let Some((m, id)) = self.mount.take() {
            match m.unmount() {
                Ok(d) => {
                    info.unmount_s = Some(d.as_secs_f64());
                    if let (true, Some((fs, dev, opts))) = (remount, &self.fs) {
                        let t = Instant::now();
                        match Mount::mount(dev, &self.workdir, fs.name(), opts) {
                            Ok(m2) => {
                                info.remount_s = Some(t.elapsed().as_secs_f64());
                                note(m2.unmount().map(|_| ()));
                            }
                            Err(e) => note(Err(LabError::Failed(format!(
                                "remount after the workload failed: {e}"
                            )))),
                        }
                    }
                    journal.done(id);
                }
                Err(e) => note(Err(e)),
            }
        }
        if let Some((dir, id)) = self.mount_dir.take() {
            let _ = std::fs::remove_dir(&dir);
            journal.done(id);
        }
        // Before detaching: a loop device keeps its scheduler afterwards.
        if let Some((file, original, id)) = self.scheduler.take() {
            match crate::scheduler::write(&file, &original) {
                Ok(()) => journal.done(id),
                Err(e) => note(Err(e)),
            }
        }
        if let Some((lo, id)) = self.loopdev.take() {
            match lo.detach() {
                Ok(()) => journal.done(id),
                Err(e) => note(Err(e)),
            }
        }
        if let Some((img, id)) = self.image.take() {
            info.image_allocated = img.allocated();
            info.image_extents = fslab_layout::frag::count(img.path()).ok();
            match img.remove() {
                Ok(()) => journal.done(id),
                Err(e) => note(Err(e)),
            }
        }
        if let Some((d, id)) = self.scratch.take() {
            match std::fs::remove_dir_all(&d) {
                Ok(()) => journal.done(id),
                Err(e) => note(Err(LabError::Failed(format!(
                    "cannot remove {}: {e}",
                    d.display()
                )))),
            }
        }
        match first_err {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}
