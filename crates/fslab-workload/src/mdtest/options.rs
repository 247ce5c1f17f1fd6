//! mdtest's options, letter for letter (hpc/ior's src/mdtest.c), and the
//! numbers mdtest derives from them: the tree's size, the items per
//! directory, which phases and item kinds run.

use std::path::PathBuf;

use serde::Serialize;

use crate::common::CommonArgs;

/// `fslab mdtest [options]`: hpc/ior's mdtest, one process per MPI rank.
#[derive(Debug, Clone, clap::Args, Serialize, serde::Deserialize)]
pub struct MdtestArgs {
    /// Every process will create/stat/read/remove N directories and files
    #[arg(short = 'n', long = "items", value_name = "N")]
    pub items: Option<u64>,
    /// Items per directory in the tree (instead of -n)
    #[arg(short = 'I', long = "items-per-dir", value_name = "N")]
    pub items_per_dir: Option<u64>,
    /// A unique working directory (its own tree) for each task
    #[arg(short = 'u', long = "unique-dir")]
    pub unique_dir: bool,
    /// Files and directories only at the leaf level of the tree
    #[arg(short = 'L', long = "leaf-only")]
    pub leaf_only: bool,
    /// Files only (no directories)
    #[arg(short = 'F', long = "files-only")]
    pub files_only: bool,
    /// Directories only (no files)
    #[arg(short = 'D', long = "dirs-only")]
    pub dirs_only: bool,
    /// Stride between tasks for each phase: task R stats, reads and removes the items of task R+N, R+2N, R+3N (0: its own)
    #[arg(short = 'N', long = "stride", value_name = "N", default_value_t = 0)]
    pub nstride: u64,
    /// Directory the test runs in (made if missing)
    #[arg(short = 'd', long = "dir", value_name = "DIR", default_value = "./out")]
    pub dir: PathBuf,
    /// Depth of the directory tree
    #[arg(short = 'z', long = "depth", value_name = "N", default_value_t = 0)]
    pub depth: u32,
    /// Branching factor of the directory tree
    #[arg(short = 'b', long = "branch", value_name = "N", default_value_t = 1)]
    pub branch: u64,
    /// Bytes to write to each file after it is created (a size: 4k = 4096)
    #[arg(
        short = 'w',
        long = "write-bytes",
        value_name = "BYTES",
        default_value_t = 0,
        value_parser = fslab_model::units::bytes_arg
    )]
    pub write_bytes: u64,
    /// Bytes to read from each file (a size: 4k = 4096)
    #[arg(
        short = 'e',
        long = "read-bytes",
        value_name = "BYTES",
        default_value_t = 0,
        value_parser = fslab_model::units::bytes_arg
    )]
    pub read_bytes: u64,
    /// Time the unique working directory overhead (with -u: phases are timed from before the task's directory is named)
    #[arg(short = 't', long = "time-unique-dir")]
    pub time_unique_dir: bool,
    /// Only create files/directories
    #[arg(short = 'C', long = "create")]
    pub create: bool,
    /// Only stat files/directories
    #[arg(short = 'T', long = "stat")]
    pub stat: bool,
    /// Only read files
    #[arg(short = 'E', long = "read")]
    pub read: bool,
    /// Only remove files/directories (left by a previous run with -C)
    #[arg(short = 'r', long = "remove")]
    pub remove: bool,
    /// The directory rename phase
    #[arg(short = 'U', long = "rename")]
    pub rename: bool,
    /// fsync each file after writing it
    #[arg(short = 'y', long = "sync-file")]
    pub sync_file: bool,
    /// sync(2) after each phase, inside its time
    #[arg(short = 'Y', long = "sync")]
    pub call_sync: bool,
    /// Stonewall: after SECONDS every task stops creating, the tasks agree on the most items any task made, and every task creates up to that count (wear-out)
    #[arg(
        short = 'W',
        long = "stonewall",
        value_name = "SECONDS",
        default_value_t = 0
    )]
    pub stonewall: u64,
    /// Stonewall status file: the create phase writes the agreed count to FILE; a later run without -C reads it and stats, reads and removes that many items
    #[arg(short = 'x', long = "stonewall-file", value_name = "FILE")]
    pub stonewall_file: Option<PathBuf>,
    /// Iterations of the whole test
    #[arg(
        short = 'i',
        long = "iterations",
        value_name = "N",
        default_value_t = 1
    )]
    pub iterations: u64,
    /// More output (each -v one level more)
    #[arg(short = 'v', long = "verbose", action = clap::ArgAction::Count)]
    pub verbose: u8,
    /// Print the SUMMARY table of rates and the one of times
    #[arg(short = 'P', long = "rate-and-time")]
    pub rate_and_time: bool,
    /// Write each rank's rates and times to FILE as IO500's CSV (mdtest's --saveRankPerformanceDetails)
    #[arg(long = "saveRankPerformanceDetails", value_name = "FILE")]
    pub rank_details: Option<PathBuf>,
    #[command(flatten)]
    pub common: CommonArgs,
}

