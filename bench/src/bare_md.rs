//! Bare loops for mdtest and IO500's metadata phases: per item exactly the
//! calls fslab's mdtest makes (mdtest's POSIX backend: `open(O_CREAT)`,
//! `lseek`+`write`, `close`; `mkdir`; `stat`; `open`, `lseek`+`read`,
//! `close`; `unlink`; `rmdir`), on mdtest's names and tree, phase after
//! phase between barriers, and nothing else: no clock per item (one only
//! where a stonewall needs it), no histogram, no progress, no results
//! store. Each phase is timed as mdtest times it: from the opening barrier
//! to past the closing one (with -Y the `sync` inside). The find is IO500's
//! (pfind's rules) as fslab's does it: every rank reads every directory
//! with `getdents64`, takes the names that hash to it and `lstat`s those
//! with "01" in them.
//!
//! Under an MPI launcher the ranks are MPI ranks ([`fslab_cluster::join`];
//! the bench must then be built with `--features fslab/mpi`).

use std::ffi::CStr;
use std::io::Write as _;
use std::mem::MaybeUninit;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use fslab_cluster::Cluster;
use rustix::fs::{AtFlags, FileType, Mode, OFlags, RawDir, CWD};

/// What one mdtest run does (the options IO500 and the bench use; a tree of
/// depth 0, one iteration).
#[derive(Debug, Clone)]
pub struct Md {
    pub dir: PathBuf,
    /// -u: a tree per rank.
    pub unique: bool,
    /// Which kinds: -F files only, -D directories only, neither: both.
    pub files: bool,
    pub dirs: bool,
    /// -w, -e: bytes written and read per file.
    pub write: u64,
    pub read: u64,
    /// -N: the task stride.
    pub stride: u64,
    /// -Y: sync after each item phase.
    pub sync: bool,
    /// -W: file creation's stonewall, seconds (0: none).
    pub stonewall_s: u64,
    /// -C -T -E -r (none given: all four).
    pub create: bool,
    pub stat: bool,
    pub read_phase: bool,
    pub remove: bool,
}

impl Md {
    /// `mdtest -C -T -E -r -d DIR`: files and directories in one shared
    /// tree, every item phase, nothing written or read.
    pub fn all_phases(dir: PathBuf) -> Md {
        Md {
            dir,
            unique: false,
            files: true,
            dirs: true,
            write: 0,
            read: 0,
            stride: 0,
            sync: false,
            stonewall_s: 0,
            create: true,
            stat: true,
            read_phase: true,
            remove: true,
        }
    }
}

/// One phase on rank 0: mdtest's name for it, its seconds, the items of
/// all ranks.
#[derive(Debug, Clone, PartialEq)]
pub struct Timed {
    pub phase: String,
    pub seconds: f64,
    pub items: u64,
}

impl Timed {
    /// The `phase` line the bare side prints: `phase NAME|SECONDS|ITEMS`.
    pub fn line(&self) -> String {
        format!("phase {}|{}|{}", self.phase, self.seconds, self.items)
    }

    /// Reads a line [`Timed::line`] wrote.
    pub fn parse(line: &str) -> Option<Timed> {
        let mut f = line.strip_prefix("phase ")?.split('|');
        Some(Timed {
            phase: f.next()?.to_string(),
            seconds: f.next()?.parse().ok()?,
            items: f.next()?.parse().ok()?,
        })
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Op {
    Create,
    Stat,
    Read,
    Remove,
}

impl Op {
    /// mdtest's task shift of the names (-N x this).
    fn name_shift(self) -> u64 {
        match self {
            Op::Create => 0,
            Op::Stat => 1,
            Op::Read => 2,
            Op::Remove => 3,
        }
    }
}

/// One rank's view: its number, the ranks, the run.
struct Rank<'a> {
    c: &'a dyn Cluster,
    m: &'a Md,
    testdir: PathBuf,
}

impl Rank<'_> {
    fn shifted(&self, s: u64) -> u64 {
        (self.c.rank() as u64 + s * self.m.stride) % self.c.size() as u64
    }

