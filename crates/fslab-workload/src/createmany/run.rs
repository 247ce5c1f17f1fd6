//! createmany's run: the workers and their tallies, the progress lines as createmany prints them, the numbers it records, and the create rate against entries made.

#[allow(clippy::wildcard_imports)]
use super::*;
use crate::{Begun, Start};

mod numbers;
mod unlink;
mod walled;

pub use numbers::{by_entries, FIRST_TENTH, LAST_TENTH};
use numbers::{enomem, entries_metrics, metrics};

use crate::stonewall::Check;

/// A worker's tally.
#[derive(Default)]
struct Tally {
    done: u64,
    /// This thread's first and last tenth of its entries: (entries, ns).
    tenths: Option<Tenths>,
    hist: LatencyHistogram,
    unlink_hist: LatencyHistogram,
    error: Option<String>,
    /// The directory's htree was full (with `--until-full`).
    full: bool,
    fds: Vec<OwnedFd>,
    /// Where the thread is in its names, between its stretches (a
    /// stonewall's, and the wear-out after it).
    cursor: Option<Cursor>,
    /// With --links-per-target: the target this thread links to now, by
    /// its number.
    target: Option<(u64, std::ffi::CString)>,
    /// Calls made again after ENOMEM (a memory cgroup at its limit).
    enomem_retries: u64,
}

/// A thread's place in its names.
struct Cursor {
    /// The next name's index (from START) and the names made.
    i: u64,
    n: u64,
    marks: Marks,
    tenths: Tenths,
    /// The names this thread makes without a stonewall.
    mine: u64,
}

impl Cursor {
    /// Thread `t`'s start, at clock reading `now`.
    fn new(o: &CreateManyOptions, t: usize, threads: u64, now: u64) -> Cursor {
        // The names this thread makes: a tenth of them first and last.
        let mine = (o.count.saturating_sub(t as u64)).div_ceil(threads);
        Cursor {
            i: t as u64,
            n: 0,
            marks: Marks::new(now, threads == 1),
            tenths: Tenths {
                tenth: mine / 10,
                start: now,
                ..Tenths::default()
            },
            mine,
        }
    }
}

impl Tally {
    /// The threads' tallies as one, and each thread's rates over its first
    /// and last tenth, summed: the rates of all threads together while the
    /// directory was small and when it was nearly full (None unless every
    /// thread made all its entries).
    fn merge(tallies: Vec<Mutex<Tally>>) -> (Tally, Option<(f64, f64)>) {
        let mut all = Tally::default();
        let mut tenth_rates = Some((0.0, 0.0));
        for t in tallies {
            let t = t.into_inner().unwrap_or_else(|e| e.into_inner());
            tenth_rates = match (tenth_rates, t.tenths) {
                (Some((f, l)), Some(x)) => {
                    let rate = |ns: u64| x.tenth as f64 / (ns.max(1) as f64 / 1e9);
                    Some((
                        f + rate(x.first_done - x.start),
                        l + rate(x.end - x.last_start),
                    ))
                }
                _ => None,
            };
            all.done += t.done;
            all.hist.merge(&t.hist);
            all.unlink_hist.merge(&t.unlink_hist);
            if all.error.is_none() {
                all.error = t.error;
            }
            all.full |= t.full;
            all.fds.extend(t.fds);
            all.enomem_retries += t.enomem_retries;
        }
        (all, tenth_rates)
    }
}

/// When a thread made its first tenth of entries and its last tenth.
#[derive(Debug, Default, Clone, Copy)]
struct Tenths {
    /// Entries in a tenth.
    tenth: u64,
    /// Clock (ns) at the start, after the first tenth, at the start of the
    /// last tenth, and at the end.
    start: u64,
    first_done: u64,
    last_start: u64,
    end: u64,
}

