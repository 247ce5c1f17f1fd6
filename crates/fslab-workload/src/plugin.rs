//! The workload seam. A workload is one module that implements
//! [`Workload`] and one line in [`crate::registry`] (fio's ioengines are the
//! model: a new engine is a file and a registration). Everything fslab does
//! with a workload goes through it: the subcommand and its typed options,
//! their validation, the paths it writes (checked before anything is made),
//! how `--scale` changes it, which phases print nothing, its place on MPI
//! ranks, and its run.
//!
//! `fslab run` parses an experiment's arguments into a [`Job`] (a workload
//! with its typed options), scales and validates it, and hands the child
//! process a [`ChildSpec`]: the job serialized ([`Job::to_json`], read back
//! by [`Job::from_json`]) with the harness around it, never argv to parse
//! again.
//!
//! Tests can add workloads of their own with [`register`] before anything
//! looks one up: a test binary that registers one and then runs fslab's
//! command line has a fslab with one more workload, its children too.

use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use clap::{ArgMatches, Args, FromArgMatches};
use fslab_model::Recorder;
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::{CommonArgs, Error, Hooks, Report, Result, StopFlag};

/// A workload fslab runs. Implemented by a unit struct per workload; its
/// functions take the options, so the workload keeps no state of its own.
pub trait Workload: Send + Sync + 'static {
    /// Its options: clap arguments on the command line (the original's
    /// letters, each with a long name), serde between `fslab run` and its
    /// child.
    type Options: Args
        + FromArgMatches
        + Serialize
        + DeserializeOwned
        + Clone
        + fmt::Debug
        + Send
        + Sync
        + 'static;

    /// The command's name, as runs record it (`fsmark`, `createmany`, ...).
    const NAME: &'static str;

    /// The subcommand without its options (which come from
    /// [`Workload::Options`]): about, help, examples, clap settings.
    fn command() -> clap::Command;

    /// The options every workload takes.
    fn common(o: &Self::Options) -> &CommonArgs;
    fn common_mut(o: &mut Self::Options) -> &mut CommonArgs;

    /// What its command line means beyond what clap sets, applied to every
    /// parsed job (tiotest's `-F` is `--drop-caches`; io500md reads its
    /// IO500 ini file): an [`Error::Options`] when that cannot be done.
    fn parsed(_o: &mut Self::Options) -> Result<()> {
        Ok(())
    }

    /// Text the command prints instead of running (dbench's
    /// `--print-loadfile`); None to run.
    fn instead(_o: &Self::Options) -> Option<String> {
        None
    }

    /// The workload's own checks beyond what clap checks: an
    /// [`Error::Options`] whose one line names the bad option and value.
    fn validate(o: &Self::Options) -> Result<()>;

    /// The arguments `fslab run` puts before an experiment's own (`{dir}`
    /// replaced as in them): a program's directory (`--dir {dir}`).
    fn experiment_prefix() -> &'static [&'static str] {
        &[]
    }
    /// The `[workload]` keys of an experiment it takes beyond kind, args,
    /// dirs, ranks and probes, each with the option it stands for
    /// (`parser = "fio"` is `--parser fio`; a list repeats the option).
    fn experiment_keys() -> &'static [(&'static str, &'static str)] {
        &[]
    }
    /// Whether it starts its own ranks, a program under MPI's launcher
    /// (an external MPI program): on several ranks, or under `[cluster]`,
    /// `fslab run` gives it the launcher ([`Workload::set_launcher`])
    /// instead of starting it on every rank.
    fn launches_ranks() -> bool {
        false
    }
    /// The launcher in front of its program (`mpirun -np 4 ...`, `srun
    /// ...`): only called when [`Workload::launches_ranks`].
    fn set_launcher(_o: &mut Self::Options, _launcher: Vec<String>) {}
    /// The programs `fslab run --allow-command` names, which it may run
    /// where it would refuse them (a shell).
    fn allow_commands(_o: &mut Self::Options, _programs: &[String]) {}

    /// Whether it takes its directories as `-d DIR` options (fs_mark,
    /// tiotest), which `fslab run` then gives, one per `workload.dirs`.
    fn takes_dirs() -> bool {
        false
    }
    /// Whether its ranks work in one directory tree that rank 0 makes
    /// (mdtest's, IO500's): across hosts that needs a directory every host
    /// sees, where a run on each host's own filesystem would fail at its
    /// first `mkdir` (`[cluster]` without `shared_dir` is refused).
    fn one_tree() -> bool {
        false
    }
    /// Its `-d` directories (empty when it names its paths in its
    /// arguments).
    fn dirs(_o: &Self::Options) -> Vec<PathBuf> {
        Vec::new()
    }
    /// Sets its `-d` directories (only called when [`Workload::takes_dirs`]).
    fn set_dirs(_o: &mut Self::Options, _dirs: Vec<PathBuf>) {}

    /// Every path it creates, writes or removes, by the option that names
    /// it: `fslab run` refuses any outside the cell's filesystem.
    fn outputs(o: &Self::Options) -> Vec<(&'static str, PathBuf)>;

    /// The directory it works in, whose filesystem the probes watch.
    fn workdir(o: &Self::Options) -> PathBuf;

    /// Its amount of work multiplied by `factor` (`fslab run --scale`):
    /// counts and durations, each at least its minimum.
    fn scale(o: &mut Self::Options, factor: f64);

    /// What `fslab run` sets in a cell beyond the experiment's arguments
    /// (fs_mark's log goes to /dev/null: the text is stored instead).
    fn in_cell(_o: &mut Self::Options) {}

    /// The one directory it fills with entries, whose index `fslab run`
    /// measures after the run, before unmount (createmany's: the htree
    /// depth on ext4, seed 004's mechanism); None for the others.
    fn filled_dir(_o: &Self::Options) -> Option<PathBuf> {
        None
    }

    /// How many threads (or client processes) it runs at once: `fslab run` names it as a
    /// stand-in where it is more than the machine's CPUs (seed 000's and 001's 8-way runs on 2 CPUs).
    fn threads(_o: &Self::Options) -> u32 {
        1
    }
    /// Its amount of work, for the dry run's estimate (None: unknown).
    fn work(_o: &Self::Options) -> Option<crate::work::Work> {
        None
    }
    /// Under MPI, moves what each rank writes into paths of its own
    /// (`place` makes them); nothing in a one-process run.
    fn on_rank(o: &mut Self::Options, place: &dyn RankPlace) -> Result<()>;

    /// Under MPI, the text it adds to the merged run's summary from the
    /// merged run's numbers (the ranks' added up: fs_mark's table for all
    /// ranks from its loops', which scripts that read its rows read); none
    /// by default.
    fn merged_text(_ranks: usize, _merged: &[fslab_model::Metric]) -> Option<String> {
        None
    }

    /// Whether, under MPI, its text is rank 0's account of every rank
    /// (mdtest's SUMMARY, computed over the ranks within its phases), so
    /// rank 0 prints it; otherwise the ranks print nothing of their own
    /// and the merged run is summarised instead.
    fn speaks_for_ranks() -> bool {
        false
    }

    /// A job to try it by, which the one test over every registered
    /// workload (`tests/every_workload.rs`) parses, scales, validates,
    /// sends through JSON and refuses a bad value of.
    fn example() -> Example;

    /// Runs it, recording as it goes, and returns its report. It is given
    /// its options unchecked: its first step is its own [`Workload::validate`]
    /// (once, so that the check's calls, a stat of its directory say, are
    /// made once), before anything is recorded ([`Start::begin`] records
    /// the run's start). Nothing is made for it beforehand: it makes its
    /// own directories, as its original does.
    fn run(o: &Self::Options, start: Start<'_, '_>) -> Result<Box<dyn Report>>;
}

