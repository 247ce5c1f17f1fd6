//! The phases after fs_mark's loops: an N-way find + stat of everything the
//! create phase made, and an N-way unlink of it.
//!
//! Work is split by directory: every `-d` directory and every fs_mark
//! subdirectory (`00`, `01`, ...) in it is one unit, and the workers take
//! units from a shared index. Only entries shaped like fs_mark names, in
//! fs_mark-named subdirectories, are touched: anything else a user keeps in
//! a `-d` directory is left alone.

use std::os::fd::{AsFd, OwnedFd};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use fslab_model::LatencyHistogram;
use rustix::fs::{AtFlags, Dir, FileType};
use rustix::io::Errno;

use super::calls::{open_dir, retrying};
use super::names::NameGen;
use super::WorkError;
use crate::measure::Progress;

/// What the tree phases do to each file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TreeOp {
    Stat,
    Unlink,
}

impl TreeOp {
    /// The call timed for each file.
    pub fn call(self) -> &'static str {
        match self {
            TreeOp::Stat => "stat",
            TreeOp::Unlink => "unlink",
        }
    }
}

/// One directory to process.
#[derive(Debug, Clone)]
pub struct Unit {
    pub path: PathBuf,
    /// True for an fs_mark subdirectory (removed after an unlink phase when empty).
    pub is_subdir: bool,
}

/// Lists the units under the `-d` directories: each directory itself, then
/// its subdirectories whose names are lowercase hex of two or more digits.
pub fn plan(dirs: &[PathBuf]) -> Result<Vec<Unit>, WorkError> {
    let mut seen = std::collections::BTreeSet::new();
    let mut units = Vec::new();
    for d in dirs {
        if !seen.insert(d.clone()) {
            continue;
        }
        units.push(Unit {
            path: d.clone(),
            is_subdir: false,
        });
        let rd = match std::fs::read_dir(d) {
            Ok(rd) => rd,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(WorkError::io("readdir", d.clone(), e)),
        };
        let mut subs: Vec<PathBuf> = rd
            .filter_map(Result::ok)
            .filter(|e| e.file_type().map(|t| t.is_dir()).unwrap_or(false))
            .filter(|e| is_subdir_name(e.file_name().as_encoded_bytes()))
            .map(|e| e.path())
            .collect();
        subs.sort();
        units.extend(subs.into_iter().map(|path| Unit {
            path,
            is_subdir: true,
        }));
    }
    Ok(units)
}

fn is_subdir_name(n: &[u8]) -> bool {
    n.len() >= 2
        && n.iter()
            .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(c))
}

/// One worker's results.
#[derive(Default)]
pub struct TreeOutcome {
    pub files: u64,
    pub hist: LatencyHistogram,
    pub error: Option<WorkError>,
    /// Calls that got ENOMEM and were made again (see [`super::calls::retrying`]).
    pub enomem_retries: u64,
}

/// Shared state of a tree phase.
pub struct TreeCtx<'a> {
    pub op: TreeOp,
    pub units: &'a [Unit],
    pub next: &'a AtomicUsize,
    pub name_len: u32,
    pub rand_len: u32,
    pub stop: &'a AtomicBool,
    pub abort: &'a AtomicBool,
    pub progress: &'a Progress,
}

/// Unlinks at most this many names between two reads of a directory, so
/// memory stays bounded however large the directory is.
const CHUNK: usize = 4096;

/// Runs one worker of a tree phase until no unit is left.
pub fn work(ctx: &TreeCtx, thread: usize) -> TreeOutcome {
    let mut out = TreeOutcome::default();
    loop {
        if ctx.stop.load(Ordering::Relaxed) || ctx.abort.load(Ordering::Relaxed) {
            break;
        }
        let i = ctx.next.fetch_add(1, Ordering::Relaxed);
        let Some(unit) = ctx.units.get(i) else { break };
        if let Err(e) = process(ctx, thread, unit, &mut out) {
            out.error = Some(e);
            ctx.abort.store(true, Ordering::Relaxed);
            break;
        }
    }
    out
}

