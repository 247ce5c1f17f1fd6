//! fs_mark's command line, shared by `fslab fsmark` and experiment files
//! (whose `args` use the same syntax).

use std::path::PathBuf;

use clap::Args;
use serde::{Deserialize, Serialize};

use super::options::RawOptions;

/// fs_mark's options, with fs_mark's letters and meanings.
#[derive(Debug, Clone, Args, Serialize, Deserialize)]
#[command(after_help = SYNC_HELP)]
pub struct FsMarkArgs {
    /// Directory to create files in; repeat for more (one thread group each). Created if only its parent exists
    #[arg(short = 'd', long = "dir", value_name = "DIR", required = true)]
    pub dirs: Vec<PathBuf>,
    /// Total threads, a multiple of the number of -d directories [default: one per directory]
    #[arg(
        short = 't',
        long = "threads",
        value_name = "THREADS",
        allow_negative_numbers = true
    )]
    pub threads: Option<i64>,
    /// Files per thread per loop [default: 1000]
    #[arg(
        short = 'n',
        long = "files",
        value_name = "FILES",
        allow_negative_numbers = true
    )]
    pub files: Option<i64>,
    /// Size of each file in bytes (K, M, G suffixes allowed) [default: 51200]
    #[arg(
        short = 's',
        long = "size",
        value_name = "SIZE",
        allow_hyphen_values = true
    )]
    pub size: Option<String>,
    /// Bytes per write() call, at most 1M [default: 16384]
    #[arg(
        short = 'w',
        long = "io-size",
        value_name = "IO_SIZE",
        allow_hyphen_values = true
    )]
    pub io_size: Option<String>,
    /// Sync method, 0 to 6 (see below) [default: 1]
    #[arg(
        short = 'S',
        long = "sync",
        value_name = "METHOD",
        allow_negative_numbers = true
    )]
    pub sync: Option<i64>,
    /// Spread files over this many subdirectories of each -d directory
    #[arg(
        short = 'D',
        long = "subdirs",
        value_name = "SUBDIRS",
        allow_negative_numbers = true
    )]
    pub subdirs: Option<i64>,
    /// With -D: put this many files in a subdirectory before moving to the next (round robin); without -N, move every 180 seconds
    #[arg(
        short = 'N',
        long = "per-subdir",
        value_name = "PER_SUBDIR",
        allow_negative_numbers = true
    )]
    pub per_subdir: Option<i64>,
    /// With -D and no -N: seconds per subdirectory (fs_mark fixes this at 180)
    #[arg(
        long = "subdir-secs",
        value_name = "SECS",
        allow_negative_numbers = true
    )]
    pub subdir_secs: Option<i64>,
    /// Length of each file name [default: 40]
    #[arg(
        short = 'p',
        long = "name-len",
        value_name = "NAME_LEN",
        allow_negative_numbers = true
    )]
    pub name_len: Option<i64>,
    /// Random characters at the end of each name [default: 24]
    #[arg(
        short = 'r',
        long = "rand-len",
        value_name = "RAND_LEN",
        allow_negative_numbers = true
    )]
    pub rand_len: Option<i64>,
    /// Number of loops; keeps the files (implies -k)
    #[arg(
        short = 'L',
        long = "loops",
        value_name = "LOOPS",
        allow_negative_numbers = true
    )]
    pub loops: Option<i64>,
    /// Loop until the filesystem is full (implies -k)
    #[arg(short = 'F', long = "fill")]
    pub fill: bool,
    /// Keep the files after each loop
    #[arg(short = 'k', long = "keep")]
    pub keep: bool,
    /// Log file, appended to as fs_mark does [default: fs_log.txt]
    #[arg(short = 'l', long = "log-file", value_name = "LOGFILE")]
    pub log_file: Option<PathBuf>,
    /// Print min/avg/max microseconds of each system call per loop
    #[arg(short = 'v', long = "verbose")]
    pub verbose: bool,
    /// Phases to run, in order: create (fs_mark's loops), stat (N-way find+stat of all files), unlink (N-way unlink); stat and unlink imply -k
    #[arg(long, value_name = "LIST", default_value = "create")]
    pub phases: String,
    /// Stonewall (fslab's: fs_mark 3.3 has no such option): in each loop every thread stops at its next file after SECONDS, the MPI ranks agree on the most files any thread made, and every thread creates up to that count (wear-out); the loop's row counts them, and both rates are reported. One process: each loop ends at SECONDS
    #[arg(
        long = "stonewall",
        value_name = "SECONDS",
        allow_negative_numbers = true
    )]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stonewall: Option<i64>,
    /// The same file names every run (fslab's: fs_mark 3.3 has no such option): the random characters drawn from SEED (and the MPI rank), the time part SEED in hex instead of the clock's seconds; with the filesystem's own hash seed fixed (ext4: mkfs -E hash_seed=UUID) two runs lay out their directories alike
    #[arg(long = "seed", value_name = "SEED")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    #[command(flatten)]
    pub common: crate::common::CommonArgs,
    /// Print help
    #[arg(short = 'h', long = "help", action = clap::ArgAction::Help)]
    pub help: Option<bool>,
}

