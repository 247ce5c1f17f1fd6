//! The experiment file (TOML), as written, and its validation into an
//! [`Experiment`]. Errors name the file, the line and the field.
//!
//! ```toml
//! name = "seed001"
//! repetitions = 3
//! until_resolved = 10           # optional: more repetitions, up to 10, while a headline comparison is unresolved
//! time_limit = "20m"             # optional: a cell's workload is stopped past it (s, m, h), the cell fails
//! order = "interleaved"          # interleaved (default) | sequential | shuffled
//!
//! [device]
//! kind = "image"                 # image (default) | block | directory
//! size = "100G"
//! image_dir = "/var/tmp"         # where the sparse image goes
//! direct_io = false              # loop device O_DIRECT to the image
//! image_host = "none"            # none | auto | xfs: the image on a host XFS that fslab makes
//!                                # (auto: only when image_dir cannot hold a file this large)
//!
//! [machine]
//! sysctl = { "vm.dirty_ratio" = 20 }
//! drop_caches = true             # sync + drop caches before each phase
//!                                # ("once": before the run only, as seed 003's script)
//! memory_limit = "4G"            # memory cgroup around the workload
//! memory_limit_scales = false    # --scale scales the limit too (at least 256M)
//!
//! [workload]
//! kind = "fsmark"                # fsmark | createmany | tiotest | alloctest | dbench | compilebench
//! args = ["-S0", "-s", "0", "-n", "100000", "-t", "8"]
//! dirs = 8                       # -d MOUNT/0 ... -d MOUNT/7 (fsmark, tiotest);
//!                                # the others put {dir} in a path instead (-D {dir})
//! ranks = 4                      # MPI ranks on this machine (mpirun -np 4), default 1
//! probes = ["default", "-stacks"] # the instruments (fslab run --probes overrides)
//!
//! [[target]]
//! fs = "ext4"
//! mkfs_options = ["", "-O ^metadata_csum"]   # an axis: one cell each
//! mount_options = [""]                        # an axis
//!
//! [[variant]]                    # crossed with every target cell
//! name = "dirty5"
//! sysctl = { "vm.dirty_ratio" = 5 }
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use fslab_lab::mkfs::FsType;
use fslab_lab::parse_bytes;
use serde::Deserialize;
use toml::Spanned;

