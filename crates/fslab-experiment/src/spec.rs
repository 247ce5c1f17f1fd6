//! The experiment file (TOML), as written, and its validation into an
//! [`Experiment`]. Errors name the file, the line and the field.
//!
//! ```toml
//! name = "seed001"
//! repetitions = 3
//! until_resolved = 10           # optional: more repetitions, up to 10, while a headline comparison is unresolved
//! warm_up = true                 # optional: one round of every cell first, recorded as a warm-up, compared never
//! time_limit = "20m"             # optional: a cell's workload is stopped past it (s, m, h), the cell fails
//! order = "interleaved"          # interleaved (default) | sequential | shuffled
//!
//! [device]
//! kind = "image"                 # image (default) | block | directory
//! size = "100G"
//! image_dir = "/var/tmp"         # where the sparse image goes
//! direct_io = false              # loop device O_DIRECT to the image
//! image_host = "none"            # none | auto | xfs: the image on a host XFS that fslab makes
//! scheduler = "mq-deadline"      # the loop device's IO scheduler (default: as found, none)
//!                                # (auto: only when image_dir cannot hold a file this large)
//!
//! [first_pass]                   # optional: the workload runs once on each cell's image first;
//! scheduler = "none"             # the judged run's filesystem is made again on it (nodiscard)
//! region = "100G"                # extents past it counted after the first pass (scaled)
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
//!
//! [[wait_class]]                 # a wait-stack pattern, tried before the built-in ones
//! class = "journal"              # memory reclaim | journal | directory-block read |
//!                                # page writeback | lock | device queue
//! stack = ["jbd2_journal_get_write_access", "do_get_write_access"]  # caller first;
//!                                # the last is the innermost frame ("*": any)
//! ```

use std::collections::BTreeMap;
use std::path::PathBuf;

use fslab_lab::mkfs::FsType;
use serde::Deserialize;
use toml::Spanned;

// The parts of the file format, one file each beside this one.
/// The author's numbers a finding encodes, and the numbers CLAIMS.md quotes.
#[path = "spec_author.rs"]
pub mod author;
/// `[[target]]` and `[[variant]]`: the matrix of cells.
#[path = "spec_cells.rs"]
mod cells;
/// `[cluster]`.
#[path = "spec_cluster.rs"]
pub mod cluster;
/// `[device]`.
#[path = "spec_device.rs"]
mod device;
/// `[[finding]]` sections.
#[path = "spec_finding.rs"]
pub mod finding;
/// `[guest]` and a target's `kernel`.
#[path = "spec_guest.rs"]
pub mod guest;
/// `[machine]` and the sysctls.
#[path = "spec_machine.rs"]
mod machine;

use cells::{directory_cells, target_cells, variants, TargetSpec, VariantSpec};
pub use cluster::Cluster;
use cluster::ClusterSpec;
use device::{device, DeviceSpec};
pub use device::{Device, FirstPass, ImageHost};
use machine::{machine, MachineSpec};
pub use machine::{sysctl_name_error, Machine};

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
    warm_up: Option<bool>,
    time_limit: Option<Spanned<String>>,
    order: Option<Spanned<String>>,
    seed: Option<u64>,
    #[serde(default)]
    device: DeviceSpec,
    #[serde(default)]
    machine: MachineSpec,
    workload: WorkloadSpec,
    #[serde(default)]
    cluster: ClusterSpec,
    first_pass: Option<Spanned<device::FirstPassSpec>>,
    #[serde(default)]
    guest: guest::GuestSpec,
    #[serde(default, rename = "target")]
    targets: Vec<TargetSpec>,
    #[serde(default, rename = "variant")]
    variants: Vec<VariantSpec>,
    #[serde(default, rename = "finding")]
    findings: Vec<finding::FindingSpec>,
    #[serde(default, rename = "wait_class")]
    wait_classes: Vec<Spanned<fslab_explain::WaitClassEntry>>,
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
    // The keys a workload may take beyond these (its `experiment_keys`):
    // a program's parser, the regex parser's metrics, the files it only
    // reads, the result file its parser reads.
    parser: Option<Spanned<String>>,
    metrics: Option<Spanned<Vec<String>>>,
    inputs: Option<Spanned<Vec<String>>>,
    parse_file: Option<Spanned<String>>,
}

pub use fslab_workload::WorkloadRef;

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

/// The workload every cell runs.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Workload {
    pub kind: WorkloadRef,
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
    /// The workload's own `[workload]` keys as its options (`parser =
    /// "fio"` is `["--parser", "fio"]`; see
    /// [`fslab_workload::Workload::experiment_keys`]), before its args.
    pub options: Vec<String>,
    /// The programs `fslab run --allow-command` names (not in the file):
    /// a program workload may run them where it would refuse them.
    pub allowed: Vec<String>,
}

