//! `fslab compilebench`: Chris Mason's compilebench, the fourth benchmark of
//! seed 001. It makes `-i` kernel-like trees, then does `-r` operations
//! picked at random (seeded, so a run repeats exactly) among: create a new
//! tree, patch one, compile one, clean a compiled one, read a tree or a
//! compiled tree, delete one, stat one. Each kind reports its runs and MB/s
//! (or seconds for delete and stat), in compilebench's lines and in seed
//! 001's table.
//!
//! The trees follow a model: directories with file counts and sizes. The
//! built-in model is shaped like a kernel source tree (many small C files
//! and headers, a long tail of large files); `--tree-from DIR` measures any
//! directory instead (names and sizes, not contents). Patching rewrites about
//! a tenth of a tree's files at 90-110% of their size and adds a few new
//! ones; compiling writes an object file of half the size next to every
//! `.c` file; cleaning removes the objects. The trees stay at the end, as
//! with compilebench (`--cleanup` removes them).

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use fslab_record::{PhaseResult, Recorder};
use serde::Serialize;

use fslab_stats::rng::XorShift64;

use crate::common::{CommonArgs, Hooks, Outcome, RunCtx, WithOutcome};

/// `fslab compilebench -D DIR [-i TREES] [-r RUNS]`
#[derive(Debug, Clone, clap::Args)]
pub struct CompileArgs {
    /// Working directory
    #[arg(short = 'D', value_name = "DIR")]
    pub dir: PathBuf,
    /// Initial trees
    #[arg(
        short = 'i',
        default_value_t = 30,
        value_name = "TREES",
        allow_negative_numbers = true
    )]
    pub initial: i64,
    /// Random operations after the initial trees
    #[arg(
        short = 'r',
        default_value_t = 30,
        value_name = "RUNS",
        allow_negative_numbers = true
    )]
    pub runs: i64,
    /// Take the tree model from this directory (names and sizes)
    #[arg(long, value_name = "DIR")]
    pub tree_from: Option<PathBuf>,
    /// Remove the trees at the end (compilebench leaves them)
    #[arg(long)]
    pub cleanup: bool,
    /// Seed of the random choices
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    #[command(flatten)]
    pub common: CommonArgs,
}

/// A tree model: relative file paths and sizes (directories implied).
#[derive(Debug, Clone, Serialize)]
pub struct Model {
    pub files: Vec<(String, u64)>,
}

impl Model {
    pub fn bytes(&self) -> u64 {
        self.files.iter().map(|f| f.1).sum()
    }

    /// The built-in kernel-like tree: 60 directories, 2145 files of 13 MB in
    /// all, sizes from a fixed distribution skewed to small files.
    pub fn kernel() -> Model {
        let dirs = [
            "arch/x86/kernel",
            "arch/x86/mm",
            "block",
            "crypto",
            "drivers/ata",
            "drivers/block",
            "drivers/char",
            "drivers/net",
            "drivers/scsi",
            "drivers/usb/core",
            "fs",
            "fs/ext4",
            "fs/xfs",
            "fs/btrfs",
            "include/linux",
            "include/asm-generic",
            "init",
            "ipc",
            "kernel",
            "kernel/sched",
            "lib",
            "mm",
            "net/core",
            "net/ipv4",
            "net/ipv6",
            "scripts",
            "security",
            "sound/core",
            "tools/perf",
            "virt/kvm",
        ];
        let sizes = [
            512u64, 1024, 2048, 3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768, 49152, 65536,
            131072, 262144,
        ];
        let mut rng = XorShift64(0x00c0_ffee);
        let mut next = |m: u64| rng.below(m);
        let mut files = Vec::new();
        for d in dirs {
            for sub in ["", "/sub"] {
                let n = 15 + next(40);
                for k in 0..n {
                    // Mostly small: the product of two uniform picks skews low.
                    let size = sizes[(next(sizes.len() as u64) * next(sizes.len() as u64)
                        / sizes.len() as u64) as usize];
                    let ext = if k % 3 == 0 { "h" } else { "c" };
                    files.push((format!("{d}{sub}/file{k:03}.{ext}"), size + next(512)));
                }
                files.push((format!("{d}{sub}/Makefile"), 1024 + next(2048)));
            }
        }
        Model { files }
    }

