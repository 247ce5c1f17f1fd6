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

use std::ffi::{CStr, OsStr};
use std::ops::Range;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use fslab_model::LatencyHistogram;
use rustix::fs::{AtFlags, Mode, OFlags, CWD};

use super::tree::{Kind, Op, Tree};
use crate::measure::{now_ns, Progress};
use crate::stonewall::Check;
use fslab_sys::item_path::ItemPath;

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

/// Why one item failed: the call, the item's path and the system's error
/// ("open d/file.mdtest.0.1: No such file or directory (os error 2)"), or
/// a short transfer ("write PATH: 3 of 4 bytes"). Made only when a call
/// fails (the path copied then), by the cold functions below.
#[derive(Debug, thiserror::Error)]
pub enum ItemError {
    #[error("{call} {}: {source}", path.display())]
    Call {
        call: &'static str,
        path: PathBuf,
        #[source]
        source: rustix::io::Errno,
    },
    #[error("{call} {}: {n} of {want} bytes", path.display())]
    Short {
        call: &'static str,
        path: PathBuf,
        n: usize,
        want: usize,
    },
}

fn path_of(p: &CStr) -> PathBuf {
    Path::new(OsStr::from_bytes(p.to_bytes())).to_path_buf()
}

#[cold]
#[inline(never)]
fn fail(call: &'static str, path: &CStr, source: rustix::io::Errno) -> ItemError {
    ItemError::Call {
        call,
        path: path_of(path),
        source,
    }
}

