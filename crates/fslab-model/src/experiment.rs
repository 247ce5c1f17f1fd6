//! What an experiment (`fslab run`) records beside its workload runs.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::{RecordResult, Recorder, RunStatus};

/// One `fslab run` of an experiment file.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ExperimentInfo {
    pub name: String,
    /// Where the experiment file was read from (or `builtin:NAME`).
    pub file: String,
    /// The file's full text, so the run can be repeated exactly.
    pub text: String,
    pub scale: f64,
    pub repetitions: u32,
    pub command_line: Vec<String>,
    pub fslab_version: String,
    pub kernel: String,
    pub hostname: String,
    pub started_at: String,
}

/// One cell of the expanded matrix.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct CellInfo {
    pub index: u32,
    /// Stable, human-readable id, e.g. `ext4 -O ^metadata_csum`.
    pub label: String,
    pub fs_type: String,
    /// The mkfs command line, device path as a placeholder.
    pub mkfs_argv: Vec<String>,
    /// The mkfs tool's version line.
    pub mkfs_version: String,
    /// Mount options fslab passes (the user's, plus fslab's own, recorded).
    pub mount_options: String,
    pub sysctl: BTreeMap<String, String>,
    pub drop_caches: bool,
    pub memory_limit_bytes: Option<u64>,
    pub workload: String,
    pub workload_argv: Vec<String>,
    /// The device section as given (kind, size, ...), and, under
    /// `image_host_fs`, the [`ImageHostFacts`] of a host filesystem.
    pub device: serde_json::Value,
}

impl CellInfo {
    /// The host XFS the cell's images were made in, if there was one.
    pub fn image_host(&self) -> Option<ImageHostFacts> {
        /// The part of the device facts an image host adds.
        #[derive(Deserialize)]
        struct Device {
            image_host_fs: Option<serde_json::Value>,
        }
        let d = Device::deserialize(&self.device).ok()?;
        Some(ImageHostFacts::deserialize(d.image_host_fs?).unwrap_or_default())
    }
}

/// The host XFS that holds the cells' images when the image directory's
/// own filesystem cannot (`device.image_host`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(default)]
pub struct ImageHostFacts {
    pub fs: String,
    /// The host's own image.
    pub image: String,
    pub image_size: u64,
    /// The filesystem under that image.
    pub on: String,
    pub loop_device: String,
    pub direct_io: bool,
    pub mkfs_argv: Vec<String>,
    pub mount_point: String,
    /// Left in place after the run (`--keep-images`).
    pub kept: bool,
}

/// The repetition number of a cell's warm-up run (an experiment's
/// `warm_up`): run and recorded before repetition 1, compared never.
pub const WARM_UP: u32 = 0;

/// One repetition of one cell: what was set up, how it went.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct CellRunInfo {
    pub cell: u32,
    pub repetition: u32,
    /// The workload's run, when it started.
    pub run_id: Option<i64>,
    pub status: Option<RunStatus>,
    pub error: Option<String>,
    pub started_at: String,
    pub host_fs: String,
    pub image_path: String,
    pub image_size: u64,
    /// Bytes the image occupied on the host after the workload.
    pub image_allocated: u64,
    /// Extents of the image file on the host after the workload (FIEMAP,
    /// counted by the supervising process after unmount).
    #[serde(default)]
    pub image_extents: Option<u64>,
    pub loop_device: String,
    pub direct_io: bool,
    /// The loop device's IO scheduler during the run (`device.scheduler`,
    /// else the one it had), and the one fslab found (and put back).
    #[serde(default)]
    pub scheduler: String,
    #[serde(default)]
    pub scheduler_before: String,
    pub mkfs_argv: Vec<String>,
    pub mkfs_s: f64,
    /// Commands run after mkfs (tune2fs ...).
    #[serde(default)]
    pub after_mkfs: Vec<Vec<String>>,
    pub mount_argv: Vec<String>,
    pub kernel_mount_options: String,
    /// Sysctl values before fslab changed them.
    pub sysctl_before: BTreeMap<String, String>,
    /// Sysctl values read back after fslab set them: what the cell ran with.
    #[serde(default)]
    pub sysctl_during: BTreeMap<String, String>,
    pub cgroup: Option<String>,
    /// Peak memory of the workload's cgroup.
    pub memory_max_usage_bytes: Option<u64>,
    /// Times the cgroup hit its limit.
    pub memory_failcnt: Option<u64>,
    pub unmount_s: Option<f64>,
    pub remount_s: Option<f64>,
    /// The workload's text output (fs_mark's table).
    pub output: String,
    /// With a first pass (`[first_pass]`): its workload's run, and the IO
    /// scheduler it ran with. Its numbers are the judged run's metrics
    /// named `first pass ...`.
    #[serde(default)]
    pub first_pass_run_id: Option<i64>,
    #[serde(default)]
    pub first_pass_scheduler: String,
    /// The virtual machine the cell ran in, on another kernel (None: on
    /// the running kernel, no guest).
    #[serde(default)]
    pub guest: Option<GuestFacts>,
}

