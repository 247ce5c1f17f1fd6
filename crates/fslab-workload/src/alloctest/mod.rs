//! `fslab alloctest`: seed 002's program. Creates a file of LEN bytes with
//! ftruncate, maps it MAP_SHARED, writes one word into every page in the
//! seed's pseudo-random order (page `(i + 23) * 1000000007 % pages`),
//! msyncs, unmaps and closes, printing the seed's lines; then does what the
//! seed's author did by hand: counts the file's extents (FIEMAP, with
//! filefrag's "perfection would be") and reads it back cold and sequentially
//! (the seed's dd), with the page cache of that file dropped first.

pub mod plugin;

use crate::{Begun, Start};
use std::io::Read;
use std::os::fd::AsFd;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use fslab_model::LatencyHistogram;
use fslab_sys::mmap::SharedMap;
use serde::Serialize;

use crate::common::{phase_result, Outcome, RunCtx, WithOutcome};

/// `fslab alloctest [-t] [-w] [-d] FILE LEN`, plus fslab's variants.
#[derive(Debug, Clone, clap::Args, serde::Serialize, serde::Deserialize)]
pub struct AllocArgs {
    /// Touch (read) every page sequentially before the random writes
    #[arg(short = 't', long = "touch")]
    pub touch: bool,
    /// Dirty every page sequentially before the random writes
    #[arg(short = 'w', long = "dirty")]
    pub dirty: bool,
    /// Go downwards in that sequential pass
    #[arg(short = 'd', long = "down")]
    pub down: bool,
    /// posix_fallocate the whole file first (the seed's workaround 1)
    #[arg(long)]
    pub fallocate: bool,
    /// Write the pages in order instead of the seed's random order
    #[arg(long)]
    pub sequential: bool,
    /// Skip the cold sequential read-back
    #[arg(long)]
    pub no_readback: bool,
    /// The file to create (it must not exist)
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Its length in bytes (K, M, G suffixes allowed)
    #[arg(value_name = "LEN")]
    pub len: String,
    #[command(flatten)]
    pub common: crate::common::CommonArgs,
}

/// Validated options.
#[derive(Debug, Clone, Serialize)]
pub struct AllocOptions {
    pub file: PathBuf,
    pub len: u64,
    pub touch: bool,
    pub dirty: bool,
    pub down: bool,
    pub fallocate: bool,
    pub sequential: bool,
    pub readback: bool,
}

impl AllocArgs {
    pub fn validate(&self) -> crate::Result<AllocOptions> {
        self.check()
    }

    fn check(&self) -> crate::Result<AllocOptions> {
        let len = crate::fsmark::options::parse_size("LEN", &self.len)?;
        let page = fslab_sys::page_size() as u64;
        if len < page {
            return Err(crate::opt(
                "LEN",
                &self.len,
                format!("must be at least one page ({page} bytes)"),
            ));
        }
        if self.file.exists() {
            return Err(crate::Error::Options(format!("{}: already exists; alloctest creates its file (remove it first, as the seed's rm -f does)", self.file.display())));
        }
        let parent = self
            .file
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(std::path::Path::new("."));
        if !parent.is_dir() {
            return Err(crate::Error::Options(format!(
                "{}: no such directory {}",
                self.file.display(),
                parent.display()
            )));
        }
        Ok(AllocOptions {
            file: self.file.clone(),
            len,
            touch: self.touch,
            dirty: self.dirty,
            down: self.down,
            fallocate: self.fallocate,
            sequential: self.sequential,
            readback: !self.no_readback,
        })
    }
}

/// What `--json` prints.
#[derive(Debug, Clone, Serialize)]
pub struct AllocReport {
    #[serde(flatten)]
    pub outcome: Outcome,
    pub options: AllocOptions,
    pub pages: u64,
    pub touch_s: f64,
    pub msync_s: f64,
    pub munmap_s: f64,
    pub close_s: f64,
    pub total_mb_s: f64,
    /// How long posix_fallocate took (with --fallocate): on a filesystem
    /// without fallocate(2) (ext3), a write into every block.
    pub fallocate_s: Option<f64>,
    /// filefrag's "N extents found".
    pub extents: Option<u64>,
    /// The kernel's FIEMAP records.
    pub fiemap_records: Option<u64>,
    /// The seed-era filefrag's "perfection would be" (ext2/3/4).
    pub perfect_extents: Option<u64>,
    pub readback_mb_s: Option<f64>,
}

