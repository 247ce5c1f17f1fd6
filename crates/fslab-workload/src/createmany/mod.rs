//! `fslab createmany`: Lustre's createmany (lustre/tests/createmany.c), the
//! tool of seed 004, with threads and the series seed 004 needed (the
//! create rate against the number of entries already in the directory).
//!
//! Its lines are createmany's: ` - OP N (time T total T last R)` at every
//! multiple of 10000 names once two seconds have passed and whenever ten
//! seconds have passed since the last line (`last` is the rate since that
//! line), then `total: N OP in S seconds: R ops/second`. With one thread
//! (createmany's way) the worker makes each line at its exact count and
//! the coordinating thread prints it within a second. With `--threads`, on
//! purpose, the coordinator makes them from the summed counters once a
//! second, so N is the count at that second, past the multiple.

use std::io::Write;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use fslab_record::{LatencyHistogram, Recorder};
use rustix::fs::{AtFlags, FileType, Mode, OFlags, CWD};
use rustix::io::Errno;
use serde::Serialize;

pub mod plugin;

use crate::common::{phase_result, CommonArgs, Hooks, Outcome, RunCtx, WithOutcome};

/// `fslab createmany {-o|-m|-d|-l TARGET|-u} [options] FMT [[START] COUNT]`.
#[derive(Debug, Clone, clap::Args, Serialize, serde::Deserialize)]
pub struct CreateManyArgs {
    /// open(O_CREAT) and close each file
    #[arg(short = 'o', long = "open")]
    pub open: bool,
    /// mknod each file (a regular file with no data)
    #[arg(short = 'm', long = "mknod")]
    pub mknod: bool,
    /// mkdir each name
    #[arg(short = 'd', long = "mkdir")]
    pub mkdir: bool,
    /// Hard-link each name to TARGET
    #[arg(short = 'l', long = "link", value_name = "TARGET")]
    pub link: Option<PathBuf>,
    /// Unlink each name right after creating it; alone, unlink existing names
    #[arg(short = 'u', long = "unlink")]
    pub unlink: bool,
    /// Like -u, with names from another pattern
    #[arg(short = 'r', long = "unlink-format", value_name = "FMT")]
    pub unlink_fmt: Option<String>,
    /// With -o: keep every file open and close them all at the end
    #[arg(short = 'k', long = "keep-open")]
    pub keep_open: bool,
    /// With -o: set a user.fslab extended attribute of SIZE bytes
    #[arg(short = 'x', long = "xattr", value_name = "SIZE")]
    pub xattr: Option<String>,
    /// With -o: seek to SIZE and write a few bytes
    #[arg(short = 'S', long = "seek", value_name = "SIZE")]
    pub seek: Option<String>,
    /// With -o: write SIZE bytes
    #[arg(short = 'W', long = "write", value_name = "SIZE")]
    pub write: Option<String>,
    /// chown each file to UID
    #[arg(short = 'U', long = "uid", value_name = "UID")]
    pub uid: Option<u32>,
    /// chown each file to GID
    #[arg(short = 'G', long = "gid", value_name = "GID")]
    pub gid: Option<u32>,
    /// Stop after SECONDS
    #[arg(short = 't', long = "seconds", value_name = "SECONDS")]
    pub seconds: Option<u64>,
    /// Worker threads, all in FMT's directory (numbers interleaved)
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub threads: u32,
    /// Give each thread its own directory (FMT's directory/tN/)
    #[arg(long)]
    pub dir_per_thread: bool,
    /// A directory whose htree is full (ENOSPC with free blocks and inodes left: ext4's 2
    /// levels without large_dir) ends the run as complete, at the entries made, instead of
    /// failing it (seed 004's default variant)
    #[arg(long)]
    pub until_full: bool,
    /// Under MPI: all ranks in FMT's directory itself, rank R taking the numbers from START + R x COUNT (default: a rankNNNN directory each)
    #[arg(long)]
    pub shared_dir: bool,
    /// Name pattern: printf with one integer conversion (%d, %08x, ...), or a prefix the number is appended to
    #[arg(value_name = "FMT")]
    pub fmt: String,
    /// [START] COUNT
    #[arg(value_name = "NUMBERS", num_args = 0..=2, allow_negative_numbers = true)]
    pub numbers: Vec<String>,
    #[command(flatten)]
    pub common: CommonArgs,
}

