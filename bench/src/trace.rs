//! The call counter the parity tests and benches use: every system call of
//! every thread and child of a traced command (`strace -ff`, one log per
//! task), each call name on its own (`stat`, `lstat`, `fstat`,
//! `newfstatat` and `statx` apart), its failures by errno, and the bytes
//! read and written, per task.
//!
//! A call counts when its task is one of the workload's (it made at least
//! one call naming the workload directory) and it is a call on that
//! directory or a call naming no file at all (`sync`, `msync`, `syncfs`
//! without a path...). What is left out, and why, is in one place:
//! - calls on other files (the tool's log, stdout, its results store, the
//!   loadfile it reads, /proc): the tool's bookkeeping, not the workload's
//!   work on the filesystem under test. They are kept in [`Counts::elsewhere`].
//! - the runtime's calls ([`RUNTIME`]): memory, threads, signals, clocks,
//!   waiting. They are kept in [`Counts::runtime`].

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Calls that are the language runtime's or the process's own, not the
/// workload's filesystem work: left out of [`Counts::calls`], kept in
/// [`Counts::runtime`]. A path-less call not listed here counts. Also left
/// out: `fcntl(fd, F_GETFD)`, the check a debug build of Rust's standard
/// library makes before closing a descriptor (a release build makes none).
pub const RUNTIME: &[&str] = &[
    // memory (a file mapping names its file and counts)
    "mmap",
    "munmap",
    "mprotect",
    "madvise",
    "brk",
    "mremap",
    // threads and processes
    "clone",
    "clone3",
    "fork",
    "vfork",
    "set_robust_list",
    "rseq",
    "set_tid_address",
    "exit",
    "exit_group",
    "futex",
    "sched_yield",
    "sched_getaffinity",
    "gettid",
    "getpid",
    "getppid",
    "prctl",
    "arch_prctl",
    "prlimit64",
    "wait4",
    "waitid",
    // the process's identity
    "getuid",
    "geteuid",
    "getgid",
    "getegid",
    "uname",
    // the program's start
    "execve",
    // signals
    "sigaltstack",
    "rt_sigaction",
    "rt_sigprocmask",
    "rt_sigreturn",
    "kill",
    "alarm",
    // time, waiting, randomness, accounting
    "clock_nanosleep",
    "nanosleep",
    "clock_gettime",
    "gettimeofday",
    "poll",
    "ppoll",
    "getrusage",
    "getrandom",
    "times",
    "time",
    // System V IPC (dbench's start barrier and shared results)
    "semget",
    "semop",
    "semtimedop",
    "semctl",
    "shmget",
    "shmat",
    "shmdt",
    "shmctl",
];

/// Calls whose return value is a byte count of data moved.
const BYTES: &[&str] = &[
    "read",
    "write",
    "pread64",
    "pwrite64",
    "readv",
    "writev",
    "preadv",
    "pwritev",
    "preadv2",
    "pwritev2",
    "getxattr",
    "lgetxattr",
    "fgetxattr",
    "copy_file_range",
    "sendfile",
];

/// One call of one task.
#[derive(Clone, Debug, PartialEq)]
pub struct Call {
    /// When it started, seconds since the epoch (`strace -ttt`), or 0.
    pub at: f64,
    pub name: String,
    /// The line after the name: arguments, `= return`, decorations.
    pub rest: String,
    /// The return value, when it is a number.
    pub ret: Option<i64>,
    /// The errno name of a failed call (`ENOENT`).
    pub errno: Option<String>,
}