impl WithOutcome for AllocReport {
    fn outcome(&self) -> &Outcome {
        &self.outcome
    }
}

/// posix_fallocate(3): fallocate(2), or where the filesystem has none (ext3),
/// what glibc does instead: write a zero into every block (the "block IO
/// over the entire region" the seed mentions).
fn posix_fallocate(file: &std::fs::File, len: u64) -> std::io::Result<()> {
    match rustix::fs::fallocate(file, rustix::fs::FallocateFlags::empty(), 0, len) {
        Ok(()) => Ok(()),
        Err(rustix::io::Errno::OPNOTSUPP) => {
            use std::os::unix::fs::FileExt;
            let block = rustix::fs::fstatvfs(file)
                .map(|v| v.f_bsize)
                .unwrap_or(4096)
                .max(512);
            let mut off = 0;
            while off < len {
                file.write_all_at(&[0], off)?;
                off += block;
            }
            Ok(())
        }
        Err(e) => Err(e.into()),
    }
}

/// The seed's page order: `(i + 23) * 1000000007 % pages`, in 64-bit
/// arithmetic as the seed's `long long` (a 128-bit remainder is a call to
/// a software division, tens of nanoseconds a page); 128-bit only past
/// what 64 bits hold (files of more than 70 TB).
#[inline]
pub fn seed_page(i: u64, pages: u64) -> u64 {
    match (i + 23).checked_mul(1_000_000_007) {
        Some(x) => x % pages,
        None => ((i as u128 + 23) * 1_000_000_007 % pages as u128) as u64,
    }
}

fn mib(b: u64) -> f64 {
    b as f64 / (1024.0 * 1024.0)
}

/// Runs alloctest.
/// Makes the file (refusing an existing one), sizes it (posix_fallocate
/// with --fallocate) and maps it shared; a file that cannot be sized or
/// mapped is removed again rather than left, sparse, at its length.
fn make_file(opts: &AllocOptions) -> crate::Result<(std::fs::File, SharedMap, Option<f64>)> {
    let io = |what: &str, e| crate::Error::io(format!("{what} {}", opts.file.display()), e);
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&opts.file)
        .map_err(|e| io("open", e))?;
    // The file is alloctest's own (it refuses an existing one): if it cannot
    // be sized or mapped, it goes again rather than stay, sparse, at LEN.
    let made = |r: crate::Result<()>| {
        r.inspect_err(|_| {
            let _ = std::fs::remove_file(&opts.file);
        })
    };
    made(file.set_len(opts.len).map_err(|e| io("ftruncate", e)))?;
    let mut fallocate_s = None;
    if opts.fallocate {
        let t = Instant::now();
        made(posix_fallocate(&file, opts.len).map_err(|e| io("posix_fallocate", e)))?;
        fallocate_s = Some(t.elapsed().as_secs_f64());
    }
    let map = SharedMap::new(file.as_fd(), opts.len as usize)
        .map_err(|e| io("mmap", e))
        .inspect_err(|_| {
            let _ = std::fs::remove_file(&opts.file);
        })?;
    Ok((file, map, fallocate_s))
}

/// The streaming pass before the random touches (-t, -d, -D): every page
/// in order (or downward), read, or read and written back.
fn stream(
    ctx: &mut RunCtx,
    opts: &AllocOptions,
    map: &Mutex<SharedMap>,
    say: &mut dyn FnMut(String),
) -> crate::Result<f64> {
    let page = fslab_sys::page_size() as u64;
    let pages = opts.len / page;
    let p = ctx.phase("stream", Some(pages), 1, |_, progress| {
        let mut m = map.lock().unwrap_or_else(|e| e.into_inner());
        let mut t = 0u8;
        for i in 0..pages {
            let idx = if opts.down { pages - i - 1 } else { i };
            let off = (page * idx) as usize;
            if opts.dirty {
                let v = m.read_u8(off) ^ t;
                m.write_u8(off, v);
            } else {
                t ^= m.read_u8(off);
            }
            progress.set(0, i + 1);
        }
        m.write_u8(0, t);
    })?;
    if opts.touch {
        say(format!(
            "streaming {} {pages} pages in {:.6} seconds ({:.2} usec/page, {:.2} MB/s)",
            if opts.dirty { "dirtied" } else { "touched" },
            p.elapsed_s,
            1e6 * p.elapsed_s / pages as f64,
            mib(opts.len) / p.elapsed_s
        ));
    }
    ctx.record_phase(phase_result("stream", pages, opts.len, &p, true))?;
    Ok(p.elapsed_s)
}

