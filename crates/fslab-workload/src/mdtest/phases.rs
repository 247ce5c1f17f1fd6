//! The calls mdtest's POSIX backend makes on one item, kind by kind, and a
//! stretch of items run on one worker thread:
//! - file create: `open(O_RDWR|O_CREAT, 0664)`, with -w `lseek(0)` and one
//!   `write` of the bytes, with -y `fsync`, `close`;
//! - directory create: `mkdir(0775)`;
//! - stat: `stat` of the file or directory;
//! - file read: `open`, with -e `lseek(0)` and one `read` of the bytes,
//!   `close` (directories have no read);
//! - rename (directories): each item to its predecessor's name, the first
//!   to NAME-XX and back at the end, as mdtest chains them;
//! - remove: `unlink` / `rmdir`.

use std::ops::Range;
use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use fslab_record::LatencyHistogram;
use rustix::fs::{AtFlags, Mode, OFlags, CWD};

use super::tree::{Kind, Op, Tree};
use crate::measure::{now_ns, Progress};
use crate::stonewall::Check;

/// What a stretch of items did.
#[derive(Debug, Default)]
pub struct Stretch {
    /// Items done (failed ones too, as mdtest counts them).
    pub done: u64,
    /// Stopped by the stonewall before the range's end.
    pub hit_wall: bool,
    pub failures: u64,
    pub first_failure: Option<String>,
    pub hist: LatencyHistogram,
}

/// One task's items in one phase.
pub struct Items<'t> {
    pub tree: &'t Tree<'t>,
    pub op: Op,
    pub kind: Kind,
    /// What -w writes into each file.
    pub buf: Vec<u8>,
}

fn fail(what: &str, path: &std::path::Path, e: rustix::io::Errno) -> String {
    format!("{what} {}: {}", path.display(), std::io::Error::from(e))
}

