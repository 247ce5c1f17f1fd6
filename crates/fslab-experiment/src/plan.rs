//! From a validated experiment to what will run: scaling, the order of
//! (cell, repetition) pairs, each cell's commands, and the dry-run text.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use fslab_lab::human_bytes;
use fslab_lab::image_host::HOST_IMAGE_SIZE;
use fslab_lab::mkfs::{mkfs_argv, FsType};
use fslab_lab::mount::mount_argv;

use fslab_model::protocol::{DropCaches, Harness};
use fslab_workload::{ChildSpec, Job};

use crate::spec::{Cell, Device, Experiment, ImageHost, Order};

pub use fslab_model::WARM_UP;

/// The (cell index, repetition) pairs in the order they run; repetitions
/// count from 1, the warm-up round ([`WARM_UP`], every cell once) first
/// when the experiment has one.
pub fn schedule(exp: &Experiment) -> Vec<(u32, u32)> {
    let n = exp.cells.len() as u32;
    let warm_up = (0..n).filter(|_| exp.warm_up).map(|c| (c, WARM_UP));
    let r = exp.repetitions;
    let mut pairs: Vec<(u32, u32)> = match exp.order {
        Order::Sequential => (0..n).flat_map(|c| (1..=r).map(move |k| (c, k))).collect(),
        Order::Interleaved | Order::Shuffled => {
            (1..=r).flat_map(|k| (0..n).map(move |c| (c, k))).collect()
        }
    };
    if exp.order == Order::Shuffled {
        let mut rng = fslab_stats::rng::SplitMix64(exp.seed);
        for i in (1..pairs.len()).rev() {
            let j = rng.below(i as u64 + 1) as usize;
            pairs.swap(i, j);
        }
    }
    warm_up.chain(pairs).collect()
}

/// The least memory limit scaling leaves. Seed 000 at 1/100 (504k files)
/// outgrows it during its create phase, as the seed's 4 GB VM was
/// outgrown, so btrfs writes back metadata while it creates: the cgroup
/// charges the inodes and dentries the workload caches (about 1 KiB a
/// file). Measured, 3 runs each: at 1 GiB btrfs peaked at 641 MiB and
/// wrote nothing during create; at 512 and at 384 MiB one btrfs run of
/// three stayed under the limit; at 256 MiB all three hit it. xfs frees
/// inodes lazily and was killed at 256 MiB until the cell's cgroup waited
/// for reclaim instead (see `MemCgroup::create`).
pub const MIN_SCALED_MEMORY_LIMIT: u64 = 256 << 20;

/// The experiment shrunk (or grown) by `f`: image sizes (at least 512 MiB,
/// the smallest all filesystems accept) and the workload's counts (its
/// `scale`, which [`cell_job`] applies to the typed options with the
/// workload's own [`fslab_workload::Workload::scale`]); the memory limit
/// too with `memory_limit_scales` (at least 256 MiB).
pub fn scaled(exp: &Experiment, f: f64) -> Experiment {
    let mut e = exp.clone();
    if (f - 1.0).abs() < f64::EPSILON {
        return e;
    }
    if let (true, Some(limit)) = (e.machine.memory_limit_scales, e.machine.memory_limit) {
        let mib = 1u64 << 20;
        let s = ((limit as f64 * f) as u64).div_ceil(mib) * mib;
        e.machine.memory_limit = Some(s.max(MIN_SCALED_MEMORY_LIMIT));
    }
    if let Device::Image { size, .. } = &mut e.device {
        let mib = 1u64 << 20;
        let s = ((*size as f64 * f) as u64).div_ceil(mib) * mib;
        *size = s.max(512 * mib);
        // The first pass's region keeps its share of the image.
        if let Some(r) = e.first_pass.as_mut().and_then(|p| p.region.as_mut()) {
            *r = ((*r as f64 * f) as u64).div_ceil(mib).max(1) * mib;
        }
    }
    e.workload.scale *= f;
    e
}

