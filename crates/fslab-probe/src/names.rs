//! The names of the probes' sampled series, as the store keeps them
//! (`probe_points.metric`), written once: the probes that sample them and
//! the listings and report that read them use these constants. Units are
//! in the names: `_pct` percent (of one CPU, or of the time), `_mb_s` 10^6
//! bytes per second, `_per_s` per second, `_bytes` bytes, `_us` and `_ms`
//! micro- and milliseconds, `_kb` KiB.

// cpu: shares of one CPU (2 busy CPUs read 200%). The machine's, from
// /proc/stat: every process on it, not only the workload.
pub const USR_PCT: &str = "usr_pct";
pub const SYS_PCT: &str = "sys_pct";
pub const IOWAIT_PCT: &str = "iowait_pct";
pub const IRQ_PCT: &str = "irq_pct";
pub const SOFTIRQ_PCT: &str = "softirq_pct";
pub const STEAL_PCT: &str = "steal_pct";
pub const IDLE_PCT: &str = "idle_pct";
/// The workload's own process and its waited-for children, from
/// /proc/PID/stat: user and system time, % of one CPU.
pub const WORKLOAD_USR_PCT: &str = "workload_usr_pct";
pub const WORKLOAD_SYS_PCT: &str = "workload_sys_pct";
/// The filesystem's kernel threads for its device only (loopN, jbd2/loopN-8,
/// the filesystem's named workers), % of one CPU.
pub const FS_KTHREADS_PCT: &str = "fs_kthreads_pct";

// disk: /proc/diskstats of the filesystem's device (and, with HOST, the host's).
pub const READS_PER_S: &str = "reads_per_s";
pub const WRITES_PER_S: &str = "writes_per_s";
pub const READ_MB_S: &str = "read_mb_s";
pub const WRITE_MB_S: &str = "write_mb_s";
pub const READ_MERGES_PER_S: &str = "read_merges_per_s";
pub const WRITE_MERGES_PER_S: &str = "write_merges_per_s";
pub const UTIL_PCT: &str = "util_pct";
pub const AVG_QUEUE: &str = "avg_queue";
pub const IN_FLIGHT: &str = "in_flight";

// mem: /proc/meminfo and the workload's memory cgroup.
pub const DIRTY_BYTES: &str = "dirty_bytes";
pub const WRITEBACK_BYTES: &str = "writeback_bytes";
pub const CACHED_BYTES: &str = "cached_bytes";
pub const SLAB_BYTES: &str = "slab_bytes";
pub const AVAILABLE_BYTES: &str = "available_bytes";
pub const CGROUP_USAGE_BYTES: &str = "cgroup_usage_bytes";
/// Times the cgroup's memory limit was hit (a running total).
pub const CGROUP_FAILCNT: &str = "cgroup_failcnt";

// mem metrics of a phase (see `probes::mem`).
/// Times the cgroup hit its limit during the phase (count).
pub const LIMIT_HITS: &str = "limit hits";
/// The cgroup's highest usage during the phase (MiB).
pub const PEAK_USAGE: &str = "peak usage";
/// Pages written back during the phase, machine-wide (/proc/vmstat
/// nr_written), MiB.
pub const DIRTY_WRITTEN: &str = "dirty written";
/// The kernel's dirty limit as the phase began (/proc/vmstat
/// nr_dirty_threshold: what a writer is throttled at), MiB.
pub const DIRTY_THRESHOLD: &str = "dirty threshold";

// blockio: completions traced on the device (READ_MB_S and WRITE_MB_S too).
pub const IOPS: &str = "iops";
pub const READ_IOPS: &str = "read_iops";
pub const WRITE_IOPS: &str = "write_iops";
pub const AVG_IO_KB: &str = "avg_io_kb";
/// Requests that continue a recent stream, % (see `blockio`).
pub const SEQUENTIAL_PCT: &str = "sequential_pct";
pub const LATENCY_AVG_US: &str = "latency_avg_us";
pub const LATENCY_MAX_US: &str = "latency_max_us";
pub const QUEUE_DEPTH: &str = "queue_depth";
/// Events the kernel's trace buffer dropped (a running total).
pub const DROPPED_EVENTS: &str = "dropped_events";

// blockio metrics of a phase, for a filesystem on a loop device: the IOs the
// filesystem issued (the guest: the loop device) against those that reached
// the device under the image (the backend, with whatever else it served).
pub const GUEST_IOS: &str = "guest IOs";
pub const BACKEND_IOS: &str = "backend IOs";
pub const GUEST_IOPS: &str = "guest IOPS";
pub const BACKEND_IOPS: &str = "backend IOPS";
pub const BACKEND_PER_GUEST: &str = "backend IOs per guest IO";
/// What the phase wrote to the filesystem's own device (MiB): its
/// writeback, whatever the rest of the machine wrote.
pub const GUEST_WRITTEN: &str = "guest written";
/// What the phase read from the filesystem's own device (MiB).
pub const GUEST_READ: &str = "guest read";
// The guest's IOs of a phase before and after memory full: the first second
// of the phase in which the workload's memory cgroup hit its limit (seed
// 000: btrfs's IO pattern flips when memory runs out).
pub const GUEST_IOS_BEFORE_FULL: &str = "guest IOs before memory full";
pub const GUEST_IOS_AFTER_FULL: &str = "guest IOs after memory full";
pub const GUEST_IO_SIZE_BEFORE_FULL: &str = "guest IO size before memory full";
pub const GUEST_IO_SIZE_AFTER_FULL: &str = "guest IO size after memory full";
pub const GUEST_IOPS_BEFORE_FULL: &str = "guest IOPS before memory full";
pub const GUEST_IOPS_AFTER_FULL: &str = "guest IOPS after memory full";

// frag: the backing image's extents.
pub const IMAGE_EXTENTS: &str = "image_extents";

// journal: jbd2's per-commit times (ms) as `commit.FIELD`; XFS log
// counters as `xfs.FIELD_per_s`; btrfs's commit_stats as `btrfs_FIELD`.
pub const JBD2_RUNNING: &str = "running";
pub const JBD2_LOCKED: &str = "locked";
pub const JBD2_LOGGING: &str = "logging";
pub const XFS_LOG_WRITES: &str = "log_writes";
pub const BTRFS_COMMITS: &str = "btrfs_commits";

/// The host device's series of metric `m` (the disk under the image).
pub fn host(m: &str) -> String {
    format!("host.{m}")
}

/// A jbd2 commit's field `k` (ms).
pub fn jbd2_commit(k: &str) -> String {
    format!("commit.{k}")
}

/// An XFS log counter `k`, per second.
pub fn xfs_per_s(k: &str) -> String {
    format!("xfs.{k}_per_s")
}

/// A btrfs commit_stats field `k`.
pub fn btrfs(k: &str) -> String {
    format!("btrfs_{k}")
}

/// A writeback start for reason `r` (a count per second).
pub fn writeback_start(r: &str) -> String {
    format!("start.{r}")
}
