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

impl Drop for Lab {
    /// A test that failed half-way may have left a killed run's mounts and
    /// loop devices: undo them, as `fslab cleanup` would, before the
    /// directory (with the journal that lists them) is removed.
    fn drop(&mut self) {
        if std::fs::read_dir(self.state()).is_ok_and(|mut d| d.next().is_some()) {
            let _ = self.run_cmd().arg("cleanup").output();
        }
    }
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

    /// The id of the experiment run last.
    pub fn latest_experiment(&self) -> i64 {
        fslab_store::Store::open_read(&self.db())
            .unwrap()
            .latest_experiment()
            .unwrap()
            .expect("an experiment")
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

/// The names of the phases in a run's JSON export, in order.
/// The errors of a run's JSON document against `schema/run.schema.json`
/// (none: it validates).
pub fn run_schema_errors(doc: &serde_json::Value) -> Vec<String> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../schema/run.schema.json");
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let v = jsonschema::validator_for(&schema).unwrap();
    v.iter_errors(doc)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect()
}

/// The loop rows an exported run's metrics hold (see
/// `fslab_model::loop_metrics`).
pub fn loops(export: &serde_json::Value) -> Vec<fslab_model::LoopRow> {
    let metrics: Vec<fslab_model::Metric> =
        serde_json::from_value(export["metrics"].clone()).unwrap_or_default();
    fslab_model::LoopRow::from_metrics(&metrics)
}

pub fn phase_names(export: &serde_json::Value) -> Vec<&str> {
    export["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["phase"].as_str().unwrap())
        .collect()
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

/// Tests that change machine-wide settings (sysctls) take this lock, so one
/// test's save and restore cannot interleave with another's.
pub static MACHINE: std::sync::Mutex<()> = std::sync::Mutex::new(());

pub fn machine_lock() -> std::sync::MutexGuard<'static, ()> {
    MACHINE.lock().unwrap_or_else(|e| e.into_inner())
}

impl Lab {
    /// The state directory of this lab's `fslab run`s.
    pub fn state(&self) -> PathBuf {
        self.path("state")
    }

    /// Where this lab's images go.
    pub fn images(&self) -> PathBuf {
        let p = self.path("images");
        std::fs::create_dir_all(&p).unwrap();
        p
    }

    /// Writes an experiment file; `IMAGES` in the text becomes the image directory.
    pub fn experiment(&self, name: &str, text: &str) -> PathBuf {
        let p = self.path(name);
        std::fs::write(&p, text.replace("IMAGES", self.images().to_str().unwrap())).unwrap();
        p
    }

    /// `fslab run` with this lab's state directory.
    pub fn run_cmd(&self) -> std::process::Command {
        let mut c = std::process::Command::new(assert_cmd::cargo::cargo_bin("fslab"));
        c.current_dir(self.tmp.path())
            .env("FSLAB_STATE_DIR", self.state())
            .env_remove("FSLAB_DB")
            .arg("--db")
            .arg(self.db());
        c
    }

    /// Everything a run of this lab could have left behind.
    /// `fslab run EXPERIMENT` started in the background, its output going
    /// where the test wants it.
    pub fn spawn_run(
        &self,
        experiment: &Path,
        stdout: std::process::Stdio,
        stderr: std::process::Stdio,
    ) -> std::process::Child {
        self.run_cmd()
            .arg("run")
            .arg(experiment)
            .stdout(stdout)
            .stderr(stderr)
            .spawn()
            .unwrap()
    }

    pub fn leftovers(&self) -> Vec<String> {
        let mut left = Vec::new();
        let images = self.images();
        for e in std::fs::read_dir(&images).unwrap().flatten() {
            left.push(format!("image {}", e.path().display()));
        }
        if let Ok(rd) = std::fs::read_dir(self.state()) {
            for e in rd.flatten() {
                left.push(format!("state {}", e.path().display()));
            }
        }
        let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
        for l in mounts.lines() {
            if l.contains(self.state().to_str().unwrap()) {
                left.push(format!("mount {l}"));
            }
        }
        for e in std::fs::read_dir("/sys/block").unwrap().flatten() {
            if let Ok(b) = std::fs::read_to_string(e.path().join("loop/backing_file")) {
                // Images in image_dir, or in an image host mounted under the state dir.
                if b.starts_with(images.to_str().unwrap())
                    || b.starts_with(self.state().to_str().unwrap())
                {
                    left.push(format!(
                        "loop {} -> {}",
                        e.file_name().to_string_lossy(),
                        b.trim()
                    ));
                }
            }
        }
        left
    }
}

/// Processes whose parent is `ppid` and whose command line contains `word`.
pub fn children_with(ppid: u32, word: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
        let parent: Option<u32> = stat
            .rsplit(')')
            .next()
            .and_then(|r| r.split_whitespace().nth(1))
            .and_then(|p| p.parse().ok());
        let cmd = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
        if parent == Some(ppid) && String::from_utf8_lossy(&cmd).contains(word) {
            out.push(pid);
        }
    }
    out
}

/// Waits up to `secs` for MPI ranks writing to the store `db` to have
/// kept their run's description in a spool beside it (they are past the
/// start's collectives, into the workload).
pub fn ranks_described(db: &Path, secs: u64) -> bool {
    wait_for(secs, || {
        fslab_cluster::rescue::Spool::beside(db)
            .iter()
            .any(|s| s.meta().is_ok())
    })
}

/// Waits up to `secs` for `cond`.
pub fn wait_for(secs: u64, mut cond: impl FnMut() -> bool) -> bool {
    let end = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    while std::time::Instant::now() < end {
        if cond() {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    false
}

pub fn need_tool(tool: &str) -> bool {
    if fslab_lab::mkfs::find_tool(tool).is_some() {
        return true;
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "{tool} is missing, and CI=true: failing instead of skipping"
    );
    eprintln!("skipping: {tool} is not installed");
    false
}