/// An error in an experiment file: `FILE:LINE: FIELD: MESSAGE`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}: {field}{sep}{message}", sep = if field.is_empty() { "" } else { ": " })]
pub struct SpecError {
    pub file: String,
    pub line: usize,
    pub field: String,
    pub message: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileSpec {
    name: Spanned<String>,
    #[serde(default)]
    description: String,
    repetitions: Option<Spanned<i64>>,
    until_resolved: Option<Spanned<i64>>,
    time_limit: Option<Spanned<String>>,
    order: Option<Spanned<String>>,
    seed: Option<u64>,
    #[serde(default)]
    device: DeviceSpec,
    #[serde(default)]
    machine: MachineSpec,
    workload: WorkloadSpec,
    #[serde(default, rename = "target")]
    targets: Vec<TargetSpec>,
    #[serde(default, rename = "variant")]
    variants: Vec<VariantSpec>,
    #[serde(default, rename = "finding")]
    findings: Vec<finding::FindingSpec>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct DeviceSpec {
    kind: Option<Spanned<String>>,
    size: Option<Spanned<String>>,
    image_dir: Option<String>,
    direct_io: Option<bool>,
    image_host: Option<Spanned<String>>,
    path: Option<Spanned<String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct MachineSpec {
    #[serde(default)]
    sysctl: BTreeMap<String, Spanned<toml::Value>>,
    drop_caches: Option<Spanned<toml::Value>>,
    memory_limit: Option<Spanned<String>>,
    #[serde(default)]
    memory_limit_scales: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct WorkloadSpec {
    kind: Spanned<String>,
    #[serde(default)]
    args: Vec<String>,
    dirs: Option<Spanned<i64>>,
    ranks: Option<Spanned<i64>>,
    /// The instruments (fslab_probe's names), default all but perf.
    probes: Option<Spanned<Vec<String>>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TargetSpec {
    fs: Spanned<String>,
    label: Option<String>,
    #[serde(default)]
    mkfs_options: Vec<String>,
    #[serde(default)]
    mount_options: Vec<String>,
    #[serde(default)]
    sysctl: BTreeMap<String, Spanned<toml::Value>>,
    #[serde(default)]
    workload_args: Vec<String>,
    #[serde(default)]
    after_mkfs: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct VariantSpec {
    name: Spanned<String>,
    #[serde(default)]
    sysctl: BTreeMap<String, Spanned<toml::Value>>,
    #[serde(default)]
    workload_args: Vec<String>,
    mkfs_options: Option<String>,
    mount_options: Option<String>,
    #[serde(default)]
    after_mkfs: Vec<String>,
}

pub use fslab_workload::Kind;

/// In what order the (cell, repetition) pairs run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Order {
    /// Repetition 1 of every cell, then repetition 2 of every cell, ...
    /// (spreads slow drift of the machine over all cells).
    Interleaved,
    /// All repetitions of cell 1, then of cell 2, ...
    Sequential,
    /// A random permutation of all pairs (fixed by `seed`).
    Shuffled,
}

/// What the filesystems are made on.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Device {
    /// A sparse image file created by fslab for each repetition.
    Image {
        size: u64,
        dir: PathBuf,
        direct_io: bool,
        /// Whether the images go on a host XFS that fslab makes in `dir`.
        host: ImageHost,
    },
    /// An existing block device, formatted only with `--format-device`.
    Block { path: PathBuf },
    /// An existing directory: no mkfs, no mount.
    Directory { path: PathBuf },
}

/// The first image-only field set in a device section, by name.
fn image_only(d: &DeviceSpec) -> Option<&'static str> {
    [
        ("size", d.size.is_some()),
        ("image_dir", d.image_dir.is_some()),
        ("direct_io", d.direct_io.is_some()),
        ("image_host", d.image_host.is_some()),
    ]
    .into_iter()
    .find_map(|(name, set)| set.then_some(name))
}

/// Where a cell's sparse image file is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ImageHost {
    /// In `image_dir` itself.
    #[default]
    None,
    /// On a host XFS only when `image_dir` cannot hold a file of the
    /// image's size (an ext4 host holds 16 TiB at most).
    Auto,
    /// Always on a host XFS: fslab makes it once per experiment on a
    /// sparse image in `image_dir`, behind its own loop device.
    Xfs,
}

/// Machine settings for every cell (cells may add sysctls).
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize)]
pub struct Machine {
    pub sysctl: BTreeMap<String, String>,
    pub drop_caches: bool,
    /// Drop the caches once, before each run, and not between its phases
    /// (`drop_caches = "once"`).
    pub drop_caches_once: bool,
    pub memory_limit: Option<u64>,
    /// `--scale` scales the memory limit too (at least 256 MiB), keeping
    /// the workload's memory footprint against its limit.
    pub memory_limit_scales: bool,
}

/// The workload every cell runs.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Workload {
    pub kind: Kind,
    pub args: Vec<String>,
    /// Number of top-level directories (`-d MOUNT/0`, ...).
    pub dirs: u32,
    /// MPI ranks the workload runs on (`mpirun -np RANKS` on this machine),
    /// each in its own `rankNNNN` directories; 1 runs it as one process.
    pub ranks: u32,
    /// The probes' list as `--probes` takes it (None: the default set).
    pub probes: Option<String>,
    /// `fslab run --scale`'s factor, which the cell's job applies to its
    /// typed options (see [`crate::plan::cell_job`]); 1 as written.
    pub scale: f64,
}

/// One cell of the matrix.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Cell {
    pub index: u32,
    pub label: String,
    /// None on a directory device.
    pub fs: Option<FsType>,
    pub mkfs_options: Vec<String>,
    /// The user's mount options for this cell.
    pub mount_options: String,
    pub sysctl: BTreeMap<String, String>,
    pub workload_args: Vec<String>,
    /// Commands run after mkfs (`{device}` is the device), e.g. `tune2fs -E hash_alg=tea {device}`.
    pub after_mkfs: Vec<Vec<String>>,
}

/// A validated experiment.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Experiment {
    pub name: String,
    pub description: String,
    pub repetitions: u32,
    /// Keep adding repetitions to cells whose headline comparisons are
    /// unresolved, up to this many per cell (`until_resolved = N`).
    pub until_resolved: Option<u32>,
    /// The longest a cell's workload may run (`time_limit = "20m"`): past
    /// it the workload is stopped and the cell fails with "time limit".
    pub time_limit: Option<std::time::Duration>,
    pub order: Order,
    pub seed: u64,
    pub device: Device,
    pub machine: Machine,
    pub workload: Workload,
    pub cells: Vec<Cell>,
    /// What the seed's author found, to check at the end of the run.
    pub findings: Vec<crate::findings::Finding>,
}