    /// `TESTDIR/ROOT/KINDmdtest.T.` for `op`'s items, in `buf`.
    fn stem(&self, op: Op, dir: bool, buf: &mut Vec<u8>) {
        buf.clear();
        buf.extend_from_slice(self.testdir.as_os_str().as_bytes());
        if self.m.unique {
            let _ = write!(buf, "/mdtest_tree.{}.0/", self.shifted(op.name_shift() + 1));
        } else {
            buf.extend_from_slice(b"/mdtest_tree.0/");
        }
        buf.extend_from_slice(if dir { b"dir." } else { b"file." });
        let _ = write!(buf, "mdtest.{}.", self.shifted(op.name_shift()));
    }

    fn barrier(&self) {
        self.c.sum(0);
    }

    /// Runs `body` (which returns the items this rank made) as one phase,
    /// timed mdtest's way; the items are every rank's.
    fn phase(&self, name: &str, sync: bool, body: impl FnOnce() -> u64) -> Timed {
        self.barrier();
        let t = Instant::now();
        let made = body();
        if sync {
            rustix::fs::sync();
        }
        self.barrier();
        Timed {
            phase: name.into(),
            seconds: t.elapsed().as_secs_f64(),
            items: made * self.c.size() as u64,
        }
    }
}

impl Rank<'_> {
    /// A tree phase, timed as [`Rank::phase`]: its items are the
    /// directories made (or removed) by every rank, one a rank with -u,
    /// else rank 0's one (not one a rank: that counted rank 0's one
    /// directory once for each rank and doubled the rate at 2 ranks).
    fn tree_phase(&self, name: &str, create: bool) -> Timed {
        let mut t = self.phase(name, false, || {
            tree(self, create);
            0
        });
        t.items = if self.m.unique {
            self.c.size() as u64
        } else {
            1
        };
        t
    }
}

/// Appends `n` and a NUL to `buf` cut back to `stem` bytes; the C string.
#[inline(always)]
fn item(buf: &mut Vec<u8>, stem: usize, n: u64) -> &CStr {
    buf.truncate(stem);
    crate::push_digits(buf, n, 0);
    buf.push(0);
    CStr::from_bytes_with_nul(buf).expect("one NUL")
}

/// One item's calls.
#[inline(always)]
fn one(op: Op, dir: bool, p: &CStr, data: &mut [u8]) {
    match (op, dir) {
        (Op::Create, true) => {
            rustix::fs::mkdirat(CWD, p, Mode::from_raw_mode(0o775)).expect("bare mkdir");
        }
        (Op::Create, false) => {
            let fd = rustix::fs::openat(
                CWD,
                p,
                OFlags::RDWR | OFlags::CREATE | OFlags::CLOEXEC,
                Mode::from_raw_mode(0o664),
            )
            .expect("bare create");
            if !data.is_empty() {
                rustix::fs::seek(&fd, rustix::fs::SeekFrom::Start(0)).expect("bare lseek");
                rustix::io::write(&fd, data).expect("bare write");
            }
            fslab_sys::fd::close(fd);
        }
        (Op::Stat, _) => {
            rustix::fs::statat(CWD, p, AtFlags::empty()).expect("bare stat");
        }
        (Op::Read, _) => {
            let fd = rustix::fs::openat(CWD, p, OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty())
                .expect("bare open");
            if !data.is_empty() {
                rustix::fs::seek(&fd, rustix::fs::SeekFrom::Start(0)).expect("bare lseek");
                rustix::io::read(&fd, &mut *data).expect("bare read");
            }
            fslab_sys::fd::close(fd);
        }
        (Op::Remove, d) => {
            let f = if d {
                AtFlags::REMOVEDIR
            } else {
                AtFlags::empty()
            };
            rustix::fs::unlinkat(CWD, p, f).expect("bare remove");
        }
    }
}

/// Items `0..n` of `op` on files (`dir` false) or directories; returns the
/// items made. File creation with a stonewall stops at it, agrees with the
/// other ranks on the most any made, and wears out to that count.
fn run_items(r: &Rank, op: Op, dir: bool, n: u64, data: &mut [u8]) -> u64 {
    let mut buf = Vec::with_capacity(256);
    r.stem(op, dir, &mut buf);
    let stem = buf.len();
    let wall = (op == Op::Create && !dir && r.m.stonewall_s > 0)
        .then(|| Instant::now() + Duration::from_secs(r.m.stonewall_s));
    let Some(wall) = wall else {
        for i in 0..n {
            one(op, dir, item(&mut buf, stem, i), data);
        }
        return n;
    };
    let mut i = 0;
    while i < n {
        one(op, dir, item(&mut buf, stem, i), data);
        i += 1;
        if Instant::now() >= wall {
            break;
        }
    }
    let agreed = r.c.max(i);
    for j in i..agreed {
        one(op, dir, item(&mut buf, stem, j), data);
    }
    agreed
}

