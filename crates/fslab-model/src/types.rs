//! Plain result types. Units are in the field names.

use serde::{Deserialize, Serialize};

/// Everything needed to know what ran where.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RunInfo {
    /// Workload name, e.g. `fsmark`.
    pub workload: String,
    /// The full command line, `argv[0]` included.
    pub command_line: Vec<String>,
    pub fslab_version: String,
    /// `uname -r`.
    pub kernel: String,
    pub hostname: String,
    /// Start time, RFC 3339 in UTC.
    pub started_at: String,
    /// The filesystem under the workload's first directory.
    pub target: TargetInfo,
    /// The workload's parsed parameters.
    pub params: serde_json::Value,
}

/// The filesystem a workload ran on, as `/proc/self/mountinfo` describes it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct TargetInfo {
    /// The directory the workload was given.
    pub path: String,
    /// Filesystem type, e.g. `ext4`, `tmpfs`.
    pub fs_type: String,
    /// Mount source, e.g. `/dev/loop3`.
    pub source: String,
    /// Where that filesystem is mounted.
    pub mount_point: String,
    /// Mount options: per-mount and superblock options, as the kernel reports them.
    pub mount_options: String,
}

impl TargetInfo {
    /// The mount that holds `path` (the longest mount point that is a
    /// prefix of its canonical form); what cannot be found is left empty.
    pub fn of(path: &std::path::Path) -> TargetInfo {
        let mut info = TargetInfo {
            path: path.display().to_string(),
            ..Default::default()
        };
        if let Some(m) = crate::mountinfo::holding(path) {
            info.fs_type = m.fs_type;
            info.source = m.source;
            info.mount_point = m.mount_point;
            info.mount_options = m.options;
        }
        info
    }
}

/// The kernel release and host name recorded with every run (uname's
/// release and nodename, as /proc/sys/kernel shows them).
pub fn host_facts() -> (String, String) {
    let read = |f: &str| {
        std::fs::read_to_string(std::path::Path::new("/proc/sys/kernel").join(f))
            .map(|s| s.trim().to_string())
            .unwrap_or_default()
    };
    (read("osrelease"), read("hostname"))
}

/// How a run ended.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    #[default]
    Running,
    Complete,
    /// Stopped by SIGINT or SIGTERM; what was measured is kept.
    Interrupted,
    /// Stopped by an error; what was measured is kept.
    Failed,
}

impl std::fmt::Display for RunStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl RunStatus {
    pub fn as_str(&self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Complete => "complete",
            RunStatus::Interrupted => "interrupted",
            RunStatus::Failed => "failed",
        }
    }

    pub fn parse(s: &str) -> Option<RunStatus> {
        Some(match s {
            "running" => RunStatus::Running,
            "complete" => RunStatus::Complete,
            "interrupted" => RunStatus::Interrupted,
            "failed" => RunStatus::Failed,
            _ => return None,
        })
    }
}

/// Minimum, mean and maximum of one system call within a loop, in
/// microseconds (fs_mark's `-v` columns).
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
pub struct CallStats {
    pub min_us: u64,
    pub avg_us: u64,
    pub max_us: u64,
}

/// One row of fs_mark's table: one loop over all threads.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct LoopRow {
    /// 0-based loop number.
    pub index: u32,
    /// `100 * (f_blocks - f_bavail) / f_blocks` of the first directory.
    pub fs_use_pct: u32,
    /// Files written since the run started (fs_mark's cumulative Count).
    pub count: u64,
    /// Files written in this loop.
    pub files: u64,
    /// Size of each file in bytes.
    pub file_size: u64,
    /// Sum over threads of files / that thread's own loop time (fs_mark's Files/sec).
    pub files_per_sec: f64,
    /// Files of this loop / wall-clock time of the whole loop.
    pub wall_files_per_sec: f64,
    /// Wall-clock time of the loop in seconds.
    pub wall_s: f64,
    /// Sum over threads of loop time not spent in file system calls.
    pub app_overhead_us: u64,
    /// Per-call statistics: creat, write, fsync, sync, close, unlink.
    pub calls: Vec<(String, CallStats)>,
    /// False when the loop was cut short (Ctrl-C, error, full filesystem).
    pub complete: bool,
}

/// A phase of a workload (fsmark: create, stat, unlink).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PhaseResult {
    pub phase: String,
    /// Operations (files) completed.
    pub ops: u64,
    /// Wall-clock time in seconds.
    pub elapsed_s: f64,
    /// ops / elapsed_s.
    pub ops_per_s: f64,
    /// User CPU time of the whole fslab process during the phase.
    pub usr_cpu_s: f64,
    /// System CPU time of the whole fslab process during the phase.
    pub sys_cpu_s: f64,
    /// Bytes written by the phase.
    pub bytes: u64,
    /// False when the phase was cut short.
    pub complete: bool,
    /// Reported by the tool fslab ran (a job of fio's, a phase of IO500's),
    /// read from its output after it ended: its own count and time, no
    /// CPU time of its own (the program's phase, which fslab timed, holds
    /// it) and no probe boundaries.
    #[serde(default)]
    pub reported: bool,
    /// Whether `ops` counts the phase's work. False for a phase nothing
    /// counted: a program whose output gives no count (fslab timed it) or
    /// a phase its tool reports in bytes alone (IO500's bandwidth phases);
    /// such a phase has no rate of operations.
    #[serde(default = "counted_by_default")]
    pub counted: bool,
}

fn counted_by_default() -> bool {
    true
}

impl Default for PhaseResult {
    fn default() -> PhaseResult {
        PhaseResult {
            phase: String::new(),
            ops: 0,
            elapsed_s: 0.0,
            ops_per_s: 0.0,
            usr_cpu_s: 0.0,
            sys_cpu_s: 0.0,
            bytes: 0,
            complete: false,
            reported: false,
            counted: true,
        }
    }
}

impl PhaseResult {
    /// Phase `phase`: `ops` operations in `elapsed_s` seconds, and their
    /// rate (0 for a phase that took no measurable time); CPU, bytes and
    /// completeness to be filled in (`..PhaseResult::timed(...)`).
    pub fn timed(phase: &str, ops: u64, elapsed_s: f64) -> PhaseResult {
        PhaseResult {
            phase: phase.into(),
            ops,
            elapsed_s,
            ops_per_s: if elapsed_s > 0.0 {
                ops as f64 / elapsed_s
            } else {
                0.0
            },
            ..PhaseResult::default()
        }
    }
}

/// Operations completed in one second of a phase.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
pub struct SeriesPoint {
    /// Index of the phase within the run (0 = first phase).
    pub phase_index: u32,
    /// Seconds since the phase started at the end of this interval.
    pub t_s: f64,
    /// Operations completed in this interval.
    pub ops: u64,
    /// Operations completed since the phase started.
    pub total_ops: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dev_shm_is_described_as_tmpfs() {
        let t = TargetInfo::of(std::path::Path::new("/dev/shm"));
        assert_eq!(t.fs_type, "tmpfs");
        assert_eq!(t.mount_point, "/dev/shm");
    }

    #[test]
    fn host_facts_are_unames() {
        let (kernel, host) = host_facts();
        let u = std::process::Command::new("uname")
            .args(["-n", "-r"])
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&u.stdout).trim(),
            format!("{host} {kernel}")
        );
    }
}
