//! `fslab tiotest`: tiobench's tiotest, the tool of seed 003. Each thread
//! writes its own file sequentially, writes random blocks of it, reads it
//! sequentially and reads random blocks, and the two tables of seed 003
//! come out in tiotest's layout, followed by a percentile table.
//!
//! The CPU columns: the process's user and system CPU time during the
//! phase, divided by the phase's wall-clock time, in percent of one CPU
//! (so 8 busy threads on 8 CPUs read 800%). tiotest instead adds up the
//! process-wide rusage once per thread, which counts the same time once
//! for every thread.

pub mod plugin;
mod transfer;

use crate::{Begun, Start};
use std::os::fd::OwnedFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Mutex;

use fslab_model::units::SizeError;
use fslab_model::LatencyHistogram;
use fslab_sys::mmap::SharedMap;
use rustix::fs::OFlags;
use serde::Serialize;

use crate::common::{phase_result, CommonArgs, Outcome, WithOutcome};
use transfer::{transfer, whole_block, Failed};

/// `fslab tiotest -t THREADS -f MB -r RANDOM_OPS -b BLOCK -d DIR ...`
#[derive(Debug, Clone, clap::Args, serde::Serialize, serde::Deserialize)]
pub struct TioArgs {
    /// Threads (each with its own file)
    #[arg(
        short = 't',
        long = "threads",
        default_value_t = 4,
        value_name = "THREADS",
        allow_negative_numbers = true
    )]
    pub threads: i64,
    /// Megabytes (MiB) per thread's file: a count of MiB, or a size (1G = 1024)
    #[arg(
        short = 'f',
        long = "file-mb",
        default_value_t = 10,
        value_name = "MB",
        allow_negative_numbers = true,
        value_parser = mib_count
    )]
    pub mb: i64,
    /// Random operations per thread
    #[arg(
        short = 'r',
        long = "random-ops",
        default_value_t = 1000,
        value_name = "OPS",
        allow_negative_numbers = true
    )]
    pub random_ops: i64,
    /// Block size in bytes per call (a size: 4k = 4096)
    #[arg(
        short = 'b',
        long = "block",
        default_value_t = 4096,
        value_name = "BLOCK",
        allow_negative_numbers = true,
        value_parser = byte_count
    )]
    pub block: i64,
    /// Directory for the files (repeatable: threads are spread over them)
    #[arg(short = 'd', long = "dir", value_name = "DIR")]
    pub dirs: Vec<PathBuf>,
    /// Skip test N: 0 write, 1 random write, 2 read, 3 random read (repeatable)
    #[arg(short = 'k', long = "skip", value_name = "N")]
    pub skip: Vec<u8>,
    /// No latency tables
    #[arg(short = 'L', long = "no-latency")]
    pub no_latency: bool,
    /// Terse, machine-readable output (tiotest's write:... lines)
    #[arg(short = 'T', long = "terse")]
    pub terse: bool,
    /// Use mmap for the IO
    #[arg(short = 'M', long = "mmap")]
    pub mmap: bool,
    /// Write the files one thread at a time
    #[arg(short = 'W', long = "sequential-writers")]
    pub sequential_writers: bool,
    /// Open with O_SYNC
    #[arg(short = 'S', long = "sync")]
    pub sync: bool,
    /// Open with O_DIRECT
    #[arg(short = 'X', long = "direct")]
    pub direct: bool,
    /// Drop caches before each phase (needs root); same as --drop-caches
    #[arg(short = 'F', long = "drop-caches-each")]
    pub drop: bool,
    #[command(flatten)]
    pub common: CommonArgs,
}

/// The four tests, in order.
pub const TESTS: [&str; 4] = ["Write", "Random Write", "Read", "Random Read"];
const PHASES: [&str; 4] = ["write", "random_write", "read", "random_read"];

/// Validated options.
#[derive(Debug, Clone, Serialize)]
pub struct TioOptions {
    pub threads: u32,
    pub file_bytes: u64,
    pub random_ops: u64,
    pub block: u64,
    pub dirs: Vec<PathBuf>,
    pub run: [bool; 4],
    pub latency_table: bool,
    pub terse: bool,
    pub mmap: bool,
    pub sequential_writers: bool,
    pub sync: bool,
    pub direct: bool,
}

impl TioArgs {
    pub fn validate(&self) -> crate::Result<TioOptions> {
        self.check()
    }

