//! createmany on ext4: the directory's htree depth, read once a second,
//! and the create rate at each depth (seed 004: creates slow down once the
//! directory grows a third htree level); and why a create failed with
//! ENOSPC when the directory's htree, not the filesystem, is full.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use fslab_model::{Better, Metric, SeriesPoint, Unit};

/// The name of the rate while the directory had `levels` htree levels.
pub fn rate_name(levels: u32) -> String {
    format!("ops/second, {levels}-level htree")
}

/// The seconds of a run by the directory's htree depth.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DepthRates {
    dir: PathBuf,
    /// The depth at the end of the last second (None: not read, or not ext4).
    depth: Option<u32>,
    last_t: f64,
    /// Per depth: operations and seconds of the whole seconds spent at it.
    by_depth: BTreeMap<u32, (u64, f64)>,
    /// Per depth: the entries made when the directory first had it.
    reached: BTreeMap<u32, u64>,
}

impl DepthRates {
    /// Follows directory `dir` (its depth read now).
    pub fn new(dir: &Path) -> DepthRates {
        let mut d = DepthRates {
            dir: dir.to_path_buf(),
            ..Default::default()
        };
        d.depth = d.read();
        if let Some(l) = d.depth {
            d.reached.insert(l, 0);
        }
        d
    }

    /// For a run that puts its names in one directory on ext4 (None otherwise).
    pub fn of(o: &crate::createmany::CreateManyOptions) -> Option<DepthRates> {
        use crate::createmany::Op;
        (o.op != Op::Unlink && !o.dir_per_thread)
            .then(|| DepthRates::new(&o.dir()))
            .filter(|d| d.depth().is_some())
    }

    fn read(&self) -> Option<u32> {
        fslab_layout::htree::levels(&self.dir).ok().flatten()
    }

    /// One second of the run ended: reads the depth and counts it.
    pub fn tick(&mut self, pt: &SeriesPoint) {
        let now = self.read();
        self.second(pt, now);
    }

    /// A second's operations, the depth at its end. A second in which the
    /// depth changed counts for neither depth.
    pub fn second(&mut self, pt: &SeriesPoint, depth: Option<u32>) {
        let dt = pt.t_s - self.last_t;
        self.last_t = pt.t_s;
        if let Some(l) = depth {
            self.reached.entry(l).or_insert(pt.total_ops);
        }
        if let (Some(a), Some(b)) = (self.depth, depth) {
            if a == b && dt > 0.0 {
                let e = self.by_depth.entry(a).or_default();
                e.0 += pt.ops;
                e.1 += dt;
            }
        }
        self.depth = depth;
    }

    /// The depth last read.
    pub fn depth(&self) -> Option<u32> {
        self.depth
    }

    /// One line per depth: from how many entries on, and the rate there.
    pub fn describe(&self) -> Vec<String> {
        self.reached
            .iter()
            .map(|(l, n)| {
                let rate = self
                    .by_depth
                    .get(l)
                    .map(|(ops, s)| format!(": {:.2} ops/second", *ops as f64 / s))
                    .unwrap_or_default();
                format!("htree: {l} level(s) from {n} entries{rate}")
            })
            .collect()
    }

    /// `ops/second, N-level htree` for every depth with whole seconds at it.
    pub fn metrics(&self, op: &str) -> Vec<Metric> {
        self.by_depth
            .iter()
            .filter(|(l, (_, s))| **l >= 1 && *s > 0.0)
            .map(|(l, (ops, s))| {
                Metric::new(
                    "createmany",
                    Some(op),
                    &rate_name(*l),
                    *ops as f64 / s,
                    Unit::OpsPerSec,
                    Better::Higher,
                )
            })
            .collect()
    }
}

/// The depth lines of a run, and with `full` (the entries made) why it
/// ended before its count.
pub fn print_end(
    out: &mut dyn std::io::Write,
    depth: Option<&DepthRates>,
    full: Option<u64>,
    dir: &Path,
) {
    for l in depth.iter().flat_map(|d| d.describe()) {
        let _ = writeln!(out, "{l}");
    }
    if let Some(total) = full {
        let why = explain_enospc(dir).unwrap_or_default();
        let _ = writeln!(out, "directory full after {total} entries: {why}");
    }
}

/// Why a create in `dir` failed with ENOSPC while the filesystem had room
/// (free blocks and inodes): its htree is full, at `levels` levels.
pub fn full_directory(levels: u32) -> String {
    match levels {
        2 => {
            "the directory's htree is full: 2 levels, the most ext4 allows without large_dir".into()
        }
        3 => "the directory's htree is full: 3 levels, the most ext4 allows (large_dir)".into(),
        l => format!("the directory's htree is full at {l} level(s)"),
    }
}

/// [`full_directory`] for `dir` if its filesystem still has free blocks
/// and inodes and it is an indexed ext4 directory; None otherwise (the
/// filesystem itself is full, or it is not ext4).
pub fn explain_enospc(dir: &Path) -> Option<String> {
    let levels = fslab_layout::htree::levels(dir).ok().flatten()?;
    let st = rustix::fs::statvfs(dir).ok()?;
    (levels >= 1 && st.f_bavail > 0 && st.f_favail > 0).then(|| full_directory(levels))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pt(t_s: f64, ops: u64, total_ops: u64) -> SeriesPoint {
        SeriesPoint {
            phase_index: 0,
            t_s,
            ops,
            total_ops,
        }
    }

    fn rates(d: &DepthRates) -> Vec<(String, f64)> {
        d.metrics("create")
            .into_iter()
            .map(|m| (m.label(), m.value))
            .collect()
    }

    #[test]
    fn the_rate_is_counted_by_depth_and_the_second_of_the_change_by_neither() {
        let mut d = DepthRates {
            depth: Some(2),
            ..Default::default()
        };
        d.second(&pt(1.0, 70_000, 70_000), Some(2));
        d.second(&pt(2.0, 74_000, 144_000), Some(2));
        // The third level appears during this second.
        d.second(&pt(3.0, 60_000, 204_000), Some(3));
        d.second(&pt(4.0, 40_000, 244_000), Some(3));
        d.second(&pt(4.5, 18_000, 262_000), Some(3));
        assert_eq!(
            rates(&d),
            vec![
                (
                    "create ops/second, 2-level htree (ops/s)".to_string(),
                    72_000.0
                ),
                (
                    "create ops/second, 3-level htree (ops/s)".to_string(),
                    58_000.0 / 1.5
                ),
            ]
        );
        assert_eq!(d.reached[&3], 204_000);
        assert_eq!(d.depth(), Some(3));
        assert!(d.describe()[1].starts_with("htree: 3 level(s) from 204000 entries: "));
    }

    #[test]
    fn a_directory_that_never_grew_a_third_level_has_no_rate_for_it() {
        let mut d = DepthRates {
            depth: Some(1),
            ..Default::default()
        };
        d.second(&pt(1.0, 100, 100), Some(2));
        d.second(&pt(2.0, 50_000, 50_100), Some(2));
        let r = rates(&d);
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].0, "create ops/second, 2-level htree (ops/s)");
        // Off ext4 (no depth): nothing at all.
        let mut off = DepthRates::default();
        off.second(&pt(1.0, 100, 100), None);
        assert!(rates(&off).is_empty());
    }

    #[test]
    fn a_full_htree_is_named_with_its_limit() {
        assert!(full_directory(2).contains("without large_dir"));
        assert!(full_directory(3).contains("(large_dir)"));
        let d = tempfile::tempdir_in("/dev/shm").unwrap();
        assert_eq!(explain_enospc(d.path()), None, "tmpfs has no htree");
    }
}