fn tree(r: &Rank, create: bool) {
    let mine = r.m.unique || r.c.rank() == 0;
    if !mine {
        return;
    }
    let root = if r.m.unique {
        r.testdir.join(format!("mdtest_tree.{}.0", r.c.rank()))
    } else {
        r.testdir.join("mdtest_tree.0")
    };
    if create {
        rustix::fs::mkdirat(CWD, &root, Mode::from_raw_mode(0o775)).expect("bare tree");
    } else {
        rustix::fs::unlinkat(CWD, &root, AtFlags::REMOVEDIR).expect("bare tree");
    }
}

/// One mdtest run on this rank; `items` (when the run does not create) is
/// the count the phases work on. Rank 0's phases in mdtest's order.
pub fn mdtest(c: &dyn Cluster, m: &Md, count: u64) -> (Vec<Timed>, u64) {
    let r = Rank {
        c,
        m,
        testdir: m.dir.join("test-dir.0-0"),
    };
    let mut n = count;
    let mut out = Vec::new();
    if c.rank() == 0 {
        let _ = std::fs::create_dir_all(&r.testdir);
    }
    let sync = m.sync;
    if m.create {
        out.push(r.tree_phase("Tree creation", true));
    }
    let mut data = vec![b'a'; m.write.max(m.read) as usize];
    if m.dirs {
        let mut step = |name: &str, op: Op| {
            out.push(r.phase(name, sync, || run_items(&r, op, true, n, &mut [])));
        };
        if m.create {
            step("Directory creation", Op::Create);
        }
        if m.stat {
            step("Directory stat", Op::Stat);
        }
        if m.remove {
            step("Directory removal", Op::Remove);
        }
    }
    if m.files {
        if m.create {
            let w = &mut data[..m.write as usize];
            let t = r.phase("File creation", sync, || {
                run_items(&r, Op::Create, false, n, w)
            });
            n = t.items / c.size() as u64;
            out.push(t);
        }
        for (name, op, on, len) in [
            ("File stat", Op::Stat, m.stat, 0),
            ("File read", Op::Read, m.read_phase, m.read),
            ("File removal", Op::Remove, m.remove, 0),
        ] {
            if on {
                let d = &mut data[..len as usize];
                out.push(r.phase(name, sync, || run_items(&r, op, false, n, d)));
            }
        }
    }
    if m.remove {
        out.push(r.tree_phase("Tree removal", false));
        if c.rank() == 0 {
            let _ = rustix::fs::unlinkat(CWD, &r.testdir, AtFlags::REMOVEDIR);
        }
    }
    (out, n)
}