pub(crate) const SYNC_HELP: &str = "\
Sync methods (-S):
  0  no sync() or fsync()
  1  fsync() each file before close
  2  sync() after the loop, then fsync() of each thread's first file
  3  after the loop, reopen and fsync() every file in reverse order
  4  sync(), then as 3
  5  after the loop, reopen and fsync() every file in creation order
  6  sync(), then as 5

Output: fs_mark's header and table (FSUse% Count Size Files/sec App Overhead), one row per loop;
every run is also recorded in the results store (see `fslab results`).

Examples:
  fslab fsmark -d /mnt/test -D 10000 -S0 -n 100000 -s 0 -L 63 -t 8   # seed 000, 8 threads
  fslab fsmark -d /mnt/test -n 10000 -s 4096 -S1 --phases create,stat,unlink
  mpirun -np 4 fslab fsmark -d /mnt/test -n 1000000 -s 0 -S0 --stonewall 30   # each loop: 30 s, then wear-out";

impl FsMarkArgs {
    /// The options to validate.
    pub fn raw(&self) -> RawOptions {
        RawOptions {
            dirs: self.dirs.clone(),
            threads: self.threads,
            files: self.files,
            file_size: self.size.clone(),
            io_size: self.io_size.clone(),
            sync: self.sync,
            subdirs: self.subdirs,
            per_subdir: self.per_subdir,
            subdir_secs: self.subdir_secs,
            name_len: self.name_len,
            rand_len: self.rand_len,
            loops: self.loops,
            keep: self.keep,
            fill: self.fill,
            log_file: self.log_file.clone(),
            verbose: self.verbose,
            phases: Some(self.phases.clone()),
            stonewall: self.stonewall,
            seed: self.seed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// fsmark's arguments as an experiment file gives them.
    fn parse(args: &[String]) -> crate::Result<FsMarkArgs> {
        let job = crate::WorkloadRef::of("fsmark")
            .expect("registered")
            .parse(args)?;
        Ok(serde_json::from_value(job.to_json()["options"].clone()).expect("fsmark's options"))
    }

    #[test]
    fn experiment_args_parse_like_the_command_line() {
        let a = parse(&[
            "-S0".into(),
            "-n".into(),
            "5".into(),
            "-d".into(),
            "/tmp".into(),
        ])
        .unwrap();
        assert_eq!((a.sync, a.files), (Some(0), Some(5)));
        assert!(parse(&["-Q".into()])
            .unwrap_err()
            .to_string()
            .contains("-Q"));
    }

    #[test]
    fn a_later_option_overrides_an_earlier_one_and_dirs_accumulate() {
        let v: Vec<String> = ["-d", "/a", "-s", "1", "-d", "/b", "-s", "2"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let a = parse(&v).unwrap();
        assert_eq!(a.size.as_deref(), Some("2"));
        assert_eq!(a.dirs.len(), 2);
    }
}
