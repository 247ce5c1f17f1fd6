//! Fixtures: the fslab command, root checks, tmpfs mounts and a real ext4
//! on a loop device.

use std::path::{Path, PathBuf};
use std::process::Output;

use assert_cmd::Command;
use fslab_lab::image::Image;
use fslab_lab::loopdev::LoopDevice;
use fslab_lab::mkfs::{mkfs_argv, run_mkfs, FsType};
use fslab_lab::mount::Mount;
use rustix::mount::{MountFlags, UnmountFlags};

/// True when the test may use root-only features. Outside CI a test without
/// root is skipped (it says why); under CI=true it fails instead.
pub fn privileged(what: &str) -> bool {
    if rustix::process::geteuid().is_root() {
        return true;
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "{what} needs root, and CI=true: failing instead of skipping"
    );
    eprintln!("skipping {what}: needs root");
    false
}

/// A scratch area: a working directory (for fs_log.txt) and a database.
pub struct Lab {
    pub tmp: tempfile::TempDir,
}

impl Lab {
    pub fn new() -> Lab {
        Lab {
            tmp: tempfile::tempdir().unwrap(),
        }
    }

    pub fn db(&self) -> PathBuf {
        self.tmp.path().join("results.sqlite")
    }

    pub fn path(&self, p: &str) -> PathBuf {
        self.tmp.path().join(p)
    }

    /// `fslab --db DB ARGS...` run in the scratch directory.
    pub fn fslab(&self) -> Command {
        let mut c = Command::cargo_bin("fslab").unwrap();
        c.current_dir(self.tmp.path())
            .arg("--db")
            .arg(self.db())
            .env_remove("FSLAB_DB");
        c
    }

    pub fn run(&self, args: &[&str]) -> Output {
        self.fslab().args(args).output().unwrap()
    }
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Counts regular files below `dir` (recursively).
pub fn count_files(dir: &Path) -> usize {
    let mut n = 0;
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let t = e.file_type().unwrap();
        if t.is_dir() {
            n += count_files(&e.path());
        } else if t.is_file() {
            n += 1;
        }
    }
    n
}

/// A tmpfs mounted with `options` (e.g. `nr_inodes=100`) on a temporary
/// directory; unmounted on drop.
pub struct Tmpfs {
    pub dir: tempfile::TempDir,
}

impl Tmpfs {
    pub fn mount(options: &str) -> Tmpfs {
        let dir = tempfile::tempdir().unwrap();
        let (flags, data) = fslab_lab::mount::split_options(options);
        let data = std::ffi::CString::new(data).unwrap();
        rustix::mount::mount(
            "fslab-test",
            dir.path(),
            "tmpfs",
            flags | MountFlags::empty(),
            Some(data.as_c_str()),
        )
        .expect("mount tmpfs");
        Tmpfs { dir }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = rustix::mount::unmount(self.dir.path(), UnmountFlags::DETACH);
    }
}

/// A real ext4 (or other type) on a sparse image behind a loop device.
pub struct LoopFs {
    pub mount: Option<Mount>,
    pub dev: Option<LoopDevice>,
    pub image: Option<Image>,
    pub mnt: tempfile::TempDir,
    _img_dir: tempfile::TempDir,
}

impl LoopFs {
    pub fn new(fs: FsType, size: u64, mkfs_opts: &[&str]) -> LoopFs {
        let img_dir = tempfile::tempdir().unwrap();
        let mnt = tempfile::tempdir().unwrap();
        let image = Image::create(&img_dir.path().join("fs.img"), size).unwrap();
        let dev = LoopDevice::attach(image.path(), false).unwrap();
        let opts: Vec<String> = mkfs_opts.iter().map(|s| s.to_string()).collect();
        run_mkfs(&mkfs_argv(&fs, &opts, dev.path())).unwrap();
        let mount = Mount::mount(
            dev.path(),
            mnt.path(),
            fs.name(),
            fs.quiet_mount_options().join(",").as_str(),
        )
        .unwrap();
        LoopFs {
            mount: Some(mount),
            dev: Some(dev),
            image: Some(image),
            mnt,
            _img_dir: img_dir,
        }
    }

    pub fn path(&self) -> &Path {
        self.mnt.path()
    }

    pub fn dev_path(&self) -> PathBuf {
        self.dev.as_ref().unwrap().path().to_path_buf()
    }
}

impl Drop for LoopFs {
    fn drop(&mut self) {
        drop(self.mount.take());
        drop(self.dev.take());
        drop(self.image.take());
    }
}
