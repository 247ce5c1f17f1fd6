//! Undoing what the state journal lists (see [`fslab_model::journal`]):
//! every resource `fslab run` and its workloads set up is written there
//! durably before it is used and struck out when it is undone, so `fslab
//! cleanup` can undo what a run killed with SIGKILL left behind, touching
//! nothing its journals do not list.

use std::path::{Path, PathBuf};

use fslab_model::journal::{journals, StateFile};
pub use fslab_model::journal::{state_dir, Journal, JournalError, Resource};
use fslab_model::process::ProcessId;

use crate::loopdev::backing_file;
use crate::machine::{lock_dir, read_sysctl, remove_cgroup, write_sysctl, SysctlLock};
use crate::mount::is_mount_point;

/// Why a journalled resource could not be undone. The words are what
/// `fslab cleanup` and a run's teardown print after "FAILED: ".
#[derive(Debug, thiserror::Error)]
pub enum UndoError {
    /// A file, directory or tree could not be removed.
    #[error("cannot remove {}: {source}", path.display())]
    Remove {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A tracefs instance stayed busy.
    #[error("cannot remove tracefs instance {}: {source}", path.display())]
    TracefsInstance {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Not even a lazy unmount worked.
    #[error("cannot unmount {}: {source}", path.display())]
    Unmount {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The loop device could not be opened to detach it.
    #[error("cannot open {}: {source}", device.display())]
    OpenLoop {
        device: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The loop device kept its image after it was told to let go.
    #[error("{} is still bound to {}", device.display(), backing.display())]
    StillBound { device: PathBuf, backing: PathBuf },
    /// A live run holds the sysctl now: it is not restored under it.
    #[error("sysctl {0} is held by a running fslab run: left as it is")]
    SysctlHeld(String),
    /// Another process bound the loop device to an image of its own since:
    /// its IO scheduler is theirs now.
    #[error("/dev/loop{number} is bound to another image now: its IO scheduler is left as it is (was {original})")]
    SchedulerRebound { number: u32, original: String },
    /// A journal could not be read.
    #[error("cannot read the journal {}: {source}", path.display())]
    ReadJournal {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A host lab's journal that another host made (its mounts are not
    /// this host's to undo).
    #[error("{} is host {host}'s lab, not this host's", journal.display())]
    OtherHost { journal: PathBuf, host: String },
    /// Reading or writing a sysctl or an IO scheduler, or removing a
    /// cgroup, failed.
    #[error("{0}")]
    Lab(#[from] crate::LabError),
}

/// What undoing one resource did: what it says, or None when nothing
/// was left to undo.
type Undone = Result<Option<String>, UndoError>;

/// A removal's result: gone already is nothing to do.
fn removed(path: &Path, r: std::io::Result<()>, done: String) -> Undone {
    match r {
        Ok(()) => Ok(Some(done)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(UndoError::Remove {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// Undoes whatever `journal` still lists (in reverse order) and removes it
/// with the run's mount-point directory.
pub fn close(mut journal: Journal) -> Vec<String> {
    let base = journal.mount_base();
    let left = journal.take_all();
    let report = undo_all(&left);
    let _ = std::fs::remove_dir(base);
    if !report.iter().any(|l| l.starts_with("FAILED")) {
        journal.remove();
    }
    report
}

/// What a journalled resource is, for people: "loop device /dev/loop7
/// (image /var/tmp/x.img)", "sysctl vm.dirty_ratio (was 20)".
pub fn describe(r: &Resource) -> String {
    match r {
        Resource::Mount { target } => format!("mount {}", target.display()),
        Resource::MountDir { path } => format!("mount point {}", path.display()),
        Resource::Loop { number, backing } => {
            format!(
                "loop device /dev/loop{number} (image {})",
                backing.display()
            )
        }
        Resource::Tree { path } => format!("directory tree {}", path.display()),
        Resource::TracefsInstance { path } => format!("tracefs instance {}", path.display()),
        Resource::TracefsMount { path } => format!("private tracefs mount {}", path.display()),
        Resource::File { path } => format!("file {}", path.display()),
        Resource::Image { path, keep: true } => format!("image {} (kept)", path.display()),
        Resource::Image { path, .. } => format!("image {}", path.display()),
        Resource::Sysctl { name, original } => format!("sysctl {name} (was {original})"),
        Resource::Cgroup { path } => format!("memory cgroup {}", path.display()),
        Resource::Scheduler {
            number, original, ..
        } => format!("IO scheduler of /dev/loop{number} (was {original})"),
    }
}

/// Undoes one resource; returns what was done (None if nothing was left to do).
pub fn undo(r: &Resource) -> Undone {
    match r {
        Resource::Mount { target } => unmount(target),
        Resource::MountDir { path } => removed(
            path,
            std::fs::remove_dir(path),
            format!("removed mount point {}", path.display()),
        ),
        Resource::Loop { number, backing } => detach(*number, backing),
        Resource::Tree { path } => removed(
            path,
            std::fs::remove_dir_all(path),
            format!("removed {}", path.display()),
        ),
        Resource::TracefsInstance { path } => remove_tracefs_instance(path),
        Resource::TracefsMount { path } => remove_tracefs_mount(path),
        Resource::File { path } => removed(
            path,
            std::fs::remove_file(path),
            format!("removed {}", path.display()),
        ),
        Resource::Image { path, keep: true } => Ok(path
            .exists()
            .then(|| format!("kept image {} (--keep-images)", path.display()))),
        Resource::Image { path, .. } => removed(
            path,
            std::fs::remove_file(path),
            format!("removed image {}", path.display()),
        ),
        Resource::Sysctl { name, original } => {
            // Never under a live run that holds the setting now.
            let _held = SysctlLock::try_acquire(&lock_dir(), name)?
                .ok_or_else(|| UndoError::SysctlHeld(name.clone()))?;
            let now = read_sysctl(name)?;
            if &now == original {
                return Ok(None);
            }
            write_sysctl(name, original)?;
            Ok(Some(format!("restored {name} = {original}")))
        }
        Resource::Scheduler {
            number,
            backing,
            original,
        } => restore_scheduler(*number, backing, original),
        Resource::Cgroup { path } => {
            if !path.exists() {
                return Ok(None);
            }
            remove_cgroup(path)?;
            Ok(Some(format!("removed cgroup {}", path.display())))
        }
    }
}

/// Puts back loop device `number`'s IO scheduler, unless another process
/// has bound it to an image of its own since (then it is theirs: left).
fn restore_scheduler(number: u32, backing: &Path, original: &str) -> Undone {
    if backing_file(number).is_some_and(|b| b != backing) {
        return Err(UndoError::SchedulerRebound {
            number,
            original: original.to_string(),
        });
    }
    let file = crate::scheduler::loop_file(number);
    let now = crate::scheduler::read(&file)?;
    if now.current == original {
        return Ok(None);
    }
    crate::scheduler::write(&file, original)?;
    Ok(Some(format!(
        "restored /dev/loop{number}'s IO scheduler {original} (was {})",
        now.current
    )))
}

/// Unmounts `target` (lazily when it stays busy for 3 s).
fn unmount(target: &Path) -> Undone {
    if !is_mount_point(target) {
        return Ok(None);
    }
    let mut res = rustix::mount::unmount(target, rustix::mount::UnmountFlags::empty());
    for _ in 0..30 {
        if res != Err(rustix::io::Errno::BUSY) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
        res = rustix::mount::unmount(target, rustix::mount::UnmountFlags::empty());
    }
    if res.is_err() {
        rustix::mount::unmount(target, rustix::mount::UnmountFlags::DETACH).map_err(|e| {
            UndoError::Unmount {
                path: target.to_path_buf(),
                source: e.into(),
            }
        })?;
    }
    Ok(Some(format!("unmounted {}", target.display())))
}

/// Detaches loop device `number` if it is still bound to `backing`.
fn detach(number: u32, backing: &Path) -> Undone {
    if backing_file(number).as_deref() != Some(backing) {
        return Ok(None); // gone, or now someone else's: not ours to touch
    }
    let dev = PathBuf::from(format!("/dev/loop{number}"));
    let fd = rustix::fs::open(
        &dev,
        rustix::fs::OFlags::RDWR | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    )
    .map_err(|e| UndoError::OpenLoop {
        device: dev.clone(),
        source: e.into(),
    })?;
    let _ = fslab_sys::loopdev::clear(std::os::fd::AsFd::as_fd(&fd));
    drop(fd);
    for _ in 0..200 {
        if backing_file(number).is_none() {
            return Ok(Some(format!("detached {}", dev.display())));
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    Err(UndoError::StillBound {
        device: dev,
        backing: backing.to_path_buf(),
    })
}

/// Switches a tracefs instance off and removes it.
fn remove_tracefs_instance(path: &Path) -> Undone {
    if !path.exists() {
        return Ok(None);
    }
    let _ = std::fs::write(path.join("tracing_on"), "0");
    let _ = std::fs::write(path.join("events/enable"), "0");
    let mut last = None;
    for _ in 0..50 {
        match std::fs::remove_dir(path) {
            Ok(()) => return Ok(Some(format!("removed tracefs instance {}", path.display()))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => last = Some(e),
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    Err(UndoError::TracefsInstance {
        path: path.to_path_buf(),
        // Each try that did not return set it.
        source: last.unwrap_or_else(|| std::io::ErrorKind::ResourceBusy.into()),
    })
}

/// Unmounts and removes a private tracefs mount.
fn remove_tracefs_mount(path: &Path) -> Undone {
    let mounted = is_mount_point(path);
    if mounted {
        rustix::mount::unmount(path, rustix::mount::UnmountFlags::DETACH).map_err(|e| {
            UndoError::Unmount {
                path: path.to_path_buf(),
                source: e.into(),
            }
        })?;
    }
    match std::fs::remove_dir(path) {
        Ok(()) => Ok(Some(format!(
            "removed private tracefs mount {}",
            path.display()
        ))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Ok(mounted.then(|| format!("unmounted private tracefs {}", path.display())))
        }
        Err(source) => Err(UndoError::Remove {
            path: path.to_path_buf(),
            source,
        }),
    }
}

fn undo_all(resources: &[Resource]) -> Vec<String> {
    resources
        .iter()
        .rev()
        .filter_map(|r| match undo(r) {
            Ok(Some(done)) => Some(done),
            Ok(None) => None,
            Err(e) => Some(format!("FAILED: {e}")),
        })
        .collect()
}

/// The `fslab run`s alive now, from their journals in `dir`: (pid, command line).
pub fn live_runs(dir: &Path) -> Vec<(u32, Vec<String>)> {
    let me = ProcessId::current();
    journals(dir)
        .into_iter()
        .filter(|(f, _)| {
            f.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("run-"))
        })
        .filter_map(|(_, s)| s)
        .filter(|s| s.owner().is_alive() && s.owner() != me)
        .map(|s| (s.pid, s.command_line))
        .collect()
}

/// The pid of a dead fslab process whose journal still lists sysctl `name`
/// (changed and never restored), if there is one.
pub fn sysctl_left_by_dead_run(dir: &Path, name: &str) -> Option<u32> {
    journals(dir).into_iter().find_map(|(_, s)| {
        let s = s?;
        (!s.owner().is_alive()
            && s.resources
                .iter()
                .any(|(_, r)| matches!(r, Resource::Sysctl { name: n, .. } if n == name)))
        .then_some(s.pid)
    })
}

/// Undoes one dead process's journal `f`; removes the file once all is undone.
fn undo_journal(f: &Path, state: StateFile, report: &mut Vec<String>) {
    let rs: Vec<Resource> = state.resources.into_iter().map(|(_, r)| r).collect();
    let done = undo_all(&rs);
    let failed = done.iter().any(|l| l.starts_with("FAILED"));
    report.extend(done.into_iter().map(|l| format!("pid {}: {l}", state.pid)));
    if let Some(dir) = f.parent() {
        let _ = std::fs::remove_dir(dir.join(format!("mnt-{}", state.pid)));
    }
    if !failed {
        let _ = std::fs::remove_file(f);
    }
}

/// Undoes the host lab journalled in `f` (`fslab host-lab down`), which
/// must be this host's: what was undone, one line each (FAILED: ... for
/// what could not be).
pub fn undo_host_lab(f: &Path) -> Result<Vec<String>, UndoError> {
    let read = |source| UndoError::ReadJournal {
        path: f.to_path_buf(),
        source,
    };
    let state: StateFile = std::fs::read(f)
        .map_err(read)
        .and_then(|b| serde_json::from_slice(&b).map_err(|e| read(e.into())))?;
    let here = fslab_model::journal::hostname();
    if state.host.as_deref() != Some(here.as_str()) {
        return Err(UndoError::OtherHost {
            journal: f.to_path_buf(),
            host: state.host.unwrap_or_default(),
        });
    }
    let mut report = Vec::new();
    undo_journal(f, state, &mut report);
    Ok(report)
}

/// `fslab cleanup`: undoes the journals in `dir` of processes that are no
/// longer alive. Returns one line per action. Journals of live processes
/// are left alone, and so are those of a dead workload whose `fslab run`
/// is alive (that run undoes them itself). Nothing that no journal lists
/// is touched.
pub fn cleanup(dir: &Path) -> Vec<String> {
    let mut report: Vec<String> = fslab_model::journal::remove_torn(dir)
        .iter()
        .map(|p| format!("removed half-written journal {}", p.display()))
        .collect();
    let me = ProcessId::current();
    let this_host = fslab_model::journal::hostname();
    for (f, state) in journals(dir) {
        let Some(state) = state else {
            report.push(format!(
                "{}: unreadable journal, left in place",
                f.display()
            ));
            continue;
        };
        if state.owner() == me {
            continue;
        }
        if let Some(h) = state.host.as_ref().filter(|h| **h != this_host) {
            report.push(format!(
                "{}: host {h}'s lab: left to `fslab cleanup` on {h}",
                f.display()
            ));
            continue;
        }
        if state.owner().is_alive() {
            report.push(format!(
                "{} (pid {}) is still running: left alone",
                f.display(),
                state.pid
            ));
            continue;
        }
        if let Some(parent) = state.parent.filter(|p| p.is_alive() && *p != me) {
            report.push(format!(
                "{}: left to its fslab run (pid {}), which is still running",
                f.display(),
                parent.pid
            ));
            continue;
        }
        undo_journal(&f, state, &mut report);
    }
    report
}

/// Undoes the journals in `dir` of the processes `parent` started (its
/// workloads) that have died: what a workload killed by the OOM killer or
/// SIGKILL could not undo itself (its tracefs instance, say).
pub fn cleanup_children(dir: &Path, parent: ProcessId) -> Vec<String> {
    let mut report = Vec::new();
    for (f, state) in journals(dir) {
        let Some(state) = state else { continue };
        // A host's lab is undone on its host, by `fslab host-lab down`.
        if state.parent == Some(parent) && !state.owner().is_alive() && state.host.is_none() {
            undo_journal(&f, state, &mut report);
        }
    }
    // A child killed while (re)writing its journal leaves the write half done.
    fslab_model::journal::remove_torn(dir);
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn journal_lists_until_done_and_cleanup_undoes_dead_runs() {
        let dir = tempfile::tempdir().unwrap();
        let img = dir.path().join("left.img");
        std::fs::write(&img, b"x").unwrap();
        let mut j = Journal::create(dir.path(), "run", vec!["fslab".into()]).unwrap();
        let a = j
            .add(Resource::Image {
                path: img.clone(),
                keep: false,
            })
            .unwrap();
        let kept = dir.path().join("kept.img");
        std::fs::write(&kept, b"x").unwrap();
        j.add(Resource::Image {
            path: kept.clone(),
            keep: true,
        })
        .unwrap();
        let b = j
            .add(Resource::MountDir {
                path: dir.path().join("nope"),
            })
            .unwrap();
        j.done(b);
        assert_eq!(
            j.resources()[0],
            Resource::Image {
                path: img.clone(),
                keep: false
            }
        );
        // A journal left by a dead process (pid 0 is never alive here) is undone.
        let text =
            std::fs::read_to_string(dir.path().join(format!("run-{}.json", std::process::id())))
                .unwrap();
        let dead = text.replace(
            &format!("\"pid\": {}", std::process::id()),
            "\"pid\": 999999999",
        );
        std::fs::write(dir.path().join("run-999999999.json"), dead).unwrap();
        let _ = a;
        let report = cleanup(dir.path());
        assert!(
            report.iter().any(|l| l.contains("removed image")),
            "{report:?}"
        );
        assert!(!img.exists());
        // An image kept with --keep-images stays, and cleanup says so.
        assert!(kept.exists());
        assert!(
            report.iter().any(|l| l.contains("kept image")),
            "{report:?}"
        );
        assert!(!dir.path().join("run-999999999.json").exists());
    }

    /// A dead workload's journal (its tracefs instance, say) that names a
    /// live `fslab run` as its parent is that run's to undo, not cleanup's.
    #[test]
    fn cleanup_leaves_a_live_runs_dead_workload_to_that_run() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("instance");
        std::fs::create_dir(&victim).unwrap();
        let me = ProcessId::current();
        let state = StateFile {
            pid: 999_999_999,
            start: 1,
            parent: Some(me),
            started_at: String::new(),
            command_line: vec![],
            host: None,
            resources: vec![(
                0,
                Resource::Tree {
                    path: victim.clone(),
                },
            )],
        };
        let f = dir.path().join("probes-999999999.json");
        std::fs::write(&f, serde_json::to_vec(&state).unwrap()).unwrap();
        // Another run's cleanup_children leaves it.
        let report = cleanup_children(dir.path(), ProcessId { pid: 1, start: 1 });
        assert!(report.is_empty(), "{report:?}");
        assert!(victim.exists());
        // Its own run undoes it.
        let report = cleanup_children(dir.path(), me);
        assert!(report.iter().any(|l| l.contains("removed")), "{report:?}");
        assert!(!victim.exists());
        assert!(!f.exists());
    }

    #[test]
    fn an_undo_that_fails_says_what_and_keeps_the_systems_error_as_its_source() {
        let d = tempfile::tempdir().unwrap();
        // A "file" that is a directory: remove_file refuses it.
        let path = d.path().join("log.txt");
        std::fs::create_dir(&path).unwrap();
        let e = undo(&Resource::File { path: path.clone() }).unwrap_err();
        assert!(
            e.to_string()
                .starts_with(&format!("cannot remove {}: ", path.display())),
            "{e}"
        );
        let source = std::error::Error::source(&e).expect("the io error");
        let io = source
            .downcast_ref::<std::io::Error>()
            .expect("an io::Error");
        assert_eq!(io.raw_os_error(), Some(21), "EISDIR: {io:?}");
        assert_eq!(
            undo_all(&[Resource::File { path: path.clone() }]),
            [format!("FAILED: {e}")]
        );
        // Gone already: nothing to do, no error.
        std::fs::remove_dir(&path).unwrap();
        assert_eq!(undo(&Resource::File { path }).unwrap(), None);
    }
}