/// Mount options for a cell: the user's, plus fslab's own that keep a fresh
/// filesystem quiet (ext4: `noinit_itable`) unless the user chose otherwise.
pub fn mount_options(cell: &Cell) -> String {
    let mut opts: Vec<String> = cell
        .mount_options
        .split(',')
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect();
    if let Some(fs) = &cell.fs {
        for q in fs.quiet_mount_options() {
            let key = q.trim_start_matches("no");
            if !opts
                .iter()
                .any(|o| o.trim_start_matches("no").starts_with(key))
            {
                opts.push(q.to_string());
            }
        }
    }
    opts.join(",")
}

/// The workload directories of a cell whose filesystem is at `mnt`.
pub fn workload_dirs(exp: &Experiment, mnt: &Path) -> Vec<std::path::PathBuf> {
    (0..exp.workload.dirs)
        .map(|i| mnt.join(i.to_string()))
        .collect()
}

/// The experiment's and the cell's workload arguments with `{dir}`
/// (`{dir1}`, ...) replaced by the workload directories under `mnt`: the
/// workload's prefix ([`fslab_workload::Workload::experiment_prefix`]) and
/// its `[workload]` keys first, then the file's args and the cell's.
pub fn substituted_args(exp: &Experiment, cell: &Cell, mnt: &Path) -> Vec<String> {
    let dirs = workload_dirs(exp, mnt);
    let subst = |a: &String| {
        let mut a = a.clone();
        for (i, d) in dirs.iter().enumerate().rev() {
            a = a.replace(&format!("{{dir{i}}}"), &d.display().to_string());
        }
        a.replace("{dir}", &dirs[0].display().to_string())
    };
    let prefix: Vec<String> = exp
        .workload
        .kind
        .experiment_prefix()
        .iter()
        .map(|a| a.to_string())
        .collect();
    prefix
        .iter()
        .chain(&exp.workload.options)
        .chain(&exp.workload.args)
        .chain(&cell.workload_args)
        .map(subst)
        .collect()
}

/// The probes `fslab run` runs beside the workload, in its own process and
/// outside the cell's cgroup; None when the workload runs on several MPI
/// ranks, each of which then runs its own.
pub fn probes_beside(exp: &Experiment) -> Option<Vec<fslab_probe::ProbeRef>> {
    // A program that starts its own ranks runs in one process here (its
    // ranks on this machine are watched with it), but not on other hosts.
    let own_ranks = exp.workload.kind.launches_ranks();
    if exp.cluster.is_some() || (exp.workload.ranks > 1 && !own_ranks) {
        return None;
    }
    // The list was checked when the experiment was read.
    Some(
        fslab_probe::parse_list(exp.workload.probes.as_deref().unwrap_or("default"))
            .unwrap_or_default(),
    )
}

/// The cell's job as `fslab run` starts it, for a cell whose filesystem is
/// at `mnt`: the experiment's and the cell's arguments (`{dir}` replaced)
/// parsed by the workload, its `-d` directories the cell's, what the
/// workload sets in a cell ([`fslab_workload::Workload::in_cell`]), scaled
/// by the experiment's `--scale`. Its validation needs the cell's
/// directories: [`crate::safety`] validates it against a stand-in when the
/// experiment is read, the workload again when it starts.
pub fn cell_job(exp: &Experiment, cell: &Cell, mnt: &Path) -> fslab_workload::Result<Job> {
    let mut job = parsed_job(exp, cell, mnt)?;
    job.in_cell();
    Ok(scaled_job(exp, job))
}

/// The cell's job as the experiment file gives it: its arguments and
/// fslab's `-d` directories, scaled, without what `fslab run` sets itself
/// (which [`fslab_workload::args::check_job`] refuses in the file).
pub fn experiment_job(exp: &Experiment, cell: &Cell, mnt: &Path) -> fslab_workload::Result<Job> {
    Ok(scaled_job(exp, parsed_job(exp, cell, mnt)?))
}

