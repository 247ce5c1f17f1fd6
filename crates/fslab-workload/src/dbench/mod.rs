//! `fslab dbench`: replays a dbench 4 loadfile with N clients for -t seconds
//! after a warm-up, on a local filesystem (dbench's fileio backend), and
//! prints dbench's per-second lines, operation table and throughput line.
//!
//! Each client works in `DIR/clients/clientN` (the loadfile's `client1`
//! renamed), with its own table of open handles, and goes round the loadfile
//! until time is up. Every operation's result is turned into an NT status;
//! where dbench checks it (opens, unlinks, rmdirs, renames) it is compared
//! with the loadfile's, and differences are counted and the first shown. `Mkdir` and `Deltree` of something already there or gone are
//! successes, as in dbench. `LockX`/`UnlockX` take and release the byte
//! range with an open-file-description lock, as dbench's fcntl locks. `FIND_FIRST` matches names without regard to case (SMB's way) with
//! the wildcards `*` `?` `<` `>`.

pub mod load;
pub mod plugin;
mod run;

pub use run::{bare_replay, run};

use std::collections::HashMap;
use std::io::Write;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use fslab_model::LatencyHistogram;
use rustix::fs::{AtFlags, Mode, OFlags, CWD};
use rustix::io::Errno;
use serde::Serialize;

use crate::common::{phase_result, CommonArgs, Outcome, RunCtx, WithOutcome};
use crate::dbench::load::{self as dbench_load, Line, LoadPath, Op};
use crate::measure::now_ns;

/// `fslab dbench [options] NPROCS`
#[derive(Debug, Clone, clap::Args, serde::Serialize, serde::Deserialize)]
pub struct DbenchArgs {
    /// Seconds to run (after the warm-up)
    #[arg(
        short = 't',
        long = "time",
        default_value_t = 600,
        value_name = "SECONDS"
    )]
    pub time: u64,
    /// Seconds of warm-up before measuring [default: a fifth of -t]
    #[arg(long, value_name = "SECONDS")]
    pub warmup: Option<u64>,
    /// Directory to work in
    #[arg(
        short = 'D',
        long = "directory",
        default_value = ".",
        value_name = "DIR"
    )]
    pub dir: PathBuf,
    /// Loadfile [default: fslab's file-server model; Debian's dbench has /usr/share/dbench/client.txt]
    #[arg(short = 'c', long = "loadfile", value_name = "LOADFILE")]
    pub loadfile: Option<PathBuf>,
    /// Open files with O_SYNC
    #[arg(short = 's', long = "sync-open")]
    pub sync_open: bool,
    /// Sync directory operations (fsync the directory after each change)
    #[arg(short = 'S', long = "sync-dirs")]
    pub sync_dirs: bool,
    /// fsync after every write
    #[arg(short = 'F', long = "fsync")]
    pub fsync: bool,
    /// Keep DOS attributes in an extended attribute (user.DosAttrib)
    #[arg(short = 'x', long = "xattr")]
    pub xattr: bool,
    /// Replay the loadfile exactly N times per client instead of for -t seconds (no warm-up)
    #[arg(long, value_name = "N")]
    pub loops: Option<u64>,
    /// Leave the clients' trees in place at the end (for inspection)
    #[arg(long)]
    pub no_cleanup: bool,
    /// Print the built-in loadfile and exit
    #[arg(long)]
    pub print_loadfile: bool,
    /// Number of clients
    #[arg(value_name = "NPROCS", required_unless_present = "print_loadfile")]
    pub nprocs: Option<i64>,
    #[command(flatten)]
    pub common: CommonArgs,
}

/// Validated options.
#[derive(Debug, Clone, Serialize)]
pub struct DbenchOptions {
    pub clients: u32,
    pub seconds: u64,
    pub warmup: u64,
    pub dir: PathBuf,
    pub loadfile: String,
    pub sync_open: bool,
    pub sync_dirs: bool,
    pub fsync: bool,
    pub xattr: bool,
    pub cleanup: bool,
    /// Exact passes over the loadfile per client, instead of a duration.
    pub loops: Option<u64>,
    #[serde(skip)]
    pub lines: Vec<Line>,
}

impl DbenchArgs {
    pub fn validate(&self) -> crate::Result<DbenchOptions> {
        self.check()
    }