    fn check(&self) -> crate::Result<TioOptions> {
        let pos = |flag: &str, v: i64| {
            if v < 1 {
                Err(crate::opt(flag, v, "must be at least 1"))
            } else {
                Ok(v as u64)
            }
        };
        let threads = pos("-t", self.threads)?;
        if threads > 1024 {
            return Err(crate::opt("-t", threads, "at most 1024 threads"));
        }
        let file_bytes = pos("-f", self.mb)? << 20;
        let block = pos("-b", self.block)?;
        if block > file_bytes {
            return Err(crate::opt(
                "-b",
                block,
                format!("the block is larger than each file ({} MB)", self.mb),
            ));
        }
        if block > 64 << 20 {
            return Err(crate::opt("-b", block, "at most 64 MiB"));
        }
        if self.direct && block % 512 != 0 {
            return Err(crate::opt(
                "-b",
                block,
                "O_DIRECT (-X) needs a multiple of 512 bytes",
            ));
        }
        let random_ops = pos("-r", self.random_ops)?;
        let dirs = if self.dirs.is_empty() {
            vec![PathBuf::from(".")]
        } else {
            self.dirs.clone()
        };
        for d in &dirs {
            if !d.is_dir() {
                return Err(crate::opt("-d", d.display(), "no such directory"));
            }
        }
        let mut run = [true; 4];
        for &k in &self.skip {
            if k > 3 {
                return Err(crate::opt(
                    "-k",
                    k,
                    "tests are 0 write, 1 random write, 2 read, 3 random read",
                ));
            }
            run[k as usize] = false;
        }
        if self.mmap && self.direct {
            return Err(crate::Error::Options(
                "-M and -X exclude each other (mapped IO cannot be direct)".into(),
            ));
        }
        Ok(TioOptions {
            threads: threads as u32,
            file_bytes,
            random_ops,
            block,
            dirs,
            run,
            latency_table: !self.no_latency,
            terse: self.terse,
            mmap: self.mmap,
            sequential_writers: self.sequential_writers,
            sync: self.sync,
            direct: self.direct,
        })
    }
}

/// One test's measurements.
#[derive(Debug, Clone, Default, Serialize)]
pub struct TestResult {
    pub item: String,
    pub bytes: u64,
    pub seconds: f64,
    pub mb_per_s: f64,
    pub usr_cpu_pct: f64,
    pub sys_cpu_pct: f64,
    pub avg_latency_ms: f64,
    pub max_latency_ms: f64,
    pub pct_over_2s: f64,
    pub pct_over_10s: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub p999_ms: f64,
    #[serde(skip)]
    hist: LatencyHistogram,
    #[serde(skip)]
    over2: u64,
    #[serde(skip)]
    over10: u64,
}

impl TestResult {
    /// tiotest's numbers for this test: its two tables' columns.
    pub fn metrics(&self) -> Vec<fslab_model::Metric> {
        use fslab_model::{Better, Metric, Unit};
        let m = |name: &str, value: f64, unit: Unit, better: Better| {
            Metric::new("tiotest", Some(&self.item), name, value, unit, better)
        };
        vec![
            m("Time", self.seconds, Unit::Seconds, Better::Lower),
            m("Rate", self.mb_per_s, Unit::MibPerSec, Better::Higher),
            m("Usr CPU", self.usr_cpu_pct, Unit::Percent, Better::Lower),
            m("Sys CPU", self.sys_cpu_pct, Unit::Percent, Better::Lower),
            m(
                "Average latency",
                self.avg_latency_ms,
                Unit::Milliseconds,
                Better::Lower,
            ),
            m(
                "Maximum latency",
                self.max_latency_ms,
                Unit::Milliseconds,
                Better::Lower,
            ),
            m("% >2 sec", self.pct_over_2s, Unit::Percent, Better::Lower),
            m("% >10 sec", self.pct_over_10s, Unit::Percent, Better::Lower),
        ]
    }
}

/// What `--json` prints.
#[derive(Debug, Clone, Serialize)]
pub struct TioReport {
    #[serde(flatten)]
    pub outcome: Outcome,
    pub options: TioOptions,
    pub tests: Vec<TestResult>,
}

impl WithOutcome for TioReport {
    fn outcome(&self) -> &Outcome {
        &self.outcome
    }
}

/// A thread's outcome in a test.
#[derive(Default)]
struct Part {
    bytes: u64,
    hist: LatencyHistogram,
    over2: u64,
    over10: u64,
    error: Option<String>,
}

