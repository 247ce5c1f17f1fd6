//! From a validated experiment to what will run: scaling, the order of
//! (cell, repetition) pairs, each cell's commands, and the dry-run text.

use std::fmt::Write as _;
use std::path::Path;

use fslab_lab::human_bytes;
use fslab_lab::mkfs::{mkfs_argv, FsType};
use fslab_lab::mount::mount_argv;

use crate::spec::{Cell, Device, Experiment, ImageHost, Order, WorkloadKind};

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

/// `v` times `f`, at least `min`; a 0 (none, as in `-r 0` or `--warmup 0`) stays 0.
fn scale_count(v: &str, f: f64, min: u64) -> Option<String> {
    let n: u64 = v.parse().ok()?;
    if n == 0 {
        return Some("0".into());
    }
    Some(((n as f64 * f).round() as u64).max(min).to_string())
}

/// Scales fsmark's counts: files per loop (`-n`) and subdirectories (`-D`).
/// Loops, threads, file sizes and sync methods stay as written.
pub fn scale_fsmark_args(args: &[String], f: f64) -> Vec<String> {
    let mut out = Vec::with_capacity(args.len());
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        let min = if a.starts_with("-D") { 2 } else { 1 };
        if (a == "-n" || a == "-D") && i + 1 < args.len() {
            out.push(a.clone());
            out.push(scale_count(&args[i + 1], f, min).unwrap_or_else(|| args[i + 1].clone()));
            i += 2;
            continue;
        }
        if (a.starts_with("-n") || a.starts_with("-D")) && a.len() > 2 {
            if let Some(v) = scale_count(&a[2..], f, min) {
                out.push(format!("{}{v}", &a[..2]));
                i += 1;
                continue;
            }
        }
        out.push(a.clone());
        i += 1;
    }
    out
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
/// the smallest all filesystems accept) and the workload's counts; the
/// memory limit too with `memory_limit_scales` (at least 256 MiB).
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
    }
    let kind = e.workload.kind;
    e.workload.args = scale_args(kind, &e.workload.args, f);
    for c in &mut e.cells {
        c.workload_args = scale_args(kind, &c.workload_args, f);
    }
    e
}

/// Scales a workload's counts and sizes: fsmark `-n` and `-D`; tiotest `-f`
/// (not `-r`: the random phases keep their length, so their CPU and
/// latency figures stay measurable, as seed 003 needs); createmany's COUNT;
/// alloctest's LEN (at least 1 MiB); dbench's `-t` and `--warmup` (at
/// least 1 s); compilebench's `-i` and `-r`.
pub fn scale_args(kind: WorkloadKind, args: &[String], f: f64) -> Vec<String> {
    match kind {
        WorkloadKind::FsMark => scale_fsmark_args(args, f),
        WorkloadKind::TioTest => scale_flags(args, &["-f"], f),
        WorkloadKind::Dbench => scale_flags(args, &["-t", "--warmup"], f),
        WorkloadKind::CompileBench => scale_flags(args, &["-i", "-r"], f),
        WorkloadKind::CreateMany => {
            let mut v = args.to_vec();
            let takes_value = ["-l", "-r", "-x", "-S", "-W", "-U", "-G", "-t", "--threads"];
            if let Some(last) = v.len().checked_sub(1) {
                let after_flag = last > 0 && takes_value.contains(&v[last - 1].as_str());
                if !after_flag {
                    if let Some(n) = scale_count(&v[last], f, 1) {
                        v[last] = n;
                    }
                }
            }
            v
        }
        WorkloadKind::AllocTest => {
            let mut v = args.to_vec();
            if let Some(last) = v.last_mut() {
                if let Some(b) = fslab_lab::parse_bytes(last) {
                    let mib = 1u64 << 20;
                    *last = ((((b as f64 * f) as u64).div_ceil(mib)) * mib)
                        .max(mib)
                        .to_string();
                }
            }
            v
        }
    }
}

fn scale_flags(args: &[String], flags: &[&str], f: f64) -> Vec<String> {
    let mut out = args.to_vec();
    for i in 0..out.len().saturating_sub(1) {
        if flags.contains(&out[i].as_str()) {
            if let Some(n) = scale_count(&out[i + 1], f, 1) {
                out[i + 1] = n;
            }
        }
    }
    out
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
    if exp.workload.ranks > 1 {
        return None;
    }
    // The list was checked when the experiment was read.
    Some(
        fslab_probe::parse_list(exp.workload.probes.as_deref().unwrap_or("default"))
            .unwrap_or_default(),
    )
}

/// The workload's argv (after `fslab`) for a cell whose filesystem is at
/// `mnt`: `{dir}` (`{dir1}`, ...) in an argument becomes a workload
/// directory; fsmark and tiotest get `-d DIR` for each.
pub fn workload_argv(exp: &Experiment, cell: &Cell, mnt: &Path) -> Vec<String> {
    let mut v = vec![exp.workload.kind.name().to_string()];
    v.extend(substituted_args(exp, cell, mnt));
    if exp.workload.kind == WorkloadKind::FsMark && !v.iter().any(|a| a.starts_with("-l")) {
        // fs_mark's log file would go to the current directory; the text is stored instead.
        v.push("-l".into());
        v.push("/dev/null".into());
    }
    match (probes_beside(exp), &exp.workload.probes) {
        // fslab run runs them, outside the workload's process and cgroup.
        (Some(_), _) => v.push("--probes=none".into()),
        (None, Some(p)) => v.push(format!("--probes={p}")),
        (None, None) => {}
    }
    if exp.workload.kind.takes_dirs() {
        for d in workload_dirs(exp, mnt) {
            v.push("-d".into());
            v.push(d.display().to_string());
        }
    }
    v
}

/// The launcher in front of a workload on `ranks` MPI ranks on this
/// machine (None for one process): Open MPI's mpirun, allowed to run as
/// root and to start more ranks than there are cores.
pub fn mpirun_prefix(ranks: u32) -> Option<Vec<String>> {
    (ranks > 1).then(|| {
        ["mpirun", "--allow-run-as-root", "--oversubscribe", "-np"]
            .iter()
            .map(|s| s.to_string())
            .chain([ranks.to_string()])
            .collect()
    })
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
            mpirun_prefix(exp.workload.ranks)
                .map(|p| p.join(" ") + " ")
                .unwrap_or_default(),
            workload_argv(exp, c, mnt).join(" ")
        );
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