    fn check(&self) -> crate::Result<DbenchOptions> {
        let n = self.nprocs.unwrap_or(0);
        if !(1..=1024).contains(&n) {
            return Err(crate::opt("NPROCS", n, "must be from 1 to 1024"));
        }
        if self.time == 0 {
            return Err(crate::opt("-t", 0, "the run must last at least 1 second"));
        }
        if self.loops == Some(0) {
            return Err(crate::opt(
                "--loops",
                0,
                "must be at least 1 (without --loops the run lasts -t seconds)",
            ));
        }
        if !self.dir.is_dir() {
            return Err(crate::opt("-D", self.dir.display(), "no such directory"));
        }
        let (name, text) = match &self.loadfile {
            Some(p) => (
                p.display().to_string(),
                std::fs::read_to_string(p)
                    .map_err(|e| crate::opt("-c", p.display(), e.to_string()))?,
            ),
            None => ("fslab-model".to_string(), dbench_load::model()),
        };
        let lines = dbench_load::parse(&name, &text)?;
        Ok(DbenchOptions {
            clients: n as u32,
            seconds: self.time,
            warmup: if self.loops.is_some() {
                0
            } else {
                self.warmup.unwrap_or(self.time / 5)
            },
            dir: self.dir.clone(),
            loadfile: name,
            sync_open: self.sync_open,
            sync_dirs: self.sync_dirs,
            fsync: self.fsync,
            xattr: self.xattr,
            cleanup: !self.no_cleanup,
            loops: self.loops,
            lines,
        })
    }
}

const OPS: [&str; 17] = [
    "NTCreateX",
    "Close",
    "Rename",
    "Unlink",
    "Deltree",
    "Rmdir",
    "Mkdir",
    "Qpathinfo",
    "Qfileinfo",
    "Qfsinfo",
    "Sfileinfo",
    "Find",
    "WriteX",
    "ReadX",
    "LockX",
    "UnlockX",
    "Flush",
];

fn op_index(name: &str) -> usize {
    OPS.iter().position(|o| *o == name).unwrap_or(0)
}

/// One operation's tally.
#[derive(Default, Clone)]
struct OpStat {
    hist: LatencyHistogram,
}

/// An open handle: the descriptor, and the name it was opened by (dbench
/// sets times by name).
struct Handle {
    fd: OwnedFd,
    path: PathBuf,
}

struct Client {
    id: u32,
    /// `clientN`: where the loadfile's paths say `client1`.
    name: String,
    /// Reused buffers for the paths of the operation being run.
    paths: [std::ffi::OsString; 2],
    fds: HashMap<u32, Handle>,
    /// The directory buffer of `readdir` (32 KiB, as glibc's).
    dirbuf: Vec<std::mem::MaybeUninit<u8>>,
    pos: usize,
    stats: Vec<OpStat>,
    mismatches: u64,
    first_mismatches: Vec<String>,
    error: Option<String>,
    /// At the warm-up's end (a run that flows on into the measured
    /// period): the operations and bytes of the warm-up, and the thread's
    /// CPU when it ended.
    warm: Option<(u64, u64, fslab_sys::Usage)>,
    /// The thread's CPU when the client started and when it ended.
    cpu: (fslab_sys::Usage, fslab_sys::Usage),
}

/// Shared per-second counters (bytes, max latency this second).
struct Live {
    bytes: Vec<Slot>,
    max_ns: Vec<Slot>,
}

/// One client's live counter, alone on its cache lines: the clients write
/// theirs after every operation, and neighbours on one line would make
/// each write a cache-line transfer between CPUs.
#[repr(align(128))]
#[derive(Default)]
struct Slot(AtomicU64);

impl std::ops::Deref for Slot {
    type Target = AtomicU64;
    fn deref(&self) -> &AtomicU64 {
        &self.0
    }
}