fn process(
    ctx: &TreeCtx,
    thread: usize,
    unit: &Unit,
    out: &mut TreeOutcome,
) -> Result<(), WorkError> {
    let fd: OwnedFd = match open_dir(rustix::fs::CWD, &unit.path) {
        Ok(fd) => fd,
        Err(Errno::NOENT) => return Ok(()),
        Err(e) => return Err(WorkError::new("open", unit.path.clone(), e)),
    };
    let mut dir =
        Dir::read_from(&fd).map_err(|e| WorkError::new("readdir", unit.path.clone(), e))?;
    let mut batch: Vec<std::ffi::CString> = Vec::new();
    loop {
        let mut exhausted = true;
        while let Some(entry) = dir.read() {
            let entry = entry.map_err(|e| WorkError::new("readdir", unit.path.clone(), e))?;
            let name = entry.file_name();
            if entry.file_type() == FileType::Directory
                || !NameGen::matches(ctx.name_len, ctx.rand_len, name.to_bytes())
            {
                continue;
            }
            match ctx.op {
                TreeOp::Stat => {
                    let (r, took) = retrying(&mut out.enomem_retries, || {
                        rustix::fs::statat(fd.as_fd(), name, AtFlags::SYMLINK_NOFOLLOW)
                    });
                    match r {
                        Ok(_) => {}
                        Err(Errno::NOENT) => continue,
                        Err(e) => {
                            return Err(WorkError::new(
                                "stat",
                                unit.path.join(name.to_string_lossy().as_ref()),
                                e,
                            ))
                        }
                    }
                    out.hist.record(took);
                    out.files += 1;
                    ctx.progress.set(thread, out.files);
                    if ctx.stop.load(Ordering::Relaxed) {
                        return Ok(());
                    }
                }
                TreeOp::Unlink => {
                    batch.push(name.to_owned());
                    if batch.len() == CHUNK {
                        exhausted = false;
                        break;
                    }
                }
            }
        }
        for name in batch.drain(..) {
            if ctx.stop.load(Ordering::Relaxed) {
                return Ok(());
            }
            let (r, took) = retrying(&mut out.enomem_retries, || {
                rustix::fs::unlinkat(fd.as_fd(), name.as_c_str(), AtFlags::empty())
            });
            match r {
                Ok(()) => {}
                Err(Errno::NOENT) => continue,
                Err(e) => {
                    return Err(WorkError::new(
                        "unlink",
                        unit.path.join(name.to_string_lossy().as_ref()),
                        e,
                    ))
                }
            }
            out.hist.record(took);
            out.files += 1;
            ctx.progress.set(thread, out.files);
        }
        if exhausted {
            return Ok(());
        }
        dir.rewind();
    }
}

/// After an unlink phase: removes the fs_mark subdirectories that are now
/// empty (deepest first); a subdirectory still holding other files stays.
pub fn remove_empty_subdirs(units: &[Unit]) -> Result<u64, WorkError> {
    let mut removed = 0;
    for u in units.iter().rev().filter(|u| u.is_subdir) {
        match std::fs::remove_dir(&u.path) {
            Ok(()) => removed += 1,
            Err(e) if e.raw_os_error() == Some(Errno::NOTEMPTY.raw_os_error()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(WorkError::io("rmdir", u.path.clone(), e)),
        }
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_that_gets_enomem_is_made_again_and_counted_and_other_errors_are_not() {
        let mut retries = 0;
        let mut left = 3;
        let (r, _) = retrying(&mut retries, || {
            if left > 0 {
                left -= 1;
                Err(Errno::NOMEM)
            } else {
                Ok(7)
            }
        });
        assert_eq!((r, retries), (Ok(7), 3));
        let mut calls = 0;
        let (r, _) = retrying(&mut retries, || {
            calls += 1;
            Err::<(), _>(Errno::IO)
        });
        assert_eq!((r, retries, calls), (Err(Errno::IO), 3, 1));
    }
}