/// IO500's find over `roots` as this rank: files looked at and found.
pub fn find(c: &dyn Cluster, roots: &[PathBuf], ctime_min: i64, size: u64) -> (u64, u64) {
    let (rank, ranks) = (c.rank() as u64, c.size() as u64);
    let mut dirs: Vec<PathBuf> = roots.to_vec();
    let mut buf: Vec<MaybeUninit<u8>> = vec![MaybeUninit::uninit(); 64 << 10];
    let (mut total, mut found) = (0, 0);
    while let Some(dir) = dirs.pop() {
        let fd = rustix::fs::openat(
            CWD,
            &dir,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .expect("bare opendir");
        let mut entries = RawDir::new(&fd, &mut buf);
        while let Some(e) = entries.next() {
            let e = e.expect("bare getdents");
            let name = e.file_name().to_bytes();
            if name == b"." || name == b".." {
                continue;
            }
            if e.file_type() == FileType::Directory {
                dirs.push(dir.join(std::ffi::OsStr::from_bytes(name)));
                continue;
            }
            let mut h: u64 = 0xcbf2_9ce4_8422_2325;
            for b in name {
                h ^= u64::from(*b);
                h = h.wrapping_mul(0x0100_0000_01b3);
            }
            if ranks > 1 && h % ranks != rank {
                continue;
            }
            total += 1;
            if name.windows(2).any(|w| w == b"01") {
                let st = rustix::fs::statat(&fd, e.file_name(), AtFlags::SYMLINK_NOFOLLOW)
                    .expect("bare lstat");
                if st.st_ctime >= ctime_min && st.st_size as u64 == size {
                    found += 1;
                }
            }
        }
    }
    (total, found)
}

/// IO500's metadata phases in its order, as `fslab io500md -d DIR` runs
/// them (mdtest-easy and -hard with IO500's options, the timestamp file in
/// `results`, the find): rank 0's phases, IO500's names.
pub fn io500(
    c: &dyn Cluster,
    dir: &Path,
    results: &Path,
    easy_n: u64,
    hard_n: u64,
    wall: u64,
) -> Vec<Timed> {
    let easy = Md {
        dir: dir.join("mdtest-easy"),
        unique: true,
        files: true,
        dirs: false,
        write: 0,
        read: 0,
        stride: 1,
        sync: false,
        stonewall_s: 0,
        create: false,
        stat: false,
        read_phase: false,
        remove: false,
    };
    let hard = Md {
        dir: dir.join("mdtest-hard"),
        unique: false,
        write: 3901,
        read: 3901,
        ..easy.clone()
    };
    let only = |m: &Md, what: usize| Md {
        create: what == 0,
        stat: what == 1,
        read_phase: what == 2,
        remove: what == 3,
        sync: what == 0,
        stonewall_s: if what == 0 { wall } else { 0 },
        ..m.clone()
    };
    if c.rank() == 0 {
        let _ = std::fs::create_dir_all(&easy.dir);
        let _ = std::fs::create_dir_all(&hard.dir);
        let _ = std::fs::create_dir_all(results);
    }
    let mut out = Vec::new();
    let pick = |v: Vec<Timed>, name: &str, op: &str| {
        v.into_iter().find(|t| t.phase == op).map(|mut t| {
            t.phase = name.into();
            t
        })
    };
    let (v, n_easy) = mdtest(c, &only(&easy, 0), easy_n);
    out.extend(pick(v, "mdtest-easy-write", "File creation"));
    let stamp = results.join("timestampfile");
    if c.rank() == 0 {
        std::fs::write(&stamp, b"").expect("bare timestamp");
    }
    c.sum(0);
    let ctime = {
        use std::os::unix::fs::MetadataExt;
        std::fs::symlink_metadata(&stamp)
            .map(|m| m.ctime())
            .unwrap_or(0)
    };
    let (v, n_hard) = mdtest(c, &only(&hard, 0), hard_n);
    out.extend(pick(v, "mdtest-hard-write", "File creation"));
    let roots = [easy.dir.clone(), hard.dir.clone()];
    c.sum(0);
    let t = Instant::now();
    let (total, _) = find(c, &roots, ctime, 3901);
    let all = c.sum(total);
    out.push(Timed {
        phase: "find".into(),
        seconds: t.elapsed().as_secs_f64(),
        items: all,
    });
    for (m, n, what, name, op) in [
        (&easy, n_easy, 1, "mdtest-easy-stat", "File stat"),
        (&hard, n_hard, 1, "mdtest-hard-stat", "File stat"),
        (&easy, n_easy, 3, "mdtest-easy-delete", "File removal"),
        (&hard, n_hard, 2, "mdtest-hard-read", "File read"),
        (&hard, n_hard, 3, "mdtest-hard-delete", "File removal"),
    ] {
        let (v, _) = mdtest(c, &only(m, what), n);
        out.extend(pick(v, name, op));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A shared tree is one directory whatever the ranks; with -u one a
    /// rank. Every item phase counts every rank's items.
    #[test]
    fn a_tree_phase_counts_the_directories_made_not_one_a_rank() {
        for unique in [false, true] {
            let d = tempfile::tempdir().unwrap();
            let mut m = Md::all_phases(d.path().to_path_buf());
            m.unique = unique;
            let runs = fslab_cluster::LocalCluster::run(2, |c| mdtest(c, &m, 10).0);
            let items = |name: &str| {
                runs[0]
                    .iter()
                    .find(|t| t.phase == name)
                    .map(|t| t.items)
                    .unwrap()
            };
            let trees = if unique { 2 } else { 1 };
            assert_eq!(items("Tree creation"), trees, "unique {unique}");
            assert_eq!(items("Tree removal"), trees, "unique {unique}");
            assert_eq!(items("File creation"), 20, "unique {unique}");
        }
    }
}