/// dd's read back of the file, cold: MB/s (10^6 bytes) as dd prints it.
fn readback(
    ctx: &mut RunCtx,
    opts: &AllocOptions,
    stop: &AtomicBool,
    say: &mut dyn FnMut(String),
) -> crate::Result<f64> {
    let page = fslab_sys::page_size() as u64;
    let io = |what: &str, e: std::io::Error| {
        crate::Error::Setup(format!("{what} {}: {e}", opts.file.display()))
    };
    let f = std::fs::File::open(&opts.file).map_err(|e| io("open", e))?;
    // Cold: write back, then drop this file's pages from the cache.
    let _ = rustix::fs::fdatasync(&f);
    let _ = rustix::fs::fadvise(&f, 0, None, rustix::fs::Advice::DontNeed);
    let f = Mutex::new(f);
    let p = ctx.phase("readback", Some(opts.len / page), 1, |_, progress| {
        let mut f = f.lock().unwrap_or_else(|e| e.into_inner());
        let mut buf = vec![0u8; 1 << 20];
        let mut n = 0u64;
        while let Ok(k) = f.read(&mut buf) {
            if k == 0 || stop.load(Ordering::Relaxed) {
                break;
            }
            n += k as u64;
            progress.set(0, n / page);
        }
        n
    })?;
    let n = p.results.first().copied().flatten().unwrap_or(0);
    let rate = n as f64 / p.elapsed_s / 1e6;
    say(format!(
        "{n} bytes ({:.1} GB, {:.1} GiB) copied, {:.4} s, {:.1} MB/s",
        n as f64 / 1e9,
        n as f64 / (1u64 << 30) as f64,
        p.elapsed_s,
        rate
    ));
    ctx.record_phase(phase_result("readback", n / page, n, &p, n == opts.len))?;
    Ok(rate)
}

/// The seed's random touches: one u32 written at the start of every page,
/// in its pseudo-random order (or in order with -s); returns the seconds.
fn touch(
    ctx: &mut RunCtx,
    opts: &AllocOptions,
    map: &Mutex<SharedMap>,
    stop: &AtomicBool,
    say: &mut dyn FnMut(String),
) -> crate::Result<f64> {
    let page = fslab_sys::page_size() as u64;
    let pages = opts.len / page;
    let hist = Mutex::new(LatencyHistogram::new());
    let hits = Mutex::new(Vec::new());
    let p = ctx.phase("touch", Some(pages), 1, |_, progress| {
        let mut m = map.lock().unwrap_or_else(|e| e.into_inner());
        let mut h = LatencyHistogram::new();
        let mut done = 0;
        // One clock read per page (fslab's timebase, the TSC where it is
        // usable): a page's latency is the interval from the previous
        // page's end, so it also holds the loop's own few nanoseconds (the
        // stop check, the page number), as tiotest's sequential blocks do,
        // rather than two clock reads around every touch.
        let mut prev = crate::measure::now_ns();
        for i in 0..pages {
            if stop.load(Ordering::Relaxed) {
                break;
            }
            let pg = if opts.sequential {
                i
            } else {
                seed_page(i, pages)
            };
            let off = (page * pg) as usize;
            let old = m.read_u32(off);
            m.write_u32(off, i as u32);
            let now = crate::measure::now_ns();
            h.record(now - prev);
            prev = now;
            if old != 0 {
                hits.lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(format!("i={i} pgno={pg} npg={pages} hit {old}"));
            }
            done = i + 1;
            progress.set(0, done);
        }
        *hist.lock().unwrap_or_else(|e| e.into_inner()) = h;
        done
    })?;
    for h in hits.into_inner().unwrap_or_default() {
        say(h);
    }
    let touched = p.results.first().copied().flatten().unwrap_or(0);
    let touch_s = p.elapsed_s;
    say(format!(
        "touched {pages} pages in {touch_s:.6} seconds ({:.2} usec/page, {:.2} MB/s)",
        1e6 * touch_s / pages as f64,
        mib(opts.len) / touch_s
    ));
    ctx.record_phase(phase_result(
        "touch",
        touched,
        touched * page,
        &p,
        touched == pages,
    ))?;
    ctx.record_latency(
        "touch",
        "page_write",
        &hist.into_inner().unwrap_or_default(),
    )?;
    Ok(touch_s)
}