/// Seconds since the epoch, as createmany's `time` field.
fn wall_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// When the one worker thread makes a progress line, as createmany does: at
/// every multiple of 10000 names once two seconds have passed, and whenever
/// ten seconds have passed since the last line.
pub(super) struct Marks {
    on: bool,
    start_ns: u64,
    start_wall: f64,
    next: u64,
    last_ns: u64,
    last_n: u64,
}

impl Marks {
    const EVERY: u64 = 10_000;
    const SETTLE_NS: u64 = 2_000_000_000;
    const QUIET_NS: u64 = 10_000_000_000;

    pub(super) fn new(start_ns: u64, on: bool) -> Self {
        Marks {
            on,
            start_ns,
            start_wall: wall_now(),
            next: Self::EVERY,
            last_ns: start_ns,
            last_n: 0,
        }
    }

    /// After the `n`th name, done at `now` (the per-call timer): the line
    /// to print, if one is due. Two comparisons when none is.
    #[inline]
    pub(super) fn after(&mut self, n: u64, now: u64, verb: &str) -> Option<String> {
        if !self.on || (n < self.next && now - self.last_ns < Self::QUIET_NS) {
            return None;
        }
        let at_mark = n >= self.next;
        if at_mark {
            self.next = (n / Self::EVERY + 1) * Self::EVERY;
        }
        if !(at_mark && now - self.start_ns >= Self::SETTLE_NS)
            && now - self.last_ns < Self::QUIET_NS
        {
            return None;
        }
        let secs = |ns: u64| ns as f64 / 1e9;
        let total = secs(now - self.start_ns);
        let rate = (n - self.last_n) as f64 / secs(now - self.last_ns).max(1e-9);
        self.last_ns = now;
        self.last_n = n;
        Some(format!(
            " - {verb} {n} (time {:.2} total {total:.2} last {rate:.2})",
            self.start_wall + total
        ))
    }
}

fn thread_fmt(o: &CreateManyOptions, f: &NameFmt, t: u32) -> NameFmt {
    if !o.dir_per_thread {
        return f.clone();
    }
    let mut f = f.clone();
    let p = Path::new(&f.prefix);
    let (dir, base) = (
        p.parent()
            .map(|d| d.to_string_lossy().into_owned())
            .unwrap_or_default(),
        p.file_name()
            .map(|b| b.to_string_lossy().into_owned())
            .unwrap_or_default(),
    );
    f.prefix = if dir.is_empty() {
        format!("t{t}/{base}")
    } else {
        format!("{dir}/t{t}/{base}")
    };
    f
}

/// `call`, made again while it fails with ENOMEM (for at most a minute,
/// 10 ms apart), each retry counted: as fs_mark's loops do
/// ([`crate::patience::retrying`]), since a memory cgroup at its
/// limit with its OOM killer off fails a system call's allocation where a
/// machine of that size would wait for reclaim. The first call is the
/// loop's own; the wait counts in the phase's time.
#[inline(always)]
fn patient<T>(retries: &mut u64, mut call: impl FnMut() -> Result<T, Errno>) -> Result<T, Errno> {
    match call() {
        Err(Errno::NOMEM) => crate::patience::retrying(retries, call).0,
        r => r,
    }
}

