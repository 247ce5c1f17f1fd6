//! `fslab compilebench`: Chris Mason's compilebench (0.6), the fourth
//! benchmark of seed 001, made as compilebench makes it.
//!
//! The trees come from compilebench's own datasets (embedded; `-s DIR`
//! reads them from a directory, `--tree-from DIR` derives them from a real
//! tree): 21,280 files and 233 MB per tree, as compilebench's. It creates
//! `-i` trees (`kernel-0`, ...) with no sync between them, syncs, then runs
//! `-r` operations chosen by compilebench's own generator (Python's
//! `random.Random(555)`, reproduced, so the choices are compilebench's):
//! patch, compile, clean, delete, create, read or stat a tree, each ending
//! with `sync` inside its time, with the caches dropped before each (`-n`
//! turns both off). See [`dataset`] for the datasets and [`tree`] for what
//! each operation does to a tree. Each operation prints compilebench's line
//! and the run ends with its `run complete:` table: per kind the number of
//! runs and the average of the runs' MB/s (seconds for delete and stat),
//! user and system CPU, or `no runs for KIND`. The trees stay, as with
//! compilebench (`--cleanup` removes them).

pub mod dataset;
pub mod tree;

pub mod plugin;

use crate::{Begun, Start};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use fslab_model::PhaseResult;
use fslab_stats::rng::PyRandom;
use serde::Serialize;

use crate::common::{CommonArgs, Outcome, WithOutcome};
use dataset::{Dataset, Datasets};
use tree::Took;

/// `fslab compilebench -D DIR [-i TREES] [-r RUNS] [-b BYTES] [-n]`
#[derive(Debug, Clone, clap::Args, serde::Serialize, serde::Deserialize)]
pub struct CompileArgs {
    /// Working directory
    #[arg(short = 'D', long = "directory", value_name = "DIR")]
    pub dir: PathBuf,
    /// Trees created first
    #[arg(
        short = 'i',
        long = "initial-dirs",
        default_value_t = 30,
        value_name = "TREES",
        allow_negative_numbers = true
    )]
    pub initial: i64,
    /// Random operations after the initial trees
    #[arg(
        short = 'r',
        long = "runs",
        default_value_t = 100,
        value_name = "RUNS",
        allow_negative_numbers = true
    )]
    pub runs: i64,
    /// Buffer size of every read and write, in bytes
    #[arg(
        short = 'b',
        long = "buffer-size",
        default_value_t = 262_144,
        value_name = "BYTES",
        allow_negative_numbers = true
    )]
    pub buffer: i64,
    /// Directory holding compilebench's four dataset files [default: the copies built into fslab]
    #[arg(
        short = 's',
        long = "sources",
        value_name = "DIR",
        conflicts_with = "tree_from"
    )]
    pub sources: Option<PathBuf>,
    /// Take the unpatched tree from this directory (names and sizes) and derive the other states
    #[arg(long, value_name = "DIR")]
    pub tree_from: Option<PathBuf>,
    /// Neither sync after each operation nor drop the caches before it
    #[arg(short = 'n', long = "no-sync")]
    pub no_sync: bool,
    /// Remove the trees at the end (compilebench leaves them)
    #[arg(long)]
    pub cleanup: bool,
    /// Seed of the random choices (compilebench's is 555)
    #[arg(long, default_value_t = 555)]
    pub seed: u64,
    #[command(flatten)]
    pub common: CommonArgs,
}

/// Validated options.
#[derive(Debug, Clone, Serialize)]
pub struct CompileOptions {
    pub dir: PathBuf,
    pub initial: u64,
    pub runs: u64,
    pub buffer: usize,
    pub sync: bool,
    pub seed: u64,
    pub cleanup: bool,
    /// Where the datasets came from.
    pub datasets: String,
    pub tree_files: usize,
    pub tree_bytes: u64,
    #[serde(skip)]
    pub data: Datasets,
}

impl CompileArgs {
    pub fn validate(&self) -> crate::Result<CompileOptions> {
        self.check()
    }