impl Call {
    /// The call's kind: its name, except that an `*at` spelling counts as
    /// the plain call the kernel runs the same way (`mkdirat(AT_FDCWD, p)` is
    /// `mkdir(p)`: glibc's spelling and Rust's; `mkdirat(dirfd, name)` too,
    /// the same operation with a shorter lookup), and `newfstatat` counts as the call it stands
    /// for: `fstat` (a descriptor, `AT_EMPTY_PATH`), `lstat`
    /// (`AT_SYMLINK_NOFOLLOW`) or `stat`. `statx` stays `statx`: a stat
    /// of the same file made with another call is a difference. Opening a
    /// directory (`O_DIRECTORY`) is `openat O_DIRECTORY`, apart from opening
    /// a file.
    pub fn kind(&self) -> String {
        let r = self.rest.as_str();
        match self.name.as_str() {
            "newfstatat" if r.contains("AT_EMPTY_PATH") => "fstat",
            "newfstatat" if r.contains("AT_SYMLINK_NOFOLLOW") => "lstat",
            "newfstatat" => "stat",
            "mkdirat" => "mkdir",
            "unlinkat" if r.contains("AT_REMOVEDIR") => "rmdir",
            "unlinkat" => "unlink",
            "readlinkat" => "readlink",
            "renameat" | "renameat2" if !r.contains("RENAME_") => "rename",
            "fchmodat" => "chmod",
            "linkat" => "link",
            "symlinkat" => "symlink",
            "mknodat" => "mknod",
            "open" | "openat" if r.contains("O_DIRECTORY") => "openat O_DIRECTORY",
            "open" => "openat",
            "fcntl" if r.contains("F_GETFD)") => "fcntl F_GETFD",
            n => n,
        }
        .to_string()
    }

    /// Parses one line of a per-task `strace -y` log; None for what is not
    /// a call (signals, exits, `+++`).
    pub fn parse(line: &str) -> Option<Call> {
        // `strace -ttt` puts the time first: "1700000000.123456 name(...".
        let (at, line) = match line.split_once(' ') {
            Some((t, rest))
                if t.contains('.') && t.bytes().all(|b| b.is_ascii_digit() || b == b'.') =>
            {
                (t.parse().unwrap_or(0.0), rest)
            }
            _ => (0.0, line),
        };
        let (name, rest) = line.split_once('(')?;
        if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            return None;
        }
        let (ret, errno) = match rest.rsplit_once(") = ") {
            Some((_, r)) => {
                let r = r.trim();
                let num: String = r
                    .chars()
                    .take_while(|c| c.is_ascii_digit() || *c == '-')
                    .collect();
                let errno = r
                    .split_whitespace()
                    .nth(1)
                    .filter(|e| e.starts_with('E'))
                    .map(String::from);
                (num.parse().ok(), errno)
            }
            None => (None, None),
        };
        Some(Call {
            at,
            name: name.to_string(),
            rest: rest.to_string(),
            ret,
            errno,
        })
    }

    /// Whether the call names a file at all: a descriptor strace decorated
    /// with its path (`3</w/f>`, `AT_FDCWD</w>`) or a quoted path argument.
    pub fn names_a_file(&self) -> bool {
        let b = self.rest.as_bytes();
        b.windows(2)
            .any(|w| (w[0].is_ascii_digit() || w[0] == b'D') && w[1] == b'<')
            || self.rest.starts_with('"')
    }
}

/// What a traced command did, task by task (thread or child process).
#[derive(Clone, Debug, Default)]
pub struct Trace {
    pub tasks: BTreeMap<u32, Vec<Call>>,
}

/// Runs `cmd` under `strace -ff -ttt -y -qq` writing per-task logs under `dir`,
/// and returns its output and the trace.
pub fn record(cmd: Command, dir: &Path) -> (Output, Trace) {
    let prefix = dir.join("trace");
    let mut s = Command::new("strace");
    s.args(["-ff", "-ttt", "-y", "-qq", "-s", "24", "-o"])
        .arg(&prefix)
        .arg(cmd.get_program())
        .args(cmd.get_args());
    if let Some(d) = cmd.get_current_dir() {
        s.current_dir(d);
    }
    for (k, v) in cmd.get_envs() {
        match v {
            Some(v) => s.env(k, v),
            None => s.env_remove(k),
        };
    }
    let out = s.output().expect("spawn strace");
    (out, Trace::read(&prefix))
}

