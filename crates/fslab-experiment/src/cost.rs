//! What a run will cost before it runs: its time, its disk and its memory,
//! which `fslab run --dry-run` prints and `fslab run` checks against this
//! machine ([`Estimate::over`]): past an hour, the image directory's free
//! space or the machine's memory it asks for `--yes` or a `--scale`.
//!
//! - Time: from stored runs of the same cell (the same experiment name and
//!   cell label) where there are some, scaled from their scale to this
//!   one; else from the workload's own amount of work
//!   ([`fslab_workload::Workload::work`]) at
//!   [`fslab_workload::work::ASSUMED_OPS_PER_S`], plus [`SETUP_S`] a run;
//!   at most the cell's time limit (and the setup) a run.
//! - Disk: a sparse image's apparent size costs nothing until written; what
//!   is checked against the free space is what the images will really
//!   take: the stored runs' largest allocation, else the workload's data
//!   and [`ENTRY_BYTES`] an entry, plus what mkfs writes
//!   ([`mkfs_writes`]). One image exists at a time (all of them with
//!   `--keep-images`).
//! - Memory: the cell's memory cgroup limit, or a guest's memory, against
//!   the machine's.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use fslab_model::units::human_bytes;
use fslab_workload::work::{Work, ASSUMED_OPS_PER_S};

use crate::duration::human_duration;
use crate::spec::{Cell, Device, Experiment};

/// Seconds a run is assumed to spend outside its workload (mkfs, mount,
/// the unmount and remount timed after it, dropping caches).
pub const SETUP_S: f64 = 5.0;

/// Bytes an entry (a file or directory) is assumed to take on the disk
/// beside its data: an inode, its name in a directory block, a share of
/// the journal's writes.
pub const ENTRY_BYTES: u64 = 1024;

/// The longest run `fslab run` starts without `--yes`.
pub const TIME_THRESHOLD: Duration = Duration::from_secs(3600);

/// What the machine has, against which a run's cost is checked.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Machine {
    /// Free space where the images (or the directories' files) go, with
    /// that place (None: it could not be asked).
    pub free: Option<(PathBuf, u64)>,
    /// MemTotal.
    pub memory: Option<u64>,
}

impl Machine {
    /// This machine, for `exp`: the free space of its image directory (or
    /// directory device) as an unprivileged user may use it, and its memory.
    pub fn of(exp: &Experiment) -> Machine {
        let place = match &exp.device {
            _ if Cell::all_in_paths(&exp.cells) => None,
            Device::Image { dir, .. } => Some(dir.clone()),
            Device::Directory { path } => Some(path.clone()),
            Device::Block { .. } => None,
        };
        Machine {
            free: place.and_then(|p| free_bytes(&p).map(|f| (p, f))),
            memory: crate::runner::preflight::mem_total(),
        }
    }
}

/// The bytes free to use at `dir` (statvfs: available blocks x fragment size).
pub fn free_bytes(dir: &Path) -> Option<u64> {
    let s = rustix::fs::statvfs(dir).ok()?;
    s.f_bavail.checked_mul(s.f_frsize)
}

/// What stored runs of one cell took, per run.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredCell {
    /// The scale they ran at.
    pub scale: f64,
    /// How many complete runs.
    pub runs: usize,
    /// Their mean time, setup and workload (seconds).
    pub seconds: f64,
    /// The most their images took on the host (bytes; 0: not recorded).
    pub allocated: u64,
}

/// Stored runs by cell label, for one experiment name.
pub type Stored = BTreeMap<String, StoredCell>;

/// The stored runs of experiment `name`'s cells, from the experiments of
/// that name in `store`: for each cell label, the complete runs at the
/// scale nearest `scale` (the most recent experiment among equals).
pub fn stored(store: &fslab_store::Store, name: &str, scale: f64) -> Stored {
    let mut out: Stored = BTreeMap::new();
    let Ok(rows) = store.list_experiments() else {
        return out;
    };
    let distance = |s: f64| (s / scale).ln().abs();
    for row in rows
        .iter()
        .rev()
        .filter(|r| r.name == name && r.scale > 0.0)
    {
        let Ok(e) = store.experiment(row.id) else {
            continue;
        };
        for cell in &e.cells {
            if out
                .get(&cell.label)
                .is_some_and(|s| distance(s.scale) <= distance(e.scale))
            {
                continue;
            }
            let mut times = Vec::new();
            let mut allocated = 0;
            for r in e.cell_runs.iter().filter(|r| {
                r.cell == cell.index && r.status == Some(fslab_model::RunStatus::Complete)
            }) {
                let Some(phases) = r.run_id.and_then(|id| store.phases(id).ok()) else {
                    continue;
                };
                let workload: f64 = phases.iter().map(|p| p.elapsed_s).sum();
                times.push(
                    workload + r.mkfs_s + r.unmount_s.unwrap_or(0.0) + r.remount_s.unwrap_or(0.0),
                );
                allocated = allocated.max(r.image_allocated);
            }
            if !times.is_empty() {
                out.insert(
                    cell.label.clone(),
                    StoredCell {
                        scale: e.scale,
                        runs: times.len(),
                        seconds: times.iter().sum::<f64>() / times.len() as f64,
                        allocated,
                    },
                );
            }
        }
    }
    out
}

