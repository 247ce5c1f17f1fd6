//! A `[cluster]` cell's hosts: each host's own filesystem made before the
//! workload and undone after it (`fslab host-lab up` / `down` on every
//! host, through the cluster's launcher, one process per host), and the
//! check that a shared directory is seen by every host.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use fslab_model::CellRunInfo;

use super::executor::{Executor, HostLabsRun};
use crate::spec::{Cell, Cluster, Experiment};
use fslab_lab::host_lab::{self, Check, Down, Report};
use fslab_lab::undo::{Journal, Resource};

/// Why the hosts' labs could not be made, or a shared directory is not
/// shared.
#[derive(Debug, thiserror::Error)]
pub enum HostsError {
    /// The launch itself failed.
    #[error(transparent)]
    Launch(#[from] super::executor::LaunchError),
    /// A `[cluster]`'s hosts make their filesystems on images only.
    #[error("a cluster's hosts make their filesystems on images")]
    NotImages,
    /// Named hosts failed.
    #[error("{0}")]
    Hosts(String),
    /// The state journal could not record the mount point.
    #[error(transparent)]
    Journal(#[from] fslab_model::journal::JournalError),
    /// The marker in the shared directory could not be written.
    #[error("cannot write {}: {source}", path.display())]
    Marker {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// The launcher's last words, for an error line.
fn last_words(run: &HostLabsRun) -> String {
    run.stderr
        .lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty() && !l.starts_with("---"))
        .unwrap_or("")
        .to_string()
}

/// The reports of `run`, and what is wrong with it: hosts that failed
/// (named, with their error) or that sent nothing (counted, with what the
/// launcher said).
fn read(run: &HostLabsRun, cluster: &Cluster, what: &str) -> (Vec<Report>, Option<String>) {
    let reports = host_lab::reports(&run.stdout);
    let mut wrong: Vec<String> = reports
        .iter()
        .filter(|r| !r.ok)
        .map(|r| {
            format!(
                "host {}: {}",
                r.host,
                r.error.as_deref().unwrap_or("failed")
            )
        })
        .collect();
    let want = cluster.hosts.len();
    if reports.len() < want {
        let mut m = format!(
            "{what}: {} of {want} hosts answered ({})",
            reports.len(),
            cluster.hosts.join(", ")
        );
        let words = last_words(run);
        if !words.is_empty() {
            m += &format!(": {words}");
        }
        wrong.push(m);
    }
    let wrong = (!wrong.is_empty()).then(|| wrong.join("; "));
    (reports, wrong)
}

/// The cell's filesystem on every host, mounted at one path, until
/// [`HostLabs::down`].
pub(super) struct HostLabs {
    /// Each host's journal (its lab's).
    journals: BTreeMap<String, PathBuf>,
    /// The mount point this run made (the head's), journalled.
    mount_dir: Option<(PathBuf, u64)>,
    pub(super) mnt: PathBuf,
}

impl HostLabs {
    /// Makes repetition `rep` of `cell` on every host. Hosts whose lab
    /// was made are held even when another failed (so that `down` undoes
    /// them); the error names the hosts that failed.
    pub(super) fn up(
        exp: &Experiment,
        cell: &Cell,
        rep: u32,
        keep_images: bool,
        exec: &mut dyn Executor,
        journal: &mut Journal,
        info: &mut CellRunInfo,
    ) -> (HostLabs, Result<(), HostsError>) {
        let mnt = journal
            .mount_base()
            .join(format!("c{}-r{}", cell.index, rep));
        let mut labs = HostLabs {
            journals: BTreeMap::new(),
            mount_dir: None,
            mnt: mnt.clone(),
        };
        let r = labs.make(exp, cell, rep, keep_images, exec, journal, info);
        (labs, r)
    }

    #[allow(clippy::too_many_arguments)]
    fn make(
        &mut self,
        exp: &Experiment,
        cell: &Cell,
        rep: u32,
        keep_images: bool,
        exec: &mut dyn Executor,
        journal: &mut Journal,
        info: &mut CellRunInfo,
    ) -> Result<(), HostsError> {
        let cluster = exp.cluster.as_ref().expect("a cluster experiment");
        // The one path every host mounts at, made here first: on hosts
        // that share this machine's root (namespaces) no host makes or
        // removes it, so none removes another's mount point.
        let id = journal.add(Resource::MountDir {
            path: self.mnt.clone(),
        })?;
        self.mount_dir = Some((self.mnt.clone(), id));
        let _ = std::fs::create_dir_all(&self.mnt);
        let Some(job) = crate::host_lab::up_job(exp, cell, rep, &self.mnt, keep_images) else {
            return Err(HostsError::NotImages);
        };
        let json = serde_json::to_string(&job).unwrap_or_default();
        let run = exec.host_labs("up", &json).map_err(HostsError::Launch)?;
        let (reports, wrong) = read(&run, cluster, "making each host's filesystem");
        for r in &reports {
            if let Some(j) = &r.journal {
                self.journals.insert(r.host.clone(), j.clone());
            }
        }
        let ok: Vec<&Report> = reports.iter().filter(|r| r.ok).collect();
        let each = |f: &dyn Fn(&Report) -> String| {
            ok.iter()
                .map(|r| format!("{}: {}", r.host, f(r)))
                .collect::<Vec<_>>()
                .join(", ")
        };
        info.loop_device = each(&|r| r.loop_device.clone());
        info.image_path = each(&|r| r.image.clone());
        info.image_size = job.size;
        info.kernel_mount_options = ok
            .first()
            .map(|r| r.kernel_options.clone())
            .unwrap_or_default();
        info.host_fs = fslab_lab::image::host_fs(&job.image_dir);
        let fs = fslab_lab::mkfs::FsType::parse(&job.fs);
        info.mkfs_argv =
            fslab_lab::mkfs::mkfs_argv(&fs, &job.mkfs_options, Path::new("/dev/loopN"));
        info.mount_argv = fslab_lab::mount::mount_argv(
            Path::new("/dev/loopN"),
            &self.mnt,
            fs.name(),
            &job.mount_options,
        );
        match wrong {
            Some(w) => Err(HostsError::Hosts(w)),
            None => Ok(()),
        }
    }

    /// Undoes every host's lab, then the mount point; what went wrong,
    /// one line a host.
    pub(super) fn down(
        mut self,
        exp: &Experiment,
        exec: &mut dyn Executor,
        journal: &mut Journal,
    ) -> Vec<String> {
        let mut problems = Vec::new();
        if !self.journals.is_empty() {
            let cluster = exp.cluster.as_ref().expect("a cluster experiment");
            let job = Down {
                journals: std::mem::take(&mut self.journals),
            };
            let json = serde_json::to_string(&job).unwrap_or_default();
            match exec.host_labs("down", &json) {
                Err(e) => problems.push(format!("undoing the hosts' filesystems: {e}")),
                Ok(run) => {
                    let reports = host_lab::reports(&run.stdout);
                    for (host, j) in &job.journals {
                        match reports.iter().find(|r| &r.host == host) {
                            Some(r) if r.ok => {}
                            Some(r) => problems.push(format!(
                                "host {host}: {}",
                                r.error.as_deref().unwrap_or("failed")
                            )),
                            None => problems.push(format!(
                                "host {host} did not undo its filesystem ({}): run `fslab \
                                 cleanup` there",
                                j.display()
                            )),
                        }
                    }
                    let _ = cluster;
                }
            }
        }
        if let Some((dir, id)) = self.mount_dir.take() {
            match std::fs::remove_dir(&dir) {
                Ok(()) => journal.done(id),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => journal.done(id),
                Err(e) => problems.push(format!("cannot remove {}: {e}", dir.display())),
            }
        }
        problems
    }
}

/// Checks, before anything is made, that every host can be reached (the
/// launcher starts fslab on it) and, with `cluster.shared_dir`, that every
/// host sees it (a marker the head writes there). The error names the
/// hosts that cannot be reached (each tried alone when the launch on all
/// of them did not answer for every host) or do not see the marker; a
/// launcher that cannot start at all is a launch failure.
pub fn check_hosts(cluster: &Cluster, exec: &mut dyn Executor) -> Result<(), HostsError> {
    let marker = cluster
        .shared_dir
        .as_ref()
        .map(|dir| dir.join(format!(".fslab-shared-{}", std::process::id())));
    if let Some(m) = &marker {
        std::fs::write(m, "written by fslab run's head node\n").map_err(|source| {
            HostsError::Marker {
                path: m.clone(),
                source,
            }
        })?;
    }
    let json = serde_json::to_string(&Check {
        marker: marker.clone(),
    })
    .unwrap_or_default();
    let answers = check_each(cluster, exec, &json);
    if let Some(m) = &marker {
        let _ = std::fs::remove_file(m);
    }
    let (reports, unreached) = answers?;
    if !unreached.is_empty() {
        return Err(HostsError::Hosts(format!(
            "cluster.hosts: host {} cannot be reached: the launcher could not start fslab there",
            unreached.join(", host ")
        )));
    }
    let blind: Vec<&str> = reports
        .iter()
        .filter(|r| !r.ok)
        .map(|r| r.host.as_str())
        .collect();
    match (&cluster.shared_dir, blind.is_empty()) {
        (Some(dir), false) => Err(HostsError::Hosts(format!(
            "cluster.shared_dir {} is not shared: host {} does not see what the head node \
             writes there",
            dir.display(),
            blind.join(", host ")
        ))),
        _ => Ok(()),
    }
}

/// `host-lab check JSON` on every host at once; when not every host
/// answers, on each alone. The hosts' reports, and the hosts that did not
/// answer (with what the launcher said about them).
fn check_each(
    cluster: &Cluster,
    exec: &mut dyn Executor,
    json: &str,
) -> Result<(Vec<Report>, Vec<String>), HostsError> {
    let all = exec.host_labs("check", json).map_err(HostsError::Launch)?;
    let reports = host_lab::reports(&all.stdout);
    if reports.len() >= cluster.hosts.len() {
        return Ok((reports, Vec::new()));
    }
    let (mut reports, mut unreached) = (Vec::new(), Vec::new());
    for h in &cluster.hosts {
        let alone = exec
            .host_labs_on(h, "check", json)
            .map_err(HostsError::Launch)?;
        match host_lab::reports(&alone.stdout).pop() {
            Some(r) => reports.push(r),
            None => unreached.push(format!("{h} ({})", about(&alone, h))),
        }
    }
    Ok((reports, unreached))
}

/// What the launcher said about `host` (its agent's line naming it, as
/// ssh's or a launch agent's), else how it ended.
fn about(run: &HostLabsRun, host: &str) -> String {
    run.stderr
        .lines()
        .map(str::trim)
        .find(|l| l.contains(host))
        .map(String::from)
        .unwrap_or_else(|| match run.status {
            Some(code) => format!("the launcher exited with status {code}"),
            None => "the launcher did not end in time".into(),
        })
}
