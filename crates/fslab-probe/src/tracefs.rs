//! A private tracefs instance: its own ring buffer and event switches, so
//! fslab never touches the global trace settings. When tracefs is not
//! mounted, fslab mounts its own view of it on a private directory and
//! unmounts it afterwards.
//!
//! Both are written to this process's state journal (`probes-PID.json`)
//! before they are made, so that `fslab run` (when it started this
//! process) or `fslab cleanup` removes them if this process is killed.

use std::path::{Path, PathBuf};

use crate::ProbeError;
use fslab_model::journal::{state_dir, Journal, Resource};

/// A tracefs instance made by this process; removed on drop.
pub struct Instance {
    dir: PathBuf,
    own_mount: Option<PathBuf>,
    journal: Journal,
}

fn find_or_mount(
    private_base: &Path,
    journal: &mut Journal,
) -> Result<(PathBuf, Option<PathBuf>), ProbeError> {
    for p in ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"] {
        if Path::new(p).join("instances").is_dir() {
            return Ok((PathBuf::from(p), None));
        }
    }
    let mnt = private_base.join(format!("tracefs-{}", std::process::id()));
    journal
        .add(Resource::TracefsMount { path: mnt.clone() })
        .map_err(|e| ProbeError::Tracefs(e.to_string()))?;
    std::fs::create_dir_all(&mnt)
        .map_err(|e| ProbeError::Tracefs(format!("cannot create {}: {e}", mnt.display())))?;
    rustix::mount::mount(
        "nodev",
        &mnt,
        "tracefs",
        rustix::mount::MountFlags::empty(),
        None,
    )
    .map_err(|e| {
        ProbeError::Tracefs(format!(
            "tracefs is not mounted and cannot be mounted: {}",
            std::io::Error::from(e)
        ))
    })?;
    Ok((mnt.clone(), Some(mnt)))
}

impl Instance {
    /// Makes instance `name` (a private tracefs mount under `private_base`
    /// if the system has none), with the CLOCK_MONOTONIC trace clock.
    pub fn create(name: &str, private_base: &Path, buffer_kb: u32) -> Result<Instance, ProbeError> {
        let argv: Vec<String> = std::env::args().collect();
        let mut journal = Journal::create(&state_dir(), "probes", argv)
            .map_err(|e| ProbeError::Tracefs(e.to_string()))?;
        let (root, own_mount) = match find_or_mount(private_base, &mut journal) {
            Ok(r) => r,
            Err(e) => {
                for r in journal.take_all() {
                    if let Resource::TracefsMount { path } = r {
                        let _ = std::fs::remove_dir(path);
                    }
                }
                journal.remove();
                return Err(e);
            }
        };
        let dir = root.join("instances").join(name);
        let added = journal.add(Resource::TracefsInstance { path: dir.clone() });
        let inst = Instance {
            dir: dir.clone(),
            own_mount,
            journal,
        };
        added.map_err(|e| ProbeError::Tracefs(e.to_string()))?;
        std::fs::create_dir(&dir).map_err(|e| {
            ProbeError::Tracefs(format!(
                "cannot create tracefs instance {}: {e}",
                dir.display()
            ))
        })?;
        inst.write("trace_clock", "mono")?;
        inst.write("buffer_size_kb", &buffer_kb.to_string())?;
        Ok(inst)
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn write(&self, file: &str, value: &str) -> Result<(), ProbeError> {
        std::fs::write(self.dir.join(file), value).map_err(|e| {
            ProbeError::Tracefs(format!(
                "tracefs {}: cannot write {value:?}: {e}",
                self.dir.join(file).display()
            ))
        })
    }

    /// Whether the kernel has `group/event` (e.g. `jbd2/jbd2_run_stats`).
    pub fn has_event(&self, event: &str) -> bool {
        self.dir.join("events").join(event).join("enable").exists()
    }

    /// Enables an event with an optional filter (`dev == 7340034`).
    pub fn enable(&self, event: &str, filter: Option<&str>) -> Result<(), ProbeError> {
        if !self.has_event(event) {
            return Err(ProbeError::Tracefs(format!(
                "the kernel has no trace event {event}"
            )));
        }
        if let Some(f) = filter {
            self.write(&format!("events/{event}/filter"), f)?;
        }
        self.write(&format!("events/{event}/enable"), "1")
    }

    pub fn set_on(&self, on: bool) -> Result<(), ProbeError> {
        self.write("tracing_on", if on { "1" } else { "0" })
    }

    pub fn pipe_path(&self) -> PathBuf {
        self.dir.join("trace_pipe")
    }

    /// Events the ring buffer lost (overruns), summed over CPUs.
    pub fn dropped(&self) -> u64 {
        let Ok(rd) = std::fs::read_dir(self.dir.join("per_cpu")) else {
            return 0;
        };
        rd.flatten()
            .filter_map(|e| std::fs::read_to_string(e.path().join("stats")).ok())
            .map(|s| {
                s.lines()
                    .filter(|l| l.starts_with("overrun:") || l.starts_with("dropped events:"))
                    .filter_map(|l| l.split(':').nth(1)?.trim().parse::<u64>().ok())
                    .sum::<u64>()
            })
            .sum()
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        let _ = self.set_on(false);
        let _ = self.write("events/enable", "0");
        for _ in 0..50 {
            if std::fs::remove_dir(&self.dir).is_ok() || !self.dir.exists() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        if let Some(m) = &self.own_mount {
            let _ = rustix::mount::unmount(m, rustix::mount::UnmountFlags::DETACH);
            let _ = std::fs::remove_dir(m);
        }
        if !self.dir.exists() {
            let _ = self.journal.take_all();
            let _ = std::fs::remove_file(self.journal.path());
        }
    }
}
