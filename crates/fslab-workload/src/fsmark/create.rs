//! One worker thread's part of one fs_mark loop.
//!
//! Per file, fs_mark's calls: pick the subdirectory and make the name,
//! `mkdir` the file's directory (it exists: EEXIST; outside the call
//! timers, so in App Overhead, as in fs_mark), then `openat(O_CREAT|O_EXCL)`,
//! the writes (one `write` of zero bytes for an empty file, as fs_mark's),
//! the optional fsync and the close, each timed by chaining clock reads
//! (one read per call plus one per file). Then the post-loop sync methods,
//! and the unlink when files are not kept.
//!
//! Where the calls differ from fs_mark's: paths are relative to the `-d`
//! directory, opened once (`openat(DIR_FD, "SUBDIR/NAME")` for fs_mark's
//! full path from `/`), so each lookup walks two components instead of
//! the whole path; and `O_EXCL` instead of `O_TRUNC` (the same one call).

use std::ffi::CStr;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::measure::now_ns;

use fslab_model::{CallStats, LatencyHistogram};
use rustix::fs::{Mode, OFlags};
use rustix::io::Errno;

use super::calls::open_dir;
use super::names::{NameGen, NameLog, REDRAW_BASE};
use super::options::{DirPolicy, FsMarkOptions};
use super::WorkError;
use crate::measure::Progress;
use crate::stonewall::Check;

/// The system calls fs_mark times, in its `-v` column order.
pub const CALLS: [&str; 6] = ["creat", "write", "fsync", "sync", "close", "unlink"];
const CREAT: usize = 0;
const WRITE: usize = 1;
const FSYNC: usize = 2;
const SYNC: usize = 3;
const CLOSE: usize = 4;
const UNLINK: usize = 5;

/// Latencies of one call: the whole phase (histogram) and this loop (exact).
#[derive(Clone, Default)]
pub struct CallTimes {
    pub phase: LatencyHistogram,
    loop_count: u64,
    loop_sum_ns: u64,
    loop_min_ns: u64,
    loop_max_ns: u64,
}

impl CallTimes {
    #[inline]
    fn add(&mut self, ns: u64) {
        self.phase.record(ns);
        self.loop_count += 1;
        self.loop_sum_ns += ns;
        self.loop_max_ns = self.loop_max_ns.max(ns);
        self.loop_min_ns = if self.loop_count == 1 {
            ns
        } else {
            self.loop_min_ns.min(ns)
        };
    }

    fn reset_loop(&mut self) {
        self.loop_count = 0;
        self.loop_sum_ns = 0;
        self.loop_min_ns = 0;
        self.loop_max_ns = 0;
    }

    /// This loop's min/avg/max in microseconds, as fs_mark's `-v` reports them.
    pub fn loop_stats(&self) -> CallStats {
        CallStats {
            min_us: self.loop_min_ns / 1000,
            avg_us: self.loop_sum_ns.checked_div(self.loop_count).unwrap_or(0) / 1000,
            max_us: self.loop_max_ns / 1000,
        }
    }

    pub fn loop_count(&self) -> u64 {
        self.loop_count
    }
}

/// Which subdirectory each file goes to (-D with -N or --subdir-secs), as
/// fs_mark chooses: a loop starts at the current second modulo the number
/// of subdirectories, then moves on after N files or after the seconds.
struct SubdirChooser {
    current: Option<u32>,
    files_in_subdir: u64,
    since: u64,
    start_secs: u64,
}

impl SubdirChooser {
    #[inline]
    fn next(&mut self, policy: DirPolicy, secs: u64) -> Option<u32> {
        let want = match policy {
            DirPolicy::NoSubdirs => None,
            DirPolicy::RoundRobin {
                subdirs,
                per_subdir,
            } => {
                let mut cur = self
                    .current
                    .unwrap_or((self.start_secs % subdirs as u64) as u32);
                if self.files_in_subdir >= per_subdir {
                    cur = (cur + 1) % subdirs;
                    self.files_in_subdir = 0;
                }
                self.files_in_subdir += 1;
                Some(cur)
            }
            DirPolicy::TimeHash { subdirs, secs: per } => {
                let mut cur = self
                    .current
                    .unwrap_or((self.start_secs % subdirs as u64) as u32);
                if secs.saturating_sub(self.since) > per {
                    cur = (cur + 1) % subdirs;
                    self.since = secs;
                }
                Some(cur)
            }
        };
        self.current = want;
        want
    }
}

