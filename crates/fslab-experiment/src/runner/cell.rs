//! One repetition of one cell, as a sequence of steps: the machine
//! settings (sysctls, memory cgroup), mkfs and mount (or a fresh
//! directory), the workload with its probes, what it left to collect, then
//! unmount and detach. Everything a step makes is journalled before it is
//! made and held by one teardown guard (`CellRun`) that undoes it on
//! every way out: the last step, a step that fails, or a panic.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use fslab_model::{CellRunInfo, ExperimentRecorder, PhaseResult, RunStatus};
use fslab_workload::ChildSpec;

use super::error::CellError;
use super::executor::{Executor, Watch};
use super::hosts::HostLabs;
use super::progress::Progress;
use crate::backend::{setup, DeviceConsent, Prepared};
use crate::evidence::Evidence;
use crate::outcome::WorkloadOutcome;
use crate::plan::{self, CellPlaces};
use crate::spec::{Cell, Device, Experiment};
use fslab_lab::machine::{self, read_sysctl, write_sysctl, MemCgroup, SysctlLock};
use fslab_lab::undo::{self, Journal, Resource};

/// What the scheduler runs each cell with: the workload's runner, the
/// store, the display, the stop flag and the journal.
pub(super) struct RunEnv<'a> {
    pub(super) exec: &'a mut dyn Executor,
    pub(super) rec: &'a mut dyn ExperimentRecorder,
    pub(super) progress: &'a mut dyn Progress,
    pub(super) stop: &'a AtomicBool,
    pub(super) journal: &'a mut Journal,
}

/// What one repetition of a cell gives the scheduler.
#[derive(Default)]
pub(super) struct CellResult {
    pub(super) error: Option<CellError>,
    pub(super) phases: Vec<PhaseResult>,
    pub(super) metrics: Vec<fslab_model::Metric>,
    pub(super) evidence: Evidence,
    /// What a first pass measured (`first pass ...`), for the judged run.
    pub(super) first_pass: Vec<fslab_model::Metric>,
}

/// Runs repetition `rep` of `cell`: its steps in order, the first that
/// fails ending them, then the teardown of whatever they made. Problems
/// while undoing go to `problems` (and fail the cell when it was the
/// filesystem's).
pub(super) fn run_cell(
    exp: &Experiment,
    cell: &Cell,
    rep: u32,
    consent: &DeviceConsent,
    env: &mut RunEnv,
    info: &mut CellRunInfo,
    problems: &mut Vec<String>,
) -> CellResult {
    let mut run = CellRun {
        exp,
        cell,
        rep,
        consent,
        env,
        info,
        problems,
        machine: MachineHeld::default(),
        cgroup: None,
        labs: None,
        prepared: None,
        log: None,
        res: CellResult::default(),
    };
    if let Err(e) = run.steps() {
        run.res.error = Some(e);
    }
    run.teardown();
    std::mem::take(&mut run.res)
}

/// One cell's run and what it holds: the teardown guard. Each field that
/// holds something is taken by [`CellRun::teardown`], so undoing happens
/// once, whichever way the steps ended ([`Drop`] calls it too).
struct CellRun<'r, 'e> {
    exp: &'r Experiment,
    cell: &'r Cell,
    rep: u32,
    consent: &'r DeviceConsent,
    env: &'r mut RunEnv<'e>,
    info: &'r mut CellRunInfo,
    problems: &'r mut Vec<String>,
    /// The sysctls set (with their locks).
    machine: MachineHeld,
    /// The workload's memory cgroup and its journal entry.
    cgroup: Option<(MemCgroup, u64)>,
    /// The filesystem made and mounted (or the fresh directory).
    prepared: Option<Prepared>,
    /// A cluster's hosts' own filesystems.
    labs: Option<HostLabs>,
    /// The file the workload's text goes to, and its journal entry.
    log: Option<(PathBuf, u64)>,
    res: CellResult,
}

