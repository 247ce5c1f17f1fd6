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
    let mut v = Vec::new();
    let Some(dev) = t.device.as_ref() else {
        return v;
    };
    let majmin = format!("{}:{}", dev.major, dev.minor);
    for name in source.list(Path::new("/proc")) {
        let Ok(pid) = name.parse::<u32>() else {
            continue;
        };
        let Some(stat) = source.read(&Path::new("/proc").join(&name).join("stat")) else {
            continue;
        };
        let ppid = stat
            .rsplit(')')
            .next()
            .and_then(|r| r.split_whitespace().nth(1))
            .unwrap_or("");
        if ppid != "2" {
            continue;
        }
        if let Some((comm, _, _)) = procfs::parse_pid_stat(&stat) {
            if procfs::kthread_works_for(&comm, &dev.name, &majmin) {
                v.push((pid, comm));
            }
        }
    }
    v
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
            }
        }

        pub fn ctx(&self) -> Ctx<'_> {
            Ctx {
                source: &self.source,
                targets: &self.targets,
                pid: 4242,
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
    pub fn value(s: &[crate::probe::Sample], metric: &str) -> f64 {
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
}
