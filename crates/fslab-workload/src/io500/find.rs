//! IO500's find phase: pfind (github.com/VI4IO/pfind) over the datadir's
//! two trees with `-newer RESULTDIR/timestampfile -size 3901c -name *01*`,
//! its count of files looked at and of matches, on every rank.
//!
//! pfind's rules, kept: a directory entry that is not a directory is a file
//! looked at (`total_files`); a name that does not match is not stat'ed; a
//! matching name is lstat'ed and found when its ctime (seconds) is not
//! before the timestamp file's and its size is 3901 bytes. Its rate is the
//! files looked at over the find's time.
//!
//! The ranks' split (pfind steals work between ranks, a directory at a
//! time): a large directory ([`BIG_DIR`] bytes or more, as `fstat` gives
//! its size) is read by one rank alone, with everything under it, each
//! going to the rank with the fewest directory bytes so far (every rank
//! meets the large directories in the same order, so they agree without a
//! message); the small directories above them are read by every rank,
//! which takes the files whose name hashes to it. Before, every rank read
//! every directory: at 2 ranks each read IO500's whole trees, and the find
//! ran at 0.93x pfind's rate (bench originals, docs/speed.md).
//!
//! Per entry nothing is allocated: directories are read with `getdents64`
//! into one buffer ([`rustix::fs::RawDir`]), names are looked at where they
//! lie in it, and a matching name is `lstat`ed relative to its directory's
//! descriptor (`newfstatat(dirfd, NAME, AT_SYMLINK_NOFOLLOW)`, the call
//! pfind's `lstat(PATH)` makes, without walking the path again). Before,
//! std's `read_dir` made a `CString` and a `PathBuf` per entry and hashed
//! the whole path.

use std::ffi::CStr;
use std::mem::MaybeUninit;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use rustix::fs::{AtFlags, FileType, Mode, OFlags, RawDir, CWD};
use serde::{Deserialize, Serialize};

use crate::measure::Progress;

/// What a file must be to be found.
#[derive(Debug, Clone, Copy)]
pub struct Criteria {
    /// `-newer FILE`: the file's ctime, seconds (pfind compares st_ctime).
    pub ctime_min: i64,
    /// `-size 3901c`.
    pub size: u64,
}

/// One rank's counts (pfind's pfind_find_results_t, in part).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Count {
    /// Files (not directories) looked at: pfind's total_files.
    pub total_files: u64,
    /// Files that met every criterion: pfind's found_files.
    pub found: u64,
    /// Directories or files that could not be read or stat'ed.
    pub errors: u64,
}

impl Count {
    pub fn add(&mut self, o: &Count) {
        self.total_files += o.total_files;
        self.found += o.found;
        self.errors += o.errors;
    }
}

/// IO500's `-name "*01*"`, which pfind turns into the regex `.*01.*`,
/// unanchored: a name with "01" in it.
pub fn name_matches(name: &[u8]) -> bool {
    name.windows(2).any(|w| w == b"01")
}

/// Whether the file named `name` is this rank's (FNV-1a of its name,
/// modulo the ranks).
#[inline(always)]
pub fn owns(name: &[u8], rank: usize, size: usize) -> bool {
    if size <= 1 {
        return true;
    }
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    (h % size as u64) as usize == rank
}

/// The timestamp file's ctime, seconds.
pub fn ctime_of(path: &Path) -> std::io::Result<i64> {
    use std::os::unix::fs::MetadataExt;
    std::fs::symlink_metadata(path).map(|m| m.ctime())
}

/// The buffer `getdents64` fills (glibc's readdir uses 32 KiB).
const DIRENT_BUFFER: usize = 64 << 10;

/// A directory of this size (`st_size`: tmpfs counts 20 bytes an entry,
/// ext4 its blocks) or more is one rank's.
pub const BIG_DIR: i64 = 64 << 10;

