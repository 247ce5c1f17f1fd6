//! fs_mark's options, checked before anything runs.

use std::path::PathBuf;

use serde::Serialize;

/// fslab's limit on worker threads (fs_mark 3.3 allows 64).
pub const MAX_THREADS: u32 = 256;
/// Largest write size per call, as in fs_mark.
pub const MAX_IO_SIZE: u64 = 1024 * 1024;
/// Linux's limit on a file name.
pub const MAX_NAME_LEN: u32 = 255;

/// The seven sync methods of `-S`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum SyncMethod {
    /// 0: no sync() or fsync().
    None,
    /// 1: fsync() each file before close (fs_mark's default).
    FsyncBeforeClose,
    /// 2: sync() after the loop, then fsync() of the thread's first file.
    SyncThenFsyncFirst,
    /// 3: reopen and fsync() every file in reverse order after the loop.
    PostReverse,
    /// 4: sync(), then method 3.
    SyncPostReverse,
    /// 5: reopen and fsync() every file in creation order after the loop.
    Post,
    /// 6: sync(), then method 5.
    SyncPost,
}

impl SyncMethod {
    pub fn from_number(n: i64) -> Option<SyncMethod> {
        Some(match n {
            0 => SyncMethod::None,
            1 => SyncMethod::FsyncBeforeClose,
            2 => SyncMethod::SyncThenFsyncFirst,
            3 => SyncMethod::PostReverse,
            4 => SyncMethod::SyncPostReverse,
            5 => SyncMethod::Post,
            6 => SyncMethod::SyncPost,
            _ => return None,
        })
    }

    pub fn number(self) -> u8 {
        self as u8
    }

    pub fn fsync_before_close(self) -> bool {
        self == SyncMethod::FsyncBeforeClose
    }

    pub fn sync_after_loop(self) -> bool {
        matches!(
            self,
            SyncMethod::SyncThenFsyncFirst | SyncMethod::SyncPostReverse | SyncMethod::SyncPost
        )
    }

    pub fn fsync_first_file(self) -> bool {
        self == SyncMethod::SyncThenFsyncFirst
    }

    pub fn post_in_order(self) -> bool {
        matches!(self, SyncMethod::Post | SyncMethod::SyncPost)
    }

    pub fn post_reverse(self) -> bool {
        matches!(self, SyncMethod::PostReverse | SyncMethod::SyncPostReverse)
    }

    /// The `# Sync method:` header text. fs_mark says method 2 fsyncs one
    /// file "per subdirectory"; it really fsyncs one file per thread, which
    /// is what fslab does and says.
    pub fn description(self) -> &'static str {
        match self {
            SyncMethod::None => "NO SYNC: Test does not issue sync() or fsync() calls.",
            SyncMethod::FsyncBeforeClose => "INBAND FSYNC: fsync() per file in write loop.",
            SyncMethod::SyncThenFsyncFirst => {
                "SYSTEM SYNC/SINGLE FSYNC: Issue sync() after main write loop and 1 file fsync() per thread."
            }
            SyncMethod::PostReverse => {
                "POST REVERSE: Reopen and fsync() each file in reverse order after main write loop."
            }
            SyncMethod::SyncPostReverse => "SYNC POST REVERSE: Issue sync() and then reopen and fsync() each file in reverse order after main write loop.",
            SyncMethod::Post => "POST: Reopen and fsync() each file in order after main write loop.",
            SyncMethod::SyncPost => {
                "SYNC POST: Issue sync() and then reopen and fsync() each file in order after main write loop."
            }
        }
    }
}

/// How files are spread over subdirectories (`-D`, `-N`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum DirPolicy {
    /// All files directly in the `-d` directory.
    NoSubdirs,
    /// `-D n -N k`: k files in a subdirectory, then the next, round robin.
    RoundRobin { subdirs: u32, per_subdir: u64 },
    /// `-D n`: move to the next subdirectory every `secs` seconds.
    TimeHash { subdirs: u32, secs: u64 },
}

/// The phases fslab can run after (or instead of) fs_mark's create loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    /// fs_mark's loops: create (write, sync) files.
    Create,
    /// A parallel find + stat of everything under the `-d` directories.
    Stat,
    /// A parallel unlink of everything under the `-d` directories.
    Unlink,
}

impl Phase {
    pub fn name(self) -> &'static str {
        match self {
            Phase::Create => "create",
            Phase::Stat => "stat",
            Phase::Unlink => "unlink",
        }
    }

    pub fn parse(s: &str) -> Option<Phase> {
        Some(match s {
            "create" => Phase::Create,
            "stat" | "walk" => Phase::Stat,
            "unlink" => Phase::Unlink,
            _ => return None,
        })
    }
}