fn one(
    o: &CreateManyOptions,
    (name, i): (&std::ffi::CStr, u64),
    fill: &[u8],
    tally: &mut Tally,
) -> Result<(), (&'static str, Errno)> {
    match o.op {
        Op::Open => {
            let fd = patient(&mut tally.enomem_retries, || {
                rustix::fs::openat(
                    CWD,
                    name,
                    OFlags::CREATE | OFlags::RDWR | OFlags::CLOEXEC,
                    Mode::from_bits_truncate(0o644),
                )
            })
            .map_err(|e| ("open", e))?;
            if let Some(n) = o.xattr {
                rustix::fs::fsetxattr(
                    &fd,
                    "user.fslab",
                    &fill[..n as usize],
                    rustix::fs::XattrFlags::empty(),
                )
                .map_err(|e| ("setxattr", e))?;
            }
            if let Some(off) = o.seek {
                rustix::io::pwrite(&fd, b"fslab", off).map_err(|e| ("write", e))?;
            }
            if let Some(n) = o.write {
                let mut left = n as usize;
                while left > 0 {
                    let k = left.min(fill.len());
                    left -= rustix::io::write(&fd, &fill[..k]).map_err(|e| ("write", e))?;
                }
            }
            if o.uid.is_some() || o.gid.is_some() {
                rustix::fs::fchown(
                    &fd,
                    o.uid.map(rustix::process::Uid::from_raw),
                    o.gid.map(rustix::process::Gid::from_raw),
                )
                .map_err(|e| ("chown", e))?;
            }
            if o.keep_open {
                tally.fds.push(fd);
            } else {
                fslab_sys::fd::close(fd);
            }
        }
        Op::Mknod => patient(&mut tally.enomem_retries, || {
            rustix::fs::mknodat(
                CWD,
                name,
                FileType::RegularFile,
                Mode::from_bits_truncate(0o444),
                0,
            )
        })
        .map_err(|e| ("mknod", e))?,
        Op::Mkdir => patient(&mut tally.enomem_retries, || {
            rustix::fs::mkdirat(CWD, name, Mode::from_bits_truncate(0o755))
        })
        .map_err(|e| ("mkdir", e))?,
        Op::Link => link(o, name, i, tally)?,
        Op::Unlink => {
            rustix::fs::unlinkat(CWD, name, AtFlags::empty()).map_err(|e| ("unlink", e))?;
        }
    }
    if o.op != Op::Open && o.op != Op::Unlink && (o.uid.is_some() || o.gid.is_some()) {
        rustix::fs::chownat(
            CWD,
            name,
            o.uid.map(rustix::process::Uid::from_raw),
            o.gid.map(rustix::process::Gid::from_raw),
            AtFlags::SYMLINK_NOFOLLOW,
        )
        .map_err(|e| ("chown", e))?;
    }
    Ok(())
}

/// -l: name `i` (from START) linked to TARGET, or with --links-per-target
/// to its turn's TARGET.K, made (mknod) by whichever thread needs it first.
fn link(
    o: &CreateManyOptions,
    name: &std::ffi::CStr,
    i: u64,
    tally: &mut Tally,
) -> Result<(), (&'static str, Errno)> {
    let base = o.link_target.as_ref().expect("validated");
    let Some(per) = o.links_per_target else {
        return rustix::fs::linkat(CWD, base, CWD, name, AtFlags::empty()).map_err(|e| ("link", e));
    };
    let k = i / per;
    if tally.target.as_ref().map(|t| t.0) != Some(k) {
        let p = format!("{}.{k}", base.display());
        let c = std::ffi::CString::new(p).map_err(|_| ("link", Errno::INVAL))?;
        tally.target = Some((k, c));
    }
    let target = &tally.target.as_ref().expect("set above").1;
    match rustix::fs::linkat(CWD, target.as_c_str(), CWD, name, AtFlags::empty()) {
        Err(Errno::NOENT) => {
            match rustix::fs::mknodat(
                CWD,
                target.as_c_str(),
                FileType::RegularFile,
                Mode::from_bits_truncate(0o444),
                0,
            ) {
                Ok(()) | Err(Errno::EXIST) => {}
                Err(e) => return Err(("mknod", e)),
            }
            rustix::fs::linkat(CWD, target.as_c_str(), CWD, name, AtFlags::empty())
                .map_err(|e| ("link", e))
        }
        r => r.map_err(|e| ("link", e)),
    }
}

