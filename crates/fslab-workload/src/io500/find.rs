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
//! The ranks' split (pfind steals work between ranks): every rank reads
//! every directory and takes the entries whose path hashes to it, so the
//! files' checks and stats are shared out; the directory reads are not.

use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

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

/// Whether `path` is this rank's (FNV-1a of its bytes, modulo the ranks).
pub fn owns(path: &Path, rank: usize, size: usize) -> bool {
    if size <= 1 {
        return true;
    }
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in path.as_os_str().as_bytes() {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    (h % size as u64) as usize == rank
}

/// The timestamp file's ctime, seconds.
pub fn ctime_of(path: &Path) -> std::io::Result<i64> {
    std::fs::symlink_metadata(path).map(|m| m.ctime())
}

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
    let mut dirs: Vec<PathBuf> = roots.to_vec();
    while let Some(dir) = dirs.pop() {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let Ok(rd) = std::fs::read_dir(&dir) else {
            c.errors += 1;
            continue;
        };
        for e in rd {
            let Ok(e) = e else {
                c.errors += 1;
                break;
            };
            let path = e.path();
            // readdir's type when the filesystem gives it, else a stat.
            let is_dir = match e.file_type() {
                Ok(t) => t.is_dir(),
                Err(_) => {
                    c.errors += 1;
                    continue;
                }
            };
            if is_dir {
                dirs.push(path);
                continue;
            }
            if !owns(&path, rank, size) {
                continue;
            }
            c.total_files += 1;
            if name_matches(e.file_name().as_bytes()) {
                match std::fs::symlink_metadata(&path) {
                    Ok(m) if m.ctime() >= crit.ctime_min && m.size() == crit.size => c.found += 1,
                    Ok(_) => {}
                    Err(_) => c.errors += 1,
                }
            }
            progress.set(0, c.total_files);
        }
    }
    c
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
    fn every_path_is_one_ranks() {
        for i in 0..200 {
            let p = PathBuf::from(format!("/d/file.mdtest.0.{i}"));
            let owners = (0..3).filter(|&r| owns(&p, r, 3)).count();
            assert_eq!(owners, 1);
            assert!(owns(&p, 0, 1));
        }
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
}