/// A validated fs_mark configuration.
#[derive(Debug, Clone, Serialize)]
pub struct FsMarkOptions {
    /// One entry per `-d`, in order.
    pub dirs: Vec<PathBuf>,
    /// Total worker threads (a multiple of `dirs.len()`).
    pub threads: u32,
    /// Files per thread per loop (`-n`).
    pub files: u64,
    /// Bytes per file (`-s`).
    pub file_size: u64,
    /// Bytes per write() call (`-w`).
    pub io_size: u64,
    pub sync: SyncMethod,
    pub dir_policy: DirPolicy,
    /// Total file name length (`-p`).
    pub name_len: u32,
    /// Random characters at the end of the name (`-r`).
    pub rand_len: u32,
    /// Loops (`-L`); at least 1.
    pub loops: u64,
    /// Keep files after each loop (`-k`, implied by `-L`, `-F` and the stat/unlink phases).
    pub keep: bool,
    /// Loop until the filesystem is full (`-F`).
    pub fill: bool,
    /// fs_mark's log file (`-l`).
    pub log_file: PathBuf,
    /// Per-call min/avg/max columns (`-v`).
    pub verbose: bool,
    /// Phases in the order they run.
    pub phases: Vec<Phase>,
    /// `--stonewall`'s seconds (fslab's): each create loop stops at a
    /// stonewall and wears out to the count the ranks agree on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stonewall: Option<u64>,
    /// `--seed` (fslab's): the same names every run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
}

/// The options as given on the command line, before validation.
#[derive(Debug, Clone)]
pub struct RawOptions {
    pub dirs: Vec<PathBuf>,
    pub threads: Option<i64>,
    pub files: Option<i64>,
    pub file_size: Option<String>,
    pub io_size: Option<String>,
    pub sync: Option<i64>,
    pub subdirs: Option<i64>,
    pub per_subdir: Option<i64>,
    pub subdir_secs: Option<i64>,
    pub name_len: Option<i64>,
    pub rand_len: Option<i64>,
    pub loops: Option<i64>,
    pub keep: bool,
    pub fill: bool,
    pub log_file: Option<PathBuf>,
    pub verbose: bool,
    pub phases: Option<String>,
    pub stonewall: Option<i64>,
    pub seed: Option<u64>,
}

/// Options refused together, in one line.
fn err<T>(msg: String) -> crate::Result<T> {
    Err(crate::Error::Options(msg))
}

fn positive(flag: &str, what: &str, v: i64) -> crate::Result<u64> {
    if v <= 0 {
        return Err(crate::opt(
            flag,
            v,
            format!("the number of {what} must be at least 1"),
        ));
    }
    Ok(v as u64)
}

/// Parses a byte count for option `flag` (see [`fslab_model::units::parse_bytes`]).
pub fn parse_size(flag: &str, s: &str) -> crate::Result<u64> {
    fslab_model::units::parse_bytes(s).ok_or_else(|| {
        crate::opt(
            flag,
            format!("{s:?}"),
            format!(
                "not a size ({}, below 16 EiB)",
                fslab_model::units::SIZE_GRAMMAR
            ),
        )
    })
}

impl RawOptions {
    /// -D, -N and --subdir-secs: how files spread over subdirectories.
    fn dir_policy(&self) -> crate::Result<DirPolicy> {
        Ok(match (self.subdirs, self.per_subdir) {
            (None, None) => DirPolicy::NoSubdirs,
            (None, Some(_)) => {
                return err(
                    "-N needs -D: round robin spreads files over the subdirectories -D makes"
                        .into(),
                )
            }
            (Some(d), per) => {
                if d < 2 {
                    return Err(crate::opt(
                        "-D",
                        d,
                        "the number of subdirectories must be at least 2",
                    ));
                }
                if d > u32::MAX as i64 {
                    return Err(crate::opt("-D", d, "too many subdirectories"));
                }
                match per {
                    Some(k) => DirPolicy::RoundRobin {
                        subdirs: d as u32,
                        per_subdir: positive("-N", "files per subdirectory", k)?,
                    },
                    None => DirPolicy::TimeHash {
                        subdirs: d as u32,
                        secs: match self.subdir_secs {
                            Some(s) => positive("--subdir-secs", "seconds", s)?,
                            None => 180,
                        },
                    },
                }
            }
        })
    }

    /// `--stonewall`: whole seconds, at least 1, for the create loops.
    fn stonewall_s(&self, phases: &[Phase]) -> crate::Result<Option<u64>> {
        match self.stonewall {
            None => Ok(None),
            Some(s) if s < 1 => Err(crate::opt(
                "--stonewall",
                s,
                "the stonewall must be at least 1 second",
            )),
            Some(s) if !phases.contains(&Phase::Create) => Err(crate::opt(
                "--stonewall",
                s,
                "the stonewall ends the create loops, and --phases has no create",
            )),
            Some(s) => Ok(Some(s as u64)),
        }
    }