/// The NT status of an error; `parent_missing` (known from the name
/// lookup before the call) tells a missing path from a missing name.
fn status_of(e: Errno, parent_missing: bool) -> &'static str {
    match e {
        Errno::NOENT if parent_missing => "NT_STATUS_OBJECT_PATH_NOT_FOUND",
        Errno::NOENT => "NT_STATUS_OBJECT_NAME_NOT_FOUND",
        Errno::EXIST => "NT_STATUS_OBJECT_NAME_COLLISION",
        Errno::NOTEMPTY => "NT_STATUS_DIRECTORY_NOT_EMPTY",
        Errno::ISDIR => "NT_STATUS_FILE_IS_A_DIRECTORY",
        Errno::NOTDIR => "NT_STATUS_OBJECT_PATH_NOT_FOUND",
        Errno::ACCESS | Errno::PERM => "NT_STATUS_ACCESS_DENIED",
        Errno::NOSPC | Errno::DQUOT => "NT_STATUS_DISK_FULL",
        Errno::BADF => "NT_STATUS_INVALID_HANDLE",
        _ => "NT_STATUS_UNSUCCESSFUL",
    }
}

/// SMB wildcard match, without regard to case.
fn wild(p: &[u8], n: &[u8]) -> bool {
    match p.first() {
        None => n.is_empty(),
        Some(b'*') | Some(b'<') => (0..=n.len()).any(|k| wild(&p[1..], &n[k..])),
        Some(b'?') | Some(b'>') => !n.is_empty() && wild(&p[1..], &n[1..]),
        Some(c) => n.first().is_some_and(|d| c.eq_ignore_ascii_case(d)) && wild(&p[1..], &n[1..]),
    }
}

/// `path` under the run's directory for client `name`, in `buf`.
fn placed<'b>(
    o: &DbenchOptions,
    name: &str,
    path: &LoadPath,
    buf: &'b mut std::ffi::OsString,
) -> &'b Path {
    path.place(o.dir.as_os_str(), name, buf);
    Path::new(buf.as_os_str())
}

/// dbench's `sync_parent` (`-S`): `open` the directory holding `p`,
/// `fdatasync` it, `close` it.
#[inline(always)]
fn sync_parent(p: &Path) {
    if let Some(d) = p.parent() {
        if let Ok(fd) = rustix::fs::openat(CWD, d, OFlags::RDONLY, Mode::empty()) {
            let _ = rustix::fs::fdatasync(&fd);
            fslab_sys::fd::close(fd);
        }
    }
}

/// `opendir`, `readdir` and `closedir` as glibc makes them: `openat`
/// (`O_DIRECTORY|O_NONBLOCK`), `fstat` of the new descriptor, `getdents64`
/// into a 32 KiB buffer as the entries are wanted, `close`. `each` is
/// given every name (`.` and `..` too) until it returns false.
#[inline(always)]
fn scan_dir(
    dir: &Path,
    buf: &mut [std::mem::MaybeUninit<u8>],
    mut each: impl FnMut(&[u8]) -> bool,
) -> Result<(), Errno> {
    let fd = rustix::fs::openat(
        CWD,
        dir,
        OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::DIRECTORY,
        Mode::empty(),
    )?;
    rustix::fs::statat(&fd, "", AtFlags::EMPTY_PATH)?;
    let mut d = rustix::fs::RawDir::new(&fd, buf);
    while let Some(Ok(e)) = d.next() {
        if !each(e.file_name().to_bytes()) {
            break;
        }
    }
    fslab_sys::fd::close(fd);
    Ok(())
}

/// What [`resolve`] found: whether the name's directory is missing (so
/// that a failure is a missing path, not a missing name).
#[derive(Clone, Copy)]
struct Lookup {
    parent_missing: bool,
}

/// dbench's `resolve_name` (its model of Samba's name resolution), run
/// before every operation that names a file: `stat` the name (and with
/// `-x` read its DOS attributes); if it is not there, read its directory
/// until a name matches without regard to case.
#[inline(always)]
fn resolve(
    o: &DbenchOptions,
    p: &Path,
    buf: &mut [std::mem::MaybeUninit<u8>],
) -> (Result<(), Errno>, Lookup) {
    let mut found = Lookup {
        parent_missing: false,
    };
    match rustix::fs::statat(CWD, p, AtFlags::empty()) {
        Ok(_) => {
            if o.xattr {
                let mut b = [0u8; 44];
                let _ = rustix::fs::getxattr(p, "user.DosAttrib", &mut b);
            }
            (Ok(()), found)
        }
        Err(e) => {
            if let (Some(dir), Some(name)) = (p.parent(), p.file_name()) {
                let name = name.as_encoded_bytes();
                found.parent_missing = scan_dir(dir, buf, |n| !n.eq_ignore_ascii_case(name))
                    .is_err_and(|e| matches!(e, Errno::NOENT | Errno::NOTDIR));
            }
            (Err(e), found)
        }
    }
}