/// What every creating thread shares.
#[derive(Clone, Copy)]
struct Work<'a> {
    o: &'a CreateManyOptions,
    fill: &'a [u8],
    threads: u64,
    stop: &'a AtomicBool,
    /// Set by the thread that met an error: the others stop too.
    abort: &'a AtomicBool,
    deadline: Option<Instant>,
    /// Progress lines made at exact counts (one thread only).
    lines: &'a Mutex<Vec<String>>,
    /// Each thread stops after its name that passes it.
    wall: Check,
    /// Each thread stops at this many names (a wear-out's agreed count).
    upto: u64,
}

/// Thread `t`'s names, one after the other, into its `tally`, from where
/// its last stretch ended: until COUNT is done, `w.upto` names are, an
/// error, the stop flag, -t's deadline, or the name that passes `w.wall`.
fn work(w: &Work, t: usize, progress: &crate::measure::Progress, tally: &mut Tally) {
    let Work {
        o,
        fill,
        threads,
        stop,
        abort,
        deadline,
        lines,
        wall,
        upto,
    } = *w;
    let verb = o.op_words();
    let fmt = thread_fmt(o, &o.fmt, t as u32);
    let ufmt = o.unlink_fmt.as_ref().map(|f| thread_fmt(o, f, t as u32));
    let mut buf = Vec::with_capacity(256);
    let mut ubuf = Vec::with_capacity(256);
    // A new stretch's first interval starts now, not where the last ended.
    let mut prev = crate::measure::now_ns();
    let Cursor {
        mut i,
        mut n,
        mut marks,
        mut tenths,
        mine,
    } = tally
        .cursor
        .take()
        .unwrap_or_else(|| Cursor::new(o, t, threads, prev));
    let first = n;
    while i < o.count && n < upto {
        if n.is_multiple_of(256)
            && (stop.load(Ordering::Relaxed)
                || abort.load(Ordering::Relaxed)
                || deadline.is_some_and(|d| Instant::now() >= d))
        {
            break;
        }
        let number = o.start.wrapping_add(i as i64);
        // Counting up in place is much cheaper than formatting every name.
        if n == first || !fmt.bump(&mut buf, number - threads as i64, threads) {
            fmt.render(number, &mut buf);
        }
        let name = std::ffi::CStr::from_bytes_with_nul(&buf)
            .map_err(|_| ())
            .ok();
        let Some(name) = name else {
            tally.error = Some(format!("name {} holds a NUL byte", fmt.name(number)));
            break;
        };
        if let Err((op, e)) = one(o, (name, i), fill, tally) {
            let why = (e == Errno::NOSPC)
                .then(|| crate::createmany::htree::explain_enospc(&o.dir()))
                .flatten();
            if o.until_full && why.is_some() {
                tally.full = true;
            } else {
                tally.error = Some(format!(
                    "{op}({}) error: {}{}",
                    fmt.name(number),
                    std::io::Error::from(e),
                    why.map(|w| format!(": {w}")).unwrap_or_default()
                ));
            }
            abort.store(true, Ordering::Relaxed);
            break;
        }
        // One clock read per name: the interval also holds making the next
        // name (tens of nanoseconds beside microseconds of system call).
        let now = crate::measure::now_ns();
        tally.hist.record(now - prev);
        prev = now;
        if let Some(uf) = &ufmt {
            match unlink::unlink_now(o, uf, number, &mut ubuf) {
                Ok(()) => {
                    let now = crate::measure::now_ns();
                    tally.unlink_hist.record(now - prev);
                    prev = now;
                }
                Err(e) => {
                    tally.error = Some(e.to_string());
                    abort.store(true, Ordering::Relaxed);
                    break;
                }
            }
        }
        n += 1;
        if n == tenths.tenth {
            tenths.first_done = prev;
        }
        if n == mine - tenths.tenth {
            tenths.last_start = prev;
        }
        progress.set(t, n);
        i += threads;
        if let Some(l) = marks.after(n, prev, &verb) {
            lines.lock().unwrap_or_else(|e| e.into_inner()).push(l);
        }
        // The stonewall's per-item check: the clock read above, compared.
        if wall.passed(prev) {
            break;
        }
    }
    tally.done = n;
    if n == mine && tenths.tenth > 0 {
        tenths.end = prev;
        tally.tenths = Some(tenths);
    }
    tally.cursor = Some(Cursor {
        i,
        n,
        marks,
        tenths,
        mine,
    });
}