    /// -d and -t: the directories, and the threads (at least one per
    /// directory, a multiple of their number).
    fn threads(&self) -> crate::Result<u64> {
        if self.dirs.is_empty() {
            return Err(crate::Error::Options(
                "fsmark needs at least one directory: give -d DIR".into(),
            ));
        }
        for d in &self.dirs {
            check_dir(d)?;
        }
        let ndirs = self.dirs.len() as u64;
        if ndirs > MAX_THREADS as u64 {
            return Err(crate::Error::Options(format!(
                "-d given {ndirs} times: at most {MAX_THREADS} directories (one thread each)"
            )));
        }
        let mut threads = match self.threads {
            Some(t) => positive("-t", "threads", t)?,
            None => 1,
        };
        if threads > MAX_THREADS as u64 {
            return Err(crate::opt(
                "-t",
                threads,
                format!("at most {MAX_THREADS} threads"),
            ));
        }
        if threads < ndirs {
            threads = ndirs;
        } else if threads % ndirs != 0 {
            return Err(crate::opt(
                "-t",
                threads,
                format!(
                    "the thread count must be a multiple of the number of -d directories ({ndirs})"
                ),
            ));
        }
        Ok(threads)
    }

    /// Checks every option, with fs_mark's defaults for those not given.
    pub fn validate(&self) -> crate::Result<FsMarkOptions> {
        let threads = self.threads()?;
        let files = match self.files {
            Some(n) => positive("-n", "files", n)?,
            None => 1000,
        };
        let file_size = match &self.file_size {
            Some(s) => parse_size("-s", s)?,
            None => 51200,
        };
        let io_size = match &self.io_size {
            Some(s) => parse_size("-w", s)?,
            None => 16384,
        };
        if io_size == 0 || io_size > MAX_IO_SIZE {
            return Err(crate::opt(
                "-w",
                io_size,
                format!("the write size must be from 1 to {MAX_IO_SIZE} bytes"),
            ));
        }
        let sync = match self.sync {
            Some(n) => SyncMethod::from_number(n).ok_or_else(|| {
                crate::opt(
                    "-S",
                    n,
                    "unknown sync method (use 0 to 6; see fslab fsmark --help)",
                )
            })?,
            None => SyncMethod::FsyncBeforeClose,
        };
        let dir_policy = self.dir_policy()?;
        let name_len = match self.name_len {
            Some(p) if p < 1 || p > MAX_NAME_LEN as i64 => {
                return Err(crate::opt(
                    "-p",
                    p,
                    format!("the file name length must be from 1 to {MAX_NAME_LEN}"),
                ))
            }
            Some(p) => p as u32,
            None => 40,
        };
        let rand_len = match self.rand_len {
            Some(r) if r < 0 || r > name_len as i64 => {
                return Err(crate::opt(
                    "-r",
                    r,
                    format!("random characters must be from 0 to the name length ({name_len})"),
                ))
            }
            Some(r) => r as u32,
            None => 24.min(name_len),
        };
        let loops = match self.loops {
            Some(l) => positive("-L", "loops", l)?,
            None => 1,
        };
        let phases = match &self.phases {
            None => vec![Phase::Create],
            Some(list) => parse_phases(list)?,
        };
        let walks = phases.iter().any(|p| *p != Phase::Create);
        let stonewall = self.stonewall_s(&phases)?;
        let log_file = self
            .log_file
            .clone()
            .unwrap_or_else(|| PathBuf::from("fs_log.txt"));
        if let Some(parent) = log_file.parent().filter(|p| !p.as_os_str().is_empty()) {
            if !parent.is_dir() {
                return Err(crate::opt(
                    "-l",
                    log_file.display(),
                    format!("no such directory {}", parent.display()),
                ));
            }
        }
        Ok(FsMarkOptions {
            dirs: self.dirs.clone(),
            threads: threads as u32,
            files,
            file_size,
            io_size,
            sync,
            dir_policy,
            name_len,
            rand_len,
            loops,
            keep: self.keep || self.loops.is_some() || self.fill || walks,
            fill: self.fill,
            log_file,
            verbose: self.verbose,
            phases,
            stonewall,
            seed: self.seed,
        })
    }
}

fn parse_phases(list: &str) -> crate::Result<Vec<Phase>> {
    let mut out: Vec<Phase> = Vec::new();
    for word in list.split(',').map(str::trim) {
        let p = Phase::parse(word).ok_or_else(|| {
            crate::Error::Options(format!(
                "--phases: unknown phase {word:?} (use create, stat, unlink)"
            ))
        })?;
        if out.contains(&p) {
            return Err(crate::Error::Options(format!(
                "--phases: phase {word:?} given twice"
            )));
        }
        if out.last().is_some_and(|last| (*last as u8) > (p as u8)) {
            return Err(crate::opt(
                "--phases",
                list,
                "phases run in the order create, stat, unlink",
            ));
        }
        out.push(p);
    }
    Ok(out)
}

