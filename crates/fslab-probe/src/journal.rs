//! Journal commit statistics: ext3/ext4's `jbd2:jbd2_run_stats` trace
//! event (one line per commit, as seed 004 reads them), XFS's log counters
//! and btrfs's commit statistics from sysfs.

use crate::names;
use std::path::{Path, PathBuf};

use crate::source::Source;

/// The numbers of one jbd2 commit (times in ms).
pub const JBD2_FIELDS: [&str; 10] = [
    "wait",
    "request_delay",
    names::JBD2_RUNNING,
    names::JBD2_LOCKED,
    "flushing",
    names::JBD2_LOGGING,
    "handle_count",
    "blocks",
    "blocks_logged",
    "tid",
];

/// Parses the body of a `jbd2_run_stats` line:
/// `dev 7,3 tid 2 wait 0 request_delay 0 running 5004 locked 0 flushing 0 logging 8 handle_count 1203 blocks 12 blocks_logged 13`.
pub fn parse_jbd2(body: &str) -> Option<Vec<(&'static str, f64)>> {
    let f: Vec<&str> = body.split_whitespace().collect();
    let mut out = Vec::new();
    for name in JBD2_FIELDS {
        let i = f.iter().position(|x| *x == name)?;
        out.push((name, f.get(i + 1)?.parse::<f64>().ok()?));
    }
    Some(out)
}

/// Where XFS keeps the counters of the filesystem on device `dev_name`.
pub fn xfs_stats_path(dev_name: &str) -> PathBuf {
    PathBuf::from(format!("/sys/fs/xfs/{dev_name}/stats/stats"))
}

/// XFS's `log` counters, from the text of its stats file.
pub fn xfs_log_counters(text: &str) -> Option<Vec<(&'static str, f64)>> {
    let line = text.lines().find(|l| l.starts_with("log "))?;
    let v: Vec<f64> = line
        .split_whitespace()
        .skip(1)
        .filter_map(|x| x.parse().ok())
        .collect();
    let names = [
        names::XFS_LOG_WRITES,
        "log_blocks",
        "log_noiclogs",
        "log_forces",
        "log_force_sleeps",
    ];
    Some(names.iter().zip(v).map(|(n, x)| (*n, x)).collect())
}

/// The btrfs sysfs directory of the filesystem on device `dev_name`.
pub fn btrfs_dir(source: &dyn Source, dev_name: &str) -> Option<PathBuf> {
    let base = Path::new("/sys/fs/btrfs");
    source
        .list(base)
        .into_iter()
        .map(|n| base.join(n))
        .find(|p| {
            source
                .list(&p.join("devices"))
                .iter()
                .any(|d| d == dev_name)
        })
}

/// btrfs's commit_stats (commits, last/max/total commit ms), from its text.
pub fn btrfs_commit_stats(text: &str) -> Vec<(String, f64)> {
    text.lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            Some((names::btrfs(f.next()?), f.next()?.parse().ok()?))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn jbd2_line_parses() {
        let v = super::parse_jbd2("dev 7,3 tid 2 wait 0 request_delay 0 running 5004 locked 0 flushing 0 logging 8 handle_count 1203 blocks 12 blocks_logged 13").unwrap();
        assert!(
            v.contains(&("running", 5004.0))
                && v.contains(&("handle_count", 1203.0))
                && v.contains(&("tid", 2.0))
        );
        assert!(super::parse_jbd2("dev 7,3 tid 2").is_none());
    }
}