impl Drop for CellRun<'_, '_> {
    fn drop(&mut self) {
        self.teardown();
    }
}

impl CellRun<'_, '_> {
    /// The steps, in order; `?` leaves at the first that fails.
    fn steps(&mut self) -> Result<(), CellError> {
        // Machine settings first, each journalled before it is changed.
        let applied = self
            .machine
            .apply(self.exp, self.cell, self.rep, self.env, self.info);
        self.cgroup = self.machine.cgroup.take();
        applied?;
        let workdir = if per_host(self.exp) {
            self.env.progress.step("mkfs and mount on every host");
            let (labs, made) = HostLabs::up(
                self.exp,
                self.cell,
                self.rep,
                self.consent.keep_images,
                self.env.exec,
                self.env.journal,
                self.info,
            );
            let mnt = labs.mnt.clone();
            self.labs = Some(labs);
            made?;
            mnt
        } else {
            self.env.progress.step(match &self.exp.device {
                _ if self.cell.path.is_some() => "making a fresh directory",
                Device::Directory { .. } => "making a fresh directory",
                _ => "mkfs and mount",
            });
            let prepared = setup(
                self.exp,
                self.cell,
                self.rep,
                self.consent,
                self.env.journal,
                self.info,
            )?;
            let workdir = prepared.workdir().to_path_buf();
            self.prepared = Some(prepared);
            workdir
        };
        let (spec, log) = self.child(&workdir)?;
        if self.labs.is_none() {
            self.check_workdir(&workdir)?;
        }
        self.env.progress.step("workload");
        let log_id = self.env.journal.add(Resource::File { path: log.clone() })?;
        self.log = Some((log.clone(), log_id));
        if let Some(pass) = &self.exp.first_pass {
            self.first_pass(pass, &spec, &workdir)?;
        }
        let w = self.workload(&spec, &workdir);
        self.collect(w, &spec, &log);
        Ok(())
    }

    /// The first pass (`[first_pass]`): the workload once with the first
    /// pass's IO scheduler, the image's extents counted, the cgroup's
    /// counters reset, then the filesystem made again on the same image with
    /// the judged run's scheduler and the workload's directories made anew.
    fn first_pass(
        &mut self,
        pass: &crate::spec::FirstPass,
        spec: &ChildSpec,
        workdir: &Path,
    ) -> Result<(), CellError> {
        use super::first_pass as fp;
        let Some(image) = self
            .prepared
            .as_ref()
            .and_then(|p| p.image_path().map(Path::to_path_buf))
        else {
            return Ok(());
        };
        let judged = match &self.exp.device {
            Device::Image { scheduler, .. } => scheduler.clone(),
            _ => None,
        };
        if let Some(s) = &pass.scheduler {
            let p = self.prepared.as_mut().expect("set up before");
            p.use_scheduler(s, &image, self.env.journal, self.info)?;
            self.info.first_pass_scheduler = s.clone();
        }
        self.env.progress.step("first pass");
        let w = self.workload(spec, workdir);
        self.info.first_pass_run_id = w.run_id;
        if let Some(e) = w
            .ended_by
            .map(|end| end.describe(w.error.as_deref(), w.pressure.as_deref()))
            .or(w.error.clone())
        {
            return Err(CellError::Workload(format!("first pass: {e}")));
        }
        let mut measured = fp::metrics(&w);
        let p = self.prepared.as_mut().expect("set up before");
        p.unmount_only(self.env.journal)?;
        measured.extend(fp::image_counts(&image, pass).map_err(|e| {
            CellError::Workload(format!(
                "first pass: counting {}'s extents: {e}",
                image.display()
            ))
        })?);
        if let Some((cg, _)) = &self.cgroup {
            cg.reset_counters()?;
        }
        let back = judged.or_else(|| p.original_scheduler().map(String::from));
        if let Some(s) = back {
            p.use_scheduler(&s, &image, self.env.journal, self.info)?;
        }
        self.env
            .progress
            .step("mkfs and mount again on the first pass's image");
        p.remake(
            &self.cell.mkfs_options,
            &self.cell.after_mkfs,
            self.env.journal,
            self.info,
        )?;
        for d in plan::workload_dirs(self.exp, workdir) {
            let _ = std::fs::create_dir_all(d);
        }
        self.check_workdir(workdir)?;
        self.res.first_pass = measured;
        self.env.progress.step("workload");
        Ok(())
    }