/// The operation on each name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Op {
    Open,
    Mknod,
    Mkdir,
    Link,
    /// Unlink only (no create).
    Unlink,
}

/// A name pattern with at most one integer conversion.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NameFmt {
    prefix: String,
    suffix: String,
    width: usize,
    zero: bool,
    left: bool,
    /// 10, 16 (x), 8 (o)
    base: u32,
    upper: bool,
}

impl NameFmt {
    /// Parses FMT: one `%[flags][width][length](d|i|u|x|X|o)`, `%%` for a
    /// percent sign, or no conversion at all (the number is appended).
    pub fn parse(fmt: &str) -> Result<NameFmt, String> {
        let b = fmt.as_bytes();
        let mut prefix = String::new();
        let mut i = 0;
        let mut spec: Option<(usize, bool, bool, u32, bool, usize)> = None;
        let mut suffix = String::new();
        while i < b.len() {
            if b[i] == b'%' {
                if b.get(i + 1) == Some(&b'%') {
                    if spec.is_some() {
                        suffix.push('%');
                    } else {
                        prefix.push('%');
                    }
                    i += 2;
                    continue;
                }
                if spec.is_some() {
                    return Err(format!(
                        "FMT {fmt:?}: more than one conversion (use one integer, like %d)"
                    ));
                }
                let mut j = i + 1;
                let (mut zero, mut left) = (false, false);
                while j < b.len() && b"-0+ #".contains(&b[j]) {
                    zero |= b[j] == b'0';
                    left |= b[j] == b'-';
                    j += 1;
                }
                let ws = j;
                while j < b.len() && b[j].is_ascii_digit() {
                    j += 1;
                }
                let width: usize = fmt[ws..j].parse().unwrap_or(0);
                while j < b.len() && b"lhzjqt".contains(&b[j]) {
                    j += 1;
                }
                let (base, upper) = match b.get(j) {
                    Some(b'd' | b'i' | b'u') => (10, false),
                    Some(b'x') => (16, false),
                    Some(b'X') => (16, true),
                    Some(b'o') => (8, false),
                    Some(c) => {
                        return Err(format!(
                            "FMT {fmt:?}: %{} is not an integer conversion (use %d, %u, %x or %o)",
                            *c as char
                        ))
                    }
                    None => return Err(format!("FMT {fmt:?}: incomplete conversion at the end")),
                };
                spec = Some((width, zero, left, base, upper, j + 1));
                i = j + 1;
                continue;
            }
            let ch_len = fmt[i..].chars().next().map(|c| c.len_utf8()).unwrap_or(1);
            if spec.is_some() {
                suffix.push_str(&fmt[i..i + ch_len]);
            } else {
                prefix.push_str(&fmt[i..i + ch_len]);
            }
            i += ch_len;
        }
        if fmt.is_empty() {
            return Err("FMT is empty".into());
        }
        let (width, zero, left, base, upper, _) = spec.unwrap_or((0, false, false, 10, false, 0));
        Ok(NameFmt {
            prefix,
            suffix,
            width,
            zero,
            left,
            base,
            upper,
        })
    }