/// Where a cell's time estimate comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum TimeFrom {
    /// Stored runs of the same cell.
    Stored(StoredCell),
    /// The workload's amount of work (all its ranks').
    Work(Work),
    /// Nothing says (a program's work is its own).
    Unknown,
}

/// One cell's cost, per run.
#[derive(Debug, Clone, PartialEq)]
pub struct CellCost {
    pub index: u32,
    pub label: String,
    /// Seconds a run takes (None: not known).
    pub seconds: Option<f64>,
    pub time_from: TimeFrom,
    /// The image's apparent size (None: no image).
    pub apparent: Option<u64>,
    /// What a run will really take on the disk.
    pub disk: u64,
    /// Its memory cgroup's limit, or its guest's memory.
    pub memory: Option<u64>,
    /// A directory that exists (`[[target]] path`) and its free space.
    pub free: Option<(PathBuf, u64)>,
}

/// A whole run's cost.
#[derive(Debug, Clone, PartialEq)]
pub struct Estimate {
    pub cells: Vec<CellCost>,
    pub repetitions: u32,
    /// Every run's time added up (None: some cell's time is not known).
    pub seconds: Option<f64>,
    /// The most the disk holds at once.
    pub disk_at_once: u64,
    /// The most memory any one run is given.
    pub memory: Option<u64>,
    pub machine: Machine,
}

/// What mkfs writes on an image of `apparent` bytes whatever the workload
/// does: ext2/ext3's inode tables (and ext4's without metadata_csum and
/// uninit_bg), 256 bytes per 16 KiB, all written at mkfs (18 GB on a
/// 1 TiB ext3 image here); for the others an allowance of 1/256 of the
/// image (journal or log, allocation groups), at most 2 GiB.
pub fn mkfs_writes(cell: &Cell, apparent: u64) -> u64 {
    let Some(fs) = &cell.fs else { return 0 };
    let opts = cell.mkfs_options.join(" ");
    let zeroed = match fs.name() {
        "ext2" | "ext3" => true,
        "ext4" => opts.contains("^metadata_csum") && !opts.contains("uninit_bg"),
        _ => false,
    };
    if zeroed {
        apparent / 64
    } else {
        (apparent / 256).min(2 << 30)
    }
}