    /// The workload child working in `workdir` ([`plan::child_spec`]),
    /// with the file its text goes to (stored with the cell), and its
    /// directories made.
    fn child(&self, workdir: &Path) -> Result<(ChildSpec, PathBuf), CellError> {
        let log = self.env.journal.mount_base().with_file_name(format!(
            "log-{}-c{}-r{}.txt",
            std::process::id(),
            self.cell.index,
            self.rep
        ));
        let places = CellPlaces {
            text_to: Some(log.clone()),
            cgroup: self.cgroup.as_ref().map(|c| c.0.path().to_path_buf()),
        };
        let spec = plan::child_spec(self.exp, self.cell, workdir, places)?;
        // The hosts' filesystems are not mounted here: the workload makes
        // its directories there itself.
        for d in plan::workload_dirs(self.exp, workdir) {
            if self.labs.is_none() {
                let _ = std::fs::create_dir_all(d);
            }
        }
        Ok((spec, log))
    }

    /// The workload directories must be on the new filesystem.
    fn check_workdir(&self, workdir: &Path) -> Result<(), CellError> {
        std::fs::create_dir_all(workdir).map_err(CellError::Workdir)?;
        let prepared = self.prepared.as_ref().expect("set up before");
        Ok(prepared.verify(workdir)?)
    }

    /// Runs the workload in its cgroup with the probes beside it, and
    /// keeps what the probes recorded with its run.
    fn workload(&mut self, spec: &ChildSpec, workdir: &Path) -> WorkloadOutcome {
        let cgroup = self.cgroup.as_ref().map(|c| &c.0);
        let watch = Watch::of(self.exp, workdir, cgroup);
        let w = self.env.exec.run(
            spec,
            watch.as_ref(),
            self.exp.time_limit,
            self.env.stop,
            self.env.progress,
        );
        if let Err(e) = record_probes(self.env.rec, &w) {
            self.problems
                .push(format!("results store: the probes' records: {e}"));
        }
        w
    }

    /// What the workload left: its status, text, memory use, error, the
    /// findings' evidence, its metrics and those measured on the
    /// filesystem after it (htree levels).
    fn collect(&mut self, w: WorkloadOutcome, spec: &ChildSpec, log: &Path) {
        let info = &mut *self.info;
        info.run_id = w.run_id;
        info.status = w.status;
        info.output = std::fs::read_to_string(log).unwrap_or_default();
        if let Some((cg, _)) = &self.cgroup {
            info.memory_max_usage_bytes = cg.max_usage();
            info.memory_failcnt = cg.failcnt();
        }
        let res = &mut self.res;
        res.error = cell_error(self.exp, &w, info, self.env.rec).map(CellError::Workload);
        res.evidence = evidence_of(&w);
        res.phases = w.phases;
        res.metrics = w.metrics;
        res.metrics.extend(w.probe_metrics);
        if let (Some(id), false) = (w.run_id, res.first_pass.is_empty()) {
            if let Err(e) = self.env.rec.record_metrics(id, &res.first_pass) {
                self.problems.push(format!("results store: {e}"));
            }
        }
        res.metrics.append(&mut res.first_pass);
        // On a cluster's hosts' filesystems nothing is measured from here.
        let after = match &self.prepared {
            Some(p) => {
                let filled = spec.job.filled_dir();
                let mut v = crate::backend::after_workload(filled.as_deref());
                v.extend(crate::after::measured(
                    self.exp,
                    filled.as_deref(),
                    p.workdir(),
                ));
                v
            }
            None => Vec::new(),
        };
        if let (Some(id), false) = (w.run_id, after.is_empty()) {
            if let Err(e) = self.env.rec.record_metrics(id, &after) {
                self.problems.push(format!("results store: {e}"));
            }
        }
        res.metrics.extend(after);
    }