    /// Writes name `n` into `buf` (NUL-terminated for the system call).
    pub fn render(&self, n: i64, buf: &mut Vec<u8>) {
        buf.clear();
        buf.extend_from_slice(self.prefix.as_bytes());
        let mut digits = [0u8; 24];
        let mut k = digits.len();
        let neg = n < 0 && self.base == 10;
        let mut v = if neg { n.unsigned_abs() } else { n as u64 };
        loop {
            let d = (v % self.base as u64) as u8;
            k -= 1;
            digits[k] = if d < 10 {
                b'0' + d
            } else if self.upper {
                b'A' + d - 10
            } else {
                b'a' + d - 10
            };
            v /= self.base as u64;
            if v == 0 {
                break;
            }
        }
        let body = &digits[k..];
        let len = body.len() + neg as usize;
        let pad = self.width.saturating_sub(len);
        if !self.left && !self.zero {
            buf.extend(std::iter::repeat_n(b' ', pad));
        }
        if neg {
            buf.push(b'-');
        }
        if !self.left && self.zero {
            buf.extend(std::iter::repeat_n(b'0', pad));
        }
        buf.extend_from_slice(body);
        if self.left {
            buf.extend(std::iter::repeat_n(b' ', pad));
        }
        buf.extend_from_slice(self.suffix.as_bytes());
        buf.push(0);
    }

    /// Turns the name in `buf` (made by [`NameFmt::render`] for `n`) into
    /// the name for `n + step` by adding to its decimal digits in place;
    /// false when that cannot be done (other bases, padding, negative
    /// numbers, or one more digit), and `render` must be used.
    pub fn bump(&self, buf: &mut [u8], n: i64, step: u64) -> bool {
        if self.base != 10 || self.width != 0 || n < 0 {
            return false;
        }
        // The digits end before the suffix and the NUL.
        let end = buf.len() - 1 - self.suffix.len();
        let start = self.prefix.len();
        let mut carry = step;
        let mut i = end;
        while carry > 0 {
            if i == start {
                return false;
            }
            i -= 1;
            let d = (buf[i] - b'0') as u64 + carry;
            buf[i] = b'0' + (d % 10) as u8;
            carry = d / 10;
        }
        true
    }

    pub fn name(&self, n: i64) -> String {
        let mut b = Vec::new();
        self.render(n, &mut b);
        b.pop();
        String::from_utf8_lossy(&b).into_owned()
    }
}

/// Validated options.
#[derive(Debug, Clone, Serialize)]
pub struct CreateManyOptions {
    pub op: Op,
    pub fmt: NameFmt,
    pub fmt_text: String,
    pub unlink_fmt: Option<NameFmt>,
    pub link_target: Option<PathBuf>,
    pub keep_open: bool,
    pub xattr: Option<u64>,
    pub seek: Option<u64>,
    pub write: Option<u64>,
    pub uid: Option<u32>,
    pub gid: Option<u32>,
    pub seconds: Option<u64>,
    pub start: i64,
    pub count: u64,
    pub threads: u32,
    pub dir_per_thread: bool,
    /// ENOSPC from a full htree ends the run as complete.
    #[serde(default)]
    pub until_full: bool,
}

fn size(flag: &str, s: &Option<String>) -> Result<Option<u64>, String> {
    s.as_ref()
        .map(|v| crate::fsmark::options::parse_size(flag, v).map_err(|e| e.0))
        .transpose()
}

impl CreateManyArgs {
    pub fn validate(&self) -> crate::Result<CreateManyOptions> {
        self.check().map_err(crate::Error::Options)
    }