/// `[[finding]]` sections.
#[path = "spec_finding.rs"]
mod finding;

struct Ctx<'a> {
    file: &'a str,
    text: &'a str,
}

impl Ctx<'_> {
    fn line_of(&self, offset: usize) -> usize {
        self.text[..offset.min(self.text.len())]
            .bytes()
            .filter(|&b| b == b'\n')
            .count()
            + 1
    }

    fn err<T>(
        &self,
        span: std::ops::Range<usize>,
        field: &str,
        message: impl Into<String>,
    ) -> Result<T, SpecError> {
        Err(SpecError {
            file: self.file.to_string(),
            line: self.line_of(span.start),
            field: field.to_string(),
            message: message.into(),
        })
    }
}

fn value_text(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn sysctls(
    ctx: &Ctx,
    field: &str,
    m: &BTreeMap<String, Spanned<toml::Value>>,
) -> Result<BTreeMap<String, String>, SpecError> {
    let mut out = BTreeMap::new();
    for (k, v) in m {
        if let Some(e) = crate::safety::sysctl_name_error(k) {
            return ctx.err(v.span(), &format!("{field}.\"{k}\""), e);
        }
        if !matches!(
            v.get_ref(),
            toml::Value::String(_) | toml::Value::Integer(_)
        ) {
            return ctx.err(
                v.span(),
                &format!("{field}.\"{k}\""),
                "a sysctl value must be a number or a string",
            );
        }
        out.insert(k.clone(), value_text(v.get_ref()));
    }
    Ok(out)
}

/// Splits an option string into arguments at white space.
pub fn split_args(s: &str) -> Vec<String> {
    s.split_whitespace().map(String::from).collect()
}

/// What an experiment file leaves to the machine it runs on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Defaults {
    /// Where images go when the file names no `image_dir`.
    pub image_dir: PathBuf,
}

impl Default for Defaults {
    fn default() -> Defaults {
        Defaults {
            image_dir: PathBuf::from("/var/tmp"),
        }
    }
}

impl Defaults {
    /// `$FSLAB_IMAGE_DIR`, else /var/tmp.
    pub fn from_env() -> Defaults {
        match std::env::var_os("FSLAB_IMAGE_DIR").filter(|d| !d.is_empty()) {
            Some(d) => Defaults {
                image_dir: PathBuf::from(d),
            },
            None => Defaults::default(),
        }
    }
}

/// Parses and validates an experiment file's text; what it leaves open
/// comes from `defaults`.
pub fn parse(file: &str, text: &str, defaults: &Defaults) -> Result<Experiment, SpecError> {
    let ctx = Ctx { file, text };
    let spec: FileSpec = toml::from_str(text).map_err(|e| SpecError {
        file: file.to_string(),
        line: e.span().map(|s| ctx.line_of(s.start)).unwrap_or(1),
        field: String::new(),
        message: e.message().trim().replace('\n', " "),
    })?;
    let name = spec.name.get_ref().trim().to_string();
    if name.is_empty() {
        return ctx.err(spec.name.span(), "name", "must not be empty");
    }
    let repetitions = match &spec.repetitions {
        None => 1,
        Some(r) if *r.get_ref() < 1 || *r.get_ref() > 10_000 => {
            return ctx.err(
                r.span(),
                "repetitions",
                format!("{} is not from 1 to 10000", r.get_ref()),
            )
        }
        Some(r) => *r.get_ref() as u32,
    };
    let until_resolved = match &spec.until_resolved {
        None => None,
        Some(u) if *u.get_ref() < i64::from(repetitions) || *u.get_ref() > 10_000 => {
            return ctx.err(
                u.span(),
                "until_resolved",
                format!(
                    "{} is not from repetitions ({repetitions}) to 10000",
                    u.get_ref()
                ),
            )
        }
        Some(u) => Some(*u.get_ref() as u32),
    };
    let time_limit = match &spec.time_limit {
        None => None,
        Some(t) => match crate::deadline::parse_duration(t.get_ref()) {
            Ok(d) => Some(d),
            Err(e) => return ctx.err(t.span(), "time_limit", e),
        },
    };
    let order = match spec
        .order
        .as_ref()
        .map(|o| (o.get_ref().as_str(), o.span()))
    {
        None | Some(("interleaved", _)) => Order::Interleaved,
        Some(("sequential", _)) => Order::Sequential,
        Some(("shuffled", _)) => Order::Shuffled,
        Some((o, span)) => {
            return ctx.err(
                span,
                "order",
                format!("unknown order {o:?} (use interleaved, sequential or shuffled)"),
            )
        }
    };

    let device = device(&ctx, &spec.device, defaults)?;
    let machine = machine(&ctx, &spec.machine)?;
    let workload = workload(&ctx, &spec.workload)?;
    let variants = variants(&ctx, &spec.variants)?;
    let cells = match device {
        Device::Directory { .. } => directory_cells(&ctx, &spec, &machine, &variants)?,
        _ => target_cells(&ctx, &spec, &machine, &variants)?,
    };
    let mut seen = std::collections::BTreeSet::new();
    for c in &cells {
        if !seen.insert(c.label.clone()) {
            return ctx.err(
                0..0,
                "target",
                format!(
                    "two cells are both labelled {:?}: give the targets distinct labels",
                    c.label
                ),
            );
        }
    }
    let findings = finding::findings(&ctx, &spec.findings, &cells)?;
    Ok(Experiment {
        findings,
        name,
        description: spec.description,
        repetitions,
        until_resolved,
        time_limit,
        order,
        seed: spec.seed.unwrap_or(1),
        device,
        machine,
        workload,
        cells,
    })
}