    fn check(&self) -> crate::Result<CompileOptions> {
        if !self.dir.is_dir() {
            return Err(crate::opt("-D", self.dir.display(), "no such directory"));
        }
        if !(0..=10_000).contains(&self.initial) {
            return Err(crate::opt("-i", self.initial, "must be from 0 to 10000"));
        }
        if !(0..=100_000).contains(&self.runs) {
            return Err(crate::opt("-r", self.runs, "must be from 0 to 100000"));
        }
        if !(1..=64 << 20).contains(&self.buffer) {
            return Err(crate::opt(
                "-b",
                self.buffer,
                "must be from 1 to 67108864 bytes",
            ));
        }
        let (data, from) = match (&self.sources, &self.tree_from) {
            (Some(s), _) => (Datasets::from_dir(s)?, s.display().to_string()),
            (None, Some(t)) => (
                Datasets::from_tree(tree_dataset(t)?),
                format!("tree {}", t.display()),
            ),
            (None, None) => (Datasets::embedded(), "compilebench's (built in)".into()),
        };
        Ok(CompileOptions {
            dir: self.dir.clone(),
            initial: self.initial as u64,
            runs: self.runs as u64,
            buffer: self.buffer as usize,
            sync: !self.no_sync,
            seed: self.seed,
            cleanup: self.cleanup,
            datasets: from,
            tree_files: data.unpatched.0.len(),
            tree_bytes: data.unpatched.bytes(),
            data,
        })
    }
}

/// Names and sizes of every regular file under `dir`.
fn tree_dataset(dir: &Path) -> crate::Result<Dataset> {
    let refused = |why: String| crate::opt("--tree-from", dir.display(), why);
    let mut files = Vec::new();
    tree::walk(dir, true, &mut |_, _, fs| {
        for f in fs {
            let m = std::fs::symlink_metadata(f)
                .map_err(|e| crate::Error::io(f.display().to_string(), e))?;
            if m.is_file() {
                let rel = f.strip_prefix(dir).map(|p| p.display().to_string());
                files.push((rel.unwrap_or_default(), m.len()));
            }
        }
        Ok(())
    })
    .map_err(|e| refused(e.to_string()))?;
    if files.is_empty() {
        return Err(refused("no files".into()));
    }
    files.sort();
    Ok(Dataset(files))
}

/// The kinds of result, in compilebench's table order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    InitialCreate,
    Create,
    Patch,
    Compile,
    Clean,
    ReadTree,
    ReadCompiledTree,
    DeleteTree,
    DeleteCompiledTree,
    StatTree,
    StatCompiledTree,
}

impl Kind {
    pub const ALL: [Kind; 11] = [
        Kind::InitialCreate,
        Kind::Create,
        Kind::Patch,
        Kind::Compile,
        Kind::Clean,
        Kind::ReadTree,
        Kind::ReadCompiledTree,
        Kind::DeleteTree,
        Kind::DeleteCompiledTree,
        Kind::StatTree,
        Kind::StatCompiledTree,
    ];

    /// compilebench's name for it (its own spelling, "intial", kept so its
    /// readers still match).
    pub fn label(self) -> &'static str {
        match self {
            Kind::InitialCreate => "intial create",
            Kind::Create => "create",
            Kind::Patch => "patch",
            Kind::Compile => "compile",
            Kind::Clean => "clean",
            Kind::ReadTree => "read tree",
            Kind::ReadCompiledTree => "read compiled tree",
            Kind::DeleteTree => "delete tree",
            Kind::DeleteCompiledTree => "delete compiled tree",
            Kind::StatTree => "stat tree",
            Kind::StatCompiledTree => "stat compiled tree",
        }
    }

    /// Deletes and stats are reported in seconds a run; the rest in MB/s.
    pub fn in_seconds(self) -> bool {
        matches!(
            self,
            Kind::DeleteTree | Kind::DeleteCompiledTree | Kind::StatTree | Kind::StatCompiledTree
        )
    }
}

/// One kind's runs.
#[derive(Debug, Clone, Default, Serialize)]
pub struct KindResult {
    pub test: String,
    pub runs: u64,
    pub bytes: u64,
    pub seconds: f64,
    /// Sums over the runs; the table prints them per run, as compilebench.
    pub usr_s: f64,
    pub sys_s: f64,
    /// The average of the runs' MB/s, or of their seconds (delete, stat).
    pub avg: f64,
    /// `mib_per_sec` (compilebench's "MB/s" are MiB), or `seconds`.
    pub unit: fslab_model::Unit,
    #[serde(skip)]
    sum: f64,
}