/// One cell of the matrix.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
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
    /// The kernel the cell runs on in a guest (None: the running kernel,
    /// no guest).
    #[serde(default)]
    pub kernel: Option<guest::GuestKernel>,
    /// An existing directory the cell runs in (`[[target]] path`): each
    /// repetition in a fresh subdirectory fslab makes there and removes
    /// after; no mkfs, no mount (None: a filesystem fslab makes).
    #[serde(default)]
    pub path: Option<PathBuf>,
}

impl Cell {
    /// Whether every cell runs in an existing directory of its own
    /// (`[[target]] path`), so the experiment's device is never used.
    pub fn all_in_paths(cells: &[Cell]) -> bool {
        !cells.is_empty() && cells.iter().all(|c| c.path.is_some())
    }

    /// Whether the cell runs in a guest on another kernel.
    pub fn in_guest(&self) -> bool {
        self.kernel.is_some()
    }
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
    /// One round of every cell before the first repetition (`warm_up =
    /// true`, `fslab run --warm-up`): run and recorded as repetition 0, a
    /// warm-up, left out of every comparison, finding and calibration. On
    /// this machine the first round of an A/A run was the slowest
    /// (docs/noise.md).
    pub warm_up: bool,
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
    pub findings: Vec<finding::Finding>,
    /// The hosts the workload runs on (`[cluster]`); None: this machine.
    pub cluster: Option<Cluster>,
    /// A first pass of the workload over each cell's image before the
    /// judged run (`[first_pass]`).
    pub first_pass: Option<FirstPass>,
    /// `[[wait_class]]`: wait-stack patterns tried before the built-in
    /// ones when the limiters are named (`fslab_explain::waits`).
    pub wait_classes: Vec<fslab_explain::WaitClassEntry>,
}

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

/// The dotted key of the first string under `v` holding a NUL.
fn nul_key(v: &toml::Value, key: &str) -> Option<String> {
    match v {
        toml::Value::String(s) if s.contains('\0') => Some(key.to_string()),
        toml::Value::Array(a) => a
            .iter()
            .enumerate()
            .find_map(|(i, x)| nul_key(x, &format!("{key}[{i}]"))),
        toml::Value::Table(t) => t.iter().find_map(|(k, x)| {
            let k = if key.is_empty() {
                k.clone()
            } else {
                format!("{key}.{k}")
            };
            nul_key(x, &k)
        }),
        _ => None,
    }
}

/// No option, path or argument can carry a NUL to the kernel: a string
/// holding one is refused, by its dotted key.
fn refuse_nul(ctx: &Ctx) -> Result<(), SpecError> {
    let text = ctx.text;
    if let Some(key) = toml::from_str::<toml::Value>(text)
        .ok()
        .and_then(|v| nul_key(&v, ""))
    {
        let at = ["\\u0000", "\\U00000000"]
            .iter()
            .filter_map(|e| text.find(e))
            .min()
            .unwrap_or(0);
        return ctx.err(
            at..at,
            &key,
            "holds a NUL character (\\u0000): no option, path or argument can carry one",
        );
    }
    Ok(())
}