/// A worker's state, kept across loops.
pub struct Worker {
    pub index: usize,
    pub dir: PathBuf,
    dir_fd: Option<OwnedFd>,
    names: NameGen,
    next_seq: u64,
    next_redraw: u64,
    buf: Vec<u8>,
    /// `SUBDIR/NAME\0`, remade for every file in a subdirectory.
    rel: Vec<u8>,
    pub calls: [CallTimes; 6],
    /// Files this worker completed in the create phase (all loops).
    pub phase_files: u64,
    /// The last loop's files, to unlink when files are not kept.
    to_unlink: Option<NameLog>,
    /// The loop under way, between a stonewall's stretches.
    open: Option<OpenLoop>,
}

/// A loop under way: its names, clocks and outcome so far, and where the
/// subdirectory policy is.
struct OpenLoop {
    log: NameLog,
    start: u64,
    base_wall: Duration,
    out: LoopOutcome,
    dirs: SubdirChooser,
    prev_end: u64,
}

/// What a worker did in one loop.
#[derive(Default)]
pub struct LoopOutcome {
    /// Files created, written, synced and closed.
    pub files: u64,
    /// Bytes written.
    pub bytes: u64,
    /// Loop time including the post-loop sync methods (fs_mark's loop_usecs).
    pub loop_time: Duration,
    /// Time spent in creat/write/fsync/sync/close.
    pub call_time: Duration,
    /// Set when a call failed.
    pub error: Option<WorkError>,
    /// Creates that got ENOMEM and were made again (see
    /// [`super::calls::retrying`]).
    pub enomem_retries: u64,
}

/// Shared, read-only context of a loop.
#[derive(Clone, Copy)]
pub struct LoopCtx<'a> {
    pub opts: &'a FsMarkOptions,
    pub stop: &'a AtomicBool,
    /// Set by a worker that failed, so the others stop too.
    pub abort: &'a AtomicBool,
    pub progress: &'a Progress,
    /// The stonewall: each worker stops after the file that passes it.
    pub wall: Check,
    /// Each worker stops at this many files in the loop (the wear-out's
    /// agreed count; -n without a stonewall).
    pub upto: u64,
}

/// The wall-clock second at `at` (a [`now_ns`] reading), from the loop's
/// start on both clocks.
fn wall_secs_at(base_wall: Duration, base: u64, at: u64) -> u64 {
    (base_wall + Duration::from_nanos(at.saturating_sub(base))).as_secs()
}

impl Worker {
    /// `run_seed` keys the names unless `--seed` fixes them (`rank` then
    /// keeps the ranks' names apart).
    pub fn new(index: usize, dir: PathBuf, opts: &FsMarkOptions, run_seed: u64, rank: u32) -> Self {
        let names = match opts.seed {
            Some(s) => NameGen::seeded(opts.name_len, opts.rand_len, s, rank, index as u32),
            None => NameGen::new(opts.name_len, opts.rand_len, run_seed, index as u32),
        };
        Worker {
            index,
            dir,
            dir_fd: None,
            names,
            next_seq: 0,
            next_redraw: REDRAW_BASE,
            buf: vec![0u8; opts.io_size.min(opts.file_size.max(1)) as usize],
            rel: Vec::with_capacity(300),
            calls: Default::default(),
            phase_files: 0,
            to_unlink: None,
            open: None,
        }
    }

    fn top_fd(&mut self) -> Result<&OwnedFd, WorkError> {
        if self.dir_fd.is_none() {
            let fd = open_dir(rustix::fs::CWD, &self.dir)
                .map_err(|e| WorkError::new("open", self.dir.clone(), e))?;
            self.dir_fd = Some(fd);
        }
        Ok(self.dir_fd.as_ref().expect("just set"))
    }

    /// Runs this worker's share of one loop.
    pub fn run_loop(&mut self, ctx: &LoopCtx) -> LoopOutcome {
        self.begin_loop();
        self.create_more(ctx);
        self.end_loop(ctx)
    }