struct Variant {
    name: String,
    sysctl: BTreeMap<String, String>,
    workload_args: Vec<String>,
    mkfs_options: Option<String>,
    mount_options: Option<String>,
    after_mkfs: Vec<String>,
}

/// `[device]`.
fn device(ctx: &Ctx, d: &DeviceSpec, defaults: &Defaults) -> Result<Device, SpecError> {
    let kind = d.kind.as_ref().map(|k| (k.get_ref().as_str(), k.span()));
    Ok(match kind {
        None | Some(("image", _)) => image_device(ctx, d, defaults)?,
        Some((other @ ("block" | "directory"), span)) if image_only(d).is_some() => {
            return ctx.err(
                span,
                &format!("device.{}", image_only(d).unwrap_or_default()),
                format!("applies to kind = \"image\" only, not to kind = \"{other}\""),
            )
        }
        Some(("block", span)) => match &d.path {
            Some(p) if p.get_ref().starts_with("/dev/") => Device::Block {
                path: PathBuf::from(p.get_ref()),
            },
            Some(p) => {
                return ctx.err(
                    p.span(),
                    "device.path",
                    format!("{:?} is not a device under /dev", p.get_ref()),
                )
            }
            None => {
                return ctx.err(
                    span,
                    "device.path",
                    "a block device needs path = \"/dev/...\"",
                )
            }
        },
        Some(("directory", span)) => match &d.path {
            Some(p) if Path::new(p.get_ref()).is_absolute() => Device::Directory {
                path: PathBuf::from(p.get_ref()),
            },
            Some(p) => {
                return ctx.err(
                    p.span(),
                    "device.path",
                    format!("{:?} is not an absolute path", p.get_ref()),
                )
            }
            None => {
                return ctx.err(
                    span,
                    "device.path",
                    "a directory device needs path = \"/...\"",
                )
            }
        },
        Some((k, span)) => {
            return ctx.err(
                span,
                "device.kind",
                format!("unknown device kind {k:?} (use image, block or directory)"),
            )
        }
    })
}

/// `[device]` of kind "image".
fn image_device(ctx: &Ctx, d: &DeviceSpec, defaults: &Defaults) -> Result<Device, SpecError> {
    let size = match &d.size {
        None => 1 << 30,
        Some(s) => match parse_bytes(s.get_ref()) {
            Some(b) if b >= 16 << 20 => b,
            Some(_) => {
                return ctx.err(
                    s.span(),
                    "device.size",
                    format!("{:?} is too small (at least 16M)", s.get_ref()),
                )
            }
            None => {
                return ctx.err(
                    s.span(),
                    "device.size",
                    format!("{:?} is not a size (like 100G or 100T)", s.get_ref()),
                )
            }
        },
    };
    let dir = d
        .image_dir
        .as_ref()
        .map(PathBuf::from)
        .unwrap_or_else(|| defaults.image_dir.clone());
    let host = match &d.image_host {
        None => ImageHost::None,
        Some(h) => match h.get_ref().as_str() {
            "none" => ImageHost::None,
            "auto" => ImageHost::Auto,
            "xfs" => ImageHost::Xfs,
            other => {
                return ctx.err(
                    h.span(),
                    "device.image_host",
                    format!("{other:?} is not one of none, auto, xfs"),
                )
            }
        },
    };
    Ok(Device::Image {
        size,
        dir,
        direct_io: d.direct_io.unwrap_or(false),
        host,
    })
}

