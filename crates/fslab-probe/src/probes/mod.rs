//! The probes, one module each. Every one implements
//! [`crate::plugin::Plugin`] (what it is, registered in
//! [`crate::registry`]) and [`crate::probe::Probe`] (the instrument), and
//! reads the machine only through its [`crate::source::Source`], so each
//! is unit-tested against a [`crate::source::FakeSource`].

pub mod blockio;
pub mod cpu;
pub mod disk;
pub mod frag;
pub mod journal;
pub mod machine;
pub mod mem;
pub mod perf;
pub mod stacks;
pub mod writeback;

use std::path::Path;

use crate::devices::Targets;
use crate::procfs;
use crate::source::Source;

/// The kernel threads (children of kthreadd) working for the filesystem's
/// device now: (pid, comm). A kernel worker counts while its name says it
/// works for this device (see [`procfs::kthread_works_for`]). The sampler
/// calls this at most once a second and hands the list to every probe in
/// [`crate::probe::Ctx::kthreads`].
pub fn device_kthreads(source: &dyn Source, t: &Targets) -> Vec<(u32, String)> {
    scan(source, t, None).kthreads
}

/// What one look at /proc found (see [`scan`]).
#[derive(Debug, Default, PartialEq)]
pub struct Scan {
    /// The device's kernel threads: (pid, comm).
    pub kthreads: Vec<(u32, String)>,
    /// A program and its descendants: (pid, whether it has children).
    pub program: Vec<(u32, bool)>,
}

/// One look at /proc: the device's kernel threads (see [`device_kthreads`])
/// and, with `program`, that program and its descendants alive now (see
/// [`descendants`]). Nothing is read when there is neither to look for.
pub fn scan(source: &dyn Source, t: &Targets, program: Option<u32>) -> Scan {
    let dev = t.device.as_ref();
    if dev.is_none() && program.is_none() {
        return Scan::default();
    }
    let majmin = dev.map(|d| format!("{}:{}", d.major, d.minor));
    let mut kthreads = Vec::new();
    let mut parents = Vec::new();
    for name in source.list(Path::new("/proc")) {
        let Ok(pid) = name.parse::<u32>() else {
            continue;
        };
        let Some(stat) = source.read(&Path::new("/proc").join(&name).join("stat")) else {
            continue;
        };
        let Some(ppid) = stat
            .rsplit(')')
            .next()
            .and_then(|r| r.split_whitespace().nth(1))
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        parents.push((pid, ppid));
        if let (Some(dev), Some(majmin), 2) = (dev, majmin.as_deref(), ppid) {
            if let Some((comm, _, _)) = procfs::parse_pid_stat(&stat) {
                if procfs::kthread_works_for(&comm, &dev.name, majmin) {
                    kthreads.push((pid, comm));
                }
            }
        }
    }
    Scan {
        kthreads,
        program: program
            .map(|p| descendants(p, &parents))
            .unwrap_or_default(),
    }
}

/// `root` and every process below it in `parents` ((pid, ppid) pairs),
/// root first, each with whether it has children in the tree; empty when
/// `root` is not among them (it ended).
pub fn descendants(root: u32, parents: &[(u32, u32)]) -> Vec<(u32, bool)> {
    if !parents.iter().any(|(p, _)| *p == root) {
        return Vec::new();
    }
    let mut tree = vec![(root, false)];
    let mut i = 0;
    while i < tree.len() {
        let parent = tree[i].0;
        let before = tree.len();
        tree.extend(
            parents
                .iter()
                .filter(|(p, pp)| *pp == parent && *p != parent)
                .map(|(p, _)| (*p, false)),
        );
        tree[i].1 = tree.len() > before;
        i += 1;
    }
    tree
}

/// A fake machine and the context the probes see, for the probes' tests.
#[cfg(test)]
pub(crate) mod bed {
    use std::path::PathBuf;
    use std::sync::{Mutex, OnceLock};

    use crate::cgroup::MemoryCgroup;
    use crate::devices::{Device, Targets};
    use crate::probe::{Ctx, PhaseInfo};
    use crate::source::FakeSource;
    use crate::trace::TraceState;

    pub struct Bed {
        pub source: FakeSource,
        pub targets: Targets,
        pub cgroup: Option<MemoryCgroup>,
        pub trace: Mutex<TraceState>,
        pub phase: PhaseInfo,
        pub now_mono_ns: u64,
        pub scratch: PathBuf,
        /// The device's kernel threads, found at the first `ctx()`.
        pub kthreads: OnceLock<Vec<(u32, String)>>,
        /// The workload's processes (its own, 4242, and a program's).
        pub processes: Vec<u32>,
        /// Those doing its work.
        pub workers: Vec<u32>,
    }