    /// Starts a loop: its clocks and the subdirectory policy's start, as
    /// fs_mark does for each loop (the current second modulo the number
    /// of subdirectories).
    pub fn begin_loop(&mut self) {
        for c in &mut self.calls {
            c.reset_loop();
        }
        let start = now_ns();
        let base_wall = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        let start_secs = wall_secs_at(base_wall, start, start);
        self.open = Some(OpenLoop {
            log: NameLog::new(self.next_seq),
            start,
            base_wall,
            out: LoopOutcome::default(),
            dirs: SubdirChooser {
                current: None,
                files_in_subdir: 0,
                since: start_secs,
                start_secs,
            },
            prev_end: start,
        });
    }

    /// Creates the loop's files on from where it is, until -n or
    /// `ctx.upto` files, an error, the stop flag or the file that passes
    /// `ctx.wall`. Returns the loop's files so far.
    pub fn create_more(&mut self, ctx: &LoopCtx) -> u64 {
        let Some(mut lp) = self.open.take() else {
            return 0;
        };
        if lp.out.error.is_none() {
            if let Err(e) = self.create_files(ctx, &mut lp) {
                lp.out.error = Some(e);
                ctx.abort.store(true, Ordering::Relaxed);
            }
        }
        let files = lp.out.files;
        self.open = Some(lp);
        files
    }

    /// Ends the loop: the post-loop sync methods, its times, and the files
    /// to unlink when files are not kept.
    pub fn end_loop(&mut self, ctx: &LoopCtx) -> LoopOutcome {
        let Some(OpenLoop {
            log,
            start,
            mut out,
            ..
        }) = self.open.take()
        else {
            return LoopOutcome::default();
        };
        if out.error.is_none() && !stopping(ctx) {
            if let Err(e) = self.post_loop_syncs(ctx, &log) {
                out.error = Some(e);
            }
        }
        out.loop_time = Duration::from_nanos(now_ns() - start);
        out.call_time = Duration::from_nanos(
            [CREAT, WRITE, FSYNC, SYNC, CLOSE]
                .iter()
                .map(|&c| self.calls[c].loop_sum_ns)
                .sum(),
        );
        if !ctx.opts.keep {
            self.to_unlink = Some(log);
        }
        if out.error.is_some() {
            ctx.abort.store(true, Ordering::Relaxed);
        }
        out
    }

    /// Unlinks the files of the last loop (when files are not kept), after
    /// the loop's time, as fs_mark unlinks after its Files/sec is taken.
    /// Returns the files unlinked.
    pub fn unlink_loop(&mut self) -> Result<u64, WorkError> {
        let Some(log) = self.to_unlink.take() else {
            return Ok(0);
        };
        self.unlink_all(&log)?;
        Ok(log.len())
    }

    /// fs_mark makes the file's directory (a subdirectory, or the -d
    /// directory) before every file; it is there already but the first time.
    #[inline]
    fn make_dir(&self, top: &OwnedFd, subdir: Option<u32>) -> Result<(), WorkError> {
        let made = match subdir {
            Some(n) => {
                let mut b = [0u8; 12];
                rustix::fs::mkdirat(top, subdir_cstr(n, &mut b), Mode::from_bits_truncate(0o777))
            }
            None => {
                rustix::fs::mkdirat(rustix::fs::CWD, &self.dir, Mode::from_bits_truncate(0o777))
            }
        };
        match made {
            Ok(()) | Err(Errno::EXIST) => Ok(()),
            Err(e) => {
                let mut path = self.dir.clone();
                if let Some(n) = subdir {
                    path.push(format_subdir(n));
                }
                Err(WorkError::new("mkdir", path, e))
            }
        }
    }