/// A workload's example job ([`Workload::example`]).
#[derive(Debug, Clone, Copy)]
pub struct Example {
    /// Its arguments after its name, `{dir}` standing for a directory
    /// that exists (the test's own).
    pub args: &'static str,
    /// The `--scale` factor to try.
    pub scale: f64,
    /// Options (as serialized) with their values after that scale, as JSON
    /// text (`("files", "1000")`, `("numbers", "[\"20000\"]")`).
    pub scaled: &'static [(&'static str, &'static str)],
    /// Its arguments with one bad value (`{dir}` as in `args`), refused by
    /// its parser or its validation in one line naming the option and value.
    pub refused: Refused,
}

/// A bad value in an [`Example`]: the arguments, and the option and value
/// the refusal names.
#[derive(Debug, Clone, Copy)]
pub struct Refused {
    pub args: &'static str,
    pub option: &'static str,
    pub value: &'static str,
}

/// What a run is given by the runtime, which builds it: the command line
/// recorded, the stop flag, where its text goes, what it records into, its
/// callbacks and the MPI ranks it is one of. A workload's run records its
/// start with [`Start::begin`] once its options are checked.
pub struct Start<'a, 'h> {
    /// The command line as given (recorded with the run; fs_mark prints it).
    pub argv: &'a [String],
    pub stop: &'a StopFlag,
    pub out: &'a mut dyn Write,
    pub rec: &'a mut dyn Recorder,
    pub hooks: &'a mut Hooks<'h>,
    /// The MPI ranks this run is one of ([`fslab_cluster::Solo`] in a
    /// one-process run): for a workload whose ranks work together within a
    /// phase (mdtest's stonewall agreement and summary).
    pub cluster: &'a dyn fslab_cluster::Cluster,
}