/// How the runs are scheduled: repetitions, until_resolved, time_limit, order.
fn schedule(
    ctx: &Ctx,
    spec: &FileSpec,
) -> Result<(u32, Option<u32>, Option<std::time::Duration>, Order), SpecError> {
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
        Some(t) => match crate::duration::parse_duration(t.get_ref()) {
            Ok(d) => Some(d),
            Err(e) => return ctx.err(t.span(), "time_limit", e.to_string()),
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
    Ok((repetitions, until_resolved, time_limit, order))
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
    refuse_nul(&ctx)?;
    let name = spec.name.get_ref().trim().to_string();
    if name.is_empty() {
        return ctx.err(spec.name.span(), "name", "must not be empty");
    }
    let (repetitions, until_resolved, time_limit, order) = schedule(&ctx, &spec)?;

    let base = std::path::Path::new(file)
        .parent()
        .unwrap_or(std::path::Path::new(""));
    let cluster = cluster::cluster(&ctx, &spec.cluster, base)?;
    let device = match cluster.as_ref().and_then(|c| c.shared_dir.clone()) {
        Some(path) if spec.device.is_empty() => Device::Directory { path },
        Some(_) => {
            return ctx.err(
                0..0,
                "cluster.shared_dir",
                "with a shared directory no filesystem is made: leave [device] out",
            )
        }
        None => device(&ctx, &spec.device, defaults)?,
    };
    let machine = machine(&ctx, &spec.machine)?;
    let workload = workload(&ctx, &spec.workload)?;
    if let Some(c) = &cluster {
        cluster::fits(&ctx, c, &spec.workload.ranks, &device, &machine)?;
        cluster::fits_workload(&ctx, c, workload.kind)?;
    }
    let variants = variants(&ctx, &spec.variants)?;
    let cells = match device {
        Device::Directory { .. } => directory_cells(&ctx, &spec, &machine, &variants)?,
        _ => target_cells(&ctx, &spec, &machine, &variants)?,
    };
    if let Some(c) = &cluster {
        cluster::fits_cells(&ctx, c, &cells)?;
    }
    if let Some(c) = cells.iter().find(|c| c.path.is_some()) {
        let other = [
            ("cluster", cluster.is_some()),
            ("first_pass", spec.first_pass.is_some()),
        ];
        if let Some((what, _)) = other.iter().find(|(_, set)| *set) {
            return ctx.err(
                0..0,
                what,
                format!(
                    "target {:?} is a directory that exists on this machine: it runs there, \
                     without [{what}]",
                    c.label
                ),
            );
        }
    }
    guest::fits(&ctx, &cells, &device, &workload, cluster.is_some())?;
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
    let first_pass = device::first_pass_of(
        &ctx,
        spec.first_pass.as_ref(),
        &device,
        &cells,
        cluster.is_some(),
    )?;
    let wait_classes = wait_classes(&ctx, &spec.wait_classes)?;
    Ok(Experiment {
        cluster,
        first_pass,
        wait_classes,
        findings,
        name,
        description: spec.description,
        repetitions,
        until_resolved,
        warm_up: spec.warm_up.unwrap_or(false),
        time_limit,
        order,
        seed: spec.seed.unwrap_or(1),
        device,
        machine,
        workload,
        cells,
    })
}

/// `[[wait_class]]`: each entry checked against the classes, the first
/// bad one refused at its line.
fn wait_classes(
    ctx: &Ctx,
    entries: &[Spanned<fslab_explain::WaitClassEntry>],
) -> Result<Vec<fslab_explain::WaitClassEntry>, SpecError> {
    let plain: Vec<fslab_explain::WaitClassEntry> =
        entries.iter().map(|w| w.get_ref().clone()).collect();
    if let Err(e) = fslab_explain::WaitTable::with(&plain) {
        let at = match &e {
            fslab_explain::WaitClassError::UnknownClass { index, .. }
            | fslab_explain::WaitClassError::Empty { index, .. }
            | fslab_explain::WaitClassError::BadName { index, .. } => *index,
        };
        return ctx.err(entries[at - 1].span(), "wait_class", e.to_string());
    }
    Ok(plain)
}

/// `[workload]`.
fn workload(ctx: &Ctx, w: &WorkloadSpec) -> Result<Workload, SpecError> {
    let wk = match w.kind.get_ref().parse::<WorkloadRef>() {
        Ok(k) => k,
        Err(e) => return ctx.err(w.kind.span(), "workload.kind", e.to_string()),
    };
    let options = workload_keys(ctx, w, wk)?;
    let in_prefix = wk.experiment_prefix().iter().any(|a| a.contains("{dir"));
    if !wk.takes_dirs() && !in_prefix && !w.args.iter().any(|a| a.contains("{dir")) {
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
                return ctx.err(p.span(), "workload.probes", e.what());
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
        options,
        allowed: Vec::new(),
    })
}

/// The `[workload]` keys beyond kind, args, dirs, ranks and probes, as the
/// options they stand for; a key the workload does not take is refused.
fn workload_keys(ctx: &Ctx, w: &WorkloadSpec, kind: WorkloadRef) -> Result<Vec<String>, SpecError> {
    let one =
        |v: &Option<Spanned<String>>| v.as_ref().map(|s| (s.span(), vec![s.get_ref().clone()]));
    let many =
        |v: &Option<Spanned<Vec<String>>>| v.as_ref().map(|s| (s.span(), s.get_ref().clone()));
    let given = [
        ("parser", one(&w.parser)),
        ("metrics", many(&w.metrics)),
        ("inputs", many(&w.inputs)),
        ("parse_file", one(&w.parse_file)),
    ];
    let mut options = Vec::new();
    for (key, value) in given {
        let Some((span, values)) = value else {
            continue;
        };
        let Some((_, option)) = kind.experiment_keys().iter().find(|(k, _)| *k == key) else {
            return ctx.err(
                span,
                &format!("workload.{key}"),
                format!("{kind} takes no {key} (only kind = \"command\", a program, does)"),
            );
        };
        for v in values {
            options.push(option.to_string());
            options.push(v);
        }
    }
    Ok(options)
}
