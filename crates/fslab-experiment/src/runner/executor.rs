//! The workload's runner: [`Executor`], and
//! [`ProcessExecutor`], which runs the workload as a child process with the
//! probes beside it and stops it from outside when it must.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::AtomicBool;
use std::sync::mpsc;
use std::time::Duration;

use fslab_workload::ChildSpec;

use super::child::Beside;
use super::progress::Progress;
use crate::outcome::WorkloadOutcome;

/// The probes `fslab run` runs beside a workload, outside its cgroup: they
/// find the filesystem and its device from `dir`, and watch the workload's
/// process and `memory_cgroup`.
#[derive(Debug, Clone)]
pub struct Watch {
    pub kinds: Vec<fslab_probe::ProbeRef>,
    pub dir: PathBuf,
    /// The user named the probes (so one that does not apply says why).
    pub explicit: bool,
    pub memory_cgroup: Option<fslab_model::cgroup::MemoryCgroup>,
}

/// Runs a cell's workload.
pub trait Executor {
    /// Runs the workload child `spec` (in its harness's cgroup), with the
    /// probes of `watch` beside it, stopping it past `limit`.
    fn run(
        &mut self,
        spec: &ChildSpec,
        watch: Option<&Watch>,
        limit: Option<Duration>,
        stop: &AtomicBool,
        progress: &mut dyn Progress,
    ) -> WorkloadOutcome;

    /// Runs `fslab host-lab ACTION JSON` once on every host of the
    /// experiment's cluster and returns the stdout of the launch (one
    /// report line per host that answered), or why the launch failed.
    fn host_labs(&mut self, action: &str, json: &str) -> Result<HostLabsRun, LaunchError> {
        let _ = (action, json);
        Err(LaunchError::NoHosts)
    }

    /// As [`Executor::host_labs`], on the one host `host` of the cluster
    /// (to find which hosts cannot be reached).
    fn host_labs_on(
        &mut self,
        host: &str,
        action: &str,
        json: &str,
    ) -> Result<HostLabsRun, LaunchError> {
        let _ = (host, action, json);
        Err(LaunchError::NoHosts)
    }
}

/// Why `fslab host-lab` could not be launched on the hosts.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    /// This runner starts no hosts (a fake's default).
    #[error("this runner starts no hosts")]
    NoHosts,
    /// The experiment has no `[cluster]` to launch on.
    #[error("the experiment has no [cluster]")]
    NoCluster,
    /// The launcher could not be started, or waited for.
    #[error("{program}: {source}")]
    Launcher {
        program: String,
        #[source]
        source: std::io::Error,
    },
}

/// What one launch of `fslab host-lab` on every host gave.
#[derive(Debug, Clone, Default)]
pub struct HostLabsRun {
    pub stdout: String,
    pub stderr: String,
    /// The launcher's exit status (None: killed past its time).
    pub status: Option<i32>,
}

/// Runs `EXE --db DB job SPEC` as a child, under `mpirun -np RANKS` when
/// `ranks` is more than 1. The child tells how it goes in `ChildMessage`
/// lines on its stderr (see `runner::child`).
pub struct ProcessExecutor {
    pub exe: PathBuf,
    pub db: PathBuf,
    pub ranks: u32,
    /// `[cluster]`: the workload runs on its hosts, under its mpirun.
    pub cluster: Option<crate::spec::Cluster>,
    /// The workload starts its own ranks (a program under its launcher:
    /// [`fslab_workload::Workload::launches_ranks`]): it runs as one process.
    pub own_ranks: bool,
}

impl ProcessExecutor {
    /// The runner of `exp`'s workloads: this executable as the child, on
    /// the experiment's ranks or cluster, recording into `db`.
    pub fn of(exp: &crate::spec::Experiment, db: &Path) -> std::io::Result<ProcessExecutor> {
        Ok(ProcessExecutor {
            exe: std::env::current_exe()?,
            db: db.to_path_buf(),
            ranks: exp.workload.ranks,
            cluster: exp.cluster.clone(),
            own_ranks: exp.workload.kind.launches_ranks(),
        })
    }
}

/// How long one launch of `fslab host-lab` on every host may take.
const HOST_LAB_LIMIT: Duration = Duration::from_secs(180);