/// Walks `roots` as rank `rank` of `size`, counting into `progress`
/// (thread 0) as it goes; stops early when `stop` is set.
pub fn walk(
    roots: &[PathBuf],
    crit: &Criteria,
    rank: usize,
    size: usize,
    stop: &AtomicBool,
    progress: &Progress,
) -> Count {
    let mut c = Count::default();
    // (directory, read whole by this rank: under a large directory it owns)
    let mut dirs: Vec<(PathBuf, bool)> = roots.iter().map(|r| (r.clone(), size <= 1)).collect();
    // Each rank's large-directory bytes so far.
    let mut load = vec![0i64; size.max(1)];
    let mut buf: Vec<MaybeUninit<u8>> = vec![MaybeUninit::uninit(); DIRENT_BUFFER];
    while let Some((dir, mut whole)) = dirs.pop() {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let Ok(fd) = rustix::fs::openat(
            CWD,
            &dir,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        ) else {
            c.errors += 1;
            continue;
        };
        if !whole {
            let bytes = rustix::fs::fstat(&fd).map_or(0, |st| st.st_size);
            if bytes >= BIG_DIR {
                let owner = (0..load.len()).min_by_key(|&r| load[r]).unwrap_or(0);
                load[owner] += bytes;
                if owner != rank {
                    continue;
                }
                whole = true;
            }
        }
        let mut entries = RawDir::new(&fd, &mut buf);
        while let Some(e) = entries.next() {
            let Ok(e) = e else {
                c.errors += 1;
                break;
            };
            let name = e.file_name();
            let bytes = name.to_bytes();
            if bytes == b"." || bytes == b".." {
                continue;
            }
            let kind = match e.file_type() {
                FileType::Unknown => match rustix::fs::statat(&fd, name, AtFlags::SYMLINK_NOFOLLOW)
                {
                    Ok(st) => FileType::from_raw_mode(st.st_mode),
                    Err(_) => {
                        c.errors += 1;
                        continue;
                    }
                },
                k => k,
            };
            if kind == FileType::Directory {
                dirs.push((dir.join(std::ffi::OsStr::from_bytes(bytes)), whole));
                continue;
            }
            if !whole && !owns(bytes, rank, size) {
                continue;
            }
            c.total_files += 1;
            if name_matches(bytes) {
                check(&fd, name, crit, &mut c);
            }
            progress.set(0, c.total_files);
        }
    }
    c
}