    /// Undoes what the steps made, last made first: the workload's text
    /// file (read by then), the filesystem
    /// (unmount, with a timed remount unless a second signal hurries it;
    /// detach), the memory cgroup, the sysctls. Each piece is taken, so a
    /// second call does nothing.
    fn teardown(&mut self) {
        if let Some((log, id)) = self.log.take() {
            let _ = std::fs::remove_file(log);
            self.env.journal.done(id);
        }
        if let Some(labs) = self.labs.take() {
            self.env.progress.step("undoing every host's filesystem");
            let problems = labs.down(self.exp, self.env.exec, self.env.journal);
            if let Some(first) = problems.first() {
                self.res
                    .error
                    .get_or_insert(CellError::Workload(first.clone()));
            }
            self.problems.extend(problems);
        }
        if let Some(prepared) = self.prepared.take() {
            let torn = if crate::signals::hurry() {
                self.env.progress.step("teardown (second signal)");
                let mut prepared = prepared;
                prepared.teardown_quietly(self.env.journal, self.info)
            } else {
                self.env.progress.step("unmount, remount, teardown");
                prepared.teardown(self.env.journal, self.info)
            };
            if let Err(e) = torn {
                self.problems.push(e.to_string());
                self.res.error.get_or_insert(CellError::Lab(e));
            }
        }
        if let Some((cg, id)) = self.cgroup.take() {
            match cg.remove() {
                Ok(()) => self.env.journal.done(id),
                Err(e) => self.problems.push(e.to_string()),
            }
        }
        std::mem::take(&mut self.machine).restore(self.env.journal, self.problems);
    }
}

/// Whether each of the experiment's hosts makes its own filesystem (a
/// `[cluster]` without a shared directory).
fn per_host(exp: &Experiment) -> bool {
    exp.cluster.as_ref().is_some_and(|c| c.shared_dir.is_none())
}

/// The machine-wide settings a cell holds while it runs: its sysctls
/// (each locked against other fslab runs, journalled with its original
/// value, then set) and its memory cgroup.
#[derive(Default)]
struct MachineHeld {
    sysctls: Vec<(u64, String, String)>,
    locks: Vec<SysctlLock>,
    cgroup: Option<(MemCgroup, u64)>,
}

impl MachineHeld {
    fn apply(
        &mut self,
        exp: &Experiment,
        cell: &Cell,
        rep: u32,
        env: &mut RunEnv,
        info: &mut CellRunInfo,
    ) -> Result<(), CellError> {
        let state = env
            .journal
            .path()
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(undo::state_dir);
        // In name order, so that two runs never wait for each other.
        for (name, value) in &cell.sysctl {
            let lock = SysctlLock::acquire(&machine::lock_dir(), name, env.stop, &mut |m| {
                env.progress.note(&m);
            })?;
            self.locks.push(lock);
            if let Some(pid) = undo::sysctl_left_by_dead_run(&state, name) {
                return Err(CellError::LeftChanged {
                    name: name.clone(),
                    pid,
                });
            }
            let orig = read_sysctl(name)?;
            info.sysctl_before.insert(name.clone(), orig.clone());
            let id = env.journal.add(Resource::Sysctl {
                name: name.clone(),
                original: orig.clone(),
            })?;
            self.sysctls.push((id, name.clone(), orig));
            write_sysctl(name, value)?;
            let now = read_sysctl(name)?;
            info.sysctl_during.insert(name.clone(), now);
        }
        if let Some(limit) = exp.machine.memory_limit {
            let name = format!("fslab-{}-c{}-r{}", std::process::id(), cell.index, rep);
            let path = MemCgroup::path_for(&name)?;
            let id = env.journal.add(Resource::Cgroup { path })?;
            match MemCgroup::create(&name, limit) {
                Ok(cg) => {
                    info.cgroup = Some(cg.path().display().to_string());
                    self.cgroup = Some((cg, id));
                }
                Err(e) => {
                    env.journal.done(id);
                    return Err(e.into());
                }
            }
        }
        Ok(())
    }