impl Part {
    #[inline]
    fn lat(&mut self, ns: u64) {
        self.hist.record(ns);
        if ns > 2_000_000_000 {
            self.over2 += 1;
            if ns > 10_000_000_000 {
                self.over10 += 1;
            }
        }
    }
}

impl TioOptions {
    /// Thread `t`'s file, named as tiotest names it.
    fn file(&self, t: usize) -> PathBuf {
        self.dirs[t % self.dirs.len()].join(format!("_tiotest_pid{}.thr{t}", std::process::id()))
    }

    /// Opens thread `t`'s file for `test` with tiotest's flags: the write
    /// test `O_RDWR|O_CREAT|O_TRUNC`, the random write test `O_WRONLY`, the
    /// read tests `O_RDONLY`; `-S` adds `O_SYNC`. (`-X`, fslab's, adds
    /// `O_DIRECT`; a mapped read needs `O_RDWR` for fslab's shared map.)
    fn open(&self, t: usize, test: usize) -> std::io::Result<std::fs::File> {
        let mut o = std::fs::OpenOptions::new();
        match test {
            0 => o.read(true).write(true).create(true).truncate(true),
            1 => o.write(true),
            _ if self.mmap => o.read(true).write(true),
            _ => o.read(true),
        };
        let mut flags = 0;
        if self.sync && test < 2 {
            flags |= OFlags::SYNC.bits() as i32;
        }
        if self.direct {
            flags |= OFlags::DIRECT.bits() as i32;
        }
        o.custom_flags(flags).open(self.file(t))
    }
}

/// A buffer of `len` bytes aligned to 4096 (O_DIRECT needs alignment).
struct Aligned {
    v: Vec<u8>,
    off: usize,
    len: usize,
}

impl Aligned {
    fn new(len: usize, fill: u8) -> Aligned {
        let v = vec![fill; len + 4096];
        let off = v.as_ptr().align_offset(4096);
        Aligned { v, off, len }
    }
    fn get(&mut self) -> &mut [u8] {
        &mut self.v[self.off..self.off + self.len]
    }
}

/// One thread's share of one test, with tiotest's calls and timed region:
///
/// Each open is followed by an `lseek` to the start (tiotest's seek to the
/// thread's offset), but for a mapped test.
///
/// - write: open (`O_TRUNC`), one `write(2)` per block at the file
///   position (`-M`: `ftruncate`, `mmap`, a copy per block, `munmap`),
///   then `fsync` and `close`;
/// - random write: open, then per operation `lseek` to a random block
///   and `write`, then `fsync` and `close`;
/// - read: open, one `read(2)` per block (`-M`: from a mapping), `close`;
/// - random read: open, per operation `lseek` and `read`, `close`.
///
/// Everything from the open to the close lies inside the phase's time,
/// as inside tiotest's. A block's latency is the `write`/`read` (or copy)
/// alone: for sequential blocks the interval between one call's end and
/// the next's (one clock read per call), for random blocks a clock read
/// on each side of the call, leaving the `lseek` out as tiotest does.
/// Random blocks are `random % (blocks - 1)`, as tiotest draws them (the
/// last block is never chosen); random tests never use the mapping.
fn work(
    o: &TioOptions,
    test: usize,
    t: usize,
    progress: &crate::measure::Progress,
    stop: &AtomicBool,
    turn: &AtomicU32,
) -> Part {
    let mut part = Part::default();
    if test == 0 && o.sequential_writers {
        while turn.load(Ordering::Acquire) != t as u32 {
            if stop.load(Ordering::Relaxed) {
                return part;
            }
            std::thread::sleep(std::time::Duration::from_micros(200));
        }
    }
    let file = match o.open(t, test) {
        Ok(f) => f,
        Err(e) => {
            part.error = Some(format!("open {}: {e}", o.file(t).display()));
            return part;
        }
    };
    let fd: OwnedFd = file.into();
    // tiotest 0.3.5 seeks to the thread's offset in the file (0) after
    // each open, unless the test goes through a mapping.
    if !(o.mmap && test.is_multiple_of(2)) {
        if let Err(e) = rustix::fs::seek(&fd, rustix::fs::SeekFrom::Start(0)) {
            part.error = Some(format!(
                "{} {}",
                Failed::call("lseek", e),
                o.file(t).display()
            ));
            return part;
        }
    }
    let r = if test.is_multiple_of(2) {
        sequential(o, test, t, &fd, progress, stop, &mut part)
    } else {
        random(o, test, t, &fd, progress, stop, &mut part)
    };
    if let Err(e) = r {
        part.error = Some(format!("{e} {}", o.file(t).display()));
    }
    if test < 2 {
        if let Err(e) = rustix::fs::fsync(&fd) {
            part.error.get_or_insert(format!(
                "fsync {}: {}",
                o.file(t).display(),
                std::io::Error::from(e)
            ));
        }
    }
    drop(fd);
    if test == 0 && o.sequential_writers {
        turn.store(t as u32 + 1, Ordering::Release);
    }
    part
}