/// The checked options and what mdtest derives from them.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Options {
    /// Items each task works on (mdtest's o.items).
    pub items: u64,
    pub items_per_dir: u64,
    /// Directories in one tree.
    pub num_dirs: u64,
    pub unique_dir: bool,
    pub leaf_only: bool,
    pub files: bool,
    pub dirs: bool,
    pub nstride: u64,
    pub dir: PathBuf,
    pub depth: u32,
    pub branch: u64,
    pub write_bytes: u64,
    pub read_bytes: u64,
    pub time_unique_dir: bool,
    pub create: bool,
    pub stat: bool,
    pub read: bool,
    pub remove: bool,
    pub rename: bool,
    pub sync_file: bool,
    pub call_sync: bool,
    pub stonewall_s: u64,
    pub stonewall_file: Option<PathBuf>,
    pub iterations: u64,
    pub verbose: u8,
    pub rate_and_time: bool,
    pub rank_details: Option<PathBuf>,
}

/// b^z, or None past u64.
fn power(b: u64, z: u32) -> Option<u64> {
    b.checked_pow(z)
}

impl MdtestArgs {
    /// mdtest's checks (md_validate_tests) and derivations, each refusal
    /// one line naming the bad value.
    pub fn validate(&self) -> crate::Result<Options> {
        if self.iterations == 0 {
            return Err(crate::opt("-i", 0, "must be at least 1"));
        }
        self.one_dir()?;
        if self.depth > 0 && self.branch == 0 {
            return Err(crate::Error::Options(format!(
                "-b 0 with -z {}: the branching factor must be at least 1",
                self.depth
            )));
        }
        if self.stonewall > 0 && self.branch > 1 {
            return Err(crate::Error::Options(format!("-W {} with -b {}: the stonewall works only with a branching factor of 1 (as mdtest's)",
                self.stonewall, self.branch)));
        }
        let num_dirs = match (self.depth, self.branch) {
            (0, _) => Some(1),
            (z, 1) => Some(u64::from(z) + 1),
            (z, b) => power(b, z + 1).map(|p| (p - 1) / (b - 1)),
        }
        .ok_or_else(|| {
            crate::Error::Options(format!(
                "-b {} -z {}: the tree would have more than 2^64 directories",
                self.branch, self.depth
            ))
        })?;
        let (items, items_per_dir) = self.spread(num_dirs)?;
        let none = !(self.create || self.stat || self.read || self.remove || self.rename);
        let (create, stat, read, remove, rename) = if none {
            (true, true, true, true, true)
        } else {
            (self.create, self.stat, self.read, self.remove, self.rename)
        };
        let both = !self.files_only && !self.dirs_only;
        if create && read && self.read_bytes > self.write_bytes {
            return Err(crate::Error::Options(format!("-e {} with -w {}: when writing and reading files, read bytes must not exceed written bytes",
                self.read_bytes, self.write_bytes)));
        }
        Ok(Options {
            items,
            items_per_dir,
            num_dirs,
            unique_dir: self.unique_dir,
            leaf_only: self.leaf_only,
            files: both || self.files_only,
            dirs: both || self.dirs_only,
            nstride: self.nstride,
            dir: self.dir.clone(),
            depth: self.depth,
            branch: self.branch,
            write_bytes: self.write_bytes,
            read_bytes: self.read_bytes,
            time_unique_dir: self.time_unique_dir,
            create,
            stat,
            read,
            remove,
            rename,
            sync_file: self.sync_file,
            call_sync: self.call_sync,
            stonewall_s: self.stonewall,
            stonewall_file: self.stonewall_file.clone(),
            iterations: self.iterations,
            verbose: self.verbose,
            rate_and_time: self.rate_and_time,
            rank_details: self.rank_details.clone(),
        })
    }
}

