//! Which process owns something: a pid together with the time the process
//! started (field 22 of `/proc/PID/stat`, in clock ticks since boot), so a
//! pid reused by an unrelated process, or a zombie that has exited but not
//! been reaped, is never taken for the owner still at work.

use serde::{Deserialize, Serialize};

/// A process, named so that it cannot be confused with a later one that
/// reuses its pid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessId {
    pub pid: u32,
    /// Start time in clock ticks after boot; 0 when unknown (an old record),
    /// in which case only the pid is compared.
    #[serde(default)]
    pub start: u64,
}

/// `(state, start time)` of `/proc/PID/stat`. The command name (field 2)
/// may hold spaces and parentheses, so fields are counted from the last `)`.
fn stat_of(pid: u32) -> Option<(char, u64)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_stat(&text)
}

fn parse_stat(text: &str) -> Option<(char, u64)> {
    let rest = &text[text.rfind(')')? + 1..];
    let mut f = rest.split_whitespace();
    let state = f.next()?.chars().next()?;
    // After the state come fields 4..; the start time is field 22.
    let start = f.nth(22 - 4)?.parse().ok()?;
    Some((state, start))
}

impl ProcessId {
    /// This process.
    pub fn current() -> ProcessId {
        ProcessId::of(std::process::id()).unwrap_or(ProcessId {
            pid: std::process::id(),
            start: 0,
        })
    }

    /// The process running now as `pid`, if there is one.
    pub fn of(pid: u32) -> Option<ProcessId> {
        let (_, start) = stat_of(pid)?;
        Some(ProcessId { pid, start })
    }

    /// Whether this process is still at work: it exists, it is the same
    /// process (same start time), and it is not a zombie or dead.
    pub fn is_alive(&self) -> bool {
        match stat_of(self.pid) {
            None => false,
            Some((state, start)) => {
                !matches!(state, 'Z' | 'X' | 'x') && (self.start == 0 || start == self.start)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_start_time_is_read_after_a_command_name_with_spaces_and_parens() {
        let line =
            "1234 (a b) c) S 1 1234 1234 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 98765 1000 10";
        assert_eq!(parse_stat(line), Some(('S', 98765)));
    }

    #[test]
    fn this_process_is_alive_and_a_reused_pid_is_not() {
        let me = ProcessId::current();
        assert!(me.start > 0);
        assert!(me.is_alive());
        let other = ProcessId {
            start: me.start + 1,
            ..me
        };
        assert!(!other.is_alive(), "same pid, another start time");
        assert!(!ProcessId {
            pid: u32::MAX - 1,
            start: 0
        }
        .is_alive());
    }

    #[test]
    fn a_zombie_is_not_alive() {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        // Not reaped yet: a zombie once it exits.
        let mut zombie = false;
        for _ in 0..200 {
            if stat_of(pid).is_some_and(|(s, _)| s == 'Z') {
                zombie = true;
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert!(zombie);
        assert!(!ProcessId { pid, start: 0 }.is_alive());
        child.wait().unwrap();
    }
}