/// `[machine]`.
fn machine(ctx: &Ctx, m: &MachineSpec) -> Result<Machine, SpecError> {
    let memory_limit = match &m.memory_limit {
        None => None,
        Some(l) => match parse_bytes(l.get_ref()) {
            Some(b) if b >= 16 << 20 => Some(b),
            _ => {
                return ctx.err(
                    l.span(),
                    "machine.memory_limit",
                    format!("{:?} is not a size of at least 16M", l.get_ref()),
                )
            }
        },
    };
    let (drop_caches, drop_caches_once) = match &m.drop_caches {
        None => (false, false),
        Some(v) => match v.get_ref() {
            toml::Value::Boolean(b) => (*b, false),
            toml::Value::String(s) if s == "once" => (false, true),
            other => {
                return ctx.err(
                    v.span(),
                    "machine.drop_caches",
                    format!("{other} is not true, false or \"once\""),
                )
            }
        },
    };
    Ok(Machine {
        sysctl: sysctls(ctx, "machine.sysctl", &m.sysctl)?,
        drop_caches,
        drop_caches_once,
        memory_limit,
        memory_limit_scales: m.memory_limit_scales,
    })
}

/// `[workload]`.
fn workload(ctx: &Ctx, w: &WorkloadSpec) -> Result<Workload, SpecError> {
    let wk = match w.kind.get_ref().parse::<Kind>() {
        Ok(k) => k,
        Err(e) => return ctx.err(w.kind.span(), "workload.kind", e),
    };
    if !wk.takes_dirs() && !w.args.iter().any(|a| a.contains("{dir")) {
        return ctx.err(
            w.kind.span(),
            "workload.args",
            format!("{wk} names its files itself: put {{dir}} (the new filesystem's directory) in its path, like \"{{dir}}/f\""),
        );
    }
    let dirs = match &w.dirs {
        None => 1,
        Some(d) if *d.get_ref() < 1 || *d.get_ref() > 256 => {
            return ctx.err(
                d.span(),
                "workload.dirs",
                format!("{} is not from 1 to 256", d.get_ref()),
            )
        }
        Some(d) => *d.get_ref() as u32,
    };
    let ranks = match &w.ranks {
        None => 1,
        Some(r) if *r.get_ref() < 1 || *r.get_ref() > 1024 => {
            return ctx.err(
                r.span(),
                "workload.ranks",
                format!("{} is not from 1 to 1024", r.get_ref()),
            )
        }
        Some(r) => *r.get_ref() as u32,
    };
    let probes = match &w.probes {
        None => None,
        Some(p) => {
            let list = p.get_ref().join(",");
            if let Err(e) = fslab_probe::parse_list(&list) {
                return ctx.err(
                    p.span(),
                    "workload.probes",
                    e.trim_start_matches("--probes: "),
                );
            }
            Some(list)
        }
    };
    Ok(Workload {
        kind: wk,
        args: w.args.clone(),
        dirs,
        ranks,
        probes,
        scale: 1.0,
    })
}

/// `[[variant]]`s (one unnamed variant when there are none).
fn variants(ctx: &Ctx, specs: &[VariantSpec]) -> Result<Vec<Variant>, SpecError> {
    let mut variants = Vec::new();
    for (i, var) in specs.iter().enumerate() {
        let n = var.name.get_ref().trim();
        if n.is_empty() {
            return ctx.err(
                var.name.span(),
                &format!("variant[{i}].name"),
                "must not be empty",
            );
        }
        variants.push(Variant {
            name: n.to_string(),
            sysctl: sysctls(ctx, &format!("variant[{i}].sysctl"), &var.sysctl)?,
            workload_args: var.workload_args.clone(),
            mkfs_options: var.mkfs_options.clone(),
            mount_options: var.mount_options.clone(),
            after_mkfs: var.after_mkfs.clone(),
        });
    }
    if variants.is_empty() {
        variants.push(Variant {
            name: String::new(),
            sysctl: BTreeMap::new(),
            workload_args: vec![],
            mkfs_options: None,
            mount_options: None,
            after_mkfs: vec![],
        });
    }
    Ok(variants)
}