impl MdtestArgs {
    /// Several -d directories (`DIR1@DIR2`): refused with mdtest's own
    /// words where mdtest refuses them (md_validate_tests: with -N, or
    /// without -u), else as not supported by fslab's mdtest.
    fn one_dir(&self) -> crate::Result<()> {
        let d = self.dir.to_string_lossy();
        if !d.contains('@') {
            return Ok(());
        }
        let count = d.split('@').filter(|p| !p.is_empty()).count();
        let why = if count > 1 && self.nstride > 0 {
            format!(
                " with -N {}: cannot have multiple directory paths with -N strides between neighbor tasks",
                self.nstride
            )
        } else if count > 1 && !self.unique_dir {
            ": shared directory mode is not compatible with multiple directory paths".to_string()
        } else {
            ": several directories (DIR1@DIR2) are not supported by fslab's mdtest: give one"
                .to_string()
        };
        Err(crate::Error::Options(format!("-d {d}{why}")))
    }

    /// mdtest's items per task and per directory from -n or -I.
    fn spread(&self, num_dirs: u64) -> crate::Result<(u64, u64)> {
        let leaves = power(self.branch, self.depth).unwrap_or(u64::MAX);
        let items = match (self.items, self.items_per_dir) {
            (_, Some(0)) => return Err(crate::opt("-I", 0, "must be at least 1")),
            (Some(0), _) => return Err(crate::opt("-n", 0, "must be at least 1")),
            (Some(n), Some(i)) => {
                // mdtest's md_validate_tests: with -u both are refused;
                // without, -n must be a multiple of -I (its directory
                // loops, which fslab's mdtest does not run).
                let why = if self.unique_dir {
                    "only specify the number of items or the number of items per directory"
                        .to_string()
                } else if n % i != 0 {
                    "items must be a multiple of items per directory".to_string()
                } else {
                    format!(
                        "mdtest would make {} directory loops of {i} items, which fslab's mdtest \
                         does not run: give -n or -I",
                        n / i
                    )
                };
                return Err(crate::Error::Options(format!(
                    "-n {n} with -I {i}{}: {why}",
                    if self.unique_dir { " and -u" } else { "" }
                )));
            }
            (None, None) => {
                return Err(crate::Error::Options(
                    "give -n N (items per task) or -I N (per directory)".into(),
                ))
            }
            (None, Some(i)) => {
                let dirs = if self.leaf_only { leaves } else { num_dirs };
                (i.saturating_mul(dirs), i)
            }
            (Some(n), None) => {
                let dirs = if self.leaf_only && self.branch > 1 {
                    leaves
                } else if self.leaf_only {
                    1
                } else {
                    num_dirs
                };
                let per = n / dirs;
                if per == 0 {
                    return Err(crate::opt(
                        "-n",
                        n,
                        format!("fewer items than the {dirs} directories that hold them"),
                    ));
                }
                (per * dirs, per)
            }
        };
        Ok(items)
    }
}

impl Options {
    /// The leaf directories' count (b^z).
    pub fn leaves(&self) -> u64 {
        power(self.branch, self.depth).unwrap_or(u64::MAX)
    }

