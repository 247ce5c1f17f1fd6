//! How `fslab run` ends on SIGINT and SIGTERM, one signal after another:
//!
//! 1. the first asks the workload to stop (it keeps what it measured), and
//!    the run ends after tearing the cell down;
//! 2. the second stops waiting: the workload is killed, the cell is torn
//!    down without its remount measurement, and the experiment is recorded
//!    as interrupted; if that teardown takes longer than its bound, the run
//!    exits as after a third signal;
//! 3. the third exits at once, saying what its journals still list and
//!    that `fslab cleanup` removes it.
//!
//! The signals are counted on a thread of their own (not in a handler), so
//! the last one can read the journals and print.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use fslab_model::journal::journals;
use fslab_model::process::ProcessId;

/// Set by the second signal: stop waiting for the workload.
static HURRY: AtomicBool = AtomicBool::new(false);

/// Whether a second signal came: the workload is to be killed, not waited
/// for, and teardown is to skip what only measures.
pub fn hurry() -> bool {
    HURRY.load(Ordering::Relaxed)
}

/// The longest teardown after a second signal takes before the run exits
/// as after a third (an unmount flushing a large dirty cache, say).
pub const TEARDOWN_BOUND: Duration = Duration::from_secs(30);

/// The exit status of a run ended by a signal.
pub const INTERRUPTED: i32 = 130;

/// Counts SIGINT and SIGTERM on a thread of its own: the first sets the
/// returned stop flag, the second [`hurry`], the third (or a teardown
/// longer than `bound` after the second) prints what the journals in
/// `state` of this process and its workloads still list and exits 130.
pub fn install(state: PathBuf, bound: Duration) -> std::io::Result<Arc<AtomicBool>> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let stop = Arc::new(AtomicBool::new(false));
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM])?;
    let flag = Arc::clone(&stop);
    std::thread::Builder::new()
        .name("fslab-signals".into())
        .spawn(move || {
            for (n, _) in signals.forever().enumerate() {
                match n {
                    0 => flag.store(true, Ordering::Relaxed),
                    1 => {
                        HURRY.store(true, Ordering::Relaxed);
                        eprintln!(
                            "fslab: run: second signal: the workload is killed and the cell torn \
                             down (at most {} s); a third signal exits at once",
                            bound.as_secs()
                        );
                        let state = state.clone();
                        let _ = std::thread::Builder::new()
                            .name("fslab-teardown-bound".into())
                            .spawn(move || {
                                std::thread::sleep(bound);
                                exit_now(
                                    &state,
                                    &format!("teardown took over {} s", bound.as_secs()),
                                );
                            });
                    }
                    _ => exit_now(&state, "third signal"),
                }
            }
        })?;
    Ok(stop)
}

/// Says what this process and its workloads leave behind, from their
/// journals in `state`, and exits 130.
fn exit_now(state: &std::path::Path, why: &str) -> ! {
    let left = left_behind(state, ProcessId::current());
    eprintln!("{}", exit_message(why, &left));
    std::process::exit(INTERRUPTED)
}

/// What the journals in `state` of `me` and of the processes it started
/// still list (set up and not yet undone), described for people.
pub fn left_behind(state: &std::path::Path, me: ProcessId) -> Vec<String> {
    let mut left = Vec::new();
    for (_, s) in journals(state) {
        let Some(s) = s else { continue };
        if s.owner() == me || s.parent == Some(me) {
            left.extend(
                s.resources
                    .iter()
                    .rev()
                    .map(|(_, r)| fslab_lab::undo::describe(r)),
            );
        }
    }
    left
}

/// The lines a run exiting at once prints: why, each thing it leaves, and
/// how to remove them.
pub fn exit_message(why: &str, left: &[String]) -> String {
    if left.is_empty() {
        return format!(
            "fslab: run: exiting at once ({why}); nothing is left set up; the experiment stays \
             \"running\" in the store until `fslab cleanup` marks it interrupted"
        );
    }
    let mut s = format!(
        "fslab: run: exiting at once ({why}), leaving {} thing(s) set up:",
        left.len()
    );
    for l in left {
        s.push_str("\nfslab:   ");
        s.push_str(l);
    }
    s.push_str(
        "\nfslab: run: `fslab cleanup` removes them all and marks the experiment interrupted",
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use fslab_model::journal::{Journal, Resource};

    #[test]
    fn what_is_left_is_read_from_this_process_journals_and_its_workloads() {
        let dir = tempfile::tempdir().unwrap();
        let mut j = Journal::create(dir.path(), "run", vec![]).unwrap();
        let img = dir.path().join("a.img");
        j.add(Resource::Image {
            path: img.clone(),
            keep: false,
        })
        .unwrap();
        let done = j
            .add(Resource::Mount {
                target: dir.path().join("mnt"),
            })
            .unwrap();
        j.done(done);
        j.add(Resource::Cgroup {
            path: dir.path().join("cg"),
        })
        .unwrap();
        let me = ProcessId::current();
        let left = left_behind(dir.path(), me);
        assert_eq!(
            left,
            [
                format!("memory cgroup {}", dir.path().join("cg").display()),
                format!("image {}", img.display()),
            ]
        );
        // Another process's journals are not this one's.
        assert!(left_behind(dir.path(), ProcessId { pid: 1, start: 1 }).is_empty());
        let m = exit_message("third signal", &left);
        assert_eq!(m.lines().count(), 4, "{m}");
        assert!(
            m.contains("leaving 2 thing(s)") && m.contains("fslab cleanup"),
            "{m}"
        );
        assert!(exit_message("x", &[]).contains("nothing is left"));
    }
}