/// The cost of running `exp` (already scaled to `scale`) on `machine`,
/// with `stored` runs of its cells; `keep_images`: every image stays.
pub fn estimate(
    exp: &Experiment,
    scale: f64,
    stored: &Stored,
    machine: &Machine,
    keep_images: bool,
) -> Estimate {
    let apparent = match &exp.device {
        Device::Image { size, .. } => Some(*size),
        _ => None,
    };
    let ranks = u64::from(exp.workload.ranks.max(1))
        * exp.cluster.as_ref().map_or(1, |c| c.hosts.len() as u64);
    // The jobs' options are read against a stand-in for the cell's
    // filesystem, as the safety check reads them.
    let scratch = crate::safety::Scratch::new().ok();
    let mnt = scratch.as_ref().map(|s| s.0.clone());
    if let Some(m) = &mnt {
        for d in crate::plan::workload_dirs(exp, m) {
            let _ = std::fs::create_dir_all(d);
        }
    }
    let cells: Vec<CellCost> = exp
        .cells
        .iter()
        .map(|c| {
            let apparent = apparent.filter(|_| c.path.is_none());
            let work = mnt
                .as_ref()
                .and_then(|m| crate::plan::cell_job(exp, c, m).ok())
                .and_then(|j| j.work())
                .map(|w| Work {
                    ops: w.ops * ranks,
                    seconds: w.seconds,
                    bytes: w.bytes * ranks,
                    entries: w.entries * ranks,
                });
            let modelled = work.map(|w| {
                w.bytes + w.entries * ENTRY_BYTES + apparent.map_or(0, |a| mkfs_writes(c, a))
            });
            let (seconds, time_from, disk) = match (stored.get(&c.label), work) {
                (Some(s), _) => {
                    let f = scale / s.scale;
                    let disk = if s.allocated > 0 {
                        (s.allocated as f64 * f) as u64
                    } else {
                        modelled.unwrap_or(0)
                    };
                    (Some(s.seconds * f), TimeFrom::Stored(s.clone()), disk)
                }
                (None, Some(w)) => (
                    Some(SETUP_S + w.seconds as f64 + w.ops as f64 / ASSUMED_OPS_PER_S),
                    TimeFrom::Work(w),
                    modelled.unwrap_or(0),
                ),
                (None, None) => (None, TimeFrom::Unknown, 0),
            };
            // The workload is stopped at the cell's time limit.
            let cap = exp
                .time_limit
                .map_or(f64::INFINITY, |t| t.as_secs_f64() + SETUP_S);
            let seconds = seconds.map(|s| s.min(cap));
            CellCost {
                index: c.index,
                label: c.label.clone(),
                seconds,
                time_from,
                apparent,
                disk: apparent.map_or(disk, |a| disk.min(a)),
                memory: c
                    .kernel
                    .as_ref()
                    .map(|k| k.memory_bytes)
                    .or(exp.machine.memory_limit),
                free: c
                    .path
                    .as_ref()
                    .and_then(|p| free_bytes(p).map(|f| (p.clone(), f))),
            }
        })
        .collect();
    // The runs a cell has: its repetitions and its warm-up.
    let reps = exp.repetitions + u32::from(exp.warm_up);
    let seconds = cells
        .iter()
        .map(|c| c.seconds.map(|s| s * f64::from(reps)))
        .sum::<Option<f64>>();
    // The images' cells (a directory's are checked against its own space).
    let imaged = || cells.iter().filter(|c| c.free.is_none());
    let largest = imaged().map(|c| c.disk).max().unwrap_or(0);
    let disk_at_once = if keep_images {
        imaged().map(|c| c.disk * u64::from(reps)).sum()
    } else {
        largest
    };
    Estimate {
        memory: cells.iter().filter_map(|c| c.memory).max(),
        cells,
        repetitions: reps,
        seconds,
        disk_at_once,
        machine: machine.clone(),
    }
}

/// What is over this machine's threshold, as the one line `fslab run`
/// refuses with.
#[derive(Debug, Clone, PartialEq)]
pub enum Over {
    Time(f64),
    Disk { need: u64, free: u64, at: PathBuf },
    Memory { need: u64, total: u64 },
}

impl std::fmt::Display for Over {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Over::Time(s) => write!(
                f,
                "it is estimated to take {}, more than {}",
                human_duration(Duration::from_secs_f64(*s)),
                human_duration(TIME_THRESHOLD)
            ),
            Over::Disk { need, free, at } => write!(
                f,
                "its images are estimated to take {} on {}, which has {} free",
                human_bytes(*need),
                at.display(),
                human_bytes(*free)
            ),
            Over::Memory { need, total } => write!(
                f,
                "a run is given {} of memory, more than this machine's {}",
                human_bytes(*need),
                human_bytes(*total)
            ),
        }
    }
}

impl Estimate {
    /// The first threshold this run is over: disk (it cannot finish),
    /// memory, then time.
    pub fn over(&self) -> Option<Over> {
        let dirs = self
            .cells
            .iter()
            .filter_map(|c| Some((c.disk, c.free.as_ref()?)));
        if let Some((need, (at, free))) = dirs.clone().find(|(need, (_, free))| need > free) {
            return Some(Over::Disk {
                need,
                free: *free,
                at: at.clone(),
            });
        }
        if let Some((at, free)) = &self.machine.free {
            if self.disk_at_once > *free {
                return Some(Over::Disk {
                    need: self.disk_at_once,
                    free: *free,
                    at: at.clone(),
                });
            }
        }
        if let (Some(need), Some(total)) = (self.memory, self.machine.memory) {
            if need > total {
                return Some(Over::Memory { need, total });
            }
        }
        match self.seconds {
            Some(s) if s > TIME_THRESHOLD.as_secs_f64() => Some(Over::Time(s)),
            _ => None,
        }
    }