/// This process's place among the MPI ranks it runs on.
pub trait RankPlace {
    fn rank(&self) -> usize;
    fn size(&self) -> usize;
    /// The directory of this rank under `dir` (`DIR/rankNNNN`, made);
    /// `dir` itself in a one-process run.
    fn dir(&self, dir: &Path) -> Result<PathBuf>;
    /// `path` moved into this rank's directory (`DIR/rankNNNN/NAME`, the
    /// directory made); `path` itself in a one-process run.
    fn file(&self, path: &Path) -> Result<PathBuf>;
}

/// A registered workload, whatever its options' type.
pub trait AnyWorkload: Send + Sync {
    fn name(&self) -> &'static str;
    /// The subcommand with its options.
    fn command(&self) -> clap::Command;
    /// A job from the subcommand's parsed arguments.
    fn job_of_matches(&self, m: &ArgMatches) -> Result<Job>;
    /// A job from serialized options ([`Job::to_json`]).
    fn job_of_json(&self, v: serde_json::Value) -> Result<Job>;
    fn takes_dirs(&self) -> bool;
    fn one_tree(&self) -> bool;
    fn experiment_prefix(&self) -> &'static [&'static str];
    fn experiment_keys(&self) -> &'static [(&'static str, &'static str)];
    fn launches_ranks(&self) -> bool;
    /// [`Workload::merged_text`].
    fn merged_text(&self, ranks: usize, merged: &[fslab_model::Metric]) -> Option<String>;
    /// [`Workload::example`].
    fn example(&self) -> Example;
}