#[cold]
#[inline(never)]
fn short(call: &'static str, path: &CStr, n: usize, want: usize) -> ItemError {
    ItemError::Short {
        call,
        path: path_of(path),
        n,
        want,
    }
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

    /// Item `j` of create and remove's walk: its number, with `path`'s
    /// stem set to its directory (when it is not already).
    #[inline(always)]
    fn walked(&self, dirs: &[(PathBuf, u64)], j: u64, at: &mut At) -> u64 {
        let per = self.tree.o.items_per_dir;
        let idx = ((j / per) as usize).min(dirs.len().saturating_sub(1));
        let (dir, first) = &dirs[idx];
        if at.dir != idx as u64 {
            at.dir = idx as u64;
            self.tree.item_stem(self.op, self.kind, dir, &mut at.path);
        }
        first + (j - idx as u64 * per)
    }

    /// Item `i` of the stat, read and rename phases: its number (-L moves
    /// it to the leaves), with `path`'s stem set to its directory.
    #[inline(always)]
    fn listed(&self, i: u64, at: &mut At) -> u64 {
        let num = i + self.tree.o.leaf_offset();
        let parent = self.tree.item_parent(num);
        if at.dir != parent {
            at.dir = parent;
            let rel = self.tree.dir_path(parent);
            self.tree.item_stem(self.op, self.kind, &rel, &mut at.path);
        }
        num
    }

    #[inline(always)]
    fn create_file(&self, p: &CStr) -> Result<(), ItemError> {
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
                return Err(short("write", p, n, self.buf.len()));
            }
            if self.tree.o.sync_file {
                rustix::fs::fsync(&fd).map_err(|e| fail("fsync", p, e))?;
            }
        }
        fslab_sys::fd::close(fd);
        Ok(())
    }

    #[inline(always)]
    fn read_file(buf: &mut [u8], p: &CStr) -> Result<(), ItemError> {
        let fd: OwnedFd =
            rustix::fs::openat(CWD, p, OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty())
                .map_err(|e| fail("open", p, e))?;
        if !buf.is_empty() {
            rustix::fs::seek(&fd, rustix::fs::SeekFrom::Start(0))
                .map_err(|e| fail("lseek", p, e))?;
            let want = buf.len();
            let n = rustix::io::read(&fd, buf).map_err(|e| fail("read", p, e))?;
            if n != want {
                return Err(short("read", p, n, want));
            }
        }
        fslab_sys::fd::close(fd);
        Ok(())
    }

    /// The one item's calls, made in the loop's own body (see
    /// [`fslab_sys::item_path`] and docs/speed.md: on this kind of machine a
    /// system call inside a function that returns costs more).
    #[inline(always)]
    fn one(&mut self, p: &CStr) -> Result<(), ItemError> {
        match (self.op, self.kind) {
            (Op::Create, Kind::File) => self.create_file(p),
            (Op::Create, Kind::Dir) => rustix::fs::mkdirat(CWD, p, Mode::from_raw_mode(0o775))
                .map_err(|e| fail("mkdir", p, e)),
            (Op::Stat, _) => rustix::fs::statat(CWD, p, AtFlags::empty())
                .map(|_| ())
                .map_err(|e| fail("stat", p, e)),
            (Op::Read, _) => Self::read_file(&mut self.buf, p),
            (Op::Remove, Kind::File) => {
                rustix::fs::unlinkat(CWD, p, AtFlags::empty()).map_err(|e| fail("unlink", p, e))
            }
            (Op::Remove, Kind::Dir) => {
                rustix::fs::unlinkat(CWD, p, AtFlags::REMOVEDIR).map_err(|e| fail("rmdir", p, e))
            }
            (Op::Rename, _) => unreachable!("renames go through Chain::step"),
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
        let mut at = At {
            path: ItemPath::new(),
            dir: u64::MAX,
        };
        // One clock reading per item: an item's latency runs from the
        // previous item's end (so it holds the loop's own few nanoseconds
        // and the item's name, as fsmark's and alloctest's do).
        let mut t = now_ns();
        for j in range {
            if stop.load(Ordering::Relaxed) {
                break;
            }
            let r = match self.op {
                Op::Create | Op::Remove => {
                    let num = self.walked(&dirs, j, &mut at);
                    let p = at.path.numbered(num);
                    self.one(p)
                }
                Op::Stat | Op::Read => {
                    let num = self.listed(j, &mut at);
                    let p = at.path.numbered(num);
                    self.one(p)
                }
                Op::Rename => {
                    let num = self.listed(j, &mut at);
                    chain.step(at.path.numbered(num), j, total)
                }
            };
            let end = now_ns();
            s.hist.record(end - t);
            t = end;
            if let Err(e) = r {
                s.failures += 1;
                s.first_failure.get_or_insert_with(|| e.to_string());
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

/// The reused path of a stretch's items and the directory (its number)
/// its stem is set to.
struct At {
    path: ItemPath,
    dir: u64,
}

/// mdtest's rename chain: the first item to NAME-XX, each next item to its
/// predecessor's name, and at the end NAME-XX to the last freed name. The
/// names are C strings (with their NUL) in buffers reused item to item.
#[derive(Default)]
struct Chain {
    first: Vec<u8>,
    last: Vec<u8>,
    from: Vec<u8>,
}

impl Chain {
    #[inline(always)]
    fn step(&mut self, item: &CStr, i: u64, total: u64) -> Result<(), ItemError> {
        self.from.clear();
        if i == 0 {
            self.first.clear();
            self.first.extend_from_slice(item.to_bytes());
            self.first.extend_from_slice(b"-XX\0");
            self.last.clone_from(&self.first);
        }
        if i + 1 == total && i > 0 {
            self.from.extend_from_slice(&self.first);
        } else {
            self.from.extend_from_slice(item.to_bytes_with_nul());
        }
        let from = CStr::from_bytes_with_nul(&self.from).unwrap_or(c"");
        let to = CStr::from_bytes_with_nul(&self.last).unwrap_or(c"");
        let r = rustix::fs::renameat(CWD, from, CWD, to).map_err(|e| fail("rename", from, e));
        std::mem::swap(&mut self.last, &mut self.from);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_item_names_its_call_and_path_and_keeps_the_errno() {
        let e = fail("open", c"d/file.mdtest.0.1", rustix::io::Errno::NOENT);
        assert_eq!(
            e.to_string(),
            "open d/file.mdtest.0.1: No such file or directory (os error 2)"
        );
        let source = std::error::Error::source(&e).expect("the errno");
        assert_eq!(
            source.downcast_ref::<rustix::io::Errno>(),
            Some(&rustix::io::Errno::NOENT)
        );
        assert_eq!(
            short("write", c"d/f", 3, 4).to_string(),
            "write d/f: 3 of 4 bytes"
        );
    }
}
