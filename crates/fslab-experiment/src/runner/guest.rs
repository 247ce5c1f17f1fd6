//! One repetition of a cell on another kernel: fslab boots a guest for it
//! (QEMU; see `fslab-guest`) whose own fslab makes the filesystem on a
//! virtual disk, runs the workload with its probes, and hands its results
//! store back on a second disk; the cell's run is then imported into this
//! store as any run. Everything made here (the guest's directory, the
//! disk's image) is journalled first and removed on every way out; the
//! guest's processes die with it, or with this process.

use std::path::{Path, PathBuf};
use std::time::Duration;

use fslab_guest::{Disk, GuestRun, GuestSpec, Kernel};
use fslab_model::{CellRunInfo, GuestFacts, PhaseResult};

use super::cell::{CellResult, RunEnv};
use super::error::CellError;
use super::guest_job::{GuestJob, GUEST_DB, GUEST_DISK, GUEST_OUT};
use crate::evidence::Evidence;
use crate::spec::{Cell, Device, Experiment};
use fslab_lab::undo::Resource;

/// The guest's limit without a cell time limit.
const NO_LIMIT: Duration = Duration::from_secs(3600);
/// The results disk (sparse: it costs what the guest writes).
const OUT_DISK_BYTES: u64 = 4 << 30;
/// How much of a guest's console is kept with the run.
const CONSOLE_KEPT: usize = 64 << 10;

/// How long a guest may live: the cell's time limit (which the guest's
/// fslab applies to the workload) and as much again, at most a minute,
/// for booting, mkfs and the hand-off.
pub fn guest_limit(time_limit: Option<Duration>) -> Duration {
    match time_limit {
        Some(t) => t + t.min(Duration::from_secs(60)),
        None => NO_LIMIT,
    }
}

/// What a guest cell takes from `fslab run`'s configuration: the
/// experiment as read (the guest parses it again), its scale, and whether
/// images are kept.
pub(super) struct Source<'a> {
    pub(super) file: &'a str,
    pub(super) text: &'a str,
    pub(super) scale: f64,
    pub(super) keep_images: bool,
}

/// Runs repetition `rep` of `cell` in a guest on its kernel.
pub(super) fn run_guest_cell(
    exp: &Experiment,
    cell: &Cell,
    rep: u32,
    cfg: &Source,
    env: &mut RunEnv,
    info: &mut CellRunInfo,
    problems: &mut Vec<String>,
) -> CellResult {
    let mut g = GuestCell {
        exp,
        cell,
        rep,
        src: cfg,
        dir: None,
        image: None,
    };
    let mut res = CellResult::default();
    if let Err(e) = g.steps(env, info, &mut res) {
        res.error = Some(e);
    }
    g.teardown(env, info, problems);
    res
}

/// One repetition of a guest cell, and what it holds on the host: its
/// directory and its disk image, each with its journal entry.
struct GuestCell<'a> {
    exp: &'a Experiment,
    cell: &'a Cell,
    rep: u32,
    src: &'a Source<'a>,
    dir: Option<(PathBuf, u64)>,
    image: Option<(fslab_lab::image::Image, u64)>,
}