    /// The first item number of the leaves with -L (mdtest adds it to every
    /// stat, read and rename item): the items of the directories above them.
    pub fn leaf_offset(&self) -> u64 {
        if self.leaf_only {
            self.items_per_dir * (self.num_dirs - self.leaves())
        } else {
            0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        a: MdtestArgs,
    }

    fn parse(args: &str) -> crate::Result<Options> {
        let argv = std::iter::once("mdtest").chain(args.split_whitespace());
        Cli::try_parse_from(argv).unwrap().a.validate()
    }

    fn refusal(args: &str) -> String {
        parse(args).unwrap_err().to_string()
    }

    #[test]
    fn items_spread_over_the_tree_as_mdtests() {
        let o = parse("-n 10").unwrap();
        assert_eq!((o.items, o.items_per_dir, o.num_dirs), (10, 10, 1));
        assert!(o.files && o.dirs && o.create && o.stat && o.read && o.remove && o.rename);
        // 1 + 2 + 4 directories, 7 items each: -n 50 keeps 49.
        let o = parse("-n 50 -z 2 -b 2").unwrap();
        assert_eq!((o.items, o.items_per_dir, o.num_dirs), (49, 7, 7));
        // Leaves only: 4 leaves of 12.
        let o = parse("-n 50 -z 2 -b 2 -L").unwrap();
        assert_eq!((o.items, o.items_per_dir, o.leaf_offset()), (48, 12, 36));
        let o = parse("-I 3 -z 2 -b 2").unwrap();
        assert_eq!((o.items, o.items_per_dir), (21, 3));
        let o = parse("-I 3 -z 1 -b 3 -L").unwrap();
        assert_eq!((o.items, o.items_per_dir), (9, 3));
        // A chain: -b 1 -z 2 is 3 directories.
        assert_eq!(parse("-n 9 -z 2").unwrap().num_dirs, 3);
    }

    #[test]
    fn phase_letters_choose_the_phases_and_kinds() {
        let o = parse("-n 5 -C -F").unwrap();
        assert!(o.create && !o.stat && !o.read && !o.remove && !o.rename);
        assert!(o.files && !o.dirs);
        let o = parse("-n 5 -T -E -r -D").unwrap();
        assert!(!o.create && o.stat && o.read && o.remove && !o.files && o.dirs);
    }

    #[test]
    fn bad_options_are_refused_in_one_line_naming_the_value() {
        for (args, want) in [
            ("-n 5 -i 0", "-i 0: must be at least 1"),
            ("-n 0", "-n 0: must be at least 1"),
            ("-I 0", "-I 0: must be at least 1"),
            (
                "-n 5 -I 5 -u",
                "-n 5 with -I 5 and -u: only specify the number of items or the number of items per directory",
            ),
            (
                "-n 10 -I 3",
                "-n 10 with -I 3: items must be a multiple of items per directory",
            ),
            ("-n 10 -I 5", "-n 10 with -I 5: mdtest would make 2 directory loops"),
            ("-F", "give -n N"),
            ("-n 5 -z 2 -b 0", "-b 0 with -z 2"),
            ("-n 5 -W 3 -b 2 -z 1", "-W 3 with -b 2"),
            ("-n 5 -w 10 -e 20", "-e 20 with -w 10"),
            ("-n 2 -z 2 -b 2", "-n 2: fewer items than the 7 directories"),
            (
                "-n 5 -d a@b",
                "-d a@b: shared directory mode is not compatible with multiple directory paths",
            ),
            (
                "-n 5 -u -N 1 -d a@b",
                "-d a@b with -N 1: cannot have multiple directory paths with -N strides between neighbor tasks",
            ),
            ("-n 5 -u -d a@b", "-d a@b: several directories (DIR1@DIR2) are not supported"),
        ] {
            let e = refusal(args);
            assert!(e.starts_with(want), "{args}: {e}");
            assert!(!e.contains('\n'), "{args}: {e}");
        }
        assert!(parse("-n 5 -W 3 -C -x /tmp/sw").is_ok());
        assert!(parse("-n 5 -W 3").is_ok());
    }
}