/// dbench's DOS attribute write (`-x`): read the attribute, then write 44
/// bytes holding the time.
#[inline(always)]
fn xattr_write(fd: std::os::fd::BorrowedFd<'_>) {
    let mut b = [0u8; 44];
    let _ = rustix::fs::fgetxattr(fd, "user.DosAttrib", &mut b);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let mut v = [0u8; 44];
    v[..8].copy_from_slice(&now.as_secs().to_le_bytes());
    v[8..16].copy_from_slice(&u64::from(now.subsec_micros()).to_le_bytes());
    let _ = rustix::fs::fsetxattr(fd, "user.DosAttrib", &v, rustix::fs::XattrFlags::empty());
}

/// dbench's `nb_deltree`: read the directory; `stat` each entry, descend
/// into directories, `unlink` the rest. The directories stay, as in
/// dbench (whose later lookups of them find them, and ignore it).
fn deltree(dir: &Path, buf: &mut [std::mem::MaybeUninit<u8>]) {
    let mut names = Vec::new();
    let _ = scan_dir(dir, buf, |n| {
        if n != b"." && n != b".." {
            names.push(dir.join(std::ffi::OsStr::from_bytes(n)));
        }
        true
    });
    for p in names {
        match rustix::fs::statat(CWD, &p, AtFlags::empty()) {
            Ok(st) if rustix::fs::FileType::from_raw_mode(st.st_mode).is_dir() => deltree(&p, buf),
            Ok(_) => {
                let _ = rustix::fs::unlinkat(CWD, &p, AtFlags::empty());
            }
            Err(_) => {}
        }
    }
}

fn fd_of(c: &Client, f: u32) -> Option<std::os::fd::BorrowedFd<'_>> {
    c.fds.get(&f).map(|h| h.fd.as_fd())
}

/// Runs one operation with the calls dbench 4.0's fileio backend makes for
/// it; returns its NT status and the bytes it moved.
/// NTCreateX: open or create (a directory with option 0x1), fstat, DOS
/// attributes with -x.
#[inline(always)]
fn nt_create_x(
    o: &DbenchOptions,
    c: &mut Client,
    path: &LoadPath,
    options: u32,
    disposition: u32,
    fnum: u32,
) -> (&'static str, u64) {
    let p = placed(o, &c.name, path, &mut c.paths[0]);
    let (_, l) = resolve(o, p, &mut c.dirbuf);
    // dbench's flags: FILE_CREATE creates, FILE_OVERWRITE(_IF)
    // creates or truncates; the others open what is there. (FILE_CREATE
    // adds O_EXCL, which dbench leaves out: the same one call, with the
    // name collision the loadfile records.)
    let mut flags = OFlags::RDWR;
    if o.sync_open {
        flags |= OFlags::SYNC;
    }
    flags |= match disposition {
        2 => OFlags::CREATE | OFlags::EXCL,
        4 | 5 => OFlags::CREATE | OFlags::TRUNC,
        _ => OFlags::empty(),
    };
    if options & 0x1 != 0 {
        let _ = rustix::fs::mkdirat(CWD, p, Mode::from_bits_truncate(0o700));
        flags = OFlags::RDONLY | OFlags::DIRECTORY;
    }
    let opened = match rustix::fs::openat(CWD, p, flags, Mode::from_bits_truncate(0o600)) {
        Err(Errno::ISDIR) => {
            rustix::fs::openat(CWD, p, OFlags::RDONLY | OFlags::DIRECTORY, Mode::empty())
        }
        other => other,
    };
    match opened {
        Ok(fd) => {
            let dir = rustix::fs::statat(&fd, "", AtFlags::EMPTY_PATH)
                .is_ok_and(|st| rustix::fs::FileType::from_raw_mode(st.st_mode).is_dir());
            if !dir && o.xattr {
                xattr_write(fd.as_fd());
            }
            c.fds.insert(
                fnum,
                Handle {
                    fd,
                    path: p.to_path_buf(),
                },
            );
            ("NT_STATUS_OK", 0)
        }
        Err(e) => (status_of(e, l.parent_missing), 0),
    }
}