/// The experiment's and the cell's arguments (`{dir}` substituted), with
/// fslab's `-d DIR` for each workload directory when the workload takes
/// them, parsed by the workload: the one parse of a cell's arguments.
fn parsed_job(exp: &Experiment, cell: &Cell, mnt: &Path) -> fslab_workload::Result<Job> {
    let mut args = substituted_args(exp, cell, mnt);
    if exp.workload.kind.takes_dirs() {
        for d in workload_dirs(exp, mnt) {
            args.extend(["-d".to_string(), d.display().to_string()]);
        }
    }
    let mut job = exp.workload.kind.parse(&args)?;
    job.allow_commands(&exp.workload.allowed);
    if let Some(l) = program_launcher(exp, mnt) {
        job.set_launcher(l);
    }
    Ok(job)
}

/// `job` scaled by the experiment's `--scale` (its own
/// [`fslab_workload::Workload::scale`]).
fn scaled_job(exp: &Experiment, mut job: Job) -> Job {
    if (exp.workload.scale - 1.0).abs() > f64::EPSILON {
        job.scale(exp.workload.scale);
    }
    job
}

/// What `--scale` changes in the cell's job, option by option:
/// `(option, from, to)`, as the dry run prints it.
pub fn scale_changes(exp: &Experiment, cell: &Cell, mnt: &Path) -> Vec<(String, String, String)> {
    let Ok(mut before) = parsed_job(exp, cell, mnt) else {
        return Vec::new();
    };
    before.in_cell();
    let after = scaled_job(exp, before.clone());
    fslab_workload::command_line::changes(&before, &after)
}

/// The cell's command line as people are shown it (the dry run, the
/// summary, the report's header, `results show`), for a cell whose
/// filesystem is at `mnt`: its job as it runs, written out from its typed
/// options ([`fslab_workload::command_line::render`]), for display only.
/// It holds nothing of what runs around the workload (its JSON report,
/// probes, text file, cgroup, progress: the [`Harness`]). Arguments that
/// do not parse (refused when the experiment was read) are shown as written.
pub fn shown_command_line(exp: &Experiment, cell: &Cell, mnt: &Path) -> Vec<String> {
    match cell_job(exp, cell, mnt) {
        Ok(job) => fslab_workload::command_line::render(&job),
        Err(_) => std::iter::once(exp.workload.kind.name().to_string())
            .chain(substituted_args(exp, cell, mnt))
            .collect(),
    }
}

/// Where a cell's run puts what is not the workload's own: the file its
/// text goes to and the memory cgroup it joins.
#[derive(Debug, Clone, Default)]
pub struct CellPlaces {
    pub text_to: Option<PathBuf>,
    pub cgroup: Option<PathBuf>,
}

/// The workload child of a cell whose filesystem is at `mnt`, as `fslab
/// run` starts it (`fslab job JSON`): the [`cell_job`] and its harness, a
/// JSON report, progress messages, dying with `fslab run`; the probes in
/// its process (none when `fslab run` runs them beside it, answered at
/// each phase boundary; the experiment's on MPI ranks); the caches
/// dropped as `[machine]` says; its text and cgroup where `places` says.
/// The command line it records is the one shown ([`shown_command_line`]).
pub fn child_spec(
    exp: &Experiment,
    cell: &Cell,
    mnt: &Path,
    places: CellPlaces,
) -> fslab_workload::Result<ChildSpec> {
    let job = cell_job(exp, cell, mnt)?;
    let beside = probes_beside(exp);
    let harness = Harness {
        command_line: fslab_workload::command_line::render(&job),
        json: true,
        probes: match (&beside, &exp.workload.probes) {
            // fslab run runs them, outside the workload's process and cgroup.
            (Some(_), _) => "none".into(),
            (None, Some(p)) => p.clone(),
            (None, None) => "default".into(),
        },
        drop_caches: if exp.machine.drop_caches {
            DropCaches::EachPhase
        } else if exp.machine.drop_caches_once {
            DropCaches::Once
        } else {
            DropCaches::Never
        },
        cgroup: places.cgroup,
        text_to: places.text_to,
        output: None,
        die_with_parent: true,
        progress: true,
        acks: beside.is_some_and(|k| !k.is_empty()),
    };
    Ok(ChildSpec { job, harness })
}