/// The write or read test: every block in order.
fn sequential(
    o: &TioOptions,
    test: usize,
    t: usize,
    fd: &OwnedFd,
    progress: &crate::measure::Progress,
    stop: &AtomicBool,
    part: &mut Part,
) -> Result<(), Failed> {
    let write = test == 0;
    let b = o.block;
    let blocks = o.file_bytes / b;
    let mut buf = Aligned::new(b as usize, 0x5a);
    let mut map = if o.mmap {
        if write {
            rustix::fs::ftruncate(fd, blocks * b).map_err(|e| Failed::call("ftruncate", e))?;
        }
        Some(
            SharedMap::new(std::os::fd::AsFd::as_fd(fd), (blocks * b) as usize)
                .map_err(Failed::Map)?,
        )
    } else {
        None
    };
    let mut prev = crate::measure::now_ns();
    for i in 0..blocks {
        if i % 64 == 0 && stop.load(Ordering::Relaxed) {
            break;
        }
        let n = match (&mut map, write) {
            (Some(m), true) => {
                m.write_bytes((i * b) as usize, buf.get());
                b as usize
            }
            (Some(m), false) => {
                m.read_bytes((i * b) as usize, buf.get());
                b as usize
            }
            (None, _) => transfer(fd, buf.get(), write)?,
        };
        whole_block(n, b, write)?;
        part.bytes += b;
        // One clock read per call: the interval also holds the loop's own
        // few nanoseconds (the counter, the stop check).
        let now = crate::measure::now_ns();
        part.lat(now - prev);
        prev = now;
        progress.set(t, i + 1);
    }
    // munmap before the fsync, as tiotest does.
    drop(map);
    Ok(())
}

/// The random write or random read test: `lseek` to a random block, then
/// `write` or `read` it.
fn random(
    o: &TioOptions,
    test: usize,
    t: usize,
    fd: &OwnedFd,
    progress: &crate::measure::Progress,
    stop: &AtomicBool,
    part: &mut Part,
) -> Result<(), Failed> {
    let write = test == 1;
    let b = o.block;
    let choices = (o.file_bytes / b).saturating_sub(1).max(1);
    let mut buf = Aligned::new(b as usize, 0x5a);
    let mut rng = fslab_stats::rng::XorShift64(
        0x9e37_79b9_7f4a_7c15u64 ^ ((t as u64 + 1) * 0x2545_f491_4f6c_dd1d) ^ test as u64,
    );
    for i in 0..o.random_ops {
        if i % 64 == 0 && stop.load(Ordering::Relaxed) {
            break;
        }
        let off = rng.below(choices) * b;
        rustix::fs::seek(fd, rustix::fs::SeekFrom::Start(off))
            .map_err(|e| Failed::call("lseek", e))?;
        let start = crate::measure::now_ns();
        let n = transfer(fd, buf.get(), write)?;
        let end = crate::measure::now_ns();
        whole_block(n, b, write)?;
        part.bytes += b;
        part.lat(end - start);
        progress.set(t, i + 1);
    }
    Ok(())
}