/// Sfileinfo on handle `fnum`.
#[inline(always)]
fn set_file_info(o: &DbenchOptions, c: &Client, fnum: u32) -> (&'static str, u64) {
    let r = |res: Result<(), Errno>| match res {
        Ok(()) => "NT_STATUS_OK",
        Err(e) => status_of(e, false),
    };
    match c.fds.get(&fnum) {
        // dbench: read the attributes, fstat, set the times by name
        // (atime - 10 s, mtime - 12 s), write the attributes.
        Some(h) => {
            if o.xattr {
                let mut b = [0u8; 44];
                let _ = rustix::fs::fgetxattr(&h.fd, "user.DosAttrib", &mut b);
            }
            let res = rustix::fs::statat(&h.fd, "", AtFlags::EMPTY_PATH).and_then(|st| {
                let ts = |sec: i64| rustix::fs::Timespec {
                    tv_sec: sec,
                    tv_nsec: 0,
                };
                let times = rustix::fs::Timestamps {
                    last_access: ts(st.st_atime - 10),
                    last_modification: ts(st.st_mtime - 12),
                };
                let r = rustix::fs::utimensat(CWD, &h.path, &times, AtFlags::empty());
                if !rustix::fs::FileType::from_raw_mode(st.st_mode).is_dir() && o.xattr {
                    xattr_write(h.fd.as_fd());
                }
                r
            });
            (r(res), 0)
        }
        None => ("NT_STATUS_INVALID_HANDLE", 0),
    }
}

/// Find: the lookup, and with wildcards a scan of at most `max` entries.
#[inline(always)]
fn find_first(
    o: &DbenchOptions,
    c: &mut Client,
    pattern: &LoadPath,
    max: u64,
) -> (&'static str, u64) {
    let p = placed(o, &c.name, pattern, &mut c.paths[0]);
    let _ = resolve(o, p, &mut c.dirbuf);
    let (Some(dir), Some(mask)) = (p.parent(), p.file_name()) else {
        return ("NT_STATUS_OBJECT_PATH_NOT_FOUND", 0);
    };
    let mask = mask.as_encoded_bytes();
    // A name without wildcards was the lookup alone, as in dbench.
    if !mask.iter().any(|b| b"<>*?\"".contains(b)) {
        return ("NT_STATUS_OK", 0);
    }
    // dbench reads at most the request's maximum count of entries.
    let (mut left, mut found) = (max, false);
    let res = scan_dir(dir, &mut c.dirbuf, |n| {
        found |= n != b"." && n != b".." && wild(mask, n);
        left = left.saturating_sub(1);
        left > 0
    });
    match (res, found) {
        (Err(_), _) => ("NT_STATUS_OBJECT_PATH_NOT_FOUND", 0),
        (Ok(()), true) => ("NT_STATUS_OK", 0),
        (Ok(()), false) => ("NT_STATUS_NO_SUCH_FILE", 0),
    }
}

/// LockX / UnlockX on handle `fnum` (see the comment in [`exec`]).
#[inline(always)]
fn lock_range(c: &Client, fnum: u32, offset: u64, size: u64, lock: bool) -> (&'static str, u64) {
    match fd_of(c, fnum) {
        Some(fd) => {
            let req = if lock {
                fslab_sys::lock::Request::WriteTry
            } else {
                fslab_sys::lock::Request::Unlock
            };
            match fslab_sys::lock::range(fd, offset, size, req) {
                Ok(_) => ("NT_STATUS_OK", 0),
                Err(e) => (
                    status_of(Errno::from_io_error(&e).unwrap_or(Errno::IO), false),
                    0,
                ),
            }
        }
        None => ("NT_STATUS_INVALID_HANDLE", 0),
    }
}