/// createmany's progress lines: one thread's come from the thread at the
/// exact counts; several threads' from the coordinator, once a second.
struct Ticker<'a> {
    out: &'a mut dyn Write,
    lines: &'a Mutex<Vec<String>>,
    threads: u64,
    verb: &'a str,
    last_t: f64,
    last_n: u64,
    printed_at: u64,
}

impl Ticker<'_> {
    fn tick(&mut self, pt: &fslab_model::SeriesPoint) {
        if self.threads == 1 {
            let ready = std::mem::take(&mut *self.lines.lock().unwrap_or_else(|e| e.into_inner()));
            for l in ready {
                let _ = writeln!(self.out, "{l}");
            }
            let _ = self.out.flush();
            return;
        }
        // Several threads: the coordinator sees the sum once a second.
        let crossed = pt.total_ops / 10_000 > self.printed_at / 10_000;
        if (crossed && pt.t_s >= 2.0) || pt.t_s - self.last_t >= 10.0 {
            let rate = (pt.total_ops - self.last_n) as f64 / (pt.t_s - self.last_t).max(1e-9);
            let _ = writeln!(
                self.out,
                " - {} {} (time {:.2} total {:.2} last {rate:.2})",
                self.verb,
                pt.total_ops,
                wall_now(),
                pt.t_s
            );
            let _ = self.out.flush();
            self.last_t = pt.t_s;
            self.last_n = pt.total_ops;
            self.printed_at = pt.total_ops;
        }
    }
}

/// -k: the files kept open are closed at the end, timed, as createmany
/// prints it.
fn close_kept(fds: Vec<OwnedFd>, out: &mut dyn Write) {
    if fds.is_empty() {
        return;
    }
    let n = fds.len() as u64;
    let t = Instant::now();
    drop(fds);
    let s = t.elapsed().as_secs_f64();
    let _ = writeln!(
        out,
        "total: {n} close in {s:.2} seconds: {:.2} close/second",
        n as f64 / s.max(1e-9)
    );
}

/// Each name's call's latency, and -u's unlinks'.
fn record_calls(
    ctx: &mut RunCtx,
    o: &CreateManyOptions,
    phase_name: &str,
    hist: &LatencyHistogram,
    uhist: &LatencyHistogram,
) -> Result<(), fslab_model::RecordError> {
    let call = match o.op {
        Op::Open => "open",
        Op::Mknod => "mknod",
        Op::Mkdir => "mkdir",
        Op::Link => "link",
        Op::Unlink => "unlink",
    };
    ctx.record_latency(phase_name, call, hist)?;
    ctx.record_latency(
        phase_name,
        if o.op == Op::Mkdir { "rmdir" } else { "unlink" },
        uhist,
    )
}

/// --dir-per-thread: each thread's directory.
fn make_thread_dirs(o: &CreateManyOptions) -> crate::Result<()> {
    if o.dir_per_thread {
        for t in 0..o.threads {
            let d = o.dir().join(format!("t{t}"));
            std::fs::create_dir_all(&d)
                .map_err(|e| crate::Error::Setup(format!("cannot create {}: {e}", d.display())))?;
        }
    }
    Ok(())
}