/// A workload with its options: what a command line, an experiment's
/// arguments or a serialized plan make.
pub trait AnyJob: fmt::Debug + Send + Sync {
    fn kind(&self) -> WorkloadRef;
    fn common(&self) -> &CommonArgs;
    fn common_mut(&mut self) -> &mut CommonArgs;
    fn validate(&self) -> Result<()>;
    fn instead(&self) -> Option<String>;
    fn dirs(&self) -> Vec<PathBuf>;
    fn set_dirs(&mut self, dirs: Vec<PathBuf>);
    fn outputs(&self) -> Vec<(&'static str, PathBuf)>;
    fn workdir(&self) -> PathBuf;
    fn filled_dir(&self) -> Option<PathBuf>;
    fn threads(&self) -> u32;
    fn work(&self) -> Option<crate::work::Work>;
    fn speaks_for_ranks(&self) -> bool;
    fn scale(&mut self, factor: f64);
    fn in_cell(&mut self);
    fn set_launcher(&mut self, launcher: Vec<String>);
    fn allow_commands(&mut self, programs: &[String]);
    fn on_rank(&mut self, place: &dyn RankPlace) -> Result<()>;
    fn options_json(&self) -> serde_json::Value;
    fn run(&self, start: Start<'_, '_>) -> Result<Box<dyn Report>>;
    fn clone_box(&self) -> Box<dyn AnyJob>;
}

/// A workload with its options.
pub struct Job(Box<dyn AnyJob>);

impl Job {
    /// The serialized job: `{"workload": NAME, "options": {...}}`.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "workload": self.kind().name(),
            "options": self.0.options_json(),
        })
    }

    /// A job read back from [`Job::to_json`].
    pub fn from_json(v: &serde_json::Value) -> Result<Job> {
        let name = v
            .get("workload")
            .and_then(|n| n.as_str())
            .ok_or_else(|| Error::Options("serialized job: no \"workload\" name".into()))?;
        let kind: WorkloadRef = name.parse()?;
        let options = v.get("options").cloned().unwrap_or_default();
        kind.0.job_of_json(options)
    }
}

/// A job and what runs around it, as `fslab run` hands it to its child
/// (`fslab job JSON`) and as a person's command makes it.
pub type ChildSpec = fslab_model::protocol::ChildSpec<Job>;

impl Serialize for Job {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        self.to_json().serialize(s)
    }
}

impl<'de> serde::Deserialize<'de> for Job {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Job, D::Error> {
        let v = serde_json::Value::deserialize(d)?;
        Job::from_json(&v).map_err(serde::de::Error::custom)
    }
}

impl std::ops::Deref for Job {
    type Target = dyn AnyJob;
    fn deref(&self) -> &(dyn AnyJob + 'static) {
        &*self.0
    }
}

impl std::ops::DerefMut for Job {
    fn deref_mut(&mut self) -> &mut (dyn AnyJob + 'static) {
        &mut *self.0
    }
}

impl Clone for Job {
    fn clone(&self) -> Job {
        Job(self.0.clone_box())
    }
}

impl fmt::Debug for Job {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// The registration of workload `W` (one goes in [`crate::registry`]).
pub struct Plugin<W: Workload>(std::marker::PhantomData<fn() -> W>);

impl<W: Workload> Plugin<W> {
    pub const fn new() -> Plugin<W> {
        Plugin(std::marker::PhantomData)
    }
}

impl<W: Workload> Default for Plugin<W> {
    fn default() -> Self {
        Plugin::new()
    }
}

/// `W`'s options as a job.
struct Typed<W: Workload> {
    kind: WorkloadRef,
    o: W::Options,
}

impl<W: Workload> fmt::Debug for Typed<W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {:?}", W::NAME, self.o)
    }
}

impl<W: Workload> Plugin<W> {
    /// The one `'static` value of this zero-sized type, which jobs name.
    const ITSELF: &'static Plugin<W> = &Plugin(std::marker::PhantomData);

    fn job(o: W::Options) -> Job {
        Job(Box::new(Typed::<W> {
            kind: WorkloadRef(Self::ITSELF),
            o,
        }))
    }
}