    impl Bed {
        /// An ext4 on loop3 (7,3), its image on vda (253,0).
        pub fn new() -> Bed {
            Bed {
                source: FakeSource::new(),
                targets: Targets {
                    device: Some(Device {
                        major: 7,
                        minor: 3,
                        name: "loop3".into(),
                    }),
                    image: Some(PathBuf::from("/img/fs.img")),
                    host: Some(Device {
                        major: 253,
                        minor: 0,
                        name: "vda".into(),
                    }),
                    fs_type: "ext4".into(),
                },
                cgroup: None,
                trace: Mutex::new(TraceState::new(None)),
                phase: PhaseInfo {
                    index: 2,
                    name: "create".into(),
                    start_mono_ns: 1_000_000_000,
                },
                now_mono_ns: 1_000_000_000,
                scratch: std::env::temp_dir(),
                kthreads: OnceLock::new(),
                processes: vec![4242],
                workers: vec![4242],
            }
        }

        pub fn ctx(&self) -> Ctx<'_> {
            Ctx {
                source: &self.source,
                targets: &self.targets,
                pid: 4242,
                processes: &self.processes,
                workers: &self.workers,
                memory_cgroup: self.cgroup.as_ref(),
                trace: Some(&self.trace),
                trace_dropped: 0,
                phase: &self.phase,
                first_mono_ns: 1_000_000_000,
                now_mono_ns: self.now_mono_ns,
                scratch: &self.scratch,
                kthreads: self
                    .kthreads
                    .get_or_init(|| super::device_kthreads(&self.source, &self.targets)),
            }
        }

        /// Feeds trace_pipe lines to the trace reader's state.
        pub fn trace_lines(&self, lines: &[String]) {
            let mut st = self.trace.lock().unwrap();
            for l in lines {
                st.line(l);
            }
        }
    }

    /// A /proc/PID/stat line: `comm`, state, parent, utime, stime.
    pub fn pid_stat(
        pid: u32,
        comm: &str,
        state: char,
        ppid: u32,
        utime: u64,
        stime: u64,
    ) -> String {
        format!("{pid} ({comm}) {state} {ppid} {pid} {pid} 0 -1 4194304 300 0 0 0 {utime} {stime} 0 0 20 0 1 0 100 0 0")
    }

    /// A value of `metric` among samples.
    pub fn value(s: &[crate::probe::Reading], metric: &str) -> f64 {
        s.iter()
            .find(|x| x.metric == metric)
            .unwrap_or_else(|| panic!("no {metric} in {s:?}"))
            .value
    }
}

#[cfg(test)]
mod tests {
    use super::bed::*;
    use super::*;

    #[test]
    fn kernel_threads_are_those_of_the_device() {
        let b = Bed::new();
        b.source
            .set("/proc/10/stat", pid_stat(10, "jbd2/loop3-8", 'S', 2, 0, 40));
        b.source.set(
            "/proc/11/stat",
            pid_stat(11, "jbd2/loop30-8", 'S', 2, 0, 40),
        );
        b.source
            .set("/proc/12/stat", pid_stat(12, "jbd2/sda1-8", 'S', 2, 0, 40));
        b.source.set(
            "/proc/13/stat",
            pid_stat(13, "kworker/u8:2+flush-7:3", 'R', 2, 0, 7),
        );
        // Named like one, but not a kernel thread.
        b.source
            .set("/proc/14/stat", pid_stat(14, "loop3", 'S', 1, 0, 7));
        let mut k = device_kthreads(&b.source, &b.targets);
        k.sort();
        assert_eq!(
            k,
            vec![
                (10, "jbd2/loop3-8".to_string()),
                (13, "kworker/u8:2+flush-7:3".to_string())
            ]
        );
    }

    #[test]
    fn a_program_and_its_descendants_are_found_in_one_scan() {
        let mut b = Bed::new();
        b.targets.device = None;
        // fslab 4242 started the program 5000; it forked 5001, which forked
        // 5002; 6000 is someone else's, a child of init.
        for (pid, ppid) in [
            (4242, 1),
            (5000, 4242),
            (5001, 5000),
            (5002, 5001),
            (6000, 1),
        ] {
            b.source.set(
                format!("/proc/{pid}/stat"),
                pid_stat(pid, "x", 'S', ppid, 0, 0),
            );
        }
        let Scan {
            kthreads: k,
            program: mut tree,
        } = scan(&b.source, &b.targets, Some(5000));
        assert!(k.is_empty());
        tree.sort();
        // Each with whether it has children: 5002 alone does the work.
        assert_eq!(tree, [(5000, true), (5001, true), (5002, false)]);
        // Without a program and without a device, /proc is not read.
        assert_eq!(scan(&b.source, &b.targets, None), Scan::default());
        // A program that ended has no tree.
        assert!(descendants(7000, &[(5000, 4242)]).is_empty());
    }
}