/// The launcher in front of a workload on `ranks` MPI ranks on this
/// machine (None for one process): Open MPI's mpirun, allowed to run as
/// root and to start more ranks than there are cores, and to give ranks
/// stopped because one of them died 6 s to keep what they measured before
/// SIGKILL (Open MPI's default is 1 s; see `fslab rescue`).
pub fn mpirun_prefix(ranks: u32) -> Option<Vec<String>> {
    (ranks > 1).then(|| {
        [
            "mpirun",
            "--allow-run-as-root",
            "--oversubscribe",
            "--mca",
            "odls_base_sigkill_timeout",
            "6",
            "-np",
        ]
        .iter()
        .map(|s| s.to_string())
        .chain([ranks.to_string()])
        .collect()
    })
}

/// The launcher in front of a cell's workload: mpirun across the
/// cluster's hosts, or on this machine for `ranks` > 1 (None: one process,
/// or a workload that starts its own ranks: see [`program_launcher`]).
pub fn launcher(exp: &Experiment) -> Option<Vec<String>> {
    if exp.workload.kind.launches_ranks() {
        return None;
    }
    ranks_launcher(exp)
}

fn ranks_launcher(exp: &Experiment) -> Option<Vec<String>> {
    match &exp.cluster {
        Some(c) => Some(c.workload_mpirun()),
        None => mpirun_prefix(exp.workload.ranks),
    }
}

/// The launcher a workload that starts its own ranks (a program: see
/// [`fslab_workload::Workload::launches_ranks`]) puts in front of its
/// program, for a cell whose filesystem is at `mnt`: the same mpirun, with
/// the program's directory its working directory on every host.
pub fn program_launcher(exp: &Experiment, mnt: &Path) -> Option<Vec<String>> {
    if !exp.workload.kind.launches_ranks() {
        return None;
    }
    let mut l = ranks_launcher(exp)?;
    if let Some(d) = workload_dirs(exp, mnt).first() {
        l.extend(match &exp.cluster {
            Some(c) => c.working_dir(d),
            None => vec!["-wdir".to_string(), d.display().to_string()],
        });
    }
    Some(l)
}

/// The dry run's first lines: the runs, their order, the warm-up, the
/// until-resolved rule and the time limit.
fn describe_schedule(exp: &Experiment, scale: f64, s: &mut String) {
    let warm_ups = if exp.warm_up { exp.cells.len() } else { 0 };
    let _ = writeln!(
        s,
        "experiment {}: {} cell(s) x {} repetition(s) = {} runs{}, order {}, scale {scale}",
        exp.name,
        exp.cells.len(),
        exp.repetitions,
        schedule(exp).len() - warm_ups,
        if warm_ups > 0 {
            format!(" + {warm_ups} warm-up run(s)")
        } else {
            String::new()
        },
        format!("{:?}", exp.order).to_lowercase()
    );
    if exp.warm_up {
        let _ = writeln!(
            s,
            "  first a warm-up: every cell once, recorded as repetition 0 and left out of every \
             comparison, finding and calibration"
        );
    }
    if let Some(max) = exp.until_resolved {
        let _ = writeln!(
            s,
            "  then, until resolved: one more repetition of cell 0 and of every cell with an \
             unresolved headline comparison with it, up to {max} each"
        );
    }
    if let Some(t) = exp.time_limit {
        let _ = writeln!(
            s,
            "  time limit per cell: {} (past it the workload is stopped and the cell fails)",
            crate::duration::human_duration(t)
        );
    }
}

