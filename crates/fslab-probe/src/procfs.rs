//! Parsers for /proc/stat, /proc/diskstats, /proc/meminfo and
//! /proc/PID/stat, and the per-second rates made from two readings.

use crate::names;

/// The aggregate `cpu` line of /proc/stat, in USER_HZ ticks.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CpuTicks {
    pub user: u64,
    pub nice: u64,
    pub system: u64,
    pub idle: u64,
    pub iowait: u64,
    pub irq: u64,
    pub softirq: u64,
    pub steal: u64,
}

pub fn parse_cpu(stat: &str) -> Option<CpuTicks> {
    let line = stat.lines().find(|l| l.starts_with("cpu "))?;
    let v: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .map(|x| x.parse().unwrap_or(0))
        .collect();
    let g = |i: usize| v.get(i).copied().unwrap_or(0);
    Some(CpuTicks {
        user: g(0),
        nice: g(1),
        system: g(2),
        idle: g(3),
        iowait: g(4),
        irq: g(5),
        softirq: g(6),
        steal: g(7),
    })
}

/// Ticks per second of /proc/stat and /proc/PID/stat times (USER_HZ, from
/// the kernel's auxiliary vector: 100 on most machines, not all).
pub fn user_hz() -> f64 {
    rustix::param::clock_ticks_per_second() as f64
}

impl CpuTicks {
    /// Each state as a percentage of one CPU over `dt` seconds (so 2 busy
    /// CPUs read 200%, as seed 000 counts).
    pub fn percent_since(&self, before: &CpuTicks, dt: f64) -> Vec<(&'static str, f64)> {
        let hz = user_hz();
        let pct = |a: u64, b: u64| (a.saturating_sub(b)) as f64 / hz / dt * 100.0;
        vec![
            (
                names::USR_PCT,
                pct(self.user + self.nice, before.user + before.nice),
            ),
            (names::SYS_PCT, pct(self.system, before.system)),
            (names::IOWAIT_PCT, pct(self.iowait, before.iowait)),
            (names::IRQ_PCT, pct(self.irq, before.irq)),
            (names::SOFTIRQ_PCT, pct(self.softirq, before.softirq)),
            (names::STEAL_PCT, pct(self.steal, before.steal)),
            (names::IDLE_PCT, pct(self.idle, before.idle)),
        ]
    }
}

/// One /proc/diskstats line (the first 11 statistics).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct DiskStats {
    pub reads: u64,
    pub reads_merged: u64,
    pub sectors_read: u64,
    pub ms_reading: u64,
    pub writes: u64,
    pub writes_merged: u64,
    pub sectors_written: u64,
    pub ms_writing: u64,
    pub in_flight: u64,
    pub ms_io: u64,
    pub ms_weighted: u64,
}

/// The line for device `name` (e.g. `loop3`).
pub fn parse_diskstats(text: &str, name: &str) -> Option<DiskStats> {
    text.lines().find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.len() < 14 || f[2] != name {
            return None;
        }
        let g = |i: usize| f[i].parse::<u64>().unwrap_or(0);
        Some(DiskStats {
            reads: g(3),
            reads_merged: g(4),
            sectors_read: g(5),
            ms_reading: g(6),
            writes: g(7),
            writes_merged: g(8),
            sectors_written: g(9),
            ms_writing: g(10),
            in_flight: g(11),
            ms_io: g(12),
            ms_weighted: g(13),
        })
    })
}

impl DiskStats {
    /// Per-second rates over `dt` seconds, and the current in-flight count.
    pub fn rates_since(&self, b: &DiskStats, dt: f64) -> Vec<(&'static str, f64)> {
        let r = |a: u64, b: u64| a.saturating_sub(b) as f64 / dt;
        vec![
            (names::READS_PER_S, r(self.reads, b.reads)),
            (names::WRITES_PER_S, r(self.writes, b.writes)),
            (
                names::READ_MB_S,
                r(self.sectors_read, b.sectors_read) * 512.0 / 1e6,
            ),
            (
                names::WRITE_MB_S,
                r(self.sectors_written, b.sectors_written) * 512.0 / 1e6,
            ),
            (
                names::READ_MERGES_PER_S,
                r(self.reads_merged, b.reads_merged),
            ),
            (
                names::WRITE_MERGES_PER_S,
                r(self.writes_merged, b.writes_merged),
            ),
            (names::UTIL_PCT, (r(self.ms_io, b.ms_io) / 10.0).min(100.0)),
            (
                names::AVG_QUEUE,
                r(self.ms_weighted, b.ms_weighted) / 1000.0,
            ),
            (names::IN_FLIGHT, self.in_flight as f64),
        ]
    }
}

/// Selected /proc/meminfo fields, in bytes.
pub fn parse_meminfo(text: &str) -> Vec<(&'static str, f64)> {
    let get = |key: &str| {
        text.lines()
            .find_map(|l| {
                l.strip_prefix(key)
                    .and_then(|r| r.trim_start_matches(':').split_whitespace().next())
            })
            .and_then(|v| v.parse::<f64>().ok())
            .map(|kb| kb * 1024.0)
    };
    [
        (names::DIRTY_BYTES, "Dirty"),
        (names::WRITEBACK_BYTES, "Writeback"),
        (names::CACHED_BYTES, "Cached"),
        (names::SLAB_BYTES, "Slab"),
        (names::AVAILABLE_BYTES, "MemAvailable"),
    ]
    .into_iter()
    .filter_map(|(m, k)| get(k).map(|v| (m, v)))
    .collect()
}