impl CellRunInfo {
    /// A warm-up run ([`WARM_UP`]): kept, never compared.
    pub fn is_warm_up(&self) -> bool {
        self.repetition == WARM_UP
    }
}

/// A cell's guest: its kernel, machine and accelerator, how it ended, and
/// what it said (console, dmesg), kept with the repetition.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(default)]
pub struct GuestFacts {
    /// As the experiment named it (`debian:6.1.0-50-cloud-amd64`, a path).
    pub kernel: String,
    /// Its `uname -r` and whole version string.
    pub release: String,
    pub version: String,
    pub image: String,
    /// The kernel command line fslab added to its own.
    pub append: String,
    /// `kvm` or `tcg` (emulated: times are not the host's), and why.
    pub accel: String,
    pub accel_why: String,
    pub memory_bytes: u64,
    pub cpus: u32,
    pub qemu_argv: Vec<String>,
    /// From QEMU's start to the guest's init, and to its end.
    pub boot_s: Option<f64>,
    pub wall_s: f64,
    /// How it ended: powered_off, time_limit, stopped, died.
    pub end: String,
    /// The kernel's configuration (its `CONFIG_` lines that are set).
    pub config: String,
    /// The guest's kernel log, and its console (the last 64 KiB).
    pub dmesg: String,
    pub console: String,
}

impl GuestFacts {
    /// Whether times measured in the guest were emulated (TCG).
    pub fn emulated(&self) -> bool {
        self.accel == "tcg"
    }
}

/// A [`Recorder`] that also knows experiments.
/// The name under which summaries and comparisons show
/// [`CellRunInfo::image_extents`].
pub const IMAGE_EXTENTS: &str = "image extents";

/// The verdict of one finding under fslab's one rule (see the README's
/// "Findings: the rule"), or of a mechanism check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FindingOutcome {
    /// On the author's side with 95% confidence, at least half the
    /// author's effect on a log scale.
    Reproduced,
    /// On the author's side with 95% confidence, less than half the
    /// author's effect.
    Weaker,
    /// Confidently less than half the author's effect: absent or reversed.
    NotReproduced,
    /// The interval cannot tell (it holds both no effect and half the
    /// author's): more runs would.
    Unresolved,
    /// The interval cannot tell, and the author's effect is smaller than
    /// what these runs can resolve at their noise (80% power): the runs
    /// say nothing either way about an effect that small.
    BelowResolution,
    /// Not judged: fewer than 3 runs a side, a missing value, a mechanism
    /// that did not happen, or a claim this machine cannot test.
    #[serde(alias = "not_evaluated")]
    NotJudged,
    /// A mechanism check: what the claims rest on happened in every run.
    Happened,
    /// A mechanism check: it did not happen in some run.
    DidNotHappen,
}