pub fn run(opts: &AllocOptions, start: Start<'_, '_>) -> crate::Result<AllocReport> {
    let page = fslab_sys::page_size() as u64;
    let pages = opts.len / page;
    let dir = opts
        .file
        .parent()
        .map(|p| p.to_path_buf())
        .unwrap_or_else(|| ".".into());
    let (file, map, fallocate_s) = make_file(opts)?;
    let map = Mutex::new(map);
    let Begun { mut ctx, out, .. } = start.begin("alloctest", &dir, opts)?;
    let stop = ctx.stop;
    let mut say = |s: String| {
        let _ = writeln!(out, "{s}");
        let _ = out.flush();
    };
    // The seed's program runs from its first page touch to its close
    // without a pause: --drop-caches (its sync) must not come between the
    // page writes and the msync, or the msync finds nothing left to write.
    // The caches are dropped before the run and before the cold read-back.
    // (The first phase's call of the hook drops nothing: the caches were
    // dropped before the run; the hook is taken out after it.)
    let mut drop_hook = None;
    let stream_s = if opts.touch || opts.dirty || opts.down {
        let s = stream(&mut ctx, opts, &map, &mut say)?;
        drop_hook = ctx.hooks.before_phase.take();
        s
    } else {
        0.0
    };

    let touch_s = touch(&mut ctx, opts, &map, stop, &mut say)?;
    if drop_hook.is_none() {
        drop_hook = ctx.hooks.before_phase.take();
    }

    let map = map.into_inner().unwrap_or_else(|e| e.into_inner());
    let mut error = None;
    let p = ctx.phase("msync", None, 1, |_, _| map.msync())?;
    ctx.hooks.before_phase = drop_hook;
    if let Some(Some(Err(e))) = p.results.first() {
        error = Some(format!("msync {}: {e}", opts.file.display()));
    }
    let msync_s = p.elapsed_s;
    ctx.record_phase(phase_result("msync", pages, opts.len, &p, error.is_none()))?;
    let t = Instant::now();
    if let Err(e) = map.unmap() {
        error.get_or_insert(format!("munmap: {e}"));
    }
    let munmap_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    drop(file);
    let close_s = t.elapsed().as_secs_f64();
    // The seed's total (t5 - t01) over its own calls only: the pauses
    // between fslab's phases (the probes' handshakes, the store) are not in it.
    let total = stream_s + touch_s + msync_s + munmap_s + close_s;
    say(format!("msync took {msync_s:.6} seconds"));
    say(format!("munmap took {munmap_s:.6} seconds"));
    say(format!("close took {close_s:.6} seconds"));
    say(format!(
        "total throughput {:.6} MB/sec",
        mib(opts.len) / total
    ));

    // What the seed's author did next by hand: filefrag, then dd.
    let mut frag = None;
    match fslab_layout::frag::analyse(&opts.file) {
        Ok((f, _)) => {
            say(f
                .lines(&opts.file.display().to_string())
                .trim_end()
                .to_string());
            frag = Some(f);
        }
        Err(e) => ctx.out.notes.push(format!("extent count unavailable: {e}")),
    }
    let readback = if opts.readback && error.is_none() && !ctx.stopping() {
        Some(readback(&mut ctx, opts, stop, &mut say)?)
    } else {
        None
    };
    let report = AllocReport {
        outcome: Outcome::default(),
        options: opts.clone(),
        pages,
        touch_s,
        msync_s,
        munmap_s,
        close_s,
        total_mb_s: mib(opts.len) / total,
        fallocate_s,
        extents: frag.map(|f| f.extents),
        fiemap_records: frag.map(|f| f.records),
        perfect_extents: frag.and_then(|f| f.perfection),
        readback_mb_s: readback,
    };
    ctx.record_metrics(report.metrics())?;
    let outcome = ctx.finish(error)?;
    Ok(AllocReport { outcome, ..report })
}