impl KindResult {
    fn add(&mut self, t: &Took, kind: Kind) {
        self.runs += 1;
        self.bytes += t.bytes;
        self.seconds += t.seconds;
        self.usr_s += t.usr_s;
        self.sys_s += t.sys_s;
        self.sum += if kind.in_seconds() {
            t.seconds
        } else {
            t.mb_per_s()
        };
        self.avg = self.sum / self.runs as f64;
    }

    /// compilebench's numbers for this kind: its runs and their average
    /// (MB/s of MiB, or seconds), as its `run complete:` table has them.
    pub fn metrics(&self) -> Vec<fslab_model::Metric> {
        use fslab_model::{Better, Metric, Unit};
        if self.runs == 0 {
            return Vec::new();
        }
        let better = if self.unit.is_time() {
            Better::Lower
        } else {
            Better::Higher
        };
        let k = Some(self.test.as_str());
        vec![
            Metric::new(
                "compilebench",
                k,
                "total runs",
                self.runs as f64,
                Unit::Count,
                Better::Neither,
            ),
            Metric::new("compilebench", k, AVG, self.avg, self.unit, better),
        ]
    }

    /// compilebench's `print_stat` line.
    pub fn line(&self) -> String {
        if self.runs == 0 {
            return format!("no runs for {}", self.test);
        }
        let n = self.runs as f64;
        format!(
            "{} total runs {} avg {:.2} {} (user {:.2}s sys {:.2}s)",
            self.test,
            self.runs,
            self.avg,
            word(self.unit),
            self.usr_s / n,
            self.sys_s / n
        )
    }
}

/// What `--json` prints.
#[derive(Debug, Clone, Serialize)]
pub struct CompileReport {
    #[serde(flatten)]
    pub outcome: Outcome,
    pub options: CompileOptions,
    pub results: Vec<KindResult>,
}

impl WithOutcome for CompileReport {
    fn outcome(&self) -> &Outcome {
        &self.outcome
    }
}

/// The states a tree is in, each with its trees in the order they came.
const UNPATCHED: usize = 0;
const PATCHED: usize = 1;
const UNPATCHED_COMPILED: usize = 2;
const PATCHED_COMPILED: usize = 3;

/// compilebench's running state: the ordered datasets, the trees in each
/// state, its generator and what it measured.
struct Bench<'a> {
    o: &'a CompileOptions,
    d: Datasets,
    rnd: PyRandom,
    states: [Vec<String>; 4],
    buf: Vec<u8>,
    results: Vec<KindResult>,
    /// compilebench's lines, printed by the main thread as they come.
    lines: &'a Mutex<Vec<String>>,
    drop_caches_failed: bool,
}