impl GuestCell<'_> {
    fn steps(
        &mut self,
        env: &mut RunEnv,
        info: &mut CellRunInfo,
        res: &mut CellResult,
    ) -> Result<(), CellError> {
        let (exp, cell, rep, cfg) = (self.exp, self.cell, self.rep, self.src);
        let gk = cell.kernel.as_ref().expect("a cell on another kernel");
        let cache = fslab_guest::package::cache_dir();
        env.progress.step(&format!("kernel {}", gk.name));
        let kernel = fslab_guest::resolve(&gk.name, &cache)?;
        let Device::Image {
            size,
            dir,
            direct_io,
            ..
        } = &exp.device
        else {
            return Err(CellError::Workload(
                "a cell on another kernel needs an image device".into(),
            ));
        };
        let tag = format!("fslab-{}-c{}-r{}", std::process::id(), cell.index, rep);
        let gdir = dir.join(format!("{tag}-guest"));
        let id = env.journal.add(Resource::Tree { path: gdir.clone() })?;
        std::fs::create_dir(&gdir).map_err(CellError::Workdir)?;
        self.dir = Some((gdir.clone(), id));
        let img_path = dir.join(format!("{tag}.img"));
        let id = env.journal.add(Resource::Image {
            path: img_path.clone(),
            keep: cfg.keep_images,
        })?;
        let img = fslab_lab::image::Image::create(&img_path, *size)?;
        self.image = Some((img, id));
        info.host_fs = fslab_lab::image::host_fs(dir);
        info.image_path = img_path.display().to_string();
        info.image_size = *size;
        info.direct_io = *direct_io;
        let out = gdir.join("out.img");
        std::fs::File::create(&out)
            .and_then(|f| f.set_len(OUT_DISK_BYTES))
            .map_err(CellError::Workdir)?;
        let job = GuestJob {
            file: cfg.file.to_string(),
            text: cfg.text.to_string(),
            scale: cfg.scale,
            probes: exp.workload.probes.clone(),
            time_limit_s: exp.time_limit.map(|t| t.as_secs_f64()),
            cell: cell.clone(),
            disk: GUEST_DISK.into(),
            out: GUEST_OUT.into(),
            db: GUEST_DB.into(),
        };
        // Carried in the guest's initramfs: the host's directory of the
        // guest may be hidden in it (under its own /tmp).
        let job_json = serde_json::to_vec_pretty(&job).unwrap_or_default();
        let job_path = Path::new(fslab_guest::initramfs::FILES_DIR).join("job.json");
        let accel = fslab_guest::accel::choose(&kernel, &cache, &gdir)?;
        env.progress.step(&format!(
            "guest on {} ({}), booting",
            kernel.release, accel.name
        ));
        let spec = GuestSpec {
            kernel: kernel.clone(),
            accel,
            memory_bytes: gk.memory_bytes,
            cpus: gk.cpus,
            append: gk.append.clone(),
            disks: vec![
                Disk {
                    image: img_path.clone(),
                    direct: *direct_io,
                },
                Disk {
                    image: out.clone(),
                    direct: false,
                },
            ],
            fs_modules: cell.fs.iter().map(|f| f.name().to_string()).collect(),
            init: fslab_guest::initramfs::Init {
                command: guest_command(&job_path)?,
                env: guest_env(),
                files: vec![("job.json".into(), job_json)],
            },
            limit: guest_limit(exp.time_limit),
            dir: gdir.clone(),
        };
        fslab_guest::qemu::check_memory(gk.memory_bytes)?;
        let run = fslab_guest::qemu::run(&spec, &crate::signals::hurry)?;
        let mut facts = facts(&kernel, gk, &run);
        let handed = fslab_guest::handoff::read(&out)?;
        if let Some((_, d)) = handed.iter().flatten().find(|(n, _)| n == "dmesg") {
            facts.dmesg = String::from_utf8_lossy(d).into_owned();
        }
        let outcome = collect(handed, &gdir, env, info, res);
        info.guest = Some(facts);
        outcome.map_err(|why| guest_failed(&run, &why.to_string()))
    }

    /// Removes the disk image (after counting its extents, as a loop
    /// device's image is) and the guest's directory.
    fn teardown(&mut self, env: &mut RunEnv, info: &mut CellRunInfo, problems: &mut Vec<String>) {
        if let Some((mut img, id)) = self.image.take() {
            info.image_allocated = img.allocated();
            info.image_extents = fslab_probe::frag::count(img.path()).ok();
            if self.src.keep_images {
                img.keep();
                env.journal.done(id);
            } else {
                match img.remove() {
                    Ok(()) => env.journal.done(id),
                    Err(e) => problems.push(e.to_string()),
                }
            }
        }
        if let Some((d, id)) = self.dir.take() {
            match std::fs::remove_dir_all(&d) {
                Ok(()) => env.journal.done(id),
                Err(e) => problems.push(format!("cannot remove {}: {e}", d.display())),
            }
        }
    }
}

impl Drop for GuestCell<'_> {
    fn drop(&mut self) {
        // Reached only by a panic: the journal undoes the rest.
        if let Some((d, _)) = self.dir.take() {
            let _ = std::fs::remove_dir_all(d);
        }
    }
}

/// `fslab --quiet guest-cell JOB`, this fslab, in the guest.
fn guest_command(job: &Path) -> Result<Vec<String>, CellError> {
    let exe = std::env::current_exe().map_err(CellError::Workdir)?;
    Ok(vec![
        exe.display().to_string(),
        "guest-cell".into(),
        job.display().to_string(),
    ])
}

/// The guest command's environment: a PATH, and fslab's own settings.
fn guest_env() -> Vec<(String, String)> {
    let mut env = vec![
        (
            "PATH".to_string(),
            "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin".to_string(),
        ),
        ("HOME".into(), "/tmp".into()),
    ];
    for (k, v) in std::env::vars() {
        if k.starts_with("FSLAB_") && !k.starts_with("FSLAB_STATE") && k != "FSLAB_DB" {
            env.push((k, v));
        }
    }
    env
}