/// The cells on a directory device: one per variant.
fn directory_cells(
    ctx: &Ctx,
    spec: &FileSpec,
    machine: &Machine,
    variants: &[Variant],
) -> Result<Vec<Cell>, SpecError> {
    let mut cells = Vec::new();
    if let Some(t) = spec.targets.first() {
        return ctx.err(
            t.fs.span(),
            "target",
            "a directory device makes no filesystem: remove the [[target]] tables",
        );
    }
    for v in variants {
        cells.push(Cell {
            index: cells.len() as u32,
            label: if v.name.is_empty() {
                "directory".into()
            } else {
                v.name.clone()
            },
            fs: None,
            mkfs_options: vec![],
            mount_options: String::new(),
            sysctl: machine
                .sysctl
                .iter()
                .chain(&v.sysctl)
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            workload_args: v.workload_args.clone(),
            after_mkfs: vec![],
        });
    }
    Ok(cells)
}

/// The cells of the targets: each target's mkfs options x mount options
/// x the variants.
fn target_cells(
    ctx: &Ctx,
    spec: &FileSpec,
    machine: &Machine,
    variants: &[Variant],
) -> Result<Vec<Cell>, SpecError> {
    let mut cells = Vec::new();
    if spec.targets.is_empty() {
        return ctx.err(
            0..0,
            "target",
            "no [[target]]: name at least one filesystem (fs = \"ext4\")",
        );
    }
    for (ti, t) in spec.targets.iter().enumerate() {
        let fsname = t.fs.get_ref().trim();
        if fsname.is_empty()
            || !fsname
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_')
        {
            return ctx.err(
                t.fs.span(),
                &format!("target[{ti}].fs"),
                format!("{fsname:?} is not a filesystem type"),
            );
        }
        let fs = FsType::parse(fsname);
        let tsys = sysctls(ctx, &format!("target[{ti}].sysctl"), &t.sysctl)?;
        let mkfs_axis = if t.mkfs_options.is_empty() {
            vec![String::new()]
        } else {
            t.mkfs_options.clone()
        };
        let mount_axis = if t.mount_options.is_empty() {
            vec![String::new()]
        } else {
            t.mount_options.clone()
        };
        for mk in &mkfs_axis {
            for mo in &mount_axis {
                for v in variants {
                    let mut mkfs_options = split_args(mk);
                    if let Some(x) = &v.mkfs_options {
                        mkfs_options.extend(split_args(x));
                    }
                    let mount_options: Vec<&str> =
                        [mo.as_str(), v.mount_options.as_deref().unwrap_or("")]
                            .into_iter()
                            .filter(|s| !s.trim().is_empty())
                            .collect();
                    let mount_options = mount_options.join(",");
                    let mut label = t.label.clone().unwrap_or_else(|| fs.name().to_string());
                    if (t.label.is_none() || mkfs_axis.len() > 1) && !mk.trim().is_empty() {
                        label.push(' ');
                        label.push_str(mk.trim());
                    }
                    if (t.label.is_none() || mount_axis.len() > 1) && !mo.trim().is_empty() {
                        label.push_str(" -o ");
                        label.push_str(mo.trim());
                    }
                    if !v.name.is_empty() {
                        label.push_str(" [");
                        label.push_str(&v.name);
                        label.push(']');
                    }
                    let mut sysctl = machine.sysctl.clone();
                    sysctl.extend(tsys.clone());
                    sysctl.extend(v.sysctl.clone());
                    let mut workload_args = t.workload_args.clone();
                    workload_args.extend(v.workload_args.iter().cloned());
                    cells.push(Cell {
                        index: cells.len() as u32,
                        label,
                        fs: Some(fs.clone()),
                        mkfs_options,
                        mount_options,
                        sysctl,
                        workload_args,
                        after_mkfs: t
                            .after_mkfs
                            .iter()
                            .chain(&v.after_mkfs)
                            .map(|c| split_args(c))
                            .collect(),
                    });
                }
            }
        }
    }
    Ok(cells)
}