impl AllocReport {
    /// The seed's numbers: its program's lines, filefrag's, and dd's.
    pub fn metrics(&self) -> Vec<fslab_model::Metric> {
        use fslab_model::{Better, Metric, Unit};
        let len_mib = self.options.len as f64 / (1u64 << 20) as f64;
        let m = |phase: Option<&str>, name: &str, v: f64, unit: Unit, better: Better| {
            Metric::new("alloctest", phase, name, v, unit, better)
        };
        let t = Some("touched");
        let mut v = vec![
            m(t, "seconds", self.touch_s, Unit::Seconds, Better::Lower),
            m(
                t,
                "usec/page",
                1e6 * self.touch_s / self.pages.max(1) as f64,
                Unit::Microseconds,
                Better::Lower,
            ),
            m(
                t,
                "MB/s",
                len_mib / self.touch_s.max(1e-9),
                Unit::MibPerSec,
                Better::Higher,
            ),
            m(
                None,
                "msync took",
                self.msync_s,
                Unit::Seconds,
                Better::Lower,
            ),
            m(
                None,
                "munmap took",
                self.munmap_s,
                Unit::Seconds,
                Better::Lower,
            ),
            m(
                None,
                "close took",
                self.close_s,
                Unit::Seconds,
                Better::Lower,
            ),
            m(
                None,
                "total throughput",
                self.total_mb_s,
                Unit::MibPerSec,
                Better::Higher,
            ),
            // Exact by construction: the options fix it.
            m(None, "file size", len_mib, Unit::Mib, Better::Neither).exact(),
        ];
        if let Some(f) = self.fallocate_s {
            v.push(m(
                None,
                "posix_fallocate took",
                f,
                Unit::Seconds,
                Better::Lower,
            ));
        }
        let f = Some("filefrag");
        if let Some(e) = self.extents {
            v.push(m(f, "extents found", e as f64, Unit::Count, Better::Lower));
        }
        if let Some(r) = self.fiemap_records {
            v.push(m(f, "FIEMAP records", r as f64, Unit::Count, Better::Lower));
        }
        if let Some(p) = self.perfect_extents {
            // Exact by construction: it follows from the file's size and the
            // filesystem's geometry, both fixed by the options and the cell.
            v.push(
                m(
                    f,
                    "perfection would be",
                    p as f64,
                    Unit::Count,
                    Better::Neither,
                )
                .exact(),
            );
        }
        if let Some(r) = self.readback_mb_s {
            // dd counts MB of 10^6 bytes.
            v.push(m(
                Some("dd"),
                "read back",
                r,
                Unit::MbPerSec,
                Better::Higher,
            ));
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seed_order_visits_every_page_once() {
        let pages = 262_144;
        let mut seen = vec![false; pages as usize];
        for i in 0..pages {
            let p = seed_page(i, pages) as usize;
            assert!(!seen[p]);
            seen[p] = true;
        }
        assert_eq!(seed_page(0, pages), 23 * 1_000_000_007 % pages);
        // Past 64 bits the same order, in 128.
        let big = u64::MAX / 1_000_000_007;
        assert_eq!(
            seed_page(big, 1 << 40),
            ((big as u128 + 23) * 1_000_000_007 % (1u128 << 40)) as u64
        );
    }

    #[test]
    fn only_filefrags_perfection_is_declared_exact() {
        let r = AllocReport {
            outcome: Outcome::default(),
            options: AllocOptions {
                file: "/x/f".into(),
                len: 1 << 30,
                touch: true,
                dirty: false,
                down: false,
                fallocate: false,
                sequential: false,
                readback: true,
            },
            pages: 262_144,
            touch_s: 1.0,
            msync_s: 1.0,
            munmap_s: 1.0,
            close_s: 1.0,
            total_mb_s: 100.0,
            fallocate_s: None,
            extents: Some(50_435),
            fiemap_records: Some(50_500),
            perfect_extents: Some(9),
            readback_mb_s: Some(80.0),
        };
        let exact: Vec<String> = r
            .metrics()
            .into_iter()
            .filter(|m| m.exact)
            .map(|m| m.label())
            .collect();
        assert_eq!(exact, ["file size (MiB)", "filefrag perfection would be"]);
    }
}