    /// Names and sizes of every regular file under `dir`.
    pub fn from_dir(dir: &Path) -> Result<Model, String> {
        fn walk(root: &Path, d: &Path, out: &mut Vec<(String, u64)>) -> std::io::Result<()> {
            for e in std::fs::read_dir(d)? {
                let e = e?;
                let t = e.file_type()?;
                if t.is_dir() {
                    walk(root, &e.path(), out)?;
                } else if t.is_file() {
                    let rel = e
                        .path()
                        .strip_prefix(root)
                        .map(|p| p.display().to_string())
                        .unwrap_or_default();
                    out.push((rel, e.metadata()?.len()));
                }
            }
            Ok(())
        }
        let mut files = Vec::new();
        walk(dir, dir, &mut files).map_err(|e| format!("--tree-from {}: {e}", dir.display()))?;
        if files.is_empty() {
            return Err(format!("--tree-from {}: no files", dir.display()));
        }
        files.sort();
        Ok(Model { files })
    }
}

/// Validated options.
#[derive(Debug, Clone, Serialize)]
pub struct CompileOptions {
    pub dir: PathBuf,
    pub initial: u64,
    pub runs: u64,
    pub seed: u64,
    pub cleanup: bool,
    pub model_files: usize,
    pub model_bytes: u64,
    #[serde(skip)]
    pub model: Model,
}

impl CompileArgs {
    pub fn validate(&self) -> Result<CompileOptions, String> {
        if !self.dir.is_dir() {
            return Err(format!("-D {}: no such directory", self.dir.display()));
        }
        if self.initial < 1 || self.initial > 10_000 {
            return Err(format!("-i {}: must be from 1 to 10000", self.initial));
        }
        if self.runs < 0 || self.runs > 100_000 {
            return Err(format!("-r {}: must be from 0 to 100000", self.runs));
        }
        let model = match &self.tree_from {
            Some(d) => Model::from_dir(d)?,
            None => Model::kernel(),
        };
        Ok(CompileOptions {
            dir: self.dir.clone(),
            initial: self.initial as u64,
            runs: self.runs as u64,
            seed: self.seed,
            cleanup: self.cleanup,
            model_files: model.files.len(),
            model_bytes: model.bytes(),
            model,
        })
    }
}

/// The kinds of operation, in seed 001's table order.
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
    fn in_seconds(self) -> bool {
        matches!(
            self,
            Kind::DeleteTree | Kind::DeleteCompiledTree | Kind::StatTree | Kind::StatCompiledTree
        )
    }
}

/// One kind's totals.
#[derive(Debug, Clone, Default, Serialize)]
pub struct KindResult {
    pub test: String,
    pub runs: u64,
    pub bytes: u64,
    pub seconds: f64,
    pub usr_s: f64,
    pub sys_s: f64,
    /// MB/s for the kinds that move data, else seconds per run.
    pub avg: f64,
    pub unit: String,
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

struct Tree {
    path: PathBuf,
    compiled: bool,
}

fn io(what: &str, p: &Path, e: std::io::Error) -> String {
    format!("{what} {}: {e}", p.display())
}

fn write_file(p: &Path, size: u64, data: &[u8]) -> Result<u64, String> {
    let mut f = std::fs::File::create(p).map_err(|e| io("create", p, e))?;
    let mut left = size;
    while left > 0 {
        let n = left.min(data.len() as u64) as usize;
        f.write_all(&data[..n]).map_err(|e| io("write", p, e))?;
        left -= n as u64;
    }
    Ok(size)
}

fn files_under(d: &Path, out: &mut Vec<PathBuf>) -> Result<(), String> {
    for e in std::fs::read_dir(d).map_err(|e| io("readdir", d, e))? {
        let e = e.map_err(|e| io("readdir", d, e))?;
        let path = e.path();
        let t = e.file_type().map_err(|err| io("stat", &path, err))?;
        if t.is_dir() {
            files_under(&e.path(), out)?;
        } else {
            out.push(e.path());
        }
    }
    Ok(())
}

struct Bench<'a> {
    o: &'a CompileOptions,
    data: Vec<u8>,
    rng: XorShift64,
    trees: Vec<Tree>,
    next_tree: usize,
}