    /// Restores the sysctls (last set, first restored), then lets other
    /// runs have them.
    fn restore(mut self, journal: &mut Journal, problems: &mut Vec<String>) {
        for (id, name, orig) in self.sysctls.drain(..).rev() {
            match write_sysctl(&name, &orig) {
                Ok(()) => journal.done(id),
                Err(e) => problems.push(e.to_string()),
            }
        }
        drop(self.locks);
    }
}

impl Watch {
    /// The probes `fslab run` runs beside the workload of `exp` working in
    /// `dir` (None: the workload's MPI ranks run their own). With no
    /// probes asked for, the machine's own measurements still run (each
    /// phase's clock, page cache and pressure).
    fn of(exp: &Experiment, dir: &Path, cgroup: Option<&MemCgroup>) -> Option<Watch> {
        plan::probes_beside(exp).map(|kinds| Watch {
            kinds,
            dir: dir.to_path_buf(),
            explicit: exp.workload.probes.is_some(),
            memory_cgroup: cgroup.map(MemCgroup::watched),
        })
    }
}

/// Keeps what the probes beside a workload recorded, with its run.
fn record_probes(
    rec: &mut dyn ExperimentRecorder,
    w: &WorkloadOutcome,
) -> Result<(), fslab_model::RecordError> {
    let Some(id) = w.run_id else {
        return Ok(());
    };
    rec.record_probe_points(id, &w.probe_points)?;
    rec.record_metrics(id, &w.probe_metrics)?;
    w.probe_notes
        .iter()
        .try_for_each(|n| rec.record_probe_note(id, n))
}

/// What the findings read from a workload's probes.
fn evidence_of(w: &WorkloadOutcome) -> Evidence {
    let phases: Vec<String> = w.phases.iter().map(|p| p.phase.clone()).collect();
    Evidence::of(
        &phases,
        w.probe_notes
            .iter()
            .map(|n| (n.phase_index, n.probe.as_str(), n.key.as_str(), &n.value)),
        w.probe_points
            .iter()
            .map(|p| (p.phase_index, p.probe.as_str(), p.metric.as_str(), p.value)),
    )
}

/// Why a cell's workload did not complete, and its status when it was
/// ended from outside: a time limit fails it, a second signal interrupts
/// it (and the workload's own run record says so too); a workload killed
/// with SIGKILL (the kernel at the memory limit) fails it, naming the
/// limit. None when the workload ended by itself without error.
fn cell_error(
    exp: &Experiment,
    w: &WorkloadOutcome,
    info: &mut CellRunInfo,
    rec: &mut dyn ExperimentRecorder,
) -> Option<String> {
    if let Some(end) = w.ended_by {
        let e = end.describe(w.error.as_deref(), w.pressure.as_deref());
        info.status = Some(end.status());
        if let Some(id) = w.run_id {
            let _ = rec.finish_run(id, end.status(), Some(&e));
        }
        return Some(e);
    }
    let mut e = w.error.clone()?;
    if w.signal == Some(9) {
        if let (Some(limit), Some(fails)) = (exp.machine.memory_limit, info.memory_failcnt) {
            e = format!(
                "{e} (memory limit {} was hit {fails} times)",
                fslab_lab::human_bytes(limit)
            );
        }
        // The killed workload could not close its run.
        if let Some(id) = w.run_id {
            let _ = rec.finish_run(id, RunStatus::Failed, Some(&e));
        }
    }
    Some(e)
}
