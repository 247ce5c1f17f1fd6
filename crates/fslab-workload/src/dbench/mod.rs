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

pub mod plugin;

use std::collections::HashMap;
use std::io::Write;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use fslab_record::{LatencyHistogram, Recorder};
use rustix::fs::{AtFlags, Mode, OFlags, CWD};
use rustix::io::Errno;
use serde::Serialize;

use crate::common::{phase_result, CommonArgs, Hooks, Outcome, RunCtx, WithOutcome};
use crate::dbench_load::{self, Line, LoadPath, Op};
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
        self.check().map_err(crate::Error::Options)
    }

    fn check(&self) -> Result<DbenchOptions, String> {
        let n = self.nprocs.unwrap_or(0);
        if !(1..=1024).contains(&n) {
            return Err(format!("NPROCS {n}: must be from 1 to 1024"));
        }
        if self.time == 0 {
            return Err("-t 0: the run must last at least 1 second".into());
        }
        if self.loops == Some(0) {
            return Err(
                "--loops 0: must be at least 1 (without --loops the run lasts -t seconds)".into(),
            );
        }
        if !self.dir.is_dir() {
            return Err(format!("-D {}: no such directory", self.dir.display()));
        }
        let (name, text) = match &self.loadfile {
            Some(p) => (
                p.display().to_string(),
                std::fs::read_to_string(p).map_err(|e| format!("-c {}: {e}", p.display()))?,
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
    bytes: Vec<AtomicU64>,
    max_ns: Vec<AtomicU64>,
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
fn sync_parent(p: &Path) {
    if let Some(d) = p.parent() {
        if let Ok(fd) = rustix::fs::openat(CWD, d, OFlags::RDONLY, Mode::empty()) {
            let _ = rustix::fs::fdatasync(&fd);
        }
    }
}

/// `opendir`, `readdir` and `closedir` as glibc makes them: `openat`
/// (`O_DIRECTORY|O_NONBLOCK`), `fstat` of the new descriptor, `getdents64`
/// into a 32 KiB buffer as the entries are wanted, `close`. `each` is
/// given every name (`.` and `..` too) until it returns false.
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
            if c.fds.remove(fnum).is_some() {
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

/// Runs dbench.
/// One client's turn at a phase: thread `t`, until `deadline` (the hot
/// loops' clock) or `passes` passes over the loadfile.
struct Turn {
    t: usize,
    deadline: u64,
    passes: u64,
    /// When the warm-up ends and the measured period begins, the client
    /// running on: its statistics start again from there (u64::MAX: never).
    boundary: u64,
}

/// A client replays the loadfile, line after line, timing each operation.
fn client_loop(
    o: &DbenchOptions,
    kinds: &[usize],
    c: &mut Client,
    Turn {
        t,
        deadline,
        passes,
        boundary,
    }: Turn,
    stop: &AtomicBool,
    live: &Live,
    progress: &crate::measure::Progress,
) {
    let mut buf = vec![0u8; 1 << 20];
    let mut done = 0u64;
    let mut bytes = 0u64;
    let mut pass = 0u64;
    let mut now = now_ns();
    while now < deadline && pass < passes && !stop.load(Ordering::Relaxed) {
        let (line, kind) = (&o.lines[c.pos], kinds[c.pos]);
        c.pos = (c.pos + 1) % o.lines.len();
        if c.pos == 0 {
            pass += 1;
        }
        let t0 = now_ns();
        let (status, moved) = exec(o, c, &line.op, &mut buf);
        now = now_ns();
        let ns = now - t0;
        if now >= boundary && c.warm.is_none() {
            // dbench moves its accounting window and runs on.
            let ops = c.stats.iter().map(|s| s.hist.count()).sum();
            let cpu = fslab_sys::rusage(fslab_sys::Who::Thread).unwrap_or_default();
            c.warm = Some((ops, bytes, cpu));
            c.stats = vec![OpStat::default(); OPS.len()];
            (bytes, done) = (0, 0);
        }
        c.stats[kind].hist.record(ns);
        live.max_ns[t].fetch_max(ns, Ordering::Relaxed);
        if status != line.status && line.op.checks_status() {
            c.mismatches += 1;
            if c.first_mismatches.len() < 5 {
                let m = format!(
                    "client {} line {}: {} returned {status}, the loadfile says {}",
                    c.id,
                    line.number,
                    line.op.name(),
                    line.status
                );
                c.first_mismatches.push(m);
            }
            if status == "NT_STATUS_DISK_FULL" {
                c.error = Some(format!(
                    "client {}: the filesystem is full ({} at line {})",
                    c.id,
                    line.op.name(),
                    line.number
                ));
                break;
            }
        }
        bytes += moved;
        done += 1;
        live.bytes[t].store(bytes, Ordering::Relaxed);
        progress.set(t, done);
    }
}

/// dbench's operation table (count, average and maximum latency per
/// operation), printed; its rows and the largest latency.
fn op_table(merged: &[LatencyHistogram], out: &mut dyn Write) -> (Vec<OpRow>, f64) {
    let _ = writeln!(out, "\n Operation                Count    AvgLat    MaxLat");
    let _ = writeln!(out, " --------------------------------------------------");
    let mut rows = Vec::new();
    let mut max_ms = 0.0f64;
    for (i, h) in merged.iter().enumerate() {
        if h.count() == 0 {
            continue;
        }
        let s = h.summary();
        let row = OpRow {
            operation: OPS[i].into(),
            count: s.count,
            avg_ms: s.mean_ns / 1e6,
            max_ms: s.max_ns as f64 / 1e6,
        };
        max_ms = max_ms.max(row.max_ms);
        let _ = writeln!(
            out,
            " {:<22} {:7} {:9.03} {:9.03}",
            row.operation, row.count, row.avg_ms, row.max_ms
        );
        rows.push(row);
    }
    (rows, max_ms)
}

/// dbench's clients, each with its name (`clientN`) and state.
fn new_clients(o: &DbenchOptions) -> Vec<Mutex<Client>> {
    (1..=o.clients)
        .map(|id| {
            Mutex::new(Client {
                id,
                name: format!("client{id}"),
                paths: Default::default(),
                fds: HashMap::new(),
                dirbuf: vec![std::mem::MaybeUninit::uninit(); 32 << 10],
                pos: 0,
                stats: vec![OpStat::default(); OPS.len()],
                mismatches: 0,
                first_mismatches: Vec::new(),
                error: None,
                warm: None,
                cpu: Default::default(),
            })
        })
        .collect()
}

/// dbench's cleanup: every client closes its handles and removes its tree.
fn cleanup(o: &DbenchOptions, clients: &[Mutex<Client>], out: &mut dyn Write) {
    let n = o.clients as usize;
    let t = Instant::now();
    for c in clients {
        c.lock().unwrap_or_else(|e| e.into_inner()).fds.clear();
    }
    if o.cleanup {
        for id in 1..=o.clients {
            let _ = std::fs::remove_dir_all(o.dir.join(format!("clients/client{id}")));
        }
        let _ = std::fs::remove_dir(o.dir.join("clients"));
    }
    let _ = writeln!(out, "{:4}  cleanup {:3} sec", n, t.elapsed().as_secs());
}

/// Operations whose status differs from the loadfile's: a few printed, and
/// the run's note.
fn say_mismatches(mismatches: u64, first: &[String], out: &mut dyn Write) -> Option<String> {
    if mismatches == 0 {
        return None;
    }
    let _ = writeln!(
        out,
        "{mismatches} operations returned another status than the loadfile's, for example:"
    );
    for m in first.iter().take(5) {
        let _ = writeln!(out, "  {m}");
    }
    Some(format!(
        "{mismatches} operations returned another status than the loadfile's (first: {})",
        first.first().cloned().unwrap_or_default()
    ))
}

/// dbench's line for the second just ended (replacing the previous one
/// when the phase's last tick lands in the second already printed).
fn second_line(
    live: &Live,
    n: usize,
    phase: &'static str,
    start: Instant,
    pt: &fslab_record::SeriesPoint,
    lines_out: &mut Vec<String>,
    last_sec: &mut Option<(&'static str, u64)>,
) {
    let b: u64 = live.bytes.iter().map(|x| x.load(Ordering::Relaxed)).sum();
    let lat = live
        .max_ns
        .iter()
        .map(|x| x.swap(0, Ordering::Relaxed))
        .max()
        .unwrap_or(0);
    let secs = start.elapsed().as_secs_f64();
    // The phase's last tick can land in the second already printed: it
    // replaces that line, so there is one line per second as in dbench.
    let sec = pt.t_s.round() as u64;
    if *last_sec == Some((phase, sec)) {
        lines_out.pop();
    }
    *last_sec = Some((phase, sec));
    lines_out.push(format!(
        "{:4}  {:8}  {:7.2} MB/sec  {} {:3} sec  latency {:.03} ms",
        n,
        // As dbench: operations per client, on average.
        pt.total_ops / n as u64,
        b as f64 / 1e6 / secs.max(1e-9),
        if phase == "warmup" {
            "warmup"
        } else {
            "execute"
        },
        sec,
        lat as f64 / 1e6
    ));
}

/// The clients' operation statistics merged, their status mismatches (and
/// the first few), and the first client's error.
fn merge(clients: &[Mutex<Client>]) -> (Vec<LatencyHistogram>, u64, Vec<String>, Option<String>) {
    let mut merged: Vec<LatencyHistogram> = vec![LatencyHistogram::new(); OPS.len()];
    let mut mismatches = 0;
    let mut first = Vec::new();
    let mut error = None;
    for c in clients {
        let c = c.lock().unwrap_or_else(|e| e.into_inner());
        for (i, s) in c.stats.iter().enumerate() {
            merged[i].merge(&s.hist);
        }
        mismatches += c.mismatches;
        first.extend(c.first_mismatches.iter().cloned());
        if error.is_none() {
            error = c.error.clone();
        }
    }
    (merged, mismatches, first, error)
}

/// What the clients share during a run.
struct Window<'a> {
    clients: &'a [Mutex<Client>],
    live: &'a Live,
    kinds: &'a [usize],
}

/// The warm-up flowing into the measured period, as in dbench: the clients
/// run from the start to the end without a pause; at the warm-up's end
/// each moves its accounting window (its statistics start again) and the
/// probes are told a new phase began, the clients running on. Nothing
/// happens at the boundary that could stop them: no thread join, no cache
/// drop (`--drop-caches` drops before the run only). Returns the measured
/// period's bytes and seconds.
fn warmup_then_execute(
    o: &DbenchOptions,
    ctx: &mut RunCtx,
    w: &Window,
    stop: &AtomicBool,
    lines_out: &mut Vec<String>,
    last_sec: &mut Option<(&'static str, u64)>,
) -> crate::Result<(u64, f64)> {
    use crate::measure::{PhaseClock, Progress};
    let n = o.clients as usize;
    let index = ctx.start_phase("warmup");
    let hook = ctx.hooks.before_phase.take();
    let boundary = now_ns().saturating_add(o.warmup.saturating_mul(1_000_000_000));
    let deadline = boundary.saturating_add(o.seconds.saturating_mul(1_000_000_000));
    let progress = Progress::new(n);
    let mut clock = PhaseClock::start(index);
    let (mut phase, mut index, mut start) = ("warmup", index, Instant::now());
    let mut warm_s = 0.0;
    let mut failure = None;
    std::thread::scope(|s| {
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        for t in 0..n {
            let (tx, progress) = (tx.clone(), &progress);
            s.spawn(move || {
                let mut c = w.clients[t].lock().unwrap_or_else(|e| e.into_inner());
                c.cpu.0 = fslab_sys::rusage(fslab_sys::Who::Thread).unwrap_or_default();
                let turn = Turn {
                    t,
                    deadline,
                    passes: u64::MAX,
                    boundary,
                };
                client_loop(o, w.kinds, &mut c, turn, stop, w.live, progress);
                c.cpu.1 = fslab_sys::rusage(fslab_sys::Who::Thread).unwrap_or_default();
                let _ = tx.send(());
            });
        }
        drop(tx);
        let mut left = n;
        while left > 0 {
            match rx.recv_timeout(clock.until_tick()) {
                Ok(()) => left -= 1,
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
            }
            let crossed = phase == "warmup" && now_ns() >= boundary;
            let point = if crossed {
                clock.stop();
                clock.finish(progress.total())
            } else {
                clock.tick(progress.total())
            };
            if let Some(p) = point {
                second_line(w.live, n, phase, start, &p, lines_out, last_sec);
                ctx.second(phase, p);
            }
            if crossed {
                warm_s = clock.elapsed().as_secs_f64();
                if let Err(e) = ctx.end_phase(index, "warmup") {
                    failure.get_or_insert(e);
                }
                index = ctx.start_phase("execute");
                (phase, start) = ("execute", Instant::now());
                clock = PhaseClock::start(index);
            }
        }
    });
    clock.stop();
    if let Some(p) = clock.finish(progress.total()) {
        second_line(w.live, n, phase, start, &p, lines_out, last_sec);
        ctx.second(phase, p);
    }
    let exec_s = if phase == "execute" {
        clock.elapsed().as_secs_f64()
    } else {
        0.0
    };
    ctx.end_phase(index, phase)?;
    ctx.hooks.before_phase = hook;
    if let Some(e) = failure {
        return Err(e.into());
    }
    record_flowing(ctx, w, warm_s, exec_s, !stop.load(Ordering::Relaxed))
}

/// Records the two phases of [`warmup_then_execute`]: each client's
/// operations, bytes and thread CPU on each side of its boundary.
fn record_flowing(
    ctx: &mut RunCtx,
    w: &Window,
    warm_s: f64,
    exec_s: f64,
    complete: bool,
) -> crate::Result<(u64, f64)> {
    let (mut warm, mut exec) = ((0u64, 0u64, 0.0, 0.0), (0u64, 0u64, 0.0, 0.0));
    for (t, c) in w.clients.iter().enumerate() {
        let c = c.lock().unwrap_or_else(|e| e.into_inner());
        let ops: u64 = c.stats.iter().map(|s| s.hist.count()).sum();
        let bytes = w.live.bytes[t].load(Ordering::Relaxed);
        let (w_ops, w_bytes, mid) = c.warm.unwrap_or((ops, bytes, c.cpu.1));
        let (before, after) = (mid.since(&c.cpu.0), c.cpu.1.since(&mid));
        warm.0 += w_ops;
        warm.1 += w_bytes;
        warm.2 += before.user.as_secs_f64();
        warm.3 += before.system.as_secs_f64();
        if c.warm.is_some() {
            exec.0 += ops;
            exec.1 += bytes;
            exec.2 += after.user.as_secs_f64();
            exec.3 += after.system.as_secs_f64();
        }
    }
    for (name, (ops, bytes, usr, sys), secs, index) in
        [("warmup", warm, warm_s, 0), ("execute", exec, exec_s, 1)]
    {
        let p = crate::common::PhaseRun::<()> {
            results: Vec::new(),
            index,
            elapsed_s: secs,
            usr_cpu_s: usr,
            sys_cpu_s: sys,
        };
        ctx.record_phase(phase_result(name, ops, bytes, &p, complete))?;
    }
    Ok((exec.1, exec_s))
}

pub fn run(
    o: &DbenchOptions,
    argv: &[String],
    stop: &AtomicBool,
    out: &mut dyn Write,
    rec: &mut dyn Recorder,
    hooks: &mut Hooks,
) -> crate::Result<DbenchReport> {
    // dbench stops when it cannot make its clients' directory; so does fslab.
    std::fs::create_dir_all(o.dir.join("clients")).map_err(|e| {
        crate::Error::Setup(format!(
            "cannot create {}: {e}",
            o.dir.join("clients").display()
        ))
    })?;
    let params = serde_json::to_value(o).unwrap_or_default();
    let mut ctx = RunCtx::begin("dbench", argv, &o.dir, params, rec, hooks, stop)?;
    let n = o.clients as usize;
    let clients = new_clients(o);
    let live = Live {
        bytes: (0..n).map(|_| AtomicU64::new(0)).collect(),
        max_ns: (0..n).map(|_| AtomicU64::new(0)).collect(),
    };
    let mut lines_out: Vec<String> = Vec::new();
    let mut bytes_total = 0u64;
    let mut execute_secs = 0.0;
    // Each line's row in the operation table, found once rather than per operation.
    let kinds: Vec<usize> = o.lines.iter().map(|l| op_index(l.op.name())).collect();
    let mut last_sec: Option<(&'static str, u64)> = None;
    let flowing = o.loops.is_none() && o.warmup > 0;
    if flowing {
        let w = Window {
            clients: &clients,
            live: &live,
            kinds: &kinds,
        };
        (bytes_total, execute_secs) =
            warmup_then_execute(o, &mut ctx, &w, stop, &mut lines_out, &mut last_sec)?;
    }
    for (phase, secs) in [("warmup", o.warmup), ("execute", o.seconds)] {
        if flowing || secs == 0 || ctx.stopping() {
            continue;
        }
        for c in &clients {
            let mut c = c.lock().unwrap_or_else(|e| e.into_inner());
            c.stats = vec![OpStat::default(); OPS.len()];
        }
        for b in &live.bytes {
            b.store(0, Ordering::Relaxed);
        }
        // On the hot loops' timebase, so the deadline check reuses the
        // clock read that ends each operation's latency.
        let deadline = if o.loops.is_some() {
            u64::MAX
        } else {
            now_ns().saturating_add(secs.saturating_mul(1_000_000_000))
        };
        let passes = o.loops.unwrap_or(u64::MAX);
        let start = Instant::now();
        let p = ctx.phase_ticking(
            phase,
            n,
            |t, progress| {
                let mut c = clients[t].lock().unwrap_or_else(|e| e.into_inner());
                let turn = Turn {
                    t,
                    deadline,
                    passes,
                    boundary: u64::MAX,
                };
                client_loop(o, &kinds, &mut c, turn, stop, &live, progress);
            },
            |pt| second_line(&live, n, phase, start, pt, &mut lines_out, &mut last_sec),
        )?;
        let ops: u64 = clients
            .iter()
            .map(|c| {
                c.lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .stats
                    .iter()
                    .map(|s| s.hist.count())
                    .sum::<u64>()
            })
            .sum();
        let bytes: u64 = live.bytes.iter().map(|x| x.load(Ordering::Relaxed)).sum();
        ctx.record_phase(phase_result(
            phase,
            ops,
            bytes,
            &p,
            !stop.load(Ordering::Relaxed),
        ))?;
        if phase == "execute" {
            bytes_total = bytes;
            execute_secs = p.elapsed_s;
        }
    }
    for l in &lines_out {
        let _ = writeln!(out, "{l}");
    }
    cleanup(o, &clients, out);
    let (merged, mismatches, first, error) = merge(&clients);
    let (rows, max_ms) = op_table(&merged, out);
    for (i, h) in merged.iter().enumerate() {
        if h.count() > 0 {
            ctx.record_latency("execute", OPS[i], h)?;
        }
    }
    let throughput = bytes_total as f64 / 1e6 / execute_secs.max(1e-9);
    let _ = writeln!(
        out,
        "\nThroughput {} MB/sec  {} clients  {} procs  max_latency={:.03} ms",
        fslab_stats_g(throughput),
        n,
        n,
        max_ms
    );
    if let Some(note) = say_mismatches(mismatches, &first, out) {
        ctx.out.notes.push(note);
    }
    let _ = out.flush();
    ctx.record_metrics(metrics(throughput, max_ms, &rows))?;
    let outcome = ctx.finish(error)?;
    Ok(DbenchReport {
        outcome,
        options: o.clone(),
        throughput_mb_s: throughput,
        max_latency_ms: max_ms,
        operations: rows,
        status_mismatches: mismatches,
    })
}

/// dbench's numbers: its closing line's Throughput (MB of 10^6 bytes, as
/// dbench counts) and max_latency, and its operation table.
fn metrics(throughput: f64, max_ms: f64, rows: &[OpRow]) -> Vec<fslab_record::Metric> {
    use fslab_record::{Better, Metric, Unit};
    let mut v = vec![
        Metric::new(
            "dbench",
            None,
            "Throughput",
            throughput,
            Unit::MbPerSec,
            Better::Higher,
        ),
        Metric::new(
            "dbench",
            None,
            "max_latency",
            max_ms,
            Unit::Milliseconds,
            Better::Lower,
        ),
    ];
    for r in rows {
        let op = Some(r.operation.as_str());
        let row = |name: &str, value: f64, unit: Unit, better: Better| {
            Metric::new("dbench", op, name, value, unit, better).detail()
        };
        v.push(row("Count", r.count as f64, Unit::Count, Better::Neither));
        v.push(row("AvgLat", r.avg_ms, Unit::Milliseconds, Better::Lower));
        v.push(row("MaxLat", r.max_ms, Unit::Milliseconds, Better::Lower));
    }
    v
}

/// dbench prints the throughput with `%g`.
fn fslab_stats_g(x: f64) -> String {
    fslab_stats::fmt_g(x, 6)
}

#[cfg(test)]
mod tests {
    use super::*;

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