    /// The dry run's cost lines.
    pub fn describe(&self) -> String {
        let mut s = String::new();
        let total = self
            .seconds
            .map_or("unknown (see the cells)".to_string(), |t| {
                human_duration(Duration::from_secs_f64(t))
            });
        let _ = writeln!(
            s,
            "cost: time {total} for {} runs; disk {} at once{}; memory {} a run{}",
            self.cells.len() * self.repetitions as usize,
            human_bytes(self.disk_at_once),
            self.machine
                .free
                .as_ref()
                .map(|(p, f)| format!(" ({} free on {})", human_bytes(*f), p.display()))
                .unwrap_or_default(),
            self.memory
                .map(human_bytes)
                .unwrap_or_else(|| "not limited".into()),
            self.machine
                .memory
                .map(|m| format!(" (machine {})", human_bytes(m)))
                .unwrap_or_default()
        );
        for c in &self.cells {
            let time = c.seconds.map_or("unknown".to_string(), |t| {
                human_duration(Duration::from_secs_f64(t))
            });
            let disk = match c.apparent {
                Some(a) => format!(
                    "image {} apparent, {} really used",
                    human_bytes(a),
                    human_bytes(c.disk)
                ),
                None => format!("{} used", human_bytes(c.disk)),
            };
            let _ = writeln!(
                s,
                "  cell {} {}: {time} a run ({}); {disk}",
                c.index,
                c.label,
                time_from(&c.time_from)
            );
        }
        s
    }
}

fn time_from(t: &TimeFrom) -> String {
    match t {
        TimeFrom::Stored(s) => format!(
            "from {} stored run(s) of this cell at scale {}{}",
            s.runs,
            s.scale,
            if s.allocated > 0 { ", disk too" } else { "" }
        ),
        TimeFrom::Work(w) => {
            let mut parts = Vec::new();
            if w.ops > 0 {
                parts.push(format!(
                    "{} operations at {ASSUMED_OPS_PER_S} a second",
                    w.ops
                ));
            }
            if w.seconds > 0 {
                parts.push(format!("{} s as its options say", w.seconds));
            }
            parts.push(format!("{SETUP_S} s to make and time its filesystem"));
            format!(
                "no stored run: {}; disk: {} of data, {} {} at {} each",
                parts.join(" + "),
                human_bytes(w.bytes),
                w.entries,
                if w.entries == 1 { "entry" } else { "entries" },
                human_bytes(ENTRY_BYTES)
            )
        }
        TimeFrom::Unknown => "no stored run, and the workload does not say its size".into(),
    }
}

/// The scales `fslab run` suggests, largest first.
pub const SCALES: [f64; 10] = [0.5, 0.2, 0.1, 0.05, 0.02, 0.01, 0.005, 0.002, 0.001, 0.0001];

/// The largest of [`SCALES`] below `scale` at which `passes(f)`.
pub fn scale_hint(scale: f64, passes: impl Fn(f64) -> bool) -> Option<f64> {
    SCALES
        .iter()
        .copied()
        .filter(|f| *f < scale)
        .find(|&f| passes(f))
}

/// The cost of `base` scaled to `scale` on this machine, with the stored
/// runs of its cells in `store` (if there is one).
pub fn at_scale(
    base: &Experiment,
    scale: f64,
    store: Option<&fslab_store::Store>,
    keep_images: bool,
) -> Estimate {
    let exp = crate::plan::scaled(base, scale);
    let stored = store
        .map(|s| stored(s, &exp.name, scale))
        .unwrap_or_default();
    estimate(&exp, scale, &stored, &Machine::of(&exp), keep_images)
}

/// What `fslab run` checks before it runs `base` at a scale: the
/// preflight (as root or not) and the cost.
pub struct Check<'a> {
    pub base: &'a Experiment,
    pub store: Option<&'a fslab_store::Store>,
    pub keep_images: bool,
    pub root: bool,
}