impl Items<'_> {
    pub fn new<'t>(tree: &'t Tree<'t>, op: Op, kind: Kind) -> Items<'t> {
        let o = tree.o;
        let len = match op {
            Op::Create => o.write_bytes,
            Op::Read => o.read_bytes,
            _ => 0,
        };
        // mdtest's buffer holds a pattern of the task's; any bytes do here.
        let buf = vec![b'a' + (tree.rank % 26) as u8; len as usize];
        Items {
            tree,
            op,
            kind,
            buf,
        }
    }

    /// Item `j` of create and remove's walk: its path.
    fn walked(&self, dirs: &[(PathBuf, u64)], j: u64) -> PathBuf {
        let per = self.tree.o.items_per_dir;
        let idx = ((j / per) as usize).min(dirs.len().saturating_sub(1));
        let (dir, first) = &dirs[idx];
        let num = first + (j - idx as u64 * per);
        self.tree
            .work_dir(self.op)
            .join(dir)
            .join(self.tree.item_name(self.op, self.kind, num))
    }

    /// Item `i` of the stat and read phases: its path (-L moves it to the
    /// leaves).
    fn listed(&self, i: u64) -> PathBuf {
        let num = i + self.tree.o.leaf_offset();
        self.tree.item_path(self.op, self.kind, num)
    }

    fn create_file(&self, p: &std::path::Path) -> Result<(), String> {
        let fd: OwnedFd = rustix::fs::openat(
            CWD,
            p,
            OFlags::RDWR | OFlags::CREATE | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o664),
        )
        .map_err(|e| fail("open", p, e))?;
        if !self.buf.is_empty() {
            rustix::fs::seek(&fd, rustix::fs::SeekFrom::Start(0))
                .map_err(|e| fail("lseek", p, e))?;
            let n = rustix::io::write(&fd, &self.buf).map_err(|e| fail("write", p, e))?;
            if n != self.buf.len() {
                return Err(format!(
                    "write {}: {n} of {} bytes",
                    p.display(),
                    self.buf.len()
                ));
            }
            if self.tree.o.sync_file {
                rustix::fs::fsync(&fd).map_err(|e| fail("fsync", p, e))?;
            }
        }
        drop(fd);
        Ok(())
    }

    fn read_file(&mut self, p: &std::path::Path) -> Result<(), String> {
        let fd: OwnedFd =
            rustix::fs::openat(CWD, p, OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty())
                .map_err(|e| fail("open", p, e))?;
        if !self.buf.is_empty() {
            rustix::fs::seek(&fd, rustix::fs::SeekFrom::Start(0))
                .map_err(|e| fail("lseek", p, e))?;
            let want = self.buf.len();
            let n = rustix::io::read(&fd, &mut self.buf).map_err(|e| fail("read", p, e))?;
            if n != want {
                return Err(format!("read {}: {n} of {want} bytes", p.display()));
            }
        }
        drop(fd);
        Ok(())
    }

    /// The one item's calls.
    fn one(&mut self, p: &std::path::Path) -> Result<(), String> {
        match (self.op, self.kind) {
            (Op::Create, Kind::File) => self.create_file(p),
            (Op::Create, Kind::Dir) => rustix::fs::mkdirat(CWD, p, Mode::from_raw_mode(0o775))
                .map_err(|e| fail("mkdir", p, e)),
            (Op::Stat, _) => rustix::fs::statat(CWD, p, AtFlags::empty())
                .map(|_| ())
                .map_err(|e| fail("stat", p, e)),
            (Op::Read, _) => self.read_file(p),
            (Op::Remove, Kind::File) => {
                rustix::fs::unlinkat(CWD, p, AtFlags::empty()).map_err(|e| fail("unlink", p, e))
            }
            (Op::Remove, Kind::Dir) => {
                rustix::fs::unlinkat(CWD, p, AtFlags::REMOVEDIR).map_err(|e| fail("rmdir", p, e))
            }
            (Op::Rename, _) => unreachable!("renames go through Items::rename"),
        }
    }

    /// Runs items `range` (of `total` in the phase, which names the
    /// rename chain's last), counting from `base` in `progress`, stopping
    /// at `stop` or, after each item, once `wall` has passed (checked
    /// against the item's own closing clock reading).
    pub fn run(
        &mut self,
        range: Range<u64>,
        total: u64,
        wall: Check,
        stop: &AtomicBool,
        progress: &Progress,
        base: u64,
    ) -> Stretch {
        let mut s = Stretch::default();
        let dirs = self.tree.item_dirs();
        let mut chain = Chain::default();
        for j in range {
            if stop.load(Ordering::Relaxed) {
                break;
            }
            let t = now_ns();
            let r = match self.op {
                Op::Create | Op::Remove => {
                    let p = self.walked(&dirs, j);
                    self.one(&p)
                }
                Op::Stat | Op::Read => {
                    let p = self.listed(j);
                    self.one(&p)
                }
                Op::Rename => chain.step(self.listed(j), j, total),
            };
            let end = now_ns();
            s.hist.record(end - t);
            if let Err(e) = r {
                s.failures += 1;
                s.first_failure.get_or_insert(e);
            }
            s.done += 1;
            progress.set(0, base + s.done);
            if wall.passed(end) {
                s.hit_wall = true;
                break;
            }
        }
        s
    }
}

/// mdtest's rename chain: the first item to NAME-XX, each next item to its
/// predecessor's name, and at the end NAME-XX to the last freed name.
#[derive(Default)]
struct Chain {
    first: PathBuf,
    last: PathBuf,
}

impl Chain {
    fn step(&mut self, item: PathBuf, i: u64, total: u64) -> Result<(), String> {
        let mut from = item;
        if i == 0 {
            let mut x = from.clone().into_os_string();
            x.push("-XX");
            self.first = x.into();
            self.last = self.first.clone();
        } else if i + 1 == total {
            from = self.first.clone();
        }
        let r =
            rustix::fs::renameat(CWD, &from, CWD, &self.last).map_err(|e| fail("rename", &from, e));
        self.last = from;
        r
    }
}

/// A phase's time from `start` with what ends it: `before` when the task
/// finished its items, `after` past the closing barrier (mdtest's
/// time_before_barrier and time).
#[derive(Debug, Clone, Copy, Default, serde::Serialize, serde::Deserialize)]
pub struct Times {
    pub before_s: f64,
    pub after_s: f64,
}

impl Times {
    pub fn since(start: Instant, before: Instant) -> Times {
        Times {
            before_s: (before - start).as_secs_f64(),
            after_s: start.elapsed().as_secs_f64(),
        }
    }
}