impl Bench<'_> {
    fn rand(&mut self, m: u64) -> u64 {
        self.rng.below(m)
    }

    fn create(&mut self) -> Result<u64, String> {
        let path = self.o.dir.join(format!("kernel-{}", self.next_tree));
        self.next_tree += 1;
        let mut bytes = 0;
        for (rel, size) in &self.o.model.files {
            let p = path.join(rel);
            if let Some(parent) = p.parent() {
                std::fs::create_dir_all(parent).map_err(|e| io("mkdir", parent, e))?;
            }
            bytes += write_file(&p, *size, &self.data)?;
        }
        self.trees.push(Tree {
            path,
            compiled: false,
        });
        Ok(bytes)
    }

    fn pick(&mut self, compiled: Option<bool>) -> Option<usize> {
        let c: Vec<usize> = (0..self.trees.len())
            .filter(|&i| compiled.is_none_or(|w| self.trees[i].compiled == w))
            .collect();
        (!c.is_empty()).then(|| c[self.rand(c.len() as u64) as usize])
    }

    fn patch(&mut self, t: usize) -> Result<u64, String> {
        let root = self.trees[t].path.clone();
        let mut bytes = 0;
        let o = self.o;
        for (k, (rel, size)) in o.model.files.iter().enumerate() {
            if self.rand(10) != 0 {
                continue;
            }
            let p = root.join(rel);
            let mut buf = Vec::new();
            if let Ok(mut f) = std::fs::File::open(&p) {
                let _ = f.read_to_end(&mut buf);
            }
            let new = size * (90 + self.rand(21)) / 100;
            bytes += buf.len() as u64 + write_file(&p, new, &self.data)?;
            if k % 50 == 0 {
                bytes += write_file(
                    &root.join(format!("{rel}.patch-new")),
                    size / 2 + 1,
                    &self.data,
                )?;
            }
        }
        Ok(bytes)
    }

    fn compile(&mut self, t: usize) -> Result<u64, String> {
        let root = self.trees[t].path.clone();
        let mut bytes = 0;
        for (rel, size) in &self.o.model.files {
            if let Some(stem) = rel.strip_suffix(".c") {
                bytes += write_file(&root.join(format!("{stem}.o")), size / 2 + 64, &self.data)?;
            }
        }
        self.trees[t].compiled = true;
        Ok(bytes)
    }

    fn clean(&mut self, t: usize) -> Result<u64, String> {
        let mut files = Vec::new();
        files_under(&self.trees[t].path, &mut files)?;
        let mut bytes = 0;
        for f in files
            .iter()
            .filter(|f| f.extension().is_some_and(|e| e == "o"))
        {
            bytes += std::fs::metadata(f).map(|m| m.len()).unwrap_or(0);
            std::fs::remove_file(f).map_err(|e| io("unlink", f, e))?;
        }
        self.trees[t].compiled = false;
        Ok(bytes)
    }

    fn read(&mut self, t: usize) -> Result<u64, String> {
        let mut files = Vec::new();
        files_under(&self.trees[t].path, &mut files)?;
        let mut bytes = 0;
        let mut buf = vec![0u8; 1 << 16];
        for f in files {
            let mut h = std::fs::File::open(&f).map_err(|e| io("open", &f, e))?;
            loop {
                let n = h.read(&mut buf).map_err(|e| io("read", &f, e))?;
                if n == 0 {
                    break;
                }
                bytes += n as u64;
            }
        }
        Ok(bytes)
    }

    fn stat(&mut self, t: usize) -> Result<u64, String> {
        let mut files = Vec::new();
        files_under(&self.trees[t].path, &mut files)?;
        for f in &files {
            std::fs::symlink_metadata(f).map_err(|e| io("stat", f, e))?;
        }
        Ok(0)
    }

    fn delete(&mut self, t: usize) -> Result<u64, String> {
        let tree = self.trees.remove(t);
        std::fs::remove_dir_all(&tree.path).map_err(|e| io("delete", &tree.path, e))?;
        Ok(0)
    }

    /// Runs one operation of `kind`; None when no tree fits it.
    fn run(&mut self, kind: Kind) -> Option<Result<u64, String>> {
        Some(match kind {
            Kind::InitialCreate | Kind::Create => self.create(),
            Kind::Patch => {
                let t = self.pick(Some(false))?;
                self.patch(t)
            }
            Kind::Compile => {
                let t = self.pick(Some(false))?;
                self.compile(t)
            }
            Kind::Clean => {
                let t = self.pick(Some(true))?;
                self.clean(t)
            }
            Kind::ReadTree | Kind::ReadCompiledTree => {
                let t = self.pick(Some(kind == Kind::ReadCompiledTree))?;
                self.read(t)
            }
            Kind::StatTree | Kind::StatCompiledTree => {
                let t = self.pick(Some(kind == Kind::StatCompiledTree))?;
                self.stat(t)
            }
            Kind::DeleteTree | Kind::DeleteCompiledTree => {
                if self.trees.len() <= 1 {
                    return None;
                }
                let t = self.pick(Some(kind == Kind::DeleteCompiledTree))?;
                self.delete(t)
            }
        })
    }
}

