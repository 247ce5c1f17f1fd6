//! When a cell's workload is stopped from outside: a stop request (the
//! first signal: SIGINT, the workload keeps what it measured), a second
//! signal (SIGKILL to its process group: no more waiting), or its time
//! limit (`time_limit`, `--cell-time-limit`: SIGINT, then SIGKILL when it
//! has not ended after [`GRACE`]).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use fslab_model::RunStatus;
use rustix::process::{kill_process, kill_process_group, Pid, Signal};

pub use crate::duration::{human_duration, parse_duration, MAX_LIMIT};

/// How long a workload asked to stop at its time limit has to end by
/// itself (closing its record) before it is killed.
pub const GRACE: Duration = Duration::from_secs(5);

/// Why a workload was ended from outside, when it was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// A second signal: killed, not waited for.
    Hurried,
    /// Past the cell's time limit.
    TimeLimit(Duration),
}

impl Ending {
    /// The cell's status: a time limit fails the cell (the next one
    /// starts), a second signal interrupts the experiment.
    pub fn status(self) -> RunStatus {
        match self {
            Ending::Hurried => RunStatus::Interrupted,
            Ending::TimeLimit(_) => RunStatus::Failed,
        }
    }

    /// The cell's error: why it ended, then what the workload said (and
    /// the memory pressure it was under, if any).
    pub fn describe(self, said: Option<&str>, pressure: Option<&str>) -> String {
        let mut s = match self {
            Ending::Hurried => "interrupted by a second signal: the workload was killed".into(),
            Ending::TimeLimit(t) => format!(
                "time limit {} reached: the workload was stopped",
                human_duration(t)
            ),
        };
        if let Some(p) = pressure {
            s.push_str(&format!(" ({p})"));
        }
        if let Some(w) = said.filter(|w| !w.is_empty()) {
            s.push_str(&format!("; {w}"));
        }
        s
    }
}

/// Watches one running workload (a process group led by `pid`) against
/// the stop flag, a second signal and its time limit.
pub struct Guard {
    pid: Option<Pid>,
    started: Instant,
    limit: Option<Duration>,
    asked: bool,
    killed: bool,
    ended_by: Option<Ending>,
    limit_at: Option<Instant>,
}

impl Guard {
    pub fn new(pid: u32, limit: Option<Duration>) -> Guard {
        Guard {
            pid: i32::try_from(pid).ok().and_then(Pid::from_raw),
            started: Instant::now(),
            limit,
            asked: false,
            killed: false,
            ended_by: None,
            limit_at: None,
        }
    }

    /// Acts on what happened since the last call: one SIGINT for a stop
    /// request or the time limit, SIGKILL to the group for a second signal
    /// (`hurry`) or a workload past its limit and grace.
    pub fn check(&mut self, stop: &AtomicBool, hurry: bool) {
        let Some(pid) = self.pid else { return };
        if let Some(limit) = self.limit {
            if self.ended_by.is_none() && self.started.elapsed() > limit {
                self.ended_by = Some(Ending::TimeLimit(limit));
                self.limit_at = Some(Instant::now());
            }
        }
        let over = self.limit_at.is_some();
        if (stop.load(Ordering::Relaxed) || over) && !self.asked {
            self.asked = true;
            let _ = kill_process(pid, Signal::INT);
        }
        let graceless = self.limit_at.is_some_and(|t| t.elapsed() > GRACE);
        if (hurry || graceless) && !self.killed {
            self.killed = true;
            // A workload that ended by itself (on the first signal) is
            // not dead of the second.
            if hurry && self.ended_by.is_none() {
                self.ended_by = Some(Ending::Hurried);
            }
            let _ = kill_process_group(pid, Signal::KILL);
        }
    }

    /// Why the workload was ended from outside, if it was.
    pub fn ended_by(&self) -> Option<Ending> {
        self.ended_by
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `sleep` in its own process group that dies of SIGINT: this test
    /// process handles SIGINT first (as fslab does), so the child starts
    /// with the default action even when the suite was started with SIGINT
    /// ignored (a background job of a shell without job control), which it
    /// would otherwise inherit and outlive the deadline's SIGINT.
    fn sleeper() -> std::process::Child {
        let seen = std::sync::Arc::new(AtomicBool::new(false));
        signal_hook::flag::register(signal_hook::consts::SIGINT, seen).unwrap();
        let mut c = std::process::Command::new("sleep");
        c.arg("30");
        std::os::unix::process::CommandExt::process_group(&mut c, 0);
        c.spawn().unwrap()
    }

    fn wait(c: &mut std::process::Child) -> std::process::ExitStatus {
        for _ in 0..200 {
            if let Some(s) = c.try_wait().unwrap() {
                return s;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        panic!("still running");
    }

    #[test]
    fn a_workload_past_its_time_limit_is_asked_to_stop_and_the_ending_says_why() {
        use std::os::unix::process::ExitStatusExt;
        let mut c = sleeper();
        let mut g = Guard::new(c.id(), Some(Duration::from_millis(50)));
        let stop = AtomicBool::new(false);
        g.check(&stop, false);
        assert_eq!(g.ended_by(), None);
        std::thread::sleep(Duration::from_millis(80));
        g.check(&stop, false);
        assert_eq!(
            g.ended_by(),
            Some(Ending::TimeLimit(Duration::from_millis(50)))
        );
        assert_eq!(wait(&mut c).signal(), Some(2), "SIGINT first");
        let e = Ending::TimeLimit(Duration::from_secs(90));
        assert_eq!(e.status(), RunStatus::Failed);
        assert_eq!(
            e.describe(Some("fs_mark: stopped"), Some("at its memory limit")),
            "time limit 90 s reached: the workload was stopped (at its memory limit); fs_mark: stopped"
        );
    }

    #[test]
    fn a_second_signal_kills_the_workload_group_at_once() {
        use std::os::unix::process::ExitStatusExt;
        let mut c = sleeper();
        let mut g = Guard::new(c.id(), None);
        let stop = AtomicBool::new(true);
        g.check(&stop, true);
        assert_eq!(g.ended_by(), Some(Ending::Hurried));
        let s = wait(&mut c);
        // SIGINT then SIGKILL: sleep dies of the first to arrive.
        assert!(matches!(s.signal(), Some(2 | 9)), "{s:?}");
        assert_eq!(Ending::Hurried.status(), RunStatus::Interrupted);
    }
}