    fn create_files(&mut self, ctx: &LoopCtx, lp: &mut OpenLoop) -> Result<(), WorkError> {
        let opts = ctx.opts;
        let OpenLoop {
            log,
            start,
            base_wall,
            out,
            dirs,
            prev_end,
        } = lp;
        let (start, base_wall) = (*start, *base_wall);
        let top = self
            .top_fd()?
            .try_clone()
            .map_err(|e| WorkError::io("open", self.dir.clone(), e))?;
        let upto = opts.files.min(ctx.upto);
        while out.files < upto {
            let i = out.files;
            if stopping(ctx) {
                break;
            }
            let secs = wall_secs_at(base_wall, start, *prev_end);
            let subdir = dirs.next(opts.dir_policy, secs);
            // fs_mark makes the file's directory before every file.
            self.make_dir(&top, subdir)?;
            let seq = self.next_seq;
            self.next_seq += 1;
            log.push(i, subdir, secs);

            let mut t0 = now_ns();
            let mut name_seq = seq;
            let mut redraws = 0;
            let mut enomem_since = None;
            let fd = loop {
                let name = rel_name(&mut self.rel, subdir, self.names.name(secs, name_seq));
                match rustix::fs::openat(
                    &top,
                    name,
                    OFlags::CREATE | OFlags::EXCL | OFlags::RDWR | OFlags::CLOEXEC,
                    Mode::from_bits_truncate(0o666),
                ) {
                    Ok(fd) => break fd,
                    // A name already taken: fs_mark would truncate that file.
                    // Draw another name (possible only with random characters).
                    // A memory cgroup at its limit with its OOM killer off:
                    // made again after a wait for reclaim, which is the
                    // loop's time, not the call's (see `calls::retrying`).
                    Err(Errno::NOMEM) if super::calls::within_patience(&mut enomem_since) => {
                        out.enomem_retries += 1;
                        std::thread::sleep(Duration::from_millis(10));
                        t0 = now_ns();
                    }
                    Err(Errno::EXIST) if opts.rand_len > 0 && redraws < 100 => {
                        redraws += 1;
                        name_seq = self.next_redraw;
                        self.next_redraw += 1;
                        log.redraw(i, name_seq);
                        t0 = now_ns();
                    }
                    Err(e) => {
                        let path = Self::path_of(&self.dir, subdir, name);
                        log.pop();
                        let mut err = WorkError::new("create", path, e);
                        if e == Errno::EXIST {
                            err.hint = Some(
                                "the file name is taken; with -r 0 every file made in the same second \
                                 gets the same name (fs_mark would silently truncate it): use -r 1 or more",
                            );
                        }
                        return Err(err);
                    }
                }
            };
            let t1 = now_ns();
            self.calls[CREAT].add(t1 - t0);
            let mut prev = t1;
            let mut left = opts.file_size;
            // At least one write: fs_mark writes an empty file's zero bytes too.
            loop {
                let n = left.min(self.buf.len() as u64) as usize;
                match rustix::io::write(&fd, &self.buf[..n]) {
                    Ok(w) => {
                        left -= w as u64;
                        out.bytes += w as u64;
                    }
                    Err(Errno::INTR) => continue,
                    Err(e) => {
                        let name = self.names.name(secs, name_seq);
                        return Err(WorkError::new(
                            "write",
                            Self::path_of(&self.dir, subdir, name),
                            e,
                        ));
                    }
                }
                let t = now_ns();
                self.calls[WRITE].add(t - prev);
                prev = t;
                if left == 0 {
                    break;
                }
            }
            if opts.sync.fsync_before_close() {
                if let Err(e) = rustix::fs::fsync(&fd) {
                    let name = self.names.name(secs, name_seq);
                    return Err(WorkError::new(
                        "fsync",
                        Self::path_of(&self.dir, subdir, name),
                        e,
                    ));
                }
                let t = now_ns();
                self.calls[FSYNC].add(t - prev);
                prev = t;
            }
            fslab_sys::fd::close(fd);
            let t_end = now_ns();
            self.calls[CLOSE].add(t_end - prev);
            *prev_end = t_end;
            out.files += 1;
            self.phase_files += 1;
            ctx.progress.set(self.index, self.phase_files);
            // The stonewall's per-item check: the close's clock read, compared.
            if ctx.wall.passed(t_end) {
                break;
            }
        }
        Ok(())
    }

    fn path_of(dir: &Path, subdir: Option<u32>, name: &CStr) -> PathBuf {
        let mut p = dir.to_path_buf();
        if let Some(n) = subdir {
            p.push(format_subdir(n));
        }
        p.push(name.to_string_lossy().as_ref());
        p
    }