/// Why a guest cell failed: what the guest said, how it ended, and its
/// console's last lines.
fn guest_failed(run: &GuestRun, why: &str) -> CellError {
    let end = match run.end {
        fslab_guest::End::TimeLimit => format!("killed past its time limit ({:.0} s)", run.wall_s),
        fslab_guest::End::Stopped => "killed (fslab was told to stop at once)".into(),
        fslab_guest::End::Died => "died".into(),
        fslab_guest::End::PoweredOff => "powered off".into(),
    };
    CellError::Workload(format!(
        "the guest {end}: {why}; its console's last lines: {}",
        run.last_lines(5)
    ))
}

/// The guest's facts kept with the repetition.
fn facts(kernel: &Kernel, gk: &crate::spec::guest::GuestKernel, run: &GuestRun) -> GuestFacts {
    let config = kernel
        .config_text()
        .unwrap_or_default()
        .lines()
        .filter(|l| l.starts_with("CONFIG_"))
        .collect::<Vec<_>>()
        .join("\n");
    let console = &run.console;
    let cut = console.len().saturating_sub(CONSOLE_KEPT);
    let cut = (cut..=console.len())
        .find(|&i| console.is_char_boundary(i))
        .unwrap_or(0);
    GuestFacts {
        kernel: gk.name.clone(),
        release: kernel.release.clone(),
        version: kernel.version.clone(),
        image: kernel.image.display().to_string(),
        append: gk.append.clone(),
        accel: run.accel.name.clone(),
        accel_why: run.accel.why.clone(),
        memory_bytes: gk.memory_bytes,
        cpus: gk.cpus,
        qemu_argv: run.qemu_argv.clone(),
        boot_s: run.boot_s,
        wall_s: run.wall_s,
        end: serde_json::to_value(run.end)
            .ok()
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_default(),
        config,
        dmesg: String::new(),
        console: console[cut..].to_string(),
    }
}

/// Why nothing (or nothing usable) came back from a guest: the words
/// after "the guest powered off: " (say).
#[derive(Debug, thiserror::Error)]
enum NothingBack {
    #[error("it handed no results back")]
    NothingHanded,
    #[error("its results hold no store")]
    NoStore,
    #[error("{}: {source}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Store(#[from] fslab_store::StoreError),
    #[error("its store holds no experiment")]
    NoExperiment,
    #[error("its experiment holds no run of the cell")]
    NoRun,
    #[error("importing its run: {0}")]
    Import(#[source] fslab_model::RecordError),
}

/// The guest's store, imported: the cell's run into this store, the
/// repetition's record into `info`, what the summary and findings read
/// into `res`. Err: why nothing (or nothing usable) came back.
fn collect(
    handed: Option<fslab_guest::handoff::Files>,
    dir: &Path,
    env: &mut RunEnv,
    info: &mut CellRunInfo,
    res: &mut CellResult,
) -> Result<(), NothingBack> {
    let files = handed.ok_or(NothingBack::NothingHanded)?;
    let get = |name: &str| files.iter().find(|(n, _)| n == name).map(|(_, b)| b);
    let store_bytes = get("store").ok_or(NothingBack::NoStore)?;
    let db = dir.join("guest.sqlite");
    std::fs::write(&db, store_bytes).map_err(|source| NothingBack::Write {
        path: db.clone(),
        source,
    })?;
    let guest = fslab_store::Store::open_read(&db)?;
    let exp_id = guest
        .latest_experiment()?
        .ok_or(NothingBack::NoExperiment)?;
    let rec = guest.experiment(exp_id)?;
    let gi = rec.cell_runs.first().cloned().ok_or(NothingBack::NoRun)?;
    let keep = (info.cell, info.repetition, info.started_at.clone());
    let host = (
        info.host_fs.clone(),
        info.image_path.clone(),
        info.image_size,
        info.direct_io,
    );
    *info = CellRunInfo {
        cell: keep.0,
        repetition: keep.1,
        started_at: keep.2,
        host_fs: host.0,
        image_path: host.1,
        image_size: host.2,
        direct_io: host.3,
        run_id: None,
        loop_device: format!("{} (the guest's virtio disk)", gi.loop_device),
        ..gi.clone()
    };
    if let Some(run) = gi.run_id {
        let id = env.rec.import_run(&db, run).map_err(NothingBack::Import)?;
        info.run_id = Some(id);
        let phases: Vec<PhaseResult> = guest
            .phases(run)?
            .into_iter()
            .map(PhaseResult::from)
            .collect();
        let names: Vec<String> = phases.iter().map(|p| p.phase.clone()).collect();
        res.evidence = Evidence::stored(&guest, run, &names)?;
        res.metrics = guest.metrics(run)?;
        res.phases = phases;
    }
    if let Some(e) = &gi.error {
        res.error = Some(CellError::Workload(format!("in the guest: {e}")));
    }
    Ok(())
}