    fn check(&self) -> Result<CreateManyOptions, String> {
        let ops = [self.open, self.mknod, self.mkdir, self.link.is_some()]
            .iter()
            .filter(|x| **x)
            .count();
        let unlinking = self.unlink || self.unlink_fmt.is_some();
        let op = match (ops, self.open, self.mknod, self.mkdir) {
            (0, ..) if unlinking => Op::Unlink,
            (0, ..) => return Err("give one of -o, -m, -d, -l TARGET (or -u to unlink)".into()),
            (1, true, _, _) => Op::Open,
            (1, _, true, _) => Op::Mknod,
            (1, _, _, true) => Op::Mkdir,
            (1, ..) => Op::Link,
            _ => return Err("-o, -m, -d and -l exclude each other: give one".into()),
        };
        if op != Op::Open
            && (self.keep_open
                || self.xattr.is_some()
                || self.seek.is_some()
                || self.write.is_some())
        {
            return Err("-k, -x, -S and -W need -o (they work on the open file)".into());
        }
        if let Some(t) = &self.link {
            if std::fs::symlink_metadata(t).is_err() {
                return Err(format!(
                    "-l {}: the link target does not exist",
                    t.display()
                ));
            }
        }
        let fmt = NameFmt::parse(&self.fmt)?;
        let unlink_fmt = match &self.unlink_fmt {
            Some(f) => Some(NameFmt::parse(f).map_err(|e| format!("-r: {e}"))?),
            None => None,
        };
        let num = |s: &str| {
            s.parse::<i64>()
                .map_err(|_| format!("{s:?} is not a whole number"))
        };
        let (start, count) = match self.numbers.as_slice() {
            [] if self.seconds.is_some() => (0, i64::MAX),
            [] => return Err("give COUNT (or -t SECONDS)".into()),
            [c] => (0, num(c)?),
            [s, c] => (num(s)?, num(c)?),
            _ => return Err("too many numbers: FMT [[START] COUNT]".into()),
        };
        if count < 1 {
            return Err(format!("COUNT {count}: must be at least 1"));
        }
        if self.threads == 0 || self.threads > 1024 {
            return Err(format!(
                "--threads {}: must be from 1 to 1024",
                self.threads
            ));
        }
        if self.seconds == Some(0) {
            return Err("-t 0: the time limit must be at least 1 second".into());
        }
        let parent = Path::new(&self.fmt)
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        if !parent.is_dir() {
            return Err(format!(
                "FMT {:?}: no such directory {}",
                self.fmt,
                parent.display()
            ));
        }
        Ok(CreateManyOptions {
            op,
            fmt,
            fmt_text: self.fmt.clone(),
            unlink_fmt: unlink_fmt.or_else(|| {
                (self.unlink && op != Op::Unlink)
                    .then(|| NameFmt::parse(&self.fmt).expect("parsed above"))
            }),
            link_target: self.link.clone(),
            keep_open: self.keep_open,
            xattr: size("-x", &self.xattr)?,
            seek: size("-S", &self.seek)?,
            write: size("-W", &self.write)?,
            uid: self.uid,
            gid: self.gid,
            seconds: self.seconds,
            start,
            count: count as u64,
            threads: self.threads,
            dir_per_thread: self.dir_per_thread,
            until_full: self.until_full,
        })
    }
}

impl CreateManyOptions {
    /// The directory the names go in (for the probes and the store).
    pub fn dir(&self) -> PathBuf {
        Path::new(&self.fmt_text)
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .map(PathBuf::from)
            .unwrap_or_else(|| ".".into())
    }

    /// createmany's name for what it does, in its progress and total
    /// lines: `create` (-m), `open/close` or `open/keep` (-o, -o -k),
    /// `mkdir`, `link`, then `/unlink` (`/rmdir`) when each name is removed
    /// right after; `unlink` alone.
    fn op_words(&self) -> String {
        let op = match self.op {
            Op::Open if self.keep_open => "open/keep",
            Op::Open => "open/close",
            Op::Mkdir => "mkdir",
            Op::Link => "link",
            Op::Mknod => "create",
            Op::Unlink => return "unlink".into(),
        };
        let unlink = match (&self.unlink_fmt, self.op) {
            (None, _) => "",
            (Some(_), Op::Mkdir) => "/rmdir",
            _ => "/unlink",
        };
        format!("{op}{unlink}")
    }
}

/// The create rate at a number of entries (from the per-second series).
#[derive(Debug, Clone, Copy, Serialize)]
pub struct RateAt {
    pub entries: u64,
    pub ops_per_s: f64,
}