impl Bench<'_> {
    fn say(&mut self, line: String) {
        self.lines
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(line);
    }

    /// Picks one of the `(from, ...)` choices whose `from` state has trees,
    /// then one tree of it; None when there is none, as compilebench's
    /// `good` list is empty.
    fn pick<T: Copy>(&mut self, choices: &[(usize, T)]) -> Option<(T, usize, String)> {
        let good: Vec<&(usize, T)> = choices
            .iter()
            .filter(|c| !self.states[c.0].is_empty())
            .collect();
        if good.is_empty() {
            return None;
        }
        let (from, what) = *good[self.rnd.choice(good.len())];
        let i = self.rnd.choice(self.states[from].len());
        Some((what, from, self.states[from][i].clone()))
    }

    fn dataset(&self, which: usize) -> &Dataset {
        match which {
            UNPATCHED => &self.d.unpatched,
            PATCHED => &self.d.patched,
            UNPATCHED_COMPILED => &self.d.unpatched_compiled,
            _ => &self.d.compiled,
        }
    }

    fn path(&self, tree: &str) -> PathBuf {
        self.o.dir.join(tree)
    }

    fn moved(&mut self, tree: &str, from: usize, to: usize) {
        self.states[from].retain(|t| t != tree);
        self.states[to].push(tree.to_string());
    }

    /// compilebench's `run_directory` of dataset `which` into `tree`, with
    /// its line (`OPERATION TREE NMB in S seconds (X MB/s)`).
    fn make(
        &mut self,
        which: usize,
        tree: &str,
        op: &str,
        unlink: bool,
        readfirst: bool,
        sync: bool,
    ) -> crate::Result<Took> {
        let path = self.path(tree);
        let (d, buf) = (self.dataset(which).clone(), &self.buf);
        let t = tree::timed(sync, || {
            tree::run_directory(&d, &path, buf, unlink, readfirst)
        })?;
        self.say(format!(
            "{op} {tree} {}MB in {:.2} seconds ({:.2} MB/s)",
            t.bytes >> 20,
            t.seconds,
            t.mb_per_s()
        ));
        Ok(t)
    }

    fn patch(&mut self) -> crate::Result<Option<(Kind, Took)>> {
        let Some((to, from, tree)) =
            self.pick(&[(UNPATCHED, PATCHED), (UNPATCHED_COMPILED, PATCHED_COMPILED)])
        else {
            return Ok(None);
        };
        let unlink = self.rnd.randint(0, 3) == 1;
        let which = if from == UNPATCHED {
            PATCHED
        } else {
            PATCHED_COMPILED
        };
        let t = self.make(which, &tree, "patch dir", unlink, true, self.o.sync)?;
        self.moved(&tree, from, to);
        Ok(Some((Kind::Patch, t)))
    }

    fn compile(&mut self) -> crate::Result<Option<(Kind, Took)>> {
        let Some((to, from, tree)) =
            self.pick(&[(UNPATCHED, UNPATCHED_COMPILED), (PATCHED, PATCHED_COMPILED)])
        else {
            return Ok(None);
        };
        let t = self.make(to, &tree, "compile dir", false, false, self.o.sync)?;
        self.moved(&tree, from, to);
        Ok(Some((Kind::Compile, t)))
    }

    fn clean(&mut self) -> crate::Result<Option<(Kind, Took)>> {
        let Some((to, from, tree)) =
            self.pick(&[(PATCHED_COMPILED, PATCHED), (UNPATCHED_COMPILED, UNPATCHED)])
        else {
            return Ok(None);
        };
        let (d, path) = (self.dataset(from).clone(), self.path(&tree));
        let t = tree::timed(self.o.sync, || tree::clean_directory(&d, &path))?;
        self.say(format!(
            "clean {tree} {}MB in {:.2} seconds ({:.2} MB/s)",
            t.bytes >> 20,
            t.seconds,
            t.mb_per_s()
        ));
        self.moved(&tree, from, to);
        Ok(Some((Kind::Clean, t)))
    }

    /// The four states in the order compilebench lists them for delete,
    /// read and stat.
    const ANY: [(usize, usize); 4] = [
        (PATCHED, PATCHED),
        (UNPATCHED, UNPATCHED),
        (UNPATCHED_COMPILED, UNPATCHED_COMPILED),
        (PATCHED_COMPILED, PATCHED_COMPILED),
    ];

    fn delete(&mut self) -> crate::Result<Option<(Kind, Took)>> {
        let Some((state, _, tree)) = self.pick(&Self::ANY) else {
            return Ok(None);
        };
        let path = self.path(&tree);
        let t = tree::timed(self.o.sync, || tree::rmrf(&path))?;
        self.states[state].retain(|x| *x != tree);
        self.say(format!("delete {tree} in {:.2} seconds", t.seconds));
        let compiled = matches!(state, UNPATCHED_COMPILED | PATCHED_COMPILED);
        Ok(Some((
            if compiled {
                Kind::DeleteCompiledTree
            } else {
                Kind::DeleteTree
            },
            t,
        )))
    }

    fn read(&mut self) -> crate::Result<Option<(Kind, Took)>> {
        let Some((state, _, tree)) = self.pick(&Self::ANY) else {
            return Ok(None);
        };
        let (path, len) = (self.path(&tree), self.buf.len());
        let t = tree::timed(self.o.sync, || tree::read_dirtree(&path, len))?;
        self.say(format!(
            "read dir {tree} in {:.2} {:.2} MB/s",
            t.seconds,
            t.mb_per_s()
        ));
        let compiled = matches!(state, UNPATCHED_COMPILED | PATCHED_COMPILED);
        Ok(Some((
            if compiled {
                Kind::ReadCompiledTree
            } else {
                Kind::ReadTree
            },
            t,
        )))
    }

    fn stat(&mut self) -> crate::Result<Option<(Kind, Took)>> {
        let Some((state, _, tree)) = self.pick(&Self::ANY) else {
            return Ok(None);
        };
        let path = self.path(&tree);
        let t = tree::timed(self.o.sync, || tree::stat_dirtree(&path))?;
        self.say(format!("stat dir {tree} in {:.2} seconds", t.seconds));
        let compiled = matches!(state, UNPATCHED_COMPILED | PATCHED_COMPILED);
        Ok(Some((
            if compiled {
                Kind::StatCompiledTree
            } else {
                Kind::StatTree
            },
            t,
        )))
    }

    fn create(&mut self) -> crate::Result<Option<(Kind, Took)>> {
        let mut tree = format!("kernel-{}", self.rnd.randint(100, 100_000));
        while self.path(&tree).exists() {
            tree = format!("kernel-{}", self.rnd.randint(100, 100_000));
        }
        let t = self.make(UNPATCHED, &tree, "create dir", false, false, self.o.sync)?;
        self.states[UNPATCHED].push(tree);
        Ok(Some((Kind::Create, t)))
    }

    /// compilebench's `drop_caches`: before every random operation, unless
    /// `-n`; a failure is said once and not tried again.
    fn drop_caches(&mut self) {
        if self.drop_caches_failed || !self.o.sync {
            return;
        }
        if std::fs::write("/proc/sys/vm/drop_caches", "3").is_err() {
            self.say("error on drop caches, will skip it from now on".into());
            self.drop_caches_failed = true;
        }
    }

    fn record(&mut self, kind: Kind, t: &Took) {
        self.results[kind as usize].add(t, kind);
    }

    /// One random operation, as compilebench's main loop picks it; None
    /// when the operation had nothing to work on (no run counted).
    fn random_op(&mut self) -> crate::Result<Option<(Kind, Took)>> {
        match self.rnd.choice(7) {
            0 => self.patch(),
            1 => self.compile(),
            2 => self.clean(),
            3 => self.delete(),
            4 => self.create(),
            5 => self.read(),
            _ => self.stat(),
        }
    }
}