impl Trace {
    /// Reads the per-task logs `PREFIX.TID`.
    pub fn read(prefix: &Path) -> Trace {
        let dir = prefix.parent().unwrap_or(Path::new("."));
        let stem = format!(
            "{}.",
            prefix.file_name().unwrap_or_default().to_string_lossy()
        );
        let mut tasks = BTreeMap::new();
        for e in std::fs::read_dir(dir).expect("trace dir").flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let Some(tid) = name.strip_prefix(&stem).and_then(|t| t.parse().ok()) else {
                continue;
            };
            let text = std::fs::read_to_string(e.path()).expect("trace log");
            tasks.insert(tid, text.lines().filter_map(Call::parse).collect());
        }
        Trace { tasks }
    }

    /// Removes the per-task logs of a previous [`record`] under `dir`.
    pub fn clear(dir: &Path) {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            if e.file_name().to_string_lossy().starts_with("trace.") {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }

    /// The tasks that made a call naming `marker` (the workload's).
    pub fn workload_tasks(&self, marker: &str) -> Vec<u32> {
        self.tasks
            .iter()
            .filter(|(_, calls)| {
                calls
                    .iter()
                    .any(|c| c.name != "execve" && c.rest.contains(marker))
            })
            .map(|(t, _)| *t)
            .collect()
    }

    /// Every call of the workload's tasks, counted (see the module's words).
    pub fn counts(&self, marker: &str) -> Counts {
        self.counts_of(marker, |_| true)
    }

    /// The task that started the program (its log holds the `execve`).
    pub fn is_main(&self, tid: u32) -> bool {
        self.tasks[&tid].iter().any(|c| c.name == "execve")
    }

    /// The counts of the workload's threads and children, the main task
    /// left out (a tool whose main task only starts, waits for and reports
    /// on its workers: fs_mark, dbench, fslab).
    pub fn worker_counts(&self, marker: &str) -> Counts {
        self.counts_of(marker, |t| !self.is_main(t))
    }

    /// The counts of the main task alone.
    pub fn main_counts(&self, marker: &str) -> Counts {
        self.counts_of(marker, |t| self.is_main(t))
    }

    /// Every task counts, not only those that named the directory: a
    /// thread that only calls `msync` or `sync` names no file.
    /// The counts of each stretch of time that ends with the program
    /// writing a line to its stdout or stderr that starts with one of
    /// `labels` (a tool that prints each operation's line when it ends):
    /// (the label, the counts of every task's calls since the previous such
    /// line), in order.
    pub fn by_line(&self, marker: &str, labels: &[&str]) -> Vec<(String, Counts)> {
        let mut ends: Vec<(f64, String)> = Vec::new();
        for calls in self.tasks.values() {
            for c in calls {
                let to_out =
                    c.name == "write" && (c.rest.starts_with("1<") || c.rest.starts_with("2<"));
                let text = c.rest.split_once(", \"").map(|x| x.1).unwrap_or_default();
                if let Some(l) = labels.iter().find(|l| to_out && text.starts_with(**l)) {
                    ends.push((c.at, (*l).to_string()));
                }
            }
        }
        ends.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut out: Vec<(String, Counts)> = ends
            .iter()
            .map(|(_, l)| (l.clone(), Counts::default()))
            .collect();
        for calls in self.tasks.values() {
            let mut i = 0;
            let mut segment: Vec<Call> = Vec::new();
            let flush = |i: usize, seg: &mut Vec<Call>, out: &mut Vec<(String, Counts)>| {
                if let Some(o) = out.get_mut(i) {
                    o.1.merge(&Counts::of(seg, marker));
                }
                seg.clear();
            };
            for c in calls {
                while i < ends.len() && c.at > ends[i].0 {
                    flush(i, &mut segment, &mut out);
                    i += 1;
                }
                segment.push(c.clone());
            }
            flush(i, &mut segment, &mut out);
        }
        out
    }

    fn counts_of(&self, marker: &str, keep: impl Fn(u32) -> bool) -> Counts {
        let mut all = Counts::default();
        for (&tid, calls) in &self.tasks {
            if !keep(tid) {
                continue;
            }
            let c = Counts::of(calls, marker);
            if !c.calls.is_empty() {
                all.per_task.push(c.calls.clone());
            }
            all.merge(&c);
        }
        all.per_task.sort();
        all
    }
}

/// Calls counted by name, failures by `name errno`, bytes by name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub calls: BTreeMap<String, u64>,
    pub errors: BTreeMap<String, u64>,
    pub bytes: BTreeMap<String, u64>,
    /// Each workload task's `calls`, sorted.
    pub per_task: Vec<BTreeMap<String, u64>>,
    /// The counted calls that name no file (`sync`, `msync`), by name.
    pub path_less: BTreeMap<String, u64>,
    /// Calls on other files (the tool's own bookkeeping), by name.
    pub elsewhere: BTreeMap<String, u64>,
    /// The runtime's calls ([`RUNTIME`]), by name.
    pub runtime: BTreeMap<String, u64>,
}