/// Runs createmany.
pub fn run(o: &CreateManyOptions, start: Start<'_, '_>) -> crate::Result<CreateManyReport> {
    make_thread_dirs(o)?;
    let Begun {
        mut ctx,
        out,
        cluster,
        ..
    } = start.begin("createmany", &o.dir(), o)?;
    let stop = ctx.stop;
    let abort = AtomicBool::new(false);
    let started = Instant::now();
    let deadline = o
        .seconds
        .map(|s| started + std::time::Duration::from_secs(s));
    let fill = fill_buffer(o);
    let threads = o.threads as u64;
    let tallies: Vec<Mutex<Tally>> = (0..threads).map(|_| Mutex::new(Tally::default())).collect();
    let phase_name = if o.op == Op::Unlink {
        "unlink"
    } else {
        "create"
    };
    let verb = o.op_words();
    // One thread (createmany's own way) makes its progress lines itself, at
    // the exact counts; the coordinator prints them within a second.
    let lines: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let shared = Work {
        o,
        fill: &fill,
        threads,
        stop,
        abort: &abort,
        deadline,
        lines: &lines,
        wall: Check::NEVER,
        upto: u64::MAX,
    };
    let mut ticker = Ticker {
        out: &mut *out,
        lines: &lines,
        threads,
        verb: &verb,
        last_t: 0.0,
        last_n: 0,
        printed_at: 0,
    };
    let mut depth = crate::createmany::htree::DepthRates::of(o);
    let mut on_tick = |pt: &fslab_model::SeriesPoint| {
        ticker.tick(pt);
        if let Some(d) = depth.as_mut() {
            d.tick(pt);
        }
    };
    let walled::Ended {
        run: p,
        walls,
        reached,
    } = walled::either(
        &mut ctx,
        cluster,
        phase_name,
        &tallies,
        shared,
        &mut on_tick,
    )?;
    // Lines made after the last second's tick.
    for l in lines.into_inner().unwrap_or_else(|e| e.into_inner()) {
        let _ = writeln!(out, "{l}");
    }
    let secs = p.elapsed_s;
    let (all, tenth_rates) = Tally::merge(tallies);
    let Tally {
        done: total,
        hist,
        unlink_hist: uhist,
        error,
        full,
        fds,
        enomem_retries,
        ..
    } = all;
    if let Some(e) = &error {
        let _ = writeln!(out, "{e}");
    }
    crate::createmany::htree::print_end(out, depth.as_ref(), full.then_some(total), &o.dir());
    let rate = total as f64 / secs.max(1e-9);
    let _ = writeln!(
        out,
        "total: {total} {} in {secs:.2} seconds: {rate:.2} ops/second",
        o.op_words()
    );
    for w in walls.iter().flatten() {
        let _ = writeln!(out, "{}", w.line_for("run", "thread"));
    }
    let complete = error.is_none()
        && !ctx.stopping()
        && (deadline.is_some() || full || total == o.count || reached);
    ctx.record_phase(phase_result(phase_name, total, 0, &p, complete))?;
    record_calls(&mut ctx, o, phase_name, &hist, &uhist)?;
    if o.keep_open {
        close_kept(fds, out);
    }
    let _ = out.flush();
    let rate_by_entries = by_entries(&ctx.out.series);
    let mut metrics = metrics(o, total, secs, tenth_rates.filter(|_| complete));
    metrics.extend(depth.iter().flat_map(|d| d.metrics(&verb)));
    metrics.extend(crate::stonewall::metrics(
        "createmany",
        &verb,
        walls.as_deref().unwrap_or_default(),
    ));
    metrics.extend(enomem(out, &verb, enomem_retries));
    ctx.record_metrics([metrics, entries_metrics(&rate_by_entries)].concat())?;
    let outcome = ctx.finish(error)?;
    Ok(CreateManyReport {
        outcome,
        options: o.clone(),
        total,
        seconds: secs,
        ops_per_s: rate,
        rate_by_entries,
    })
}

/// The bytes each file's write (`-w`) and xattr (`-x`) take from: a
/// zeroed buffer of 4 KiB to 1 MiB, as large as an xattr value.
fn fill_buffer(o: &CreateManyOptions) -> Vec<u8> {
    let len = o
        .write
        .unwrap_or(0)
        .clamp(4096, 1 << 20)
        .max(o.xattr.unwrap_or(0) as usize as u64);
    vec![0u8; len as usize]
}
