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

use fslab_model::LatencyHistogram;
use rustix::fs::{AtFlags, FileType, Mode, OFlags, CWD};
use rustix::io::Errno;
use serde::Serialize;

pub mod htree;
pub mod plugin;
mod run;

pub use run::{by_entries, run, FIRST_TENTH, LAST_TENTH};

use crate::common::{phase_result, CommonArgs, Outcome, RunCtx, WithOutcome};

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
    /// With -l: link N names to each target, TARGET.0, TARGET.1, ... in turn, each made
    /// (mknod) when its turn comes (ext4 allows 65,000 links to an inode: seed 004's
    /// hard-link run needs more names than one target takes)
    #[arg(long, value_name = "N")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub links_per_target: Option<u64>,
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
    /// Stonewall (fslab's; createmany has none): after SECONDS every thread stops at its next name, the MPI ranks agree on the most names any thread made, and every thread makes names up to that count (wear-out); both rates are reported. One process: the create loop ends at SECONDS. COUNT may be left out. Not with -t or -u alone
    #[arg(long, value_name = "SECONDS", allow_negative_numbers = true)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stonewall: Option<i64>,
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
    #[arg(
        value_name = "NUMBERS",
        num_args = 0..=2,
        allow_negative_numbers = true,
        help = "[START] COUNT"
    )]
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
    pub fn parse(fmt: &str) -> crate::Result<NameFmt> {
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
                    return Err(crate::opt(
                        "FMT",
                        format!("{fmt:?}"),
                        "more than one conversion (use one integer, like %d)",
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
                        return Err(crate::opt(
                            "FMT",
                            format!("{fmt:?}"),
                            format!(
                                "%{} is not an integer conversion (use %d, %u, %x or %o)",
                                *c as char
                            ),
                        ))
                    }
                    None => {
                        return Err(crate::opt(
                            "FMT",
                            format!("{fmt:?}"),
                            "incomplete conversion at the end",
                        ))
                    }
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
            return Err(crate::Error::Options("FMT is empty".into()));
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
    /// With -l: names per target (TARGET.0, TARGET.1, ...), made in turn.
    pub links_per_target: Option<u64>,
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
    /// --stonewall's seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stonewall: Option<u64>,
}

fn size(flag: &str, s: &Option<String>) -> crate::Result<Option<u64>> {
    s.as_ref()
        .map(|v| crate::fsmark::options::parse_size(flag, v))
        .transpose()
}

impl CreateManyArgs {
    pub fn validate(&self) -> crate::Result<CreateManyOptions> {
        self.check()
    }

    /// `--links-per-target` goes with `-l` and is at least 1.
    fn check_links_per_target(&self) -> crate::Result<()> {
        match (self.links_per_target, &self.link) {
            (Some(_), None) => Err(crate::Error::Options(
                "--links-per-target needs -l TARGET".into(),
            )),
            (Some(0), _) => Err(crate::opt("--links-per-target", 0, "must be at least 1")),
            _ => Ok(()),
        }
    }

    fn check(&self) -> crate::Result<CreateManyOptions> {
        let ops = [self.open, self.mknod, self.mkdir, self.link.is_some()]
            .iter()
            .filter(|x| **x)
            .count();
        let unlinking = self.unlink || self.unlink_fmt.is_some();
        let op = match (ops, self.open, self.mknod, self.mkdir) {
            (0, ..) if unlinking => Op::Unlink,
            (0, ..) => {
                return Err(crate::Error::Options(
                    "give one of -o, -m, -d, -l TARGET (or -u to unlink)".into(),
                ))
            }
            (1, true, _, _) => Op::Open,
            (1, _, true, _) => Op::Mknod,
            (1, _, _, true) => Op::Mkdir,
            (1, ..) => Op::Link,
            _ => {
                return Err(crate::Error::Options(
                    "-o, -m, -d and -l exclude each other: give one".into(),
                ))
            }
        };
        if op != Op::Open
            && (self.keep_open
                || self.xattr.is_some()
                || self.seek.is_some()
                || self.write.is_some())
        {
            return Err(crate::Error::Options(
                "-k, -x, -S and -W need -o (they work on the open file)".into(),
            ));
        }
        self.check_links_per_target()?;
        if let (Some(t), None) = (&self.link, self.links_per_target) {
            if std::fs::symlink_metadata(t).is_err() {
                return Err(crate::opt(
                    "-l",
                    t.display(),
                    "the link target does not exist",
                ));
            }
        }
        let fmt = NameFmt::parse(&self.fmt)?;
        let unlink_fmt = match &self.unlink_fmt {
            Some(f) => {
                Some(NameFmt::parse(f).map_err(|e| crate::Error::Options(format!("-r: {e}")))?)
            }
            None => None,
        };
        let num = |s: &str| {
            s.parse::<i64>()
                .map_err(|_| crate::Error::Options(format!("{s:?} is not a whole number")))
        };
        let stonewall = self.stonewall_s(op)?;
        let (start, count) = match self.numbers.as_slice() {
            [] if self.seconds.is_some() || stonewall.is_some() => (0, i64::MAX),
            [] => return Err(crate::Error::Options("give COUNT (or -t SECONDS)".into())),
            [c] => (0, num(c)?),
            [s, c] => (num(s)?, num(c)?),
            _ => {
                return Err(crate::Error::Options(
                    "too many numbers: FMT [[START] COUNT]".into(),
                ))
            }
        };
        if count < 1 {
            return Err(crate::opt("COUNT", count, "must be at least 1"));
        }
        if self.threads == 0 || self.threads > 1024 {
            return Err(crate::opt(
                "--threads",
                self.threads,
                "must be from 1 to 1024",
            ));
        }
        if self.seconds == Some(0) {
            return Err(crate::Error::Options(
                "-t 0: the time limit must be at least 1 second".into(),
            ));
        }
        let parent = Path::new(&self.fmt)
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        if !parent.is_dir() {
            return Err(crate::opt(
                "FMT",
                format!("{:?}", self.fmt),
                format!("no such directory {}", parent.display()),
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
            links_per_target: self.links_per_target,
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
            stonewall,
        })
    }

    /// --stonewall's seconds, checked: a whole number of at least 1, on a
    /// create loop, without -t (whose deadline would cut the wear-out).
    fn stonewall_s(&self, op: Op) -> crate::Result<Option<u64>> {
        let Some(s) = self.stonewall else {
            return Ok(None);
        };
        if s < 1 {
            return Err(crate::opt(
                "--stonewall",
                s,
                "the stonewall must be at least 1 second",
            ));
        }
        if op == Op::Unlink {
            return Err(crate::opt(
                "--stonewall",
                s,
                "the stonewall ends a create loop (-o, -m, -d, -l), not -u alone",
            ));
        }
        if let Some(t) = self.seconds {
            return Err(crate::Error::Options(format!("--stonewall {s} with -t {t}: -t's time limit would cut the wear-out short; give one")));
        }
        Ok(Some(s as u64))
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

#[cfg(test)]
mod tests {
    use super::*;
    use run::Marks;

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
            .to_string()
            .contains("more than one"));
        assert!(NameFmt::parse("/d/%s")
            .unwrap_err()
            .to_string()
            .contains("%s"));
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
        let series: Vec<fslab_model::SeriesPoint> = (1..=1000)
            .map(|s| fslab_model::SeriesPoint {
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