/// A `-d` directory must exist and be writable; as in fs_mark it may also be
/// a new directory whose parent exists, which fslab creates.
fn check_dir(d: &std::path::Path) -> crate::Result<()> {
    use rustix::fs::{access, Access};
    match std::fs::metadata(d) {
        Ok(m) if m.is_dir() => {
            if access(d, Access::WRITE_OK | Access::EXEC_OK).is_err() {
                return Err(crate::opt("-d", d.display(), "directory is not writable"));
            }
            Ok(())
        }
        Ok(_) => Err(crate::opt("-d", d.display(), "not a directory")),
        Err(_) => {
            let parent = d
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(std::path::Path::new("."));
            if parent.is_dir() {
                Ok(())
            } else {
                Err(crate::opt("-d", d.display(), "no such directory"))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(dir: &str) -> RawOptions {
        RawOptions {
            dirs: vec![dir.into()],
            threads: None,
            files: None,
            file_size: None,
            io_size: None,
            sync: None,
            subdirs: None,
            per_subdir: None,
            subdir_secs: None,
            name_len: None,
            rand_len: None,
            loops: None,
            keep: false,
            fill: false,
            log_file: None,
            verbose: false,
            phases: None,
            stonewall: None,
            seed: None,
        }
    }

    #[test]
    fn defaults_are_fs_marks() {
        let o = raw("/tmp").validate().unwrap();
        assert_eq!(
            (o.threads, o.files, o.file_size, o.io_size),
            (1, 1000, 51200, 16384)
        );
        assert_eq!((o.name_len, o.rand_len, o.loops), (40, 24, 1));
        assert_eq!(o.sync, SyncMethod::FsyncBeforeClose);
        assert!(!o.keep);
    }

    #[test]
    fn loops_imply_keep_and_seed_000_parses() {
        let mut r = raw("/tmp");
        r.subdirs = Some(10000);
        r.sync = Some(0);
        r.files = Some(100000);
        r.file_size = Some("0".into());
        r.loops = Some(63);
        let o = r.validate().unwrap();
        assert!(o.keep);
        assert_eq!(
            o.dir_policy,
            DirPolicy::TimeHash {
                subdirs: 10000,
                secs: 180
            }
        );
    }

    #[test]
    fn bad_values_are_named() {
        type Change = Box<dyn Fn(&mut RawOptions)>;
        let cases: Vec<(Change, &str)> = vec![
            (Box::new(|r| r.sync = Some(9)), "-S 9"),
            (Box::new(|r| r.files = Some(0)), "-n 0"),
            (Box::new(|r| r.files = Some(-3)), "-n -3"),
            (Box::new(|r| r.threads = Some(100000)), "-t 100000"),
            (Box::new(|r| r.file_size = Some("12Q".into())), "-s \"12Q\""),
            (Box::new(|r| r.io_size = Some("0".into())), "-w 0"),
            (Box::new(|r| r.per_subdir = Some(5)), "-N needs -D"),
            (Box::new(|r| r.subdirs = Some(1)), "-D 1"),
            (Box::new(|r| r.rand_len = Some(41)), "-r 41"),
            (
                Box::new(|r| r.phases = Some("stat,create".into())),
                "--phases stat,create",
            ),
            (
                Box::new(|r| r.phases = Some("walk,bogus".into())),
                "\"bogus\"",
            ),
            (
                Box::new(|r| r.dirs = vec!["/nonexistent/a/b".into()]),
                "-d /nonexistent/a/b",
            ),
            (
                Box::new(|r| r.log_file = Some("/nonexistent/log".into())),
                "-l /nonexistent/log",
            ),
        ];
        for (set, want) in cases {
            let mut r = raw("/tmp");
            set(&mut r);
            let e = r.validate().unwrap_err().to_string();
            assert!(e.contains(want), "{e:?} should mention {want:?}");
            assert!(!e.contains('\n'));
        }
    }

    #[test]
    fn threads_must_divide_among_dirs() {
        let mut r = raw("/tmp");
        r.dirs.push("/dev/shm".into());
        r.threads = Some(3);
        assert!(r.validate().unwrap_err().to_string().contains("multiple"));
        r.threads = Some(4);
        assert_eq!(r.validate().unwrap().threads, 4);
    }

    #[test]
    fn sizes_take_suffixes() {
        assert_eq!(parse_size("-s", "4k").unwrap(), 4096);
        assert_eq!(parse_size("-s", "1M").unwrap(), 1 << 20);
        assert!(parse_size("-s", "").is_err());
        assert!(parse_size("-s", "-1").is_err());
    }
}