impl Check<'_> {
    /// Whether `base` at scale `f` passes the preflight and is over no
    /// threshold.
    pub fn passes(&self, f: f64) -> bool {
        let exp = crate::plan::scaled(self.base, f);
        crate::runner::preflight_as(&exp, self.root).is_ok()
            && at_scale(self.base, f, self.store, self.keep_images)
                .over()
                .is_none()
    }

    /// `, or run with --scale F` for the largest suggested scale below
    /// `scale` that passes, else nothing.
    pub fn hint(&self, scale: f64) -> String {
        scale_hint(scale, |f| self.passes(f))
            .map(|f| format!(", or run with --scale {f}"))
            .unwrap_or_default()
    }

    /// The estimate at `scale`, and the one line `fslab run` refuses it
    /// with when it is over a threshold and `yes` was not given.
    pub fn refusal(&self, scale: f64, yes: bool) -> (Estimate, Option<String>) {
        let e = at_scale(self.base, scale, self.store, self.keep_images);
        let line = match e.over() {
            Some(over) if !yes => Some(format!(
                "{over}: add --yes to run it anyway{}",
                self.hint(scale)
            )),
            _ => None,
        };
        (e, line)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exp(text: &str) -> Experiment {
        crate::spec::parse("x.toml", text, &crate::spec::Defaults::default()).unwrap()
    }

    const FSMARK: &str = "name = \"x\"\nrepetitions = 2\n[device]\nsize = \"1T\"\n[workload]\nkind = \"fsmark\"\nargs = [\"-S0\", \"-s\", \"4096\", \"-n\", \"100000\", \"-t\", \"2\"]\n[[target]]\nfs = \"xfs\"\n[[target]]\nfs = \"ext3\"\n";

    fn machine(free: u64) -> Machine {
        Machine {
            free: Some(("/images".into(), free)),
            memory: Some(24 << 30),
        }
    }

    #[test]
    fn without_stored_runs_the_cost_is_the_workloads_work_and_what_mkfs_writes() {
        let e = exp(FSMARK);
        let est = estimate(&e, 1.0, &Stored::new(), &machine(100 << 30), false);
        let xfs = &est.cells[0];
        // 200k files of 4 KiB, each made (with its block written): 400k operations.
        assert_eq!(
            xfs.time_from,
            TimeFrom::Work(Work {
                ops: 400_000,
                seconds: 0,
                bytes: 200_000 * 4096,
                entries: 200_000
            })
        );
        assert_eq!(xfs.seconds, Some(SETUP_S + 20.0));
        assert_eq!(xfs.disk, 200_000 * (4096 + ENTRY_BYTES) + (2 << 30));
        // ext3 writes its inode tables at mkfs: 1/64 of the image.
        assert_eq!(
            est.cells[1].disk,
            200_000 * (4096 + ENTRY_BYTES) + (16 << 30)
        );
        assert_eq!(est.disk_at_once, est.cells[1].disk);
        assert_eq!(est.seconds, Some(4.0 * 25.0));
        assert_eq!(est.over(), None);
        // With --keep-images every run's image stays.
        let kept = estimate(&e, 1.0, &Stored::new(), &machine(100 << 30), true);
        assert_eq!(kept.disk_at_once, 2 * (xfs.disk + est.cells[1].disk));
        assert!(kept.over().is_none());
        let small = estimate(&e, 1.0, &Stored::new(), &machine(10 << 30), false);
        assert!(
            matches!(small.over(), Some(Over::Disk { free, .. }) if free == 10 << 30),
            "{:?}",
            small.over()
        );
    }

    #[test]
    fn stored_runs_of_the_same_cell_give_its_time_and_disk_scaled_to_this_scale() {
        let e = exp(FSMARK);
        let mut stored = Stored::new();
        stored.insert(
            "xfs".into(),
            StoredCell {
                scale: 0.01,
                runs: 3,
                seconds: 40.0,
                allocated: 1 << 30,
            },
        );
        let est = estimate(&e, 1.0, &stored, &machine(1 << 40), false);
        assert_eq!(est.cells[0].seconds, Some(4000.0));
        assert_eq!(est.cells[0].disk, 100 << 30);
        assert!(matches!(est.cells[1].time_from, TimeFrom::Work(_)));
        // Two repetitions of 4000 s and of 25 s: over the hour.
        assert_eq!(est.over(), Some(Over::Time(8050.0)));
        assert!(est.describe().contains(
            "  cell 0 xfs: 1 h 6 min a run (from 3 stored run(s) of this cell at scale 0.01, disk too); image 1 TiB apparent, 100 GiB really used\n"
        ), "{}", est.describe());
        // A run is stopped at the cell's time limit.
        let mut limited = e.clone();
        limited.time_limit = Some(Duration::from_secs(1800));
        let est = estimate(&limited, 1.0, &stored, &machine(1 << 40), false);
        assert_eq!(est.cells[0].seconds, Some(1800.0 + SETUP_S));
    }

    #[test]
    fn a_memory_limit_or_guest_over_the_machines_memory_is_over() {
        let mut e = exp(FSMARK);
        e.machine.memory_limit = Some(32 << 30);
        let est = estimate(&e, 1.0, &Stored::new(), &machine(1 << 40), false);
        assert_eq!(
            est.over(),
            Some(Over::Memory {
                need: 32 << 30,
                total: 24 << 30
            })
        );
        assert_eq!(
            est.over().unwrap().to_string(),
            "a run is given 32 GiB of memory, more than this machine's 24 GiB"
        );
    }

    #[test]
    fn the_scale_suggested_is_the_largest_below_this_one_that_passes() {
        assert_eq!(scale_hint(1.0, |f| f <= 0.03), Some(0.02));
        assert_eq!(scale_hint(0.01, |f| f <= 0.03), Some(0.005));
        assert_eq!(scale_hint(1.0, |_| false), None);
    }
}
