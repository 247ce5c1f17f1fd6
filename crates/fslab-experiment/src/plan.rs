//! From a validated experiment to what will run: scaling, the order of
//! (cell, repetition) pairs, each cell's commands, and the dry-run text.

use std::fmt::Write as _;
use std::path::Path;

use fslab_lab::human_bytes;
use fslab_lab::mkfs::{mkfs_argv, FsType};
use fslab_lab::mount::mount_argv;

use fslab_workload::Job;

use crate::spec::{Cell, Device, Experiment, ImageHost, Order};

/// The host image: a little under the 16 TiB - 4 KiB an ext4 file can be.
pub const HOST_IMAGE_SIZE: u64 = (16 << 40) - (1 << 20);

/// The (cell index, repetition) pairs in the order they run; repetitions count from 1.
pub fn schedule(exp: &Experiment) -> Vec<(u32, u32)> {
    let n = exp.cells.len() as u32;
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
    pairs
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
/// (`{dir1}`, ...) replaced by the workload directories under `mnt`.
pub fn substituted_args(exp: &Experiment, cell: &Cell, mnt: &Path) -> Vec<String> {
    let dirs = workload_dirs(exp, mnt);
    let subst = |a: &String| {
        let mut a = a.clone();
        for (i, d) in dirs.iter().enumerate().rev() {
            a = a.replace(&format!("{{dir{i}}}"), &d.display().to_string());
        }
        a.replace("{dir}", &dirs[0].display().to_string())
    };
    exp.workload
        .args
        .iter()
        .chain(&cell.workload_args)
        .map(subst)
        .collect()
}

/// The probes `fslab run` runs beside the workload, in its own process and
/// outside the cell's cgroup; None when the workload runs on several MPI
/// ranks, each of which then runs its own.
pub fn probes_beside(exp: &Experiment) -> Option<Vec<fslab_probe::Kind>> {
    if exp.workload.ranks > 1 || exp.cluster.is_some() {
        return None;
    }
    // The list was checked when the experiment was read.
    Some(
        fslab_probe::parse_list(exp.workload.probes.as_deref().unwrap_or("default"))
            .unwrap_or_default(),
    )
}

/// The experiment's and the cell's arguments as written (`{dir}`
/// substituted), with fslab's `-d DIR` for each workload directory when the
/// workload takes them.
fn written_args(exp: &Experiment, cell: &Cell, mnt: &Path) -> (Vec<String>, Vec<String>) {
    let dirs = if exp.workload.kind.takes_dirs() {
        workload_dirs(exp, mnt)
            .iter()
            .flat_map(|d| ["-d".to_string(), d.display().to_string()])
            .collect()
    } else {
        Vec::new()
    };
    (substituted_args(exp, cell, mnt), dirs)
}

/// The cell's job as `fslab run` starts it, for a cell whose filesystem is
/// at `mnt`: the experiment's and the cell's arguments (`{dir}` replaced)
/// parsed by the workload, its `-d` directories the cell's, what the
/// workload sets in a cell ([`fslab_workload::Workload::in_cell`]), the
/// probes (none when `fslab run` runs them beside it), scaled by the
/// experiment's `--scale`. Its validation needs the cell's directories:
/// [`crate::safety`] validates it against a stand-in when the experiment is
/// read, the workload again when it starts.
pub fn cell_job(exp: &Experiment, cell: &Cell, mnt: &Path) -> fslab_workload::Result<Job> {
    job_of(exp, cell, mnt, true, true)
}

/// The cell's job as the experiment file gives it: its arguments and
/// fslab's `-d` directories, scaled, without what `fslab run` sets itself
/// (which [`fslab_workload::args::check_job`] refuses in the file).
pub fn experiment_job(exp: &Experiment, cell: &Cell, mnt: &Path) -> fslab_workload::Result<Job> {
    job_of(exp, cell, mnt, true, false)
}

fn job_of(
    exp: &Experiment,
    cell: &Cell,
    mnt: &Path,
    scaled: bool,
    in_cell: bool,
) -> fslab_workload::Result<Job> {
    let (mut args, dirs) = written_args(exp, cell, mnt);
    args.extend(dirs);
    let mut job = exp.workload.kind.parse(&args)?;
    if in_cell {
        job.in_cell();
        match (probes_beside(exp), &exp.workload.probes) {
            // fslab run runs them, outside the workload's process and cgroup.
            (Some(_), _) => job.common_mut().probes = "none".into(),
            (None, Some(p)) => job.common_mut().probes = p.clone(),
            (None, None) => {}
        }
    }
    if scaled && (exp.workload.scale - 1.0).abs() > f64::EPSILON {
        job.scale(exp.workload.scale);
    }
    Ok(job)
}

/// What `--scale` changes in the cell's job, option by option:
/// `(option, from, to)`, as the dry run prints it.
pub fn scale_changes(exp: &Experiment, cell: &Cell, mnt: &Path) -> Vec<(String, String, String)> {
    match (
        job_of(exp, cell, mnt, false, true),
        cell_job(exp, cell, mnt),
    ) {
        (Ok(before), Ok(after)) => fslab_workload::command_line::changes(&before, &after),
        _ => Vec::new(),
    }
}

/// The workload's argv (after `fslab`) for a cell whose filesystem is at
/// `mnt`: the command line of [`cell_job`], recorded with the run and
/// printed by the tool. Unscaled, it is the arguments as written, with what
/// fslab sets appended (`-l /dev/null`, `--probes=none`) and its `-d DIR`s
/// last, with the values `--scale` changed written in their place. When
/// that line would not parse back to the job, the job written out from its
/// typed options ([`fslab_workload::command_line::render`]): the line
/// shows the values that run (a test checks every built-in experiment).
pub fn workload_argv(exp: &Experiment, cell: &Cell, mnt: &Path) -> Vec<String> {
    let kind = exp.workload.kind;
    let (args, dirs) = written_args(exp, cell, mnt);
    let name = std::iter::once(kind.name().to_string());
    let parsed = kind.parse(&[args.clone(), dirs.clone()].concat());
    let (Ok(parsed), Ok(before), Ok(job)) = (
        parsed,
        job_of(exp, cell, mnt, false, true),
        cell_job(exp, cell, mnt),
    ) else {
        // Refused when the experiment was read; shown as written.
        return name.chain(args).chain(dirs).collect();
    };
    let mut shown: Vec<String> = name.chain(args).collect();
    for (opt, _, to) in fslab_workload::command_line::changes(&parsed, &before) {
        if opt.starts_with("--") {
            shown.push(format!("{opt}={to}"));
        } else {
            shown.push(opt);
            shown.push(to);
        }
    }
    shown.extend(dirs);
    for (opt, from, to) in fslab_workload::command_line::changes(&before, &job) {
        rewrite(&mut shown, &opt, &from, &to);
    }
    let same = |a: &Job, b: &Job| a.to_json() == b.to_json();
    match kind.parse(&shown[1..]) {
        Ok(back) if same(&back, &job) => shown,
        _ => fslab_workload::command_line::render(&job),
    }
}

/// `argv` with option `opt`'s value `from` written as `to` where the line
/// has it (`-n 300`, `-n300`, `--files=300`; a positional's last `from`):
/// for display only, checked by parsing the result back (see
/// [`workload_argv`]).
fn rewrite(argv: &mut [String], opt: &str, from: &str, to: &str) {
    let n = argv.len();
    for i in (1..n).rev() {
        let a = argv[i].clone();
        if !opt.starts_with('-') {
            if a == from {
                argv[i] = to.to_string();
                return;
            }
            continue;
        }
        if a == opt && i + 1 < n && argv[i + 1] == from {
            argv[i + 1] = to.to_string();
            return;
        }
        let glued = if opt.starts_with("--") {
            format!("{opt}={from}")
        } else {
            format!("{opt}{from}")
        };
        if a == glued {
            argv[i] = glued[..glued.len() - from.len()].to_string() + to;
            return;
        }
    }
}

/// The cell's job as the workload child takes it (`fslab job JSON`):
/// `{"workload": NAME, "options": {...}, "argv": [...]}`, the job
/// serialized ([`Job::to_json`]) with the command line to record and print.
pub fn job_json(job: &Job, argv: &[String]) -> serde_json::Value {
    let mut v = job.to_json();
    v["argv"] = serde_json::json!(argv);
    v
}

/// Whether the workload child is started as `fslab job JSON` (its typed
/// job, see [`job_command`]) instead of with its command line to parse
/// again: on once the binary has the `job` command.
pub const CHILD_TAKES_JOB: bool = true;

/// The workload child's arguments (after `fslab --db DB`) for `argv` (the
/// workload's name and every option, fslab's own included): `argv`, or
/// `["job", JSON]` with [`CHILD_TAKES_JOB`]. Options that do not parse
/// (refused when the experiment was read) stay a command line, which the
/// child refuses in one line.
pub fn child_args(argv: Vec<String>) -> Vec<String> {
    if !CHILD_TAKES_JOB {
        return argv;
    }
    job_command(&argv).unwrap_or(argv)
}

/// `argv` (a workload's name and options, as [`workload_argv`] and the
/// executor's own options make it) as the workload child's `job` command:
/// `["job", JSON]`, the options parsed and typed here, never again there.
pub fn job_command(argv: &[String]) -> fslab_workload::Result<Vec<String>> {
    let kind: fslab_workload::Kind = argv
        .first()
        .map(String::as_str)
        .unwrap_or_default()
        .parse()
        .map_err(fslab_workload::Error::Options)?;
    let job = kind.parse(&argv[1..])?;
    Ok(vec!["job".into(), job_json(&job, argv).to_string()])
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
/// cluster's hosts, or on this machine for `ranks` > 1 (None: one process).
pub fn launcher(exp: &Experiment) -> Option<Vec<String>> {
    match &exp.cluster {
        Some(c) => Some(c.workload_mpirun()),
        None => mpirun_prefix(exp.workload.ranks),
    }
}

/// Human-readable expansion of the experiment: what `--dry-run` prints.
pub fn describe(exp: &Experiment, scale: f64) -> String {
    let mut s = String::new();
    let pairs = schedule(exp);
    let _ = writeln!(
        s,
        "experiment {}: {} cell(s) x {} repetition(s) = {} runs, order {}, scale {scale}",
        exp.name,
        exp.cells.len(),
        exp.repetitions,
        pairs.len(),
        format!("{:?}", exp.order).to_lowercase()
    );
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
            workload_argv(exp, c, mnt).join(" ")
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
    let order: Vec<String> = pairs.iter().map(|(c, r)| format!("{c}.{r}")).collect();
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
        c.hostfile
            .as_ref()
            .map(|f| format!(" (from {})", f.display()))
            .unwrap_or_default()
    );
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