/// Runs tiotest.
pub fn run(o: &TioOptions, start: Start<'_, '_>) -> crate::Result<TioReport> {
    let Begun { mut ctx, out, .. } = start.begin("tiotest", &o.dirs[0], o)?;
    let stop = ctx.stop;
    let threads = o.threads as usize;
    // Reading needs the files: without the write test they are written first, untimed.
    if !o.run[0] && (o.run[1] || o.run[2] || o.run[3]) {
        for t in 0..threads {
            let f = o
                .open(t, 0)
                .map_err(|e| crate::Error::Setup(format!("open {}: {e}", o.file(t).display())))?;
            f.set_len(o.file_bytes).map_err(|e| {
                crate::Error::Setup(format!("ftruncate {}: {e}", o.file(t).display()))
            })?;
        }
    }
    let mut tests = Vec::new();
    let mut error = None;
    for test in 0..4 {
        if !o.run[test] || error.is_some() || ctx.stopping() {
            continue;
        }
        let turn = AtomicU32::new(0);
        let parts: Vec<Mutex<Part>> = (0..threads).map(|_| Mutex::new(Part::default())).collect();
        // Blocks a thread: its file's in order, or its random operations.
        let each = match test {
            1 | 3 => o.random_ops,
            _ => o.file_bytes / o.block,
        };
        let total = Some(each * threads as u64);
        let p = ctx.phase(PHASES[test], total, threads, |t, progress| {
            *parts[t].lock().unwrap_or_else(|e| e.into_inner()) =
                work(o, test, t, progress, stop, &turn);
        })?;
        let mut r = TestResult {
            item: TESTS[test].into(),
            ..Default::default()
        };
        let mut ops = 0;
        for part in parts {
            let part = part.into_inner().unwrap_or_else(|e| e.into_inner());
            r.bytes += part.bytes;
            r.hist.merge(&part.hist);
            r.over2 += part.over2;
            r.over10 += part.over10;
            ops += part.hist.count();
            if error.is_none() {
                error = part.error;
            }
        }
        r.seconds = p.elapsed_s;
        r.mb_per_s = r.bytes as f64 / (1u64 << 20) as f64 / r.seconds.max(1e-9);
        r.usr_cpu_pct = p.usr_cpu_s / r.seconds.max(1e-9) * 100.0;
        r.sys_cpu_pct = p.sys_cpu_s / r.seconds.max(1e-9) * 100.0;
        fill_latency(&mut r);
        let want = if test % 2 == 0 {
            o.file_bytes * threads as u64
        } else {
            o.random_ops * o.block * threads as u64
        };
        ctx.record_phase(phase_result(
            PHASES[test],
            ops,
            r.bytes,
            &p,
            r.bytes == want,
        ))?;
        ctx.record_latency(
            PHASES[test],
            if test < 2 { "write" } else { "read" },
            &r.hist,
        )?;
        tests.push(r);
    }
    for t in 0..threads {
        let _ = std::fs::remove_file(o.file(t));
    }
    let _ = out.write_all(
        if o.terse {
            terse(&tests)
        } else {
            tables(o, &tests)
        }
        .as_bytes(),
    );
    let _ = out.flush();
    if let Some(e) = &error {
        let _ = writeln!(out, "{e}");
        let _ = out.flush();
    }
    ctx.record_metrics(tests.iter().flat_map(TestResult::metrics).collect())?;
    let outcome = ctx.finish(error)?;
    Ok(TioReport {
        outcome,
        options: o.clone(),
        tests,
    })
}

fn fill_latency(r: &mut TestResult) {
    let n = r.hist.count();
    let s = r.hist.summary();
    r.avg_latency_ms = s.mean_ns / 1e6;
    r.max_latency_ms = s.max_ns as f64 / 1e6;
    r.pct_over_2s = if n > 0 {
        r.over2 as f64 * 100.0 / n as f64
    } else {
        0.0
    };
    r.pct_over_10s = if n > 0 {
        r.over10 as f64 * 100.0 / n as f64
    } else {
        0.0
    };
    r.p50_ms = s.p50_ns as f64 / 1e6;
    r.p99_ms = s.p99_ns as f64 / 1e6;
    r.p999_ms = s.p999_ns as f64 / 1e6;
}

fn mbs(b: u64) -> f64 {
    b as f64 / (1u64 << 20) as f64
}