/// What `--json` prints.
#[derive(Debug, Clone, Serialize)]
pub struct CreateManyReport {
    #[serde(flatten)]
    pub outcome: Outcome,
    pub options: CreateManyOptions,
    pub total: u64,
    pub seconds: f64,
    pub ops_per_s: f64,
    /// The rate as the directory grew: about 8 points per doubling of entries.
    pub rate_by_entries: Vec<RateAt>,
}

impl WithOutcome for CreateManyReport {
    fn outcome(&self) -> &Outcome {
        &self.outcome
    }
}

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
struct Marks {
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

    fn new(start_ns: u64, on: bool) -> Self {
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
    fn after(&mut self, n: u64, now: u64, verb: &str) -> Option<String> {
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

fn one(
    o: &CreateManyOptions,
    name: &std::ffi::CStr,
    fill: &[u8],
    tally: &mut Tally,
) -> Result<(), (&'static str, Errno)> {
    match o.op {
        Op::Open => {
            let fd = rustix::fs::openat(
                CWD,
                name,
                OFlags::CREATE | OFlags::RDWR | OFlags::CLOEXEC,
                Mode::from_bits_truncate(0o644),
            )
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
            }
        }
        Op::Mknod => rustix::fs::mknodat(
            CWD,
            name,
            FileType::RegularFile,
            Mode::from_bits_truncate(0o444),
            0,
        )
        .map_err(|e| ("mknod", e))?,
        Op::Mkdir => rustix::fs::mkdirat(CWD, name, Mode::from_bits_truncate(0o755))
            .map_err(|e| ("mkdir", e))?,
        Op::Link => {
            let target = o.link_target.as_ref().expect("validated");
            rustix::fs::linkat(CWD, target, CWD, name, AtFlags::empty())
                .map_err(|e| ("link", e))?;
        }
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

/// Runs createmany.
/// What every creating thread shares.
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
}

/// Thread `t`'s names, one after the other, into its `tally`.
fn work(w: &Work, t: usize, progress: &crate::measure::Progress, tally: &mut Tally) {
    let Work {
        o,
        fill,
        threads,
        stop,
        abort,
        deadline,
        lines,
    } = *w;
    let verb = o.op_words();
    let fmt = thread_fmt(o, &o.fmt, t as u32);
    let ufmt = o.unlink_fmt.as_ref().map(|f| thread_fmt(o, f, t as u32));
    let mut buf = Vec::with_capacity(256);
    let mut ubuf = Vec::with_capacity(256);
    let mut i = t as u64;
    let mut n = 0u64;
    let mut prev = crate::measure::now_ns();
    let mut marks = Marks::new(prev, threads == 1);
    // The names this thread makes: a tenth of them first and last.
    let mine = (o.count.saturating_sub(t as u64)).div_ceil(threads);
    let mut tenths = Tenths {
        tenth: mine / 10,
        start: prev,
        ..Tenths::default()
    };
    while i < o.count {
        if n.is_multiple_of(256)
            && (stop.load(Ordering::Relaxed)
                || abort.load(Ordering::Relaxed)
                || deadline.is_some_and(|d| Instant::now() >= d))
        {
            break;
        }
        let number = o.start.wrapping_add(i as i64);
        // Counting up in place is much cheaper than formatting every name.
        if n == 0 || !fmt.bump(&mut buf, number - threads as i64, threads) {
            fmt.render(number, &mut buf);
        }
        let name = std::ffi::CStr::from_bytes_with_nul(&buf)
            .map_err(|_| ())
            .ok();
        let Some(name) = name else {
            tally.error = Some(format!("name {} holds a NUL byte", fmt.name(number)));
            break;
        };
        if let Err((op, e)) = one(o, name, fill, tally) {
            let why = (e == Errno::NOSPC)
                .then(|| crate::createmany_htree::explain_enospc(&o.dir()))
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
            uf.render(number, &mut ubuf);
            let Ok(uname) = std::ffi::CStr::from_bytes_with_nul(&ubuf) else {
                tally.error = Some(format!("name {} holds a NUL byte", uf.name(number)));
                break;
            };
            let t1 = prev;
            let flags = if o.op == Op::Mkdir {
                AtFlags::REMOVEDIR
            } else {
                AtFlags::empty()
            };
            let r = rustix::fs::unlinkat(CWD, uname, flags);
            if let Err(e) = r {
                tally.error = Some(format!(
                    "unlink({}) error: {}",
                    uf.name(number),
                    std::io::Error::from(e)
                ));
                abort.store(true, Ordering::Relaxed);
                break;
            }
            let now = crate::measure::now_ns();
            tally.unlink_hist.record(now - t1);
            prev = now;
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
    }
    tally.done = n;
    if n == mine && tenths.tenth > 0 {
        tenths.end = prev;
        tally.tenths = Some(tenths);
    }
}

/// createmany's numbers: its total line's, and with `tenths` (a complete
/// run) the rates over the first and last tenth of the entries.
fn metrics(
    o: &CreateManyOptions,
    total: u64,
    secs: f64,
    tenths: Option<(f64, f64)>,
) -> Vec<fslab_record::Metric> {
    let rate = total as f64 / secs.max(1e-9);
    use fslab_record::{Better, Metric, Unit};
    let words = o.op_words();
    let op = Some(words.as_str());
    let mut metrics = Vec::new();
    // The rate as the directory grows: over its first and last tenth
    // of entries (seed 004's finding), for a run that made them all.
    if let Some((first, last)) = tenths {
        for (name, v) in [(FIRST_TENTH, first), (LAST_TENTH, last)] {
            metrics.push(Metric::new(
                "createmany",
                op,
                name,
                v,
                Unit::OpsPerSec,
                Better::Higher,
            ));
        }
    }
    metrics.extend([
        Metric::new(
            "createmany",
            op,
            "total",
            total as f64,
            Unit::Count,
            Better::Neither,
        ),
        Metric::new(
            "createmany",
            op,
            "seconds",
            secs,
            Unit::Seconds,
            Better::Lower,
        ),
        Metric::new(
            "createmany",
            op,
            "ops/second",
            rate,
            Unit::OpsPerSec,
            Better::Higher,
        ),
    ]);
    // The run's own rate first: it is the headline.
    let own = metrics.len() - 3;
    metrics.rotate_left(own);
    metrics
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
    fn tick(&mut self, pt: &fslab_record::SeriesPoint) {
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

pub fn run(
    o: &CreateManyOptions,
    argv: &[String],
    stop: &AtomicBool,
    out: &mut dyn Write,
    rec: &mut dyn Recorder,
    hooks: &mut Hooks,
) -> crate::Result<CreateManyReport> {
    if o.dir_per_thread {
        for t in 0..o.threads {
            let d = o.dir().join(format!("t{t}"));
            std::fs::create_dir_all(&d)
                .map_err(|e| crate::Error::Setup(format!("cannot create {}: {e}", d.display())))?;
        }
    }
    let params = serde_json::to_value(o).unwrap_or_default();
    let mut ctx = RunCtx::begin("createmany", argv, &o.dir(), params, rec, hooks, stop)?;
    let abort = AtomicBool::new(false);
    let started = Instant::now();
    let deadline = o
        .seconds
        .map(|s| started + std::time::Duration::from_secs(s));
    let fill = vec![
        0u8;
        o.write
            .unwrap_or(0)
            .clamp(4096, 1 << 20)
            .max(o.xattr.unwrap_or(0) as usize as u64) as usize
    ];
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
    let mut depth = crate::createmany_htree::DepthRates::of(o);
    let p = ctx.phase_ticking(
        phase_name,
        threads as usize,
        |t, progress| {
            let mut tally = tallies[t].lock().unwrap_or_else(|e| e.into_inner());
            work(&shared, t, progress, &mut tally);
        },
        |pt| {
            ticker.tick(pt);
            if let Some(d) = depth.as_mut() {
                d.tick(pt);
            }
        },
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
        ..
    } = all;
    if let Some(e) = &error {
        let _ = writeln!(out, "{e}");
    }
    crate::createmany_htree::print_end(out, depth.as_ref(), full.then_some(total), &o.dir());
    let rate = total as f64 / secs.max(1e-9);
    let _ = writeln!(
        out,
        "total: {total} {} in {secs:.2} seconds: {rate:.2} ops/second",
        o.op_words()
    );
    let complete =
        error.is_none() && !ctx.stopping() && (deadline.is_some() || full || total == o.count);
    ctx.record_phase(phase_result(phase_name, total, 0, &p, complete))?;
    let call = match o.op {
        Op::Open => "open",
        Op::Mknod => "mknod",
        Op::Mkdir => "mkdir",
        Op::Link => "link",
        Op::Unlink => "unlink",
    };
    ctx.record_latency(phase_name, call, &hist)?;
    ctx.record_latency(
        phase_name,
        if o.op == Op::Mkdir { "rmdir" } else { "unlink" },
        &uhist,
    )?;
    if o.keep_open {
        close_kept(fds, out);
    }
    let _ = out.flush();
    let rate_by_entries = by_entries(&ctx.out.series);
    let mut metrics = metrics(o, total, secs, tenth_rates.filter(|_| complete));
    metrics.extend(depth.iter().flat_map(|d| d.metrics(&verb)));
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

/// The rate as the directory grows, as breakdown rows of numbered items
/// (`entries N`, see `fslab_record::catalogue::numbered`): the report
/// charts them against the entries.
fn entries_metrics(rates: &[RateAt]) -> Vec<fslab_record::Metric> {
    rates
        .iter()
        .map(|r| {
            fslab_record::Metric::new(
                "createmany",
                Some(&format!("entries {}", r.entries)),
                "rate",
                r.ops_per_s,
                fslab_record::Unit::OpsPerSec,
                fslab_record::Better::Higher,
            )
            .detail()
        })
        .collect()
}

/// The create rate against entries made, at about eight points per
/// doubling: each point averages the seconds whose counts fall in its band.
/// The names of the rates over the first and last tenth of the entries.
pub const FIRST_TENTH: &str = "ops/second, first tenth";
pub const LAST_TENTH: &str = "ops/second, last tenth";

pub fn by_entries(series: &[fslab_record::SeriesPoint]) -> Vec<RateAt> {
    let mut out: Vec<RateAt> = Vec::new();
    let mut band_end = 1000.0f64;
    let (mut ops, mut secs, mut prev_t) = (0u64, 0.0f64, 0.0f64);
    for p in series {
        ops += p.ops;
        secs += p.t_s - prev_t;
        prev_t = p.t_s;
        if p.total_ops as f64 >= band_end {
            out.push(RateAt {
                entries: p.total_ops,
                ops_per_s: ops as f64 / secs.max(1e-9),
            });
            while band_end <= p.total_ops as f64 {
                band_end *= 2f64.powf(1.0 / 8.0);
            }
            ops = 0;
            secs = 0.0;
        }
    }
    if ops > 0 {
        if let Some(last) = series.last() {
            out.push(RateAt {
                entries: last.total_ops,
                ops_per_s: ops as f64 / secs.max(1e-9),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_lines_come_at_multiples_after_two_seconds_and_every_ten() {
        const S: u64 = 1_000_000_000;
        let mut m = Marks::new(0, true);
        // Before two seconds a multiple makes no line.
        assert_eq!(m.after(10_000, S, "create"), None);
        assert_eq!(m.after(15_000, S + S / 2, "create"), None);
        let l = m.after(20_000, 2 * S, "create").unwrap();
        let f: Vec<&str> = l.split_whitespace().collect();
        assert_eq!((f[0], f[1], f[2], f[3]), ("-", "create", "20000", "(time"));
        assert_eq!(
            (f[5], f[6], f[7], f[8]),
            ("total", "2.00", "last", "10000.00)")
        );
        assert_eq!(m.after(20_001, 3 * S, "create"), None);
        assert!(m.after(30_000, 3 * S, "create").is_some());
        // A quiet ten seconds makes a line at whatever count.
        assert_eq!(m.after(30_005, 12 * S, "create"), None);
        let l = m.after(30_007, 13 * S, "create").unwrap();
        assert!(l.starts_with(" - create 30007 (time "), "{l}");
        // Off (several threads): never.
        let mut off = Marks::new(0, false);
        assert_eq!(off.after(10_000, 20 * S, "create"), None);
    }

    #[test]
    fn op_words_are_createmanys() {
        let args = |a: &[&str]| {
            let mut v = vec!["x"];
            v.extend_from_slice(a);
            <Wrap as clap::Parser>::parse_from(v)
                .args
                .validate()
                .unwrap()
                .op_words()
        };
        assert_eq!(args(&["-m", "f", "1"]), "create");
        assert_eq!(args(&["-o", "f", "1"]), "open/close");
        assert_eq!(args(&["-o", "-k", "f", "1"]), "open/keep");
        assert_eq!(args(&["-o", "-u", "f", "1"]), "open/close/unlink");
        assert_eq!(args(&["-d", "-u", "f", "1"]), "mkdir/rmdir");
        assert_eq!(args(&["-l", "/proc/self/exe", "f", "1"]), "link");
        assert_eq!(args(&["-u", "f", "1"]), "unlink");
    }

    #[derive(clap::Parser)]
    struct Wrap {
        #[command(flatten)]
        args: CreateManyArgs,
    }

    #[test]
    fn patterns_render_like_printf() {
        assert_eq!(NameFmt::parse("/d/f%d").unwrap().name(42), "/d/f42");
        assert_eq!(
            NameFmt::parse("/d/f%08lx.x").unwrap().name(255),
            "/d/f000000ff.x"
        );
        assert_eq!(NameFmt::parse("/d/f%5d|").unwrap().name(-42), "/d/f  -42|");
        assert_eq!(NameFmt::parse("/d/f%-4u|").unwrap().name(7), "/d/f7   |");
        assert_eq!(NameFmt::parse("/d/pre-").unwrap().name(9), "/d/pre-9");
        assert_eq!(NameFmt::parse("/d/100%%-%d").unwrap().name(1), "/d/100%-1");
        assert!(NameFmt::parse("/d/%d-%d")
            .unwrap_err()
            .contains("more than one"));
        assert!(NameFmt::parse("/d/%s").unwrap_err().contains("%s"));
    }

    #[test]
    fn bumping_counts_like_rendering() {
        for fmt in ["/d/f", "/d/f%d.x", "/d/f%04d", "/d/f%x"] {
            let f = NameFmt::parse(fmt).unwrap();
            let mut buf = Vec::new();
            f.render(95, &mut buf);
            for n in (95..2000).step_by(3).skip(1) {
                if !f.bump(&mut buf, n - 3, 3) {
                    f.render(n, &mut buf);
                }
                let mut want = Vec::new();
                f.render(n, &mut want);
                assert_eq!(buf, want, "{fmt} at {n}");
            }
        }
    }

    #[test]
    fn rate_by_entries_has_about_eight_points_a_doubling() {
        let series: Vec<fslab_record::SeriesPoint> = (1..=1000)
            .map(|s| fslab_record::SeriesPoint {
                phase_index: 0,
                t_s: s as f64,
                ops: 1000,
                total_ops: s * 1000,
            })
            .collect();
        let v = by_entries(&series);
        // 1000 to 1M entries is about 10 doublings.
        // (bands narrower than a second at the start merge into one point).
        assert!((55..=90).contains(&v.len()), "{}", v.len());
        assert!(v.iter().all(|r| (r.ops_per_s - 1000.0).abs() < 1e-6));
    }
}