impl ProcessExecutor {
    /// `EXE --db DB job SPEC` (the spec serialized, once), under mpirun
    /// for several ranks.
    fn command(&self, spec: &ChildSpec) -> Command {
        let launcher = match &self.cluster {
            _ if self.own_ranks => None,
            // Exported to the ranks on other hosts too (over ssh the
            // environment stays behind; srun exports it by default).
            Some(c) if c.launch == crate::spec::cluster::Launch::Srun => Some(c.workload_mpirun()),
            Some(c) => Some(
                c.workload_mpirun()
                    .into_iter()
                    .chain([
                        "-x".into(),
                        fslab_cluster::rescue::LAUNCHER_RESCUES_ENV.into(),
                    ])
                    .collect::<Vec<String>>(),
            ),
            None => crate::plan::mpirun_prefix(self.ranks),
        };
        let mut cmd = match launcher {
            Some(prefix) => {
                let mut c = Command::new(&prefix[0]);
                c.args(&prefix[1..]).arg(&self.exe);
                // mpirun is not fslab: it is told to die with this process
                // here, and its ranks die with it (--die-with-parent).
                fslab_sys::die_with_parent(&mut c);
                // What ranks stopped by a signal keep is merged here once
                // mpirun has ended (see `rescue`), not by rank 0 within
                // Open MPI's grace before SIGKILL.
                c.env(fslab_cluster::rescue::LAUNCHER_RESCUES_ENV, "1");
                c
            }
            None => Command::new(&self.exe),
        };
        // A spec is plain data: it serializes.
        let json = serde_json::to_string(spec).unwrap_or_default();
        cmd.arg("--db").arg(&self.db).arg("job").arg(json);
        // The workload journals what it sets up (its tracefs instance) as
        // this run's child, so this run can undo it if the workload is killed.
        cmd.env(
            fslab_model::journal::PARENT_ENV,
            fslab_model::journal::parent_env_value(),
        );
        // A process group of its own: Ctrl-C on the terminal reaches this
        // process alone, which passes one SIGINT on (two would make the
        // workload exit at once instead of finishing its partial loop).
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        // With probes beside it, the workload waits at each phase boundary
        // for this process to answer on its stdin.
        if spec.harness.acks {
            cmd.stdin(Stdio::piped());
        } else {
            cmd.stdin(Stdio::null());
        }
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
        cmd
    }
}

impl ProcessExecutor {
    /// mpirun with one process on every host of the cluster, or on `only`.
    fn cluster_mpirun(&self, only: Option<&str>) -> Result<Vec<String>, LaunchError> {
        let Some(c) = &self.cluster else {
            return Err(LaunchError::NoCluster);
        };
        Ok(match only {
            Some(h) => crate::spec::Cluster {
                hosts: vec![h.to_string()],
                ..c.clone()
            }
            .mpirun(1),
            None => c.mpirun(1),
        })
    }

    /// The spools of ranks' results beside the store.
    fn spools(&self) -> Vec<PathBuf> {
        fslab_cluster::rescue::Spool::beside(&self.db)
            .into_iter()
            .map(|s| s.dir)
            .collect()
    }

    /// `EXE --db DB rescue SPOOL`, its messages read as the workload's: the
    /// run merged from what the surviving ranks kept, once mpirun has ended.
    fn rescue(
        &self,
        spool: &Path,
        side: &mut Beside,
        out: &mut WorkloadOutcome,
        progress: &mut dyn Progress,
    ) {
        let o = Command::new(&self.exe)
            .arg("--db")
            .arg(&self.db)
            .arg("rescue")
            .arg(spool)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .output();
        match o {
            Ok(o) => {
                for line in String::from_utf8_lossy(&o.stderr).lines() {
                    side.handle(line.to_string(), out, progress);
                }
            }
            Err(e) => side.said.push(format!(
                "fslab: cannot start {} rescue: {e}",
                self.exe.display()
            )),
        }
    }
}

/// Why a workload that sent no end message ended: its signal or status,
/// and the last thing it said.
fn why_it_ended(status: Option<std::process::ExitStatus>, said: &[String]) -> String {
    use std::os::unix::process::ExitStatusExt;
    let why = match (
        status.and_then(|s| s.signal()),
        status.and_then(|s| s.code()),
    ) {
        (Some(sig), _) => format!("the workload was killed by signal {sig}"),
        (None, Some(code)) => format!("the workload exited with status {code}"),
        _ => "the workload ended without a report".into(),
    };
    match said.iter().rev().find(|l| !l.trim().is_empty()) {
        Some(last) => format!("{why}: {last}"),
        None => why,
    }
}

impl Executor for ProcessExecutor {
    fn host_labs(&mut self, action: &str, json: &str) -> Result<HostLabsRun, LaunchError> {
        host_labs(&self.cluster_mpirun(None)?, &self.exe, action, json)
    }

    fn host_labs_on(
        &mut self,
        host: &str,
        action: &str,
        json: &str,
    ) -> Result<HostLabsRun, LaunchError> {
        host_labs(&self.cluster_mpirun(Some(host))?, &self.exe, action, json)
    }