/// Human-readable expansion of the experiment: what `--dry-run` prints.
pub fn describe(exp: &Experiment, scale: f64) -> String {
    let mut s = String::new();
    describe_schedule(exp, scale, &mut s);
    if !exp.description.is_empty() {
        let _ = writeln!(s, "  {}", exp.description.trim());
    }
    describe_device(exp, &mut s);
    describe_cluster(exp, &mut s);
    let m = &exp.machine;
    let _ = writeln!(
        s,
        "machine: drop caches before each phase: {}; memory limit: {}",
        if m.drop_caches {
            "yes"
        } else if m.drop_caches_once {
            "once, before the run"
        } else {
            "no"
        },
        m.memory_limit
            .map(human_bytes)
            .unwrap_or_else(|| "none".into())
    );
    let dev = Path::new("/dev/loopN");
    let mnt = Path::new("MNT");
    for c in &exp.cells {
        let _ = writeln!(s, "cell {}: {}", c.index, c.label);
        describe_path(c, &mut s);
        if let Some(fs) = &c.fs {
            let device = match &exp.device {
                Device::Block { path } => path.as_path(),
                _ => dev,
            };
            let _ = writeln!(
                s,
                "    mkfs:     {}",
                mkfs_argv(fs, &c.mkfs_options, device).join(" ")
            );
            for cmd in &c.after_mkfs {
                let cmd: Vec<String> = cmd
                    .iter()
                    .map(|a| a.replace("{device}", &device.display().to_string()))
                    .collect();
                let _ = writeln!(s, "    then:     {}", cmd.join(" "));
            }
            let _ = writeln!(
                s,
                "    mount:    {}",
                mount_argv(device, mnt, fs.name(), &mount_options(c)).join(" ")
            );
        }
        let _ = writeln!(
            s,
            "    workload: {}fslab {}",
            launcher(exp).map(|p| p.join(" ") + " ").unwrap_or_default(),
            shown_command_line(exp, c, mnt).join(" ")
        );
        let changed: Vec<String> = scale_changes(exp, c, mnt)
            .into_iter()
            .map(|(opt, from, to)| format!("{opt} {from} -> {to}"))
            .collect();
        if !changed.is_empty() {
            let _ = writeln!(s, "    scaled:   {}", changed.join(", "));
        }
        if let Some(kinds) = probes_beside(exp) {
            let names: Vec<&str> = kinds.iter().map(|k| k.name()).collect();
            let _ = writeln!(
                s,
                "    probes:   {} (run by fslab run, beside the workload)",
                if names.is_empty() {
                    "none".to_string()
                } else {
                    names.join(",")
                }
            );
        }
        if !c.sysctl.is_empty() {
            let list: Vec<String> = c.sysctl.iter().map(|(k, v)| format!("{k}={v}")).collect();
            let _ = writeln!(s, "    sysctl:   {}", list.join(" "));
        }
    }
    let order: Vec<String> = schedule(exp)
        .iter()
        .map(|(c, r)| format!("{c}.{r}"))
        .collect();
    let _ = writeln!(s, "order (cell.repetition): {}", order.join(" "));
    if !exp.findings.is_empty() {
        let labels: Vec<String> = exp.cells.iter().map(|c| c.label.clone()).collect();
        let _ = writeln!(
            s,
            "findings (each judged by the rule of `fslab run --help`):"
        );
        for f in &exp.findings {
            let _ = writeln!(s, "  {}", f.listing(&labels));
        }
    }
    s
}

/// The dry run's line for a cell that runs in a directory that exists:
/// the filesystem found there.
fn describe_path(c: &Cell, s: &mut String) {
    let Some(p) = &c.path else { return };
    let t = fslab_model::TargetInfo::of(p);
    let _ = writeln!(
        s,
        "    directory: {} ({} {} on {}, options {}): each run in a fresh subdirectory \
         fslab makes and removes; nothing else there is touched",
        p.display(),
        t.fs_type,
        t.source,
        t.mount_point,
        t.mount_options
    );
}