fn bump(m: &mut BTreeMap<String, u64>, k: &str, n: u64) {
    *m.entry(k.to_string()).or_insert(0) += n;
}

impl Counts {
    /// One task's calls.
    pub fn of(calls: &[Call], marker: &str) -> Counts {
        let mut c = Counts::default();
        for call in calls {
            let kind = call.kind();
            let n = kind.as_str();
            if n == "execve" || n == "fcntl F_GETFD" {
                bump(&mut c.runtime, n, 1);
                continue;
            }
            if !call.rest.contains(marker) {
                if call.names_a_file() {
                    bump(&mut c.elsewhere, n, 1);
                    continue;
                }
                if RUNTIME.contains(&n) {
                    bump(&mut c.runtime, n, 1);
                    continue;
                }
                bump(&mut c.path_less, n, 1);
            }
            bump(&mut c.calls, n, 1);
            if let Some(e) = &call.errno {
                bump(&mut c.errors, &format!("{n} {e}"), 1);
            }
            if BYTES.contains(&n) {
                if let Some(r) = call.ret.filter(|r| *r > 0) {
                    bump(&mut c.bytes, n, r.unsigned_abs());
                }
            }
        }
        c
    }

    /// Adds `o` to these counts (`per_task` aside).
    pub fn merge(&mut self, o: &Counts) {
        for (m, om) in [
            (&mut self.calls, &o.calls),
            (&mut self.errors, &o.errors),
            (&mut self.path_less, &o.path_less),
            (&mut self.bytes, &o.bytes),
            (&mut self.elsewhere, &o.elsewhere),
            (&mut self.runtime, &o.runtime),
        ] {
            for (k, v) in om {
                bump(m, k, *v);
            }
        }
    }

    /// All counted calls.
    pub fn total(&self) -> u64 {
        self.calls.values().sum()
    }

    /// `calls`, `errors` and `bytes` in one map (`bytes read`...), the
    /// quantities parity compares.
    pub fn compared(&self) -> BTreeMap<String, u64> {
        let mut m = self.calls.clone();
        for (k, v) in &self.errors {
            m.insert(format!("{k} (failed)"), *v);
        }
        for (k, v) in &self.bytes {
            m.insert(format!("{k} bytes"), *v);
        }
        m
    }
}

/// One quantity on which two sides differ.
#[derive(Clone, Debug, PartialEq)]
pub struct Difference {
    pub what: String,
    pub theirs: u64,
    pub ours: u64,
}

/// A difference with a reason: fslab makes up to `per_task` more (or,
/// negative, fewer) of `what` than the original in each workload task, for
/// `why`: a bound for what a task does once (its setup), never per
/// operation, so that one call fewer per operation is still a difference.
#[derive(Clone, Copy, Debug)]
pub struct Explained {
    pub what: &'static str,
    pub per_task: i64,
    pub why: &'static str,
}

/// Compares two sides' totals exactly (the same work on both sides): a
/// quantity differs unless [`Explained`] entries account for the
/// difference (between their negative and their positive bounds, summed,
/// over `tasks` workload tasks). Returns the differences and a
/// table of every quantity per operation (`ops`), with the reasons.
pub fn compare(
    theirs: &BTreeMap<String, u64>,
    ours: &BTreeMap<String, u64>,
    ops: u64,
    tasks: u64,
    explained: &[Explained],
) -> (Vec<Difference>, String) {
    let mut diffs = Vec::new();
    let mut table = String::new();
    let keys: std::collections::BTreeSet<&String> = theirs.keys().chain(ours.keys()).collect();
    for k in keys {
        let (t, o) = (*theirs.get(k).unwrap_or(&0), *ours.get(k).unwrap_or(&0));
        // The explanations of `k` bound its difference from below (their
        // negative bounds summed) and above (their positive ones).
        let (mut lo, mut hi) = (0i64, 0i64);
        for e in explained.iter().filter(|e| e.what == k) {
            let b = e.per_task * tasks as i64;
            if b < 0 {
                lo += b;
            } else {
                hi += b;
            }
        }
        let delta = o as i64 - t as i64;
        let within = delta != 0 && (lo..=hi).contains(&delta);
        let mark = match delta {
            0 => "",
            _ if within => " (explained)",
            _ => " <-- differs",
        };
        let per = |n: u64| n as f64 / ops.max(1) as f64;
        table.push_str(&format!(
            "{k:28} original {t:9} ({:10.4}/op)  fslab {o:9} ({:10.4}/op){mark}\n",
            per(t),
            per(o)
        ));
        if delta != 0 && !within {
            diffs.push(Difference {
                what: k.clone(),
                theirs: t,
                ours: o,
            });
        }
    }
    for e in explained {
        table.push_str(&format!(
            "explained: {} {:+} per task: {}\n",
            e.what, e.per_task, e.why
        ));
    }
    (diffs, table)
}