#[inline(always)]
fn exec(o: &DbenchOptions, c: &mut Client, op: &Op, buf: &mut [u8]) -> (&'static str, u64) {
    let r = |res: Result<(), Errno>, l: Option<Lookup>| match res {
        Ok(()) => "NT_STATUS_OK",
        Err(e) => status_of(e, l.is_some_and(|l| l.parent_missing)),
    };
    match op {
        Op::NtCreateX {
            path,
            options,
            disposition,
            fnum,
        } => nt_create_x(o, c, path, *options, *disposition, *fnum),
        Op::Close { fnum } => (
            if let Some(open) = c.fds.remove(fnum) {
                fslab_sys::fd::close(open.fd);
                "NT_STATUS_OK"
            } else {
                "NT_STATUS_INVALID_HANDLE"
            },
            0,
        ),
        Op::Rename { from, to } => {
            let [pa, pb] = &mut c.paths;
            let (a, b) = (placed(o, &c.name, from, pa), placed(o, &c.name, to, pb));
            let (_, l) = resolve(o, a, &mut c.dirbuf);
            let _ = resolve(o, b, &mut c.dirbuf);
            let res = rustix::fs::renameat(CWD, a, CWD, b);
            if o.sync_dirs {
                sync_parent(b);
            }
            (r(res, Some(l)), 0)
        }
        Op::Unlink { path } => {
            let p = placed(o, &c.name, path, &mut c.paths[0]);
            let (_, l) = resolve(o, p, &mut c.dirbuf);
            let res = rustix::fs::unlinkat(CWD, p, AtFlags::empty());
            if o.sync_dirs {
                sync_parent(p);
            }
            (r(res, Some(l)), 0)
        }
        Op::Deltree { path } => {
            let p = placed(o, &c.name, path, &mut c.paths[0]);
            // Handles into the tree stay open, as in dbench.
            deltree(p, &mut c.dirbuf);
            ("NT_STATUS_OK", 0)
        }
        Op::Rmdir { path } => {
            let p = placed(o, &c.name, path, &mut c.paths[0]);
            let (_, l) = resolve(o, p, &mut c.dirbuf);
            let res = rustix::fs::unlinkat(CWD, p, AtFlags::REMOVEDIR);
            if o.sync_dirs {
                sync_parent(p);
            }
            (r(res, Some(l)), 0)
        }
        Op::Mkdir { path } => {
            let p = placed(o, &c.name, path, &mut c.paths[0]);
            let (_, l) = resolve(o, p, &mut c.dirbuf);
            match rustix::fs::mkdirat(CWD, p, Mode::from_bits_truncate(0o777)) {
                Ok(()) | Err(Errno::EXIST) => ("NT_STATUS_OK", 0),
                Err(e) => (status_of(e, l.parent_missing), 0),
            }
        }
        Op::QueryPath { path } => {
            let p = placed(o, &c.name, path, &mut c.paths[0]);
            let (res, l) = resolve(o, p, &mut c.dirbuf);
            (r(res, Some(l)), 0)
        }
        Op::QueryFile { fnum } => match fd_of(c, *fnum) {
            Some(fd) => {
                let res = rustix::fs::statat(fd, "", AtFlags::EMPTY_PATH).map(|_| ());
                if o.xattr {
                    let mut b = [0u8; 44];
                    let _ = rustix::fs::fgetxattr(fd, "user.DosAttrib", &mut b);
                }
                (r(res, None), 0)
            }
            None => ("NT_STATUS_INVALID_HANDLE", 0),
        },
        Op::QueryFs => (r(rustix::fs::statvfs(&o.dir).map(|_| ()), None), 0),
        Op::SetFileInfo { fnum } => set_file_info(o, c, *fnum),
        Op::FindFirst { pattern, max } => find_first(o, c, pattern, *max),
        Op::WriteX { fnum, offset, size } => match fd_of(c, *fnum) {
            Some(fd) => {
                let n = (*size as usize).min(buf.len());
                match rustix::io::pwrite(fd, &buf[..n], *offset) {
                    Ok(w) => {
                        if o.fsync {
                            let _ = rustix::fs::fsync(fd);
                        }
                        ("NT_STATUS_OK", w as u64)
                    }
                    Err(e) => (status_of(e, false), 0),
                }
            }
            None => ("NT_STATUS_INVALID_HANDLE", 0),
        },
        Op::ReadX { fnum, offset, size } => match fd_of(c, *fnum) {
            Some(fd) => {
                let n = (*size as usize).min(buf.len());
                match rustix::io::pread(fd, &mut buf[..n], *offset) {
                    Ok(k) => ("NT_STATUS_OK", k as u64),
                    Err(e) => (status_of(e, false), 0),
                }
            }
            None => ("NT_STATUS_INVALID_HANDLE", 0),
        },
        // dbench's fileio backend takes the range with fcntl(F_SETLKW) and
        // ignores the result; its clients are processes, so a client never
        // conflicts with itself and, each working in its own directory,
        // never with another. Ours are threads: the lock is owned by the open
        // file (OFD) and not waited for, and a range the same client holds
        // through another handle counts as granted, as it would for dbench.
        Op::LockX { fnum, offset, size } | Op::UnlockX { fnum, offset, size } => {
            lock_range(c, *fnum, *offset, *size, matches!(op, Op::LockX { .. }))
        }
        Op::Flush { fnum } => match fd_of(c, *fnum) {
            Some(fd) => (r(rustix::fs::fsync(fd), None), 0),
            None => ("NT_STATUS_INVALID_HANDLE", 0),
        },
    }
}