    fn run(
        &mut self,
        spec: &ChildSpec,
        watch: Option<&Watch>,
        limit: Option<Duration>,
        stop: &AtomicBool,
        progress: &mut dyn Progress,
    ) -> WorkloadOutcome {
        let mut out = WorkloadOutcome::default();
        let mut cmd = self.command(spec);
        // The probes start first, in this process: outside the workload's
        // memory cgroup, and ready for its first phase.
        let mut probes = watch.map(|w| {
            fslab_probe::ProbeSet::start(&w.kinds, &w.dir, &fslab_probe::scratch_dir(), w.explicit)
        });
        let said: Vec<String> = probes
            .iter()
            .flat_map(|p| p.problems.iter().map(|e| format!("fslab: {e}")))
            .collect();
        let spools_before = self.spools();
        let mut child = match cmd.spawn() {
            Ok(c) => c,
            Err(e) => {
                out.error = Some(format!("cannot start {}: {e}", self.exe.display()));
                return out;
            }
        };
        if let (Some(p), Some(w)) = (probes.as_mut(), watch) {
            p.watch(fslab_probe::Watched {
                pid: child.id(),
                memory_cgroup: w.memory_cgroup.clone(),
            });
        }
        let acks = child.stdin.take();
        let mut stdout = child.stdout.take().expect("piped");
        let stderr = child.stderr.take().expect("piped");
        let reader = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = stdout.read_to_string(&mut s);
            s
        });
        let (tx, rx) = mpsc::channel::<String>();
        let err_reader = std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut side = Beside { probes, acks, said };
        let mut handle = |line: String, out: &mut WorkloadOutcome, progress: &mut dyn Progress| {
            side.handle(line, out, progress);
        };
        let mut guard = crate::deadline::Guard::new(child.id(), limit);
        let mut pressure = spec
            .harness
            .cgroup
            .as_deref()
            .and_then(fslab_lab::pressure::Watcher::new);
        let status = loop {
            match rx.recv_timeout(Duration::from_millis(100)) {
                Ok(line) => handle(line, &mut out, progress),
                Err(mpsc::RecvTimeoutError::Timeout)
                | Err(mpsc::RecvTimeoutError::Disconnected) => {}
            }
            guard.check(stop, crate::signals::hurry());
            if let Some(now) = pressure
                .as_mut()
                .and_then(fslab_lab::pressure::Watcher::poll)
            {
                progress.pressure(now.map(|p| p.to_string()).as_deref());
            }
            match child.try_wait() {
                Ok(Some(st)) => break Some(st),
                Ok(None) => {}
                Err(_) => break None,
            }
        };
        out.ended_by = guard.ended_by();
        out.pressure = pressure.and_then(|p| p.summary());
        let _ = err_reader.join();
        while let Ok(line) = rx.try_recv() {
            handle(line, &mut out, progress);
        }
        if out.status.is_none() && !self.own_ranks && (self.ranks > 1 || self.cluster.is_some()) {
            // The ranks were stopped (a host lost): what they kept.
            for spool in self.spools() {
                if !spools_before.contains(&spool) {
                    self.rescue(&spool, &mut side, &mut out, progress);
                }
            }
        }
        let Beside { probes, said, .. } = side;
        if let Some(mut p) = probes {
            use fslab_model::Monitor;
            out.probe_points.extend(p.drain());
            out.probe_notes.extend(p.finish());
            out.probe_points.extend(p.drain());
            out.probe_metrics.extend(p.metrics());
        }
        out.stderr = said.join("\n");
        // The workload's --json report is for people; its end came as a message.
        let _ = reader.join();
        use std::os::unix::process::ExitStatusExt;
        out.signal = status.and_then(|s| s.signal());
        if out.status.is_none() {
            out.error = Some(why_it_ended(status, &said));
        }
        // What a killed workload could not undo itself.
        for l in fslab_lab::undo::cleanup_children(
            &fslab_lab::undo::state_dir(),
            fslab_model::process::ProcessId::current(),
        ) {
            out.stderr
                .push_str(&format!("\nfslab: after the workload: {l}"));
        }
        out
    }
}

/// `MPIRUN... EXE host-lab ACTION JSON`, bounded by [`HOST_LAB_LIMIT`]:
/// what it printed and how it ended.
fn host_labs(
    mpirun: &[String],
    exe: &Path,
    action: &str,
    json: &str,
) -> Result<HostLabsRun, LaunchError> {
    let mut cmd = Command::new(&mpirun[0]);
    cmd.args(&mpirun[1..])
        .arg(exe)
        .args(["host-lab", action, json])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    fslab_sys::die_with_parent(&mut cmd);
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let launcher = |source| LaunchError::Launcher {
        program: mpirun[0].clone(),
        source,
    };
    let mut child = cmd.spawn().map_err(launcher)?;
    let read = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut s = String::new();
            let _ = r.read_to_string(&mut s);
            s
        })
    };
    let out = read(Box::new(child.stdout.take().expect("piped")));
    let err = read(Box::new(child.stderr.take().expect("piped")));
    let t = std::time::Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(st)) => break st.code(),
            Ok(None) if t.elapsed() > HOST_LAB_LIMIT => {
                // Its process group: mpirun and the agents it started.
                let _ = rustix::process::kill_process_group(
                    rustix::process::Pid::from_child(&child),
                    rustix::process::Signal::KILL,
                );
                let _ = child.wait();
                break None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(launcher(e)),
        }
    };
    Ok(HostLabsRun {
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
        status,
    })
}