/// A scratch directory for one traced run's logs.
pub fn log_dir(base: &Path, tag: &str) -> PathBuf {
    let d = base.join(format!("trace-{tag}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("trace log dir");
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = "\
openat(AT_FDCWD</t>, \"/w/f\", O_RDWR|O_CREAT, 0644) = 3</w/f>
write(3</w/f>, \"\\0\\0\"..., 4096) = 4096
newfstatat(3</w/f>, \"\", {st_mode=S_IFREG}, AT_EMPTY_PATH) = 0
statx(AT_FDCWD</t>, \"/w/g\", 0, STATX_ALL, 0x7ff) = -1 ENOENT (No such file or directory)
fstat(3</w/f>, {st_mode=S_IFREG}) = 0
newfstatat(AT_FDCWD</t>, \"/w/f\", {st_mode=S_IFREG}, 0) = 0
newfstatat(AT_FDCWD</t>, \"/w/f\", {st_mode=S_IFREG}, AT_SYMLINK_NOFOLLOW) = 0
sync()                                  = 0
msync(0x7f0000000000, 8192, MS_SYNC)    = 0
write(1</dev/null>, \"done\"..., 5) = 5
futex(0x55, FUTEX_WAKE_PRIVATE, 1)      = 0
fgetxattr(3</w/f>, \"user.DosAttrib\", 0x7ff, 44) = 44
--- SIGCHLD {si_signo=SIGCHLD} ---
+++ exited with 0 +++
";

    #[test]
    fn every_call_of_a_workload_task_counts_each_name_apart_with_bytes_and_errors() {
        let calls: Vec<Call> = LOG.lines().filter_map(Call::parse).collect();
        let c = Counts::of(&calls, "/w");
        let got: Vec<(&str, u64)> = c.calls.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        assert_eq!(
            got,
            [
                ("fgetxattr", 1),
                ("fstat", 2),
                ("lstat", 1),
                ("msync", 1),
                ("openat", 1),
                ("stat", 1),
                ("statx", 1),
                ("sync", 1),
                ("write", 1)
            ]
        );
        assert_eq!(c.errors.get("statx ENOENT"), Some(&1));
        assert_eq!(c.bytes.get("write"), Some(&4096));
        assert_eq!(c.bytes.get("fgetxattr"), Some(&44));
        assert_eq!(c.elsewhere.get("write"), Some(&1));
        assert_eq!(c.runtime.get("futex"), Some(&1));
    }

    #[test]
    fn a_missing_path_less_call_is_a_difference_unless_explained() {
        let calls: Vec<Call> = LOG.lines().filter_map(Call::parse).collect();
        let full = Counts::of(&calls, "/w").compared();
        let no_sync: Vec<Call> = calls.iter().filter(|c| c.name != "sync").cloned().collect();
        let short = Counts::of(&no_sync, "/w").compared();
        let (d, table) = compare(&full, &short, 1, 1, &[]);
        assert_eq!(d.len(), 1, "{table}");
        assert_eq!(d[0].what, "sync");
        let fewer = Explained {
            what: "sync",
            per_task: -1,
            why: "test",
        };
        assert!(compare(&full, &short, 1, 1, &[fewer]).0.is_empty());
        // An explanation's bound is per task, and its sign holds.
        let no_sync2: BTreeMap<String, u64> = full
            .iter()
            .map(|(k, v)| (k.clone(), if k == "sync" { 0 } else { *v }))
            .collect();
        let mut full2 = full.clone();
        full2.insert("sync".into(), 2);
        assert_eq!(compare(&full2, &no_sync2, 1, 1, &[fewer]).0.len(), 1);
        assert!(compare(&full2, &no_sync2, 1, 2, &[fewer]).0.is_empty());
        assert_eq!(compare(&short, &full, 1, 1, &[fewer]).0.len(), 1);
    }
}