/// compilebench's datasets, reduced and put in its orders (the native
/// orders by making, walking and removing trees of empty files in the
/// working directory; the random one by its generator).
fn ordered(o: &CompileOptions, rnd: &mut PyRandom, out: &mut dyn Write) -> crate::Result<Datasets> {
    let mut d = o.data.clone();
    d.reduce();
    let native = |ds: &Dataset, tag: &str, out: &mut dyn Write| -> crate::Result<Dataset> {
        let t = std::time::Instant::now();
        let r = tree::native_order(ds, &o.dir)?;
        let _ = writeln!(
            out,
            "native {tag} ordered {} files in {:.2} seconds",
            r.0.len(),
            t.elapsed().as_secs_f64()
        );
        Ok(r)
    };
    d.unpatched = native(&d.unpatched, "unpatched", out)?;
    d.patched = native(&d.patched, "patched", out)?;
    dataset::random_order(&mut d.unpatched_compiled, rnd);
    d.compiled = native(&d.compiled, "patched compiled", out)?;
    Ok(d)
}

/// Runs compilebench.
pub fn run(o: &CompileOptions, start: Start<'_, '_>) -> crate::Result<CompileReport> {
    let Begun { mut ctx, out, .. } = start.begin("compilebench", &o.dir, o)?;
    let stop = ctx.stop;
    let _ = writeln!(
        out,
        "using working directory {}, {} intial dirs {} runs",
        o.dir.display(),
        o.initial,
        o.runs
    );
    let mut rnd = PyRandom::new(o.seed);
    let data = match ordered(o, &mut rnd, out) {
        Ok(d) => d,
        Err(e) => {
            ctx.finish(Some(e.to_string()))?;
            return Err(e);
        }
    };
    // The generator goes on from where ordering the datasets left it, as
    // compilebench's does.
    let lines = Mutex::new(Vec::new());
    let shared = Mutex::new((None::<String>, Vec::new(), Some(rnd)));
    let print = |out: &mut dyn Write| {
        for l in lines.lock().unwrap_or_else(|e| e.into_inner()).drain(..) {
            let _ = writeln!(out, "{l}");
        }
        let _ = out.flush();
    };
    // The initial trees, then the random operations.
    let total = Some(o.initial + o.runs);
    ctx.phase_ticking(
        "compilebench",
        total,
        1,
        |_, progress| {
            let mut g = shared.lock().unwrap_or_else(|e| e.into_inner());
            let (err, results, rnd) = &mut *g;
            let mut b = Bench {
                o,
                d: data.clone(),
                rnd: rnd.take().unwrap_or_else(|| PyRandom::new(o.seed)),
                states: Default::default(),
                buf: vec![b'a'; o.buffer],
                results: Kind::ALL
                    .iter()
                    .map(|k| KindResult {
                        test: k.label().into(),
                        unit: if k.in_seconds() {
                            fslab_model::Unit::Seconds
                        } else {
                            fslab_model::Unit::MibPerSec
                        },
                        ..Default::default()
                    })
                    .collect(),
                lines: &lines,
                drop_caches_failed: false,
            };
            *err = run_all(&mut b, stop, progress).err().map(|e| e.to_string());
            if o.cleanup {
                for s in &b.states {
                    for t in s {
                        let _ = std::fs::remove_dir_all(b.path(t));
                    }
                }
            }
            *results = std::mem::take(&mut b.results);
        },
        |_| print(&mut *out),
    )?;
    print(&mut *out);
    let (err, results, _) = shared.into_inner().unwrap_or_else(|e| e.into_inner());
    finish_table(out, &results);
    for r in results.iter().filter(|r| r.runs > 0) {
        ctx.record_phase(PhaseResult {
            usr_cpu_s: r.usr_s,
            sys_cpu_s: r.sys_s,
            bytes: r.bytes,
            complete: true,
            ..PhaseResult::timed(&r.test.replace(' ', "_"), r.runs, r.seconds)
        })?;
    }
    ctx.record_metrics(results.iter().flat_map(KindResult::metrics).collect())?;
    let outcome = ctx.finish(err)?;
    Ok(CompileReport {
        outcome,
        options: o.clone(),
        results,
    })
}