/// Per-operation results of the measured period.
#[derive(Debug, Clone, Serialize)]
pub struct OpRow {
    pub operation: String,
    pub count: u64,
    pub avg_ms: f64,
    pub max_ms: f64,
}

/// What `--json` prints.
#[derive(Debug, Clone, Serialize)]
pub struct DbenchReport {
    #[serde(flatten)]
    pub outcome: Outcome,
    pub options: DbenchOptions,
    pub throughput_mb_s: f64,
    pub max_latency_ms: f64,
    pub operations: Vec<OpRow>,
    /// Operations whose status differed from the loadfile's.
    pub status_mismatches: u64,
}

impl WithOutcome for DbenchReport {
    fn outcome(&self) -> &Outcome {
        &self.outcome
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use run::fslab_stats_g;

    #[test]
    fn smb_wildcards() {
        assert!(wild(b"*", b"anything"));
        assert!(wild(b"FILLER.*", b"filler.000"));
        assert!(wild(b"<.JNK", b"x.jnk"));
        assert!(wild(b"a?c", b"abc") && !wild(b"a?c", b"ac"));
        assert!(!wild(b"*.XYZ", b"doc.doc"));
    }

    #[test]
    fn lockx_holds_the_byte_range_until_unlockx() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("clients/client1")).unwrap();
        let text = "NTCreateX \"\\clients\\client1\\F.DOC\" 0x0 0x2 7 NT_STATUS_OK\n\
                    LockX 7 2147483538 1 NT_STATUS_OK\n\
                    UnlockX 7 2147483538 1 NT_STATUS_OK\n\
                    LockX 9 0 1 NT_STATUS_INVALID_HANDLE\n";
        let o = DbenchOptions {
            clients: 1,
            seconds: 1,
            warmup: 0,
            dir: dir.path().to_path_buf(),
            loadfile: "test".into(),
            sync_open: false,
            sync_dirs: false,
            fsync: false,
            xattr: false,
            cleanup: false,
            loops: Some(1),
            lines: dbench_load::parse("test", text).unwrap(),
        };
        let mut c = Client {
            id: 1,
            name: "client1".into(),
            paths: Default::default(),
            fds: HashMap::new(),
            dirbuf: vec![std::mem::MaybeUninit::uninit(); 32 << 10],
            pos: 0,
            stats: Vec::new(),
            mismatches: 0,
            first_mismatches: Vec::new(),
            error: None,
            warm: None,
            cpu: Default::default(),
        };
        let mut buf = vec![0u8; 4096];
        let other = || std::fs::File::open(dir.path().join("clients/client1/F.DOC")).unwrap();
        let held =
            |f: &std::fs::File| fslab_sys::lock::conflicts(f.as_fd(), 2147483538, 1).unwrap();
        let ops: Vec<&Op> = o.lines.iter().map(|l| &l.op).collect();
        assert_eq!(exec(&o, &mut c, ops[0], &mut buf).0, "NT_STATUS_OK");
        assert!(!held(&other()));
        assert_eq!(exec(&o, &mut c, ops[1], &mut buf).0, "NT_STATUS_OK");
        assert!(held(&other()), "LockX took no lock");
        assert_eq!(exec(&o, &mut c, ops[2], &mut buf).0, "NT_STATUS_OK");
        assert!(!held(&other()), "UnlockX left the lock");
        assert_eq!(
            exec(&o, &mut c, ops[3], &mut buf).0,
            "NT_STATUS_INVALID_HANDLE"
        );
    }

    #[test]
    fn throughput_prints_like_percent_g() {
        assert_eq!(fslab_stats_g(1098.06), "1098.06");
        assert_eq!(fslab_stats_g(301.5551234), "301.555");
        assert_eq!(fslab_stats_g(5.0), "5");
    }
}