/// Runs compilebench.
pub fn run(
    o: &CompileOptions,
    argv: &[String],
    stop: &AtomicBool,
    out: &mut dyn Write,
    rec: &mut dyn Recorder,
    hooks: &mut Hooks,
) -> Result<CompileReport, String> {
    let store = |e: fslab_record::RecordError| format!("results store: {e}");
    let params = serde_json::to_value(o).unwrap_or_default();
    let mut ctx = RunCtx::begin("compilebench", argv, &o.dir, params, rec, hooks, stop)
        .map_err(|e| e.to_string())?;
    let _ = writeln!(
        out,
        "using working directory {}, {} intial dirs {} runs",
        o.dir.display(),
        o.initial,
        o.runs
    );
    let results = Mutex::new(vec![KindResult::default(); Kind::ALL.len()]);
    let error = Mutex::new(None::<String>);
    let data: Vec<u8> = {
        let mut rng = XorShift64(0x1234_5678);
        (0..1 << 16).map(|_| rng.next_u64() as u8).collect()
    };
    let p = ctx
        .phase("compilebench", 1, |_, progress| {
            let mut b = Bench {
                o,
                data: data.clone(),
                rng: XorShift64(o.seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1),
                trees: Vec::new(),
                next_tree: 0,
            };
            let mut done = 0;
            let total = o.initial + o.runs;
            let mut step = 0;
            while step < total {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                let kind = if step < o.initial {
                    Kind::InitialCreate
                } else {
                    // One of the ten after the initial creates, evenly.
                    Kind::ALL[1 + b.rand(10) as usize]
                };
                let cpu = fslab_sys::rusage(fslab_sys::Who::Thread).unwrap_or_default();
                let t = Instant::now();
                let Some(r) = b.run(kind) else { continue };
                step += 1;
                let secs = t.elapsed().as_secs_f64();
                let used = fslab_sys::rusage(fslab_sys::Who::Thread)
                    .unwrap_or_default()
                    .since(&cpu);
                match r {
                    Ok(bytes) => {
                        let mut res = results.lock().unwrap_or_else(|e| e.into_inner());
                        let k = &mut res[kind as usize];
                        k.runs += 1;
                        k.bytes += bytes;
                        k.seconds += secs;
                        k.usr_s += used.user.as_secs_f64();
                        k.sys_s += used.system.as_secs_f64();
                    }
                    Err(e) => {
                        *error.lock().unwrap_or_else(|e| e.into_inner()) = Some(e);
                        break;
                    }
                }
                done += 1;
                progress.set(0, done);
            }
            // compilebench leaves its trees; --cleanup removes them.
            if o.cleanup {
                for t in &b.trees {
                    let _ = std::fs::remove_dir_all(&t.path);
                }
            }
        })
        .map_err(store)?;
    let _ = p;
    let mut results = results.into_inner().unwrap_or_default();
    for (kind, r) in Kind::ALL.iter().zip(results.iter_mut()) {
        r.test = kind.label().into();
        if kind.in_seconds() {
            r.unit = "seconds".into();
            r.avg = if r.runs > 0 {
                r.seconds / r.runs as f64
            } else {
                0.0
            };
        } else {
            r.unit = "MB/s".into();
            r.avg = if r.seconds > 0.0 {
                r.bytes as f64 / (1u64 << 20) as f64 / r.seconds
            } else {
                0.0
            };
        }
    }
    for r in results.iter().filter(|r| r.runs > 0) {
        let _ = writeln!(
            out,
            "{} total runs {} avg {:.2} {} (user {:.2}s sys {:.2}s)",
            r.test, r.runs, r.avg, r.unit, r.usr_s, r.sys_s
        );
        ctx.record_phase(PhaseResult {
            phase: r.test.replace(' ', "_"),
            ops: r.runs,
            elapsed_s: r.seconds,
            ops_per_s: if r.seconds > 0.0 {
                r.bytes as f64 / r.seconds
            } else {
                0.0
            },
            usr_cpu_s: r.usr_s,
            sys_cpu_s: r.sys_s,
            bytes: r.bytes,
            complete: true,
        })
        .map_err(store)?;
    }
    let _ = writeln!(out, "\n{:<24}{:>6}    {:>14}", "test", "runs", "avg");
    let _ = writeln!(out, "{}", "=".repeat(48));
    for r in results.iter().filter(|r| r.runs > 0) {
        let _ = writeln!(
            out,
            "{:<24}{:>6}    {:>8.2} {}",
            r.test, r.runs, r.avg, r.unit
        );
    }
    let _ = out.flush();
    let err = error.into_inner().unwrap_or(None);
    let outcome = ctx.finish(err).map_err(store)?;
    Ok(CompileReport {
        outcome,
        options: o.clone(),
        results,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_index_their_results_in_table_order() {
        for (i, k) in Kind::ALL.iter().enumerate() {
            assert_eq!(*k as usize, i, "{k:?}");
        }
        assert_eq!(Kind::ALL[0].label(), "intial create");
        let in_seconds: Vec<&str> = Kind::ALL
            .iter()
            .filter(|k| k.in_seconds())
            .map(|k| k.label())
            .collect();
        assert_eq!(
            in_seconds,
            [
                "delete tree",
                "delete compiled tree",
                "stat tree",
                "stat compiled tree"
            ]
        );
    }

    #[test]
    fn the_kernel_model_is_fixed_and_kernel_like() {
        let a = Model::kernel();
        assert_eq!(a.files, Model::kernel().files);
        assert!(
            a.files.len() > 1000 && a.files.len() < 3000,
            "{}",
            a.files.len()
        );
        let mut sizes: Vec<u64> = a.files.iter().map(|f| f.1).collect();
        sizes.sort();
        assert!(
            sizes[sizes.len() / 2] < 20_000,
            "median {}",
            sizes[sizes.len() / 2]
        );
        assert!(a.files.iter().filter(|f| f.0.ends_with(".c")).count() > 500);
    }
}