/// The initial trees, then the random operations.
fn run_all(
    b: &mut Bench,
    stop: &AtomicBool,
    progress: &crate::measure::Progress,
) -> crate::Result<()> {
    let mut done = 0;
    for x in 0..b.o.initial {
        if stop.load(Ordering::Relaxed) {
            return Ok(());
        }
        let tree = format!("kernel-{x}");
        let t = b.make(UNPATCHED, &tree, "create dir", false, false, false)?;
        b.states[UNPATCHED].push(tree);
        b.record(Kind::InitialCreate, &t);
        done += 1;
        progress.set(0, done);
    }
    if b.o.sync {
        rustix::fs::sync();
    }
    let mut runs = 0;
    while runs < b.o.runs && !stop.load(Ordering::Relaxed) {
        b.drop_caches();
        if let Some((kind, t)) = b.random_op()? {
            b.record(kind, &t);
            runs += 1;
            done += 1;
            progress.set(0, done);
        }
    }
    Ok(())
}

/// compilebench's word for a kind's average, in its table and as the metric's name.
const AVG: &str = "avg";

/// How compilebench writes a unit after a number.
fn word(u: fslab_model::Unit) -> &'static str {
    if u.is_time() {
        "seconds"
    } else {
        "MB/s"
    }
}

/// compilebench's `run complete:` table, then seed 001's.
fn finish_table(out: &mut dyn Write, results: &[KindResult]) {
    let _ = writeln!(out, "\nrun complete:");
    let _ = writeln!(out, "{}", "=".repeat(74));
    for r in results {
        let _ = writeln!(out, "{}", r.line());
    }
    let _ = writeln!(out, "\n{:<24}{:>6}    {:>14}", "test", "runs", AVG);
    let _ = writeln!(out, "{}", "=".repeat(48));
    for r in results.iter().filter(|r| r.runs > 0) {
        let _ = writeln!(
            out,
            "{:<24}{:>6}    {:>8.2} {}",
            r.test,
            r.runs,
            r.avg,
            word(r.unit)
        );
    }
    let _ = out.flush();
}

#[cfg(test)]
mod tests;