    /// Calls `f(calls, top_fd, name)` for every file of the loop, in the
    /// given order, `name` being relative to the `-d` directory.
    fn for_each_file(
        &mut self,
        log: &NameLog,
        reverse: bool,
        mut f: impl FnMut(&mut [CallTimes; 6], BorrowedFd, &CStr) -> Result<(), (&'static str, Errno)>,
    ) -> Result<(), WorkError> {
        let top = self
            .top_fd()?
            .try_clone()
            .map_err(|e| WorkError::io("open", self.dir.clone(), e))?;
        let n = log.len();
        for k in 0..n {
            let i = if reverse { n - 1 - k } else { k };
            let (subdir, secs, seq) = log.at(i);
            let name = rel_name(&mut self.rel, subdir, self.names.name(secs, seq));
            if let Err((op, e)) = f(&mut self.calls, top.as_fd(), name) {
                let name = self.names.name(secs, seq).to_owned();
                return Err(WorkError::new(
                    op,
                    Self::path_of(&self.dir, subdir, &name),
                    e,
                ));
            }
        }
        Ok(())
    }

    fn post_loop_syncs(&mut self, ctx: &LoopCtx, log: &NameLog) -> Result<(), WorkError> {
        let sync = ctx.opts.sync;
        if sync.sync_after_loop() {
            let t = now_ns();
            rustix::fs::sync();
            self.calls[SYNC].add(now_ns() - t);
        }
        // As in fs_mark, a post-loop fsync is timed together with the reopen
        // and the close around it.
        let reopen_fsync = |calls: &mut [CallTimes; 6], dir: BorrowedFd, name: &CStr| {
            let t = now_ns();
            let fd = rustix::fs::openat(dir, name, OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty())
                .map_err(|e| ("open", e))?;
            rustix::fs::fsync(&fd).map_err(|e| ("fsync", e))?;
            fslab_sys::fd::close(fd);
            calls[FSYNC].add(now_ns() - t);
            Ok(())
        };
        if sync.post_in_order() {
            self.for_each_file(log, false, reopen_fsync)?;
        }
        if sync.post_reverse() {
            self.for_each_file(log, true, reopen_fsync)?;
        }
        if sync.fsync_first_file() && !log.is_empty() {
            let (d, s, q) = log.at(0);
            let mut first = NameLog::new(q);
            first.push(0, d, s);
            self.for_each_file(&first, false, reopen_fsync)?;
        }
        Ok(())
    }

    fn unlink_all(&mut self, log: &NameLog) -> Result<(), WorkError> {
        self.for_each_file(log, false, |calls, dir, name| {
            let t = now_ns();
            rustix::fs::unlinkat(dir, name, rustix::fs::AtFlags::empty())
                .map_err(|e| ("unlink", e))?;
            calls[UNLINK].add(now_ns() - t);
            Ok(())
        })
    }
}

/// Subdirectory `n`'s name, as fs_mark names it ("%02x").
fn format_subdir(n: u32) -> String {
    format!("{n:02x}")
}

/// Subdirectory `n`'s name ("%02x") in `buf`, without allocating.
fn subdir_cstr(n: u32, buf: &mut [u8; 12]) -> &CStr {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let digits = (32 - n.leading_zeros()).div_ceil(4).max(2) as usize;
    for i in 0..digits {
        buf[digits - 1 - i] = HEX[((n >> (4 * i)) & 15) as usize];
    }
    buf[digits] = 0;
    CStr::from_bytes_with_nul(&buf[..=digits]).expect("one NUL")
}

/// `name` in subdirectory `subdir` ("%02x/NAME"), relative to the `-d`
/// directory, made in `buf`; `name` itself without subdirectories.
fn rel_name<'a>(buf: &'a mut Vec<u8>, subdir: Option<u32>, name: &'a CStr) -> &'a CStr {
    let Some(n) = subdir else { return name };
    buf.clear();
    let mut b = [0u8; 12];
    buf.extend_from_slice(subdir_cstr(n, &mut b).to_bytes());
    buf.push(b'/');
    buf.extend_from_slice(name.to_bytes_with_nul());
    CStr::from_bytes_with_nul(buf).expect("names hold no NUL")
}

fn stopping(ctx: &LoopCtx) -> bool {
    ctx.stop.load(Ordering::Relaxed) || ctx.abort.load(Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subdirectory_names_are_fs_marks_two_hex_digits_or_more() {
        let mut b = [0u8; 12];
        for n in [0u32, 9, 0x1f, 0xff, 0x100, 0xabcde, u32::MAX] {
            assert_eq!(subdir_cstr(n, &mut b).to_str().unwrap(), format!("{n:02x}"));
        }
        let mut rel = Vec::new();
        let name = c"f1";
        assert_eq!(rel_name(&mut rel, Some(0x2a), name).to_bytes(), b"2a/f1");
        assert_eq!(rel_name(&mut rel, None, name).to_bytes(), b"f1");
    }
}