impl FindingOutcome {
    /// Its name in the store and JSON.
    pub fn name(self) -> &'static str {
        match self {
            FindingOutcome::Reproduced => "reproduced",
            FindingOutcome::Weaker => "weaker",
            FindingOutcome::NotReproduced => "not_reproduced",
            FindingOutcome::Unresolved => "unresolved",
            FindingOutcome::BelowResolution => "below_resolution",
            FindingOutcome::NotJudged => "not_judged",
            FindingOutcome::Happened => "happened",
            FindingOutcome::DidNotHappen => "did_not_happen",
        }
    }

    /// Its words, as every listing prints them.
    pub fn words(self) -> &'static str {
        match self {
            FindingOutcome::Reproduced => "reproduced",
            FindingOutcome::Weaker => "weaker",
            FindingOutcome::NotReproduced => "not reproduced",
            FindingOutcome::Unresolved => "unresolved",
            FindingOutcome::BelowResolution => "below resolution",
            FindingOutcome::NotJudged => "not judged",
            FindingOutcome::Happened => "happened",
            FindingOutcome::DidNotHappen => "did not happen",
        }
    }
}

/// A finding (`[[finding]]` in an experiment file) as judged at the end of
/// the run: the claim, the author's number beside fslab's, the interval,
/// the verdict and why, and what it was computed from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FindingResult {
    /// The claim's id in CLAIMS.md (`000-a`), or a mechanism's (`000-m1`).
    #[serde(default)]
    pub id: String,
    /// The claim, in the file's words.
    pub says: String,
    /// The author's numbers, as the claim quotes them.
    #[serde(default)]
    pub author: String,
    pub outcome: FindingOutcome,
    /// fslab's estimate of the claim's ratio (or value), when there is one.
    pub ratio: Option<f64>,
    /// Its 95% interval.
    pub ci: Option<(f64, f64)>,
    /// The author's ratio the rule measures fslab's against.
    #[serde(default)]
    pub author_ratio: Option<f64>,
    /// fslab's numbers, with n, in a sentence.
    pub detail: String,
    /// Why the verdict is what it is (the rule's branch, or why not judged).
    #[serde(default)]
    pub why: String,
    /// What it was computed from: metrics, cells, phases, the interval's method.
    #[serde(default)]
    pub from: String,
    /// A stand-in for the author's setup, named (seed 001's ext4 metadata_csum).
    #[serde(default)]
    pub stand_in: Option<String>,
}

pub trait ExperimentRecorder: Recorder {
    /// The experiment's finding number `seq` as evaluated at the end of the
    /// run (replacing an earlier evaluation: a resumed run evaluates again).
    fn record_finding(
        &mut self,
        experiment: i64,
        seq: u32,
        finding: &FindingResult,
    ) -> RecordResult<()>;
    fn begin_experiment(&mut self, info: &ExperimentInfo) -> RecordResult<i64>;
    fn record_cell(&mut self, experiment: i64, cell: &CellInfo) -> RecordResult<()>;
    fn record_cell_run(&mut self, experiment: i64, run: &CellRunInfo) -> RecordResult<()>;
    fn finish_experiment(&mut self, experiment: i64, status: RunStatus) -> RecordResult<()>;
    /// Marks an earlier experiment running again (`fslab run --resume`),
    /// with at least `repetitions` repetitions.
    fn reopen_experiment(&mut self, experiment: i64, repetitions: u32) -> RecordResult<()>;
    /// Copies run `run` of the store file `from` (a guest's, written by
    /// this fslab) into this recorder; its id here. Recorders that are not
    /// a store cannot.
    fn import_run(&mut self, from: &std::path::Path, run: i64) -> RecordResult<i64> {
        Err(crate::RecordError::Storage(format!(
            "this recorder cannot import run {run} of {}",
            from.display()
        )))
    }
}