impl<W: Workload> AnyWorkload for Plugin<W> {
    fn name(&self) -> &'static str {
        W::NAME
    }
    fn command(&self) -> clap::Command {
        // The options' doc comment would replace the command's about.
        let base = W::command().name(W::NAME);
        let text = |t: Option<&clap::builder::StyledStr>| {
            t.cloned()
                .map_or(clap::builder::Resettable::Reset, Into::into)
        };
        let (about, long) = (text(base.get_about()), text(base.get_long_about()));
        W::Options::augment_args(base).about(about).long_about(long)
    }
    fn job_of_matches(&self, m: &ArgMatches) -> Result<Job> {
        let mut o =
            W::Options::from_arg_matches(m).map_err(|e| Error::Options(clap_error_line(&e)))?;
        W::parsed(&mut o)?;
        Ok(Plugin::<W>::job(o))
    }
    fn job_of_json(&self, v: serde_json::Value) -> Result<Job> {
        let o: W::Options = serde_json::from_value(v)
            .map_err(|e| Error::Options(format!("{}: serialized options: {e}", W::NAME)))?;
        Ok(Plugin::<W>::job(o))
    }
    fn takes_dirs(&self) -> bool {
        W::takes_dirs()
    }
    fn one_tree(&self) -> bool {
        W::one_tree()
    }
    fn experiment_prefix(&self) -> &'static [&'static str] {
        W::experiment_prefix()
    }
    fn experiment_keys(&self) -> &'static [(&'static str, &'static str)] {
        W::experiment_keys()
    }
    fn launches_ranks(&self) -> bool {
        W::launches_ranks()
    }
    fn merged_text(&self, ranks: usize, merged: &[fslab_model::Metric]) -> Option<String> {
        W::merged_text(ranks, merged)
    }
    fn example(&self) -> Example {
        W::example()
    }
}

impl<W: Workload> AnyJob for Typed<W> {
    fn kind(&self) -> WorkloadRef {
        self.kind
    }
    fn common(&self) -> &CommonArgs {
        W::common(&self.o)
    }
    fn common_mut(&mut self) -> &mut CommonArgs {
        W::common_mut(&mut self.o)
    }
    fn validate(&self) -> Result<()> {
        W::validate(&self.o)
    }
    fn instead(&self) -> Option<String> {
        W::instead(&self.o)
    }
    fn dirs(&self) -> Vec<PathBuf> {
        W::dirs(&self.o)
    }
    fn set_dirs(&mut self, dirs: Vec<PathBuf>) {
        W::set_dirs(&mut self.o, dirs);
    }
    fn outputs(&self) -> Vec<(&'static str, PathBuf)> {
        W::outputs(&self.o)
    }
    fn workdir(&self) -> PathBuf {
        W::workdir(&self.o)
    }
    fn filled_dir(&self) -> Option<PathBuf> {
        W::filled_dir(&self.o)
    }
    fn threads(&self) -> u32 {
        W::threads(&self.o)
    }
    fn work(&self) -> Option<crate::work::Work> {
        W::work(&self.o)
    }
    fn speaks_for_ranks(&self) -> bool {
        W::speaks_for_ranks()
    }
    fn scale(&mut self, factor: f64) {
        W::scale(&mut self.o, factor);
    }
    fn in_cell(&mut self) {
        W::in_cell(&mut self.o);
    }
    fn set_launcher(&mut self, launcher: Vec<String>) {
        W::set_launcher(&mut self.o, launcher);
    }
    fn allow_commands(&mut self, programs: &[String]) {
        W::allow_commands(&mut self.o, programs);
    }
    fn on_rank(&mut self, place: &dyn RankPlace) -> Result<()> {
        W::on_rank(&mut self.o, place)
    }
    fn options_json(&self) -> serde_json::Value {
        serde_json::to_value(&self.o).unwrap_or_default()
    }
    fn run(&self, start: Start<'_, '_>) -> Result<Box<dyn Report>> {
        W::run(&self.o, start)
    }
    fn clone_box(&self) -> Box<dyn AnyJob> {
        Box::new(Typed::<W> {
            kind: self.kind,
            o: self.o.clone(),
        })
    }
}

/// clap's error as one line: its first paragraph, which names the bad
/// option or value (its message spans several lines).
pub fn clap_error_line(e: &clap::Error) -> String {
    let text = e.render().to_string();
    let first: Vec<&str> = text
        .lines()
        .map(str::trim)
        .take_while(|l| !l.is_empty())
        .collect();
    let mut line = first.join(" ").trim_start_matches("error: ").to_string();
    // clap's suggestion ("a similar subcommand exists: 'fsmark'") is worth the line.
    if let Some(tip) = text
        .lines()
        .map(str::trim)
        .find_map(|l| l.strip_prefix("tip: "))
    {
        line.push_str(&format!(" ({tip})"));
    }
    line
}