/// A process's CPU time in USER_HZ ticks: its own (all its threads) and
/// that of the children it has waited for.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ProcessTicks {
    pub usr: u64,
    pub sys: u64,
}

/// [`ProcessTicks`] from /proc/PID/stat (utime + cutime, stime + cstime).
pub fn parse_process_ticks(text: &str) -> Option<ProcessTicks> {
    let close = text.rfind(')')?;
    let rest: Vec<&str> = text[close + 1..].split_whitespace().collect();
    let f = |i: usize| rest.get(i).and_then(|v| v.parse::<u64>().ok());
    Some(ProcessTicks {
        usr: f(11)? + f(13)?,
        sys: f(12)? + f(14)?,
    })
}

/// Whether kernel thread `comm` works for block device `dev` (`loop3`,
/// numbers `majmin` = `7:3`): the device is one of its name's words
/// (`loop3`, `jbd2/loop3-8`, `xfs-buf/loop3`, `kworker/u8:1-loop3`) or it
/// is flushing the device's dirty pages (`kworker/u8:2+flush-7:3`).
pub fn kthread_works_for(comm: &str, dev: &str, majmin: &str) -> bool {
    comm.split(['/', '-', '+', ' ']).any(|w| w == dev)
        || comm
            .split('+')
            .any(|w| w.strip_prefix("flush-") == Some(majmin))
}

/// (comm, state, utime + stime ticks) from /proc/PID/stat.
pub fn parse_pid_stat(text: &str) -> Option<(String, char, u64)> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let comm = text[open + 1..close].to_string();
    let rest: Vec<&str> = text[close + 1..].split_whitespace().collect();
    let state = rest.first()?.chars().next()?;
    let utime: u64 = rest.get(11)?.parse().ok()?;
    let stime: u64 = rest.get(12)?.parse().ok()?;
    Some((comm, state, utime + stime))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_threads_are_the_devices_own() {
        for comm in [
            "loop3",
            "jbd2/loop3-8",
            "xfs-buf/loop3",
            "kworker/u8:1-loop3",
            "kworker/u8:2+flush-7:3",
        ] {
            assert!(kthread_works_for(comm, "loop3", "7:3"), "{comm}");
        }
        for comm in [
            "loop30",
            "jbd2/sda1-8",
            "xfs-buf/loop31",
            "kworker/u8:2+flush-7:30",
            "ext4-rsv-conver",
            "kworker/0:1",
        ] {
            assert!(!kthread_works_for(comm, "loop3", "7:3"), "{comm}");
        }
    }

    #[test]
    fn a_process_counts_its_threads_and_reaped_children() {
        let stat =
            "4242 (fslab fsmark) S 1 4242 4242 0 -1 4194304 300 0 0 0 150 70 5 3 20 0 3 0 100 0 0";
        assert_eq!(
            parse_process_ticks(stat),
            Some(ProcessTicks { usr: 155, sys: 73 })
        );
        assert_eq!(parse_process_ticks("1 (x) S 0"), None);
    }

    #[test]
    fn cpu_percent_of_one_cpu() {
        let a = parse_cpu("cpu  100 0 50 1000 10 0 0 0 0 0\ncpu0 1 2 3").unwrap();
        let b = parse_cpu("cpu  300 0 250 1100 10 0 0 0 0 0\n").unwrap();
        let p = b.percent_since(&a, 1.0);
        assert_eq!(p[0], ("usr_pct", 200.0));
        assert_eq!(p[1], ("sys_pct", 200.0));
    }

    #[test]
    fn diskstats_line_and_rates() {
        let t = "   7       3 loop3 10 0 80 5 200 3 4000 90 2 150 95 0 0 0 0\n 253 0 vda 1 2 3 4 5 6 7 8 9 10 11\n";
        let a = parse_diskstats(t, "loop3").unwrap();
        assert_eq!((a.writes, a.sectors_written, a.in_flight), (200, 4000, 2));
        let b = DiskStats {
            writes: 300,
            sectors_written: 6000,
            ms_io: 650,
            ..a
        };
        let r = b.rates_since(&a, 1.0);
        assert!(r.contains(&("writes_per_s", 100.0)));
        assert!(r.contains(&("write_mb_s", 2000.0 * 512.0 / 1e6)));
        assert!(r.contains(&("util_pct", 50.0)));
        assert!(parse_diskstats(t, "loop30").is_none());
    }

    #[test]
    fn meminfo_and_pid_stat() {
        let m =
            parse_meminfo("MemTotal: 10 kB\nDirty:        4 kB\nWriteback:   0 kB\nSlab: 8 kB\n");
        assert!(m.contains(&("dirty_bytes", 4096.0)) && m.contains(&("slab_bytes", 8192.0)));
        let s = "123 (jbd2/loop3-8) D 2 0 0 0 -1 2 0 0 0 0 17 25 0 0 20 0 1 0 5 0 0";
        assert_eq!(parse_pid_stat(s), Some(("jbd2/loop3-8".into(), 'D', 42)));
    }
}