/// The dry run's cluster lines: the hosts, and how each host's lab is made.
fn describe_cluster(exp: &Experiment, s: &mut String) {
    let Some(c) = &exp.cluster else { return };
    let _ = writeln!(
        s,
        "cluster: {} host(s) x {} rank(s) = {} ranks: {}{}",
        c.hosts.len(),
        c.ranks_per_host,
        c.ranks(),
        c.hosts.join(", "),
        match (&c.hostfile, &c.hosts_from) {
            (Some(f), _) => format!(" (from {})", f.display()),
            (None, Some(_)) => " (from the Slurm job's SLURM_JOB_NODELIST)".to_string(),
            _ => String::new(),
        }
    );
    let _ = writeln!(s, "  ranks started by: {}", c.workload_mpirun().join(" "));
    match &c.shared_dir {
        Some(d) => {
            let _ = writeln!(
                s,
                "  shared directory {}: checked to be seen by every host before the first cell; \
                 each run works in a fresh subdirectory fslab makes and removes",
                d.display()
            );
        }
        None => {
            let _ = writeln!(
                s,
                "  each host makes its own filesystem at the same mount path, before each run \
                 and undone after it: {} fslab host-lab up|down JSON",
                c.mpirun(1).join(" ")
            );
        }
    }
}

/// The dry run's device lines.
fn describe_device(exp: &Experiment, s: &mut String) {
    if Cell::all_in_paths(&exp.cells) {
        let _ = writeln!(
            s,
            "device: none: every target is a directory that exists (no mkfs, no mount)"
        );
        return;
    }
    match &exp.device {
        Device::Image {
            size,
            dir,
            direct_io,
            host,
            scheduler,
        } => {
            let _ = writeln!(
                s,
                "device: a fresh sparse image of {} in {} per run, on a loop device ({} IO, {})",
                human_bytes(*size),
                dir.display(),
                if *direct_io { "direct" } else { "buffered" },
                match scheduler {
                    Some(n) => format!("IO scheduler {n}, restored before detaching"),
                    None => "its IO scheduler as found".to_string(),
                }
            );
            let where_ = match host {
                ImageHost::None => None,
                ImageHost::Xfs => Some("always"),
                ImageHost::Auto => Some("if the image does not fit there"),
            };
            if let Some(w) = where_ {
                let _ = writeln!(
                    s,
                    "image host: the images go on an XFS that fslab makes on a sparse image of {} in {} ({w})",
                    human_bytes(HOST_IMAGE_SIZE),
                    dir.display()
                );
            }
            if let Some(p) = &exp.first_pass {
                let _ = writeln!(
                    s,
                    "first pass: the workload runs once on each run's image first ({}){}; the \
                     judged run's filesystem is then made again on that image, without discard",
                    match &p.scheduler {
                        Some(n) => format!("IO scheduler {n}"),
                        None => "the same IO scheduler".into(),
                    },
                    match p.region {
                        Some(r) => format!(
                            ", its image's extents then counted past the first {}",
                            human_bytes(r)
                        ),
                        None => String::new(),
                    }
                );
            }
        }
        Device::Block { path } => {
            let _ = writeln!(
                s,
                "device: block device {} (formatted for every run; needs --format-device)",
                path.display()
            );
        }
        Device::Directory { path } => {
            let _ = writeln!(
                s,
                "device: existing directory {} (no mkfs, no mount)",
                path.display()
            );
        }
    }
}

/// Filesystem types whose mkfs tool is missing, each with what to install.
pub fn missing_tools(exp: &Experiment) -> Vec<String> {
    let mut seen: Vec<FsType> = Vec::new();
    let mut out = Vec::new();
    for c in &exp.cells {
        if let Some(fs) = &c.fs {
            if seen.contains(fs) {
                continue;
            }
            seen.push(fs.clone());
            if let Err(e) = fslab_lab::mkfs::require_tool(fs) {
                let known = std::fs::read_to_string("/proc/filesystems").unwrap_or_default();
                let in_kernel = known.split_whitespace().any(|w| w == fs.name());
                out.push(
                    if in_kernel
                        || matches!(
                            fs,
                            FsType::Ext2
                                | FsType::Ext3
                                | FsType::Ext4
                                | FsType::Xfs
                                | FsType::Btrfs
                        )
                    {
                        e.to_string()
                    } else {
                        format!(
                            "unknown filesystem type {:?}: the kernel does not know it and {}",
                            fs.name(),
                            e
                        )
                    },
                );
            }
        }
    }
    out
}