/// A registered workload, by which experiments, plans and runs name it.
/// Compares, prints and serializes as its name.
#[derive(Clone, Copy)]
pub struct WorkloadRef(&'static dyn AnyWorkload);

impl WorkloadRef {
    pub fn name(self) -> &'static str {
        self.0.name()
    }
    pub fn workload(self) -> &'static dyn AnyWorkload {
        self.0
    }
    /// The workload registered as `name`.
    pub fn of(name: &str) -> Option<WorkloadRef> {
        all().into_iter().find(|k| k.name() == name)
    }
    pub fn takes_dirs(self) -> bool {
        self.0.takes_dirs()
    }
    /// [`Workload::one_tree`].
    pub fn one_tree(self) -> bool {
        self.0.one_tree()
    }
    /// [`Workload::experiment_prefix`].
    pub fn experiment_prefix(self) -> &'static [&'static str] {
        self.0.experiment_prefix()
    }
    /// [`Workload::experiment_keys`].
    pub fn experiment_keys(self) -> &'static [(&'static str, &'static str)] {
        self.0.experiment_keys()
    }
    /// [`Workload::launches_ranks`].
    pub fn launches_ranks(self) -> bool {
        self.0.launches_ranks()
    }
    /// A job of this workload from its arguments as an experiment file or
    /// a command line gives them (after the workload's name).
    pub fn parse(self, argv: &[String]) -> Result<Job> {
        let m = self
            .0
            .command()
            .no_binary_name(true)
            .try_get_matches_from(argv)
            .map_err(|e| Error::Options(clap_error_line(&e)))?;
        self.0.job_of_matches(&m)
    }
    /// A job of this workload from serialized options.
    pub fn job_from_json(self, options: serde_json::Value) -> Result<Job> {
        self.0.job_of_json(options)
    }
    /// Every registered name, comma-separated (for error messages).
    pub fn names() -> String {
        all()
            .into_iter()
            .map(WorkloadRef::name)
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl PartialEq for WorkloadRef {
    fn eq(&self, other: &WorkloadRef) -> bool {
        self.name() == other.name()
    }
}
impl Eq for WorkloadRef {}

impl std::hash::Hash for WorkloadRef {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.name().hash(h);
    }
}

impl fmt::Debug for WorkloadRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Display for WorkloadRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name no registered workload has.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown workload {name:?} (available: {available})")]
pub struct UnknownWorkload {
    pub name: String,
    /// Every registered name, comma-separated.
    pub available: String,
}

impl std::str::FromStr for WorkloadRef {
    type Err = UnknownWorkload;
    fn from_str(s: &str) -> std::result::Result<WorkloadRef, UnknownWorkload> {
        WorkloadRef::of(s).ok_or_else(|| UnknownWorkload {
            name: s.into(),
            available: WorkloadRef::names(),
        })
    }
}