/// pfind's check of a file whose name matched: `lstat`, then ctime and size.
#[inline(always)]
fn check(dir: &rustix::fd::OwnedFd, name: &CStr, crit: &Criteria, c: &mut Count) {
    match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) if st.st_ctime >= crit.ctime_min && st.st_size as u64 == crit.size => c.found += 1,
        Ok(_) => {}
        Err(_) => c.errors += 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_match_as_pfinds_unanchored_regex() {
        assert!(name_matches(b"file.mdtest.0.101"));
        assert!(name_matches(b"file.mdtest.01.7"));
        assert!(!name_matches(b"file.mdtest.0.1"));
        assert!(!name_matches(b"file.mdtest.10.10"));
    }

    #[test]
    fn every_name_is_one_ranks_and_the_ranks_share_them() {
        let mut each = [0; 3];
        for i in 0..300 {
            let p = format!("file.mdtest.0.{i}");
            let owners: Vec<usize> = (0..3).filter(|&r| owns(p.as_bytes(), r, 3)).collect();
            assert_eq!(owners.len(), 1);
            each[owners[0]] += 1;
            assert!(owns(p.as_bytes(), 0, 1));
        }
        assert!(each.iter().all(|&n| n > 60), "{each:?}");
    }

    #[test]
    fn the_walk_counts_files_and_finds_new_matching_ones_of_the_size() {
        let d = std::env::temp_dir().join(format!("fslab-find-{}", std::process::id()));
        let sub = d.join("a/b");
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::write(d.join("x01"), vec![0u8; 3901]).unwrap();
        std::fs::write(sub.join("y01"), vec![0u8; 3901]).unwrap();
        std::fs::write(sub.join("z01"), vec![0u8; 10]).unwrap();
        std::fs::write(sub.join("plain"), vec![0u8; 3901]).unwrap();
        let stop = AtomicBool::new(false);
        let crit = |ctime_min| Criteria {
            ctime_min,
            size: 3901,
        };
        let p = Progress::new(1);
        let all = walk(std::slice::from_ref(&d), &crit(0), 0, 1, &stop, &p);
        assert_eq!((all.total_files, all.found, all.errors), (4, 2, 0));
        // Nothing is newer than the far future.
        let none = walk(std::slice::from_ref(&d), &crit(i64::MAX), 0, 1, &stop, &p);
        assert_eq!((none.total_files, none.found), (4, 0));
        // Two ranks share the files out.
        let mut two = Count::default();
        for r in 0..2 {
            two.add(&walk(std::slice::from_ref(&d), &crit(0), r, 2, &stop, &p));
        }
        assert_eq!(two, all);
        std::fs::remove_dir_all(&d).unwrap();
    }

    /// Makes `dirs` (path, files) under `d`, each large; returns them.
    fn large_dirs(d: &Path, dirs: &[(&str, u64)]) {
        for (dir, files) in dirs {
            let p = d.join(dir);
            std::fs::create_dir_all(&p).unwrap();
            for i in 0..*files {
                std::fs::write(p.join(format!("file.mdtest.{i}")), b"").unwrap();
            }
            use std::os::unix::fs::MetadataExt;
            let bytes = std::fs::metadata(&p).unwrap().size() as i64;
            assert!(bytes >= BIG_DIR, "{dir} is not large here");
        }
    }

    /// Each large directory is read by one rank, with what is under it:
    /// two of 3N and N files split 3N / N (the name hash would have given
    /// each rank about 2N), and IO500's shape at 2 ranks (two of N under
    /// one tree, one of 2N under another) splits 2N / 2N; the counts add
    /// up to one rank's and small directories' files are still shared out.
    #[test]
    fn a_large_directory_is_one_ranks_and_the_ranks_balance_them() {
        let n = 4000;
        let stop = AtomicBool::new(false);
        let crit = Criteria {
            ctime_min: 0,
            size: 3901,
        };
        let p = Progress::new(1);
        for (case, dirs, want) in [
            (
                "uneven",
                vec![("a/t/tree.0", n), ("b/t/tree", 3 * n)],
                [n, 3 * n],
            ),
            (
                "io500",
                vec![("a/t/tree.0", n), ("a/t/tree.1", n), ("b/t/tree", 2 * n)],
                [2 * n, 2 * n],
            ),
        ] {
            let d = std::env::temp_dir().join(format!("fslab-find-{case}-{}", std::process::id()));
            large_dirs(&d, &dirs);
            std::fs::write(d.join("a/t/x01"), vec![0u8; 3901]).unwrap();
            std::fs::write(d.join("a/t/y01"), vec![0u8; 3901]).unwrap();
            let roots = [d.join("a"), d.join("b")];
            let all = walk(&roots, &crit, 0, 1, &stop, &p);
            // The large directories' files are empty: only the two are found.
            assert_eq!(
                (all.total_files, all.found),
                (want[0] + want[1] + 2, 2),
                "{case}"
            );
            let ranks: Vec<Count> = (0..2)
                .map(|r| walk(&roots, &crit, r, 2, &stop, &p))
                .collect();
            let mut two = Count::default();
            ranks.iter().for_each(|c| two.add(c));
            assert_eq!(two, all, "{case}");
            // Each rank: its large directories' files and its share of the two.
            let mut got: Vec<u64> = ranks.iter().map(|c| c.total_files).collect();
            got.sort();
            for (g, w) in got.iter().zip(want) {
                assert!((w..=w + 2).contains(g), "{case}: {ranks:?}");
            }
            std::fs::remove_dir_all(&d).unwrap();
        }
    }
}