/// tiotest's two tables (and fslab's percentile table).
pub fn tables(o: &TioOptions, tests: &[TestResult]) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "Tiotest results for {} concurrent io threads:",
        o.threads
    );
    s.push_str(",----------------------------------------------------------------------.\n");
    s.push_str("| Item                  | Time     | Rate         | Usr CPU  | Sys CPU |\n");
    s.push_str("+-----------------------+----------+--------------+----------+---------+\n");
    for r in tests {
        let label = match r.item.as_str() {
            "Write" => format!("Write {:11.0} MBs", mbs(r.bytes)),
            "Random Write" => format!("Random Write {:4.0} MBs", mbs(r.bytes)),
            "Read" => format!("Read {:12.0} MBs", mbs(r.bytes)),
            _ => format!("Random Read {:5.0} MBs", mbs(r.bytes)),
        };
        let _ = writeln!(
            s,
            "| {label} | {:6.1} s | {:7.3} MB/s | {:5.1} %  | {:5.1} % |",
            r.seconds, r.mb_per_s, r.usr_cpu_pct, r.sys_cpu_pct
        );
    }
    s.push_str("`----------------------------------------------------------------------'\n");
    if !o.latency_table {
        return s;
    }
    s.push_str("Tiotest latency results:\n");
    s.push_str(",-------------------------------------------------------------------------.\n");
    s.push_str("| Item         | Average latency | Maximum latency | % >2 sec | % >10 sec |\n");
    s.push_str("+--------------+-----------------+-----------------+----------+-----------+\n");
    let mut total = TestResult::default();
    for r in tests {
        let _ = writeln!(
            s,
            "| {:<12} | {:12.3} ms | {:12.3} ms | {:8.5} | {:9.5} |",
            r.item, r.avg_latency_ms, r.max_latency_ms, r.pct_over_2s, r.pct_over_10s
        );
        total.hist.merge(&r.hist);
        total.over2 += r.over2;
        total.over10 += r.over10;
    }
    fill_latency(&mut total);
    s.push_str("|--------------+-----------------+-----------------+----------+-----------|\n");
    let _ = writeln!(
        s,
        "| {:<12} | {:12.3} ms | {:12.3} ms | {:8.5} | {:9.5} |",
        "Total", total.avg_latency_ms, total.max_latency_ms, total.pct_over_2s, total.pct_over_10s
    );
    s.push_str("`--------------+-----------------+-----------------+----------+-----------'\n");
    s.push_str("fslab latency percentiles:\n");
    s.push_str("| Item         |       p50 |       p99 |     p99.9 |\n");
    for r in tests.iter().chain([&total]) {
        let name = if r.item.is_empty() { "Total" } else { &r.item };
        let _ = writeln!(
            s,
            "| {:<12} | {:6.3} ms | {:6.3} ms | {:6.3} ms |",
            name, r.p50_ms, r.p99_ms, r.p999_ms
        );
    }
    s
}

/// tiotest -T: one line per test, `name:MB,secs,usr,sys,avg_ms,max_ms,%>2s,%>10s`.
pub fn terse(tests: &[TestResult]) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let mut total = TestResult::default();
    for r in tests {
        let name = match r.item.as_str() {
            "Write" => "write",
            "Random Write" => "rwrite",
            "Read" => "read",
            _ => "rread",
        };
        let _ = writeln!(
            s,
            "{name}:{:.5},{:.5},{:.5},{:.5},{:.5},{:.5},{:.5},{:.5}",
            mbs(r.bytes),
            r.seconds,
            r.usr_cpu_pct * r.seconds / 100.0,
            r.sys_cpu_pct * r.seconds / 100.0,
            r.avg_latency_ms,
            r.max_latency_ms,
            r.pct_over_2s,
            r.pct_over_10s
        );
        total.hist.merge(&r.hist);
        total.over2 += r.over2;
        total.over10 += r.over10;
    }
    fill_latency(&mut total);
    let _ = writeln!(
        s,
        "total:{:.5},{:.5},{:.5},{:.5}",
        total.avg_latency_ms, total.max_latency_ms, total.pct_over_2s, total.pct_over_10s
    );
    s
}

/// `-f`: MiB as a count or a size (fslab's one size grammar); a negative
/// count is kept for the validation to name.
fn mib_count(s: &str) -> Result<i64, SizeError> {
    match s.trim().parse::<i64>() {
        Ok(n) => Ok(n),
        Err(_) => fslab_model::units::mib_arg(s)
            .and_then(|v| i64::try_from(v).map_err(|_| SizeError::TooLarge(s.to_string()))),
    }
}

/// `-b`: bytes as a count or a size; a negative count is kept for the
/// validation to name.
fn byte_count(s: &str) -> Result<i64, SizeError> {
    match s.trim().parse::<i64>() {
        Ok(n) => Ok(n),
        Err(_) => fslab_model::units::bytes_arg(s)
            .and_then(|v| i64::try_from(v).map_err(|_| SizeError::TooLarge(s.to_string()))),
    }
}

#[cfg(test)]
mod tests;