/// A workload whose name is taken already ([`register`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("workload {0:?} is registered already")]
pub struct NameTaken(pub &'static str);

impl Serialize for WorkloadRef {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> serde::Deserialize<'de> for WorkloadRef {
    fn deserialize<D: serde::Deserializer<'de>>(
        d: D,
    ) -> std::result::Result<WorkloadRef, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// Workloads added at run time ([`register`]).
fn extra() -> &'static Mutex<Vec<&'static dyn AnyWorkload>> {
    static EXTRA: OnceLock<Mutex<Vec<&'static dyn AnyWorkload>>> = OnceLock::new();
    EXTRA.get_or_init(|| Mutex::new(Vec::new()))
}

/// Adds a workload (a test's own): from then on it is looked up, listed
/// and run like the built-in ones. A name already taken is refused.
pub fn register(w: &'static dyn AnyWorkload) -> std::result::Result<(), NameTaken> {
    if WorkloadRef::of(w.name()).is_some() {
        return Err(NameTaken(w.name()));
    }
    extra()
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .push(w);
    Ok(())
}

/// Every workload: the built-in ones in [`crate::registry`]'s order, then any
/// added with [`register`].
pub fn all() -> Vec<WorkloadRef> {
    let extra = extra()
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clone();
    crate::registry()
        .iter()
        .copied()
        .chain(extra)
        .map(WorkloadRef)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A workload of the test's own: counts to `-n`.
    struct Count;

    #[derive(Debug, Clone, clap::Args, Serialize, serde::Deserialize)]
    struct CountArgs {
        #[arg(short = 'n', long = "count", default_value_t = 10)]
        n: u64,
        #[arg(short = 'd', long = "dir")]
        dirs: Vec<PathBuf>,
        #[command(flatten)]
        common: CommonArgs,
    }

    impl Workload for Count {
        type Options = CountArgs;
        const NAME: &'static str = "count-test";
        fn command() -> clap::Command {
            clap::Command::new(Self::NAME).about("counts")
        }
        fn common(o: &CountArgs) -> &CommonArgs {
            &o.common
        }
        fn common_mut(o: &mut CountArgs) -> &mut CommonArgs {
            &mut o.common
        }
        fn validate(o: &CountArgs) -> Result<()> {
            if o.n == 0 {
                return Err(Error::Options("-n 0: must be at least 1".into()));
            }
            Ok(())
        }
        fn takes_dirs() -> bool {
            true
        }
        fn dirs(o: &CountArgs) -> Vec<PathBuf> {
            o.dirs.clone()
        }
        fn set_dirs(o: &mut CountArgs, dirs: Vec<PathBuf>) {
            o.dirs = dirs;
        }
        fn outputs(_o: &CountArgs) -> Vec<(&'static str, PathBuf)> {
            Vec::new()
        }
        fn workdir(o: &CountArgs) -> PathBuf {
            o.dirs.first().cloned().unwrap_or_default()
        }
        fn scale(o: &mut CountArgs, factor: f64) {
            o.n = ((o.n as f64 * factor).round() as u64).max(1);
        }
        fn on_rank(_o: &mut CountArgs, _place: &dyn RankPlace) -> Result<()> {
            Ok(())
        }
        fn example() -> Example {
            Example {
                args: "-n 1000 -d {dir}",
                scale: 0.01,
                scaled: &[("n", "10")],
                refused: Refused {
                    args: "-n 0 -d {dir}",
                    option: "-n",
                    value: "0",
                },
            }
        }
        fn run(_o: &CountArgs, _start: Start<'_, '_>) -> Result<Box<dyn Report>> {
            Err(Error::Setup("not run in this test".into()))
        }
    }

    static COUNT: Plugin<Count> = Plugin::new();

    #[test]
    fn a_registered_workload_parses_scales_and_travels_serialized() {
        register(&COUNT).unwrap();
        assert_eq!(register(&COUNT).unwrap_err(), NameTaken("count-test"));
        let kind: WorkloadRef = "count-test".parse().unwrap();
        assert!(kind.takes_dirs());
        let argv: Vec<String> = ["-n", "1000", "-d", "/tmp/x"].map(String::from).to_vec();
        let mut job = kind.parse(&argv).unwrap();
        job.scale(0.01);
        job.validate().unwrap();
        let back = Job::from_json(&job.to_json()).unwrap();
        assert_eq!(back.kind(), kind);
        assert_eq!(back.to_json()["options"]["n"], 10);
        assert_eq!(back.workdir(), PathBuf::from("/tmp/x"));
        assert_eq!(serde_json::to_value(kind).unwrap(), "count-test");
        let bad = kind
            .parse(&["-n".to_string(), "x".to_string()])
            .unwrap_err();
        assert!(bad.is_usage() && bad.to_string().contains("'x'"), "{bad}");
        let e = "count-tset".parse::<WorkloadRef>().unwrap_err();
        assert!(
            e.to_string().starts_with("unknown workload \"count-tset\""),
            "{e}"
        );
        let zero = kind.parse(&["-n".to_string(), "0".to_string()]).unwrap();
        assert!(zero.validate().is_err());
    }
}
