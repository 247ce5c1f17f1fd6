//! A loop row as ordinary metrics: one detail metric per column, all of
//! the loop's phase (`loop N`), so that a workload that runs in loops
//! records them through [`crate::Recorder::record_metrics`] as it goes and
//! every reader (`results show`, the report, the exports) shows them as
//! any breakdown rows. [`LoopRow::from_metrics`] reads them back, for
//! whoever adds loops up (the ranks of an MPI run).

use crate::{Better, CallStats, LoopRow, Metric, Unit};

/// The phase of loop `index`'s metrics: `loop N` (0-based).
pub fn loop_phase(index: u32) -> String {
    format!("loop {index}")
}

/// The loop number of a `loop N` phase.
pub fn loop_index(phase: &str) -> Option<u32> {
    match crate::catalogue::numbered(phase)? {
        ("loop", n) => u32::try_from(n).ok(),
        _ => None,
    }
}

/// The names of a loop row's columns as metrics (fs_mark's headings where
/// it has them).
pub const FS_USE: &str = "FSUse%";
pub const COUNT: &str = "Count";
pub const FILES: &str = "files";
pub const SIZE: &str = "Size";
pub const FILES_PER_SEC: &str = "Files/sec";
pub const WALL_FILES_PER_SEC: &str = "wall Files/sec";
pub const WALL_TIME: &str = "wall time";
pub const APP_OVERHEAD: &str = "App Overhead";
pub const COMPLETE: &str = "complete";
/// The statistics of a call, after its name (`creat min`).
const CALL_STATS: [&str; 3] = ["min", "avg", "max"];

impl LoopRow {
    /// The row as detail metrics of phase `loop N`, from `source`.
    pub fn metrics(&self, source: &str) -> Vec<Metric> {
        let phase = loop_phase(self.index);
        let m = |name: &str, value: f64, unit: Unit, better: Better| {
            Metric::new(source, Some(&phase), name, value, unit, better).detail()
        };
        let mut v = vec![
            m(FS_USE, self.fs_use_pct.into(), Unit::Percent, Better::Lower),
            m(COUNT, self.count as f64, Unit::Count, Better::Neither),
            m(FILES, self.files as f64, Unit::Count, Better::Neither),
            m(SIZE, self.file_size as f64, Unit::Bytes, Better::Neither),
            m(
                FILES_PER_SEC,
                self.files_per_sec,
                Unit::FilesPerSec,
                Better::Higher,
            ),
            m(
                WALL_FILES_PER_SEC,
                self.wall_files_per_sec,
                Unit::FilesPerSec,
                Better::Higher,
            ),
            m(WALL_TIME, self.wall_s, Unit::Seconds, Better::Lower),
            m(
                APP_OVERHEAD,
                self.app_overhead_us as f64,
                Unit::Microseconds,
                Better::Lower,
            ),
            m(
                COMPLETE,
                f64::from(u8::from(self.complete)),
                Unit::Count,
                Better::Neither,
            ),
        ];
        for (call, c) in &self.calls {
            for (stat, value) in CALL_STATS.iter().zip([c.min_us, c.avg_us, c.max_us]) {
                v.push(m(
                    &format!("{call} {stat}"),
                    value as f64,
                    Unit::Microseconds,
                    Better::Lower,
                ));
            }
        }
        v
    }

    /// The loop rows that `metrics` hold (as [`LoopRow::metrics`] wrote
    /// them), in loop order; a column missing from a loop reads as 0.
    pub fn from_metrics(metrics: &[Metric]) -> Vec<LoopRow> {
        let mut rows: Vec<LoopRow> = Vec::new();
        for m in metrics.iter().filter(|m| m.detail) {
            let Some(index) = m.phase.as_deref().and_then(loop_index) else {
                continue;
            };
            let row = match rows.iter().position(|r| r.index == index) {
                Some(i) => &mut rows[i],
                None => {
                    rows.push(LoopRow {
                        index,
                        ..LoopRow::default()
                    });
                    rows.last_mut().expect("just pushed")
                }
            };
            let v = m.value;
            match m.name.as_str() {
                FS_USE => row.fs_use_pct = v as u32,
                COUNT => row.count = v as u64,
                FILES => row.files = v as u64,
                SIZE => row.file_size = v as u64,
                FILES_PER_SEC => row.files_per_sec = v,
                WALL_FILES_PER_SEC => row.wall_files_per_sec = v,
                WALL_TIME => row.wall_s = v,
                APP_OVERHEAD => row.app_overhead_us = v as u64,
                COMPLETE => row.complete = v != 0.0,
                name => {
                    let Some((call, stat)) = name.rsplit_once(' ') else {
                        continue;
                    };
                    let Some(k) = CALL_STATS.iter().position(|s| *s == stat) else {
                        continue;
                    };
                    let c = match row.calls.iter().position(|(n, _)| n == call) {
                        Some(i) => &mut row.calls[i].1,
                        None => {
                            row.calls.push((call.to_string(), CallStats::default()));
                            &mut row.calls.last_mut().expect("just pushed").1
                        }
                    };
                    *[&mut c.min_us, &mut c.avg_us, &mut c.max_us][k] = v as u64;
                }
            }
        }
        rows.sort_by_key(|r| r.index);
        rows
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(index: u32) -> LoopRow {
        LoopRow {
            index,
            fs_use_pct: 3,
            count: 200 * u64::from(index + 1),
            files: 200,
            file_size: 4096,
            files_per_sec: 1234.5,
            wall_files_per_sec: 1000.25,
            wall_s: 0.2,
            app_overhead_us: 777,
            calls: vec![
                (
                    "creat".into(),
                    CallStats {
                        min_us: 1,
                        avg_us: 2,
                        max_us: 30,
                    },
                ),
                ("close".into(), CallStats::default()),
            ],
            complete: index == 0,
        }
    }

    #[test]
    fn a_loop_row_is_detail_metrics_of_its_loop_and_reads_back_whole() {
        let rows = [row(0), row(1)];
        let mut metrics: Vec<Metric> = rows
            .iter()
            .rev()
            .flat_map(|r| r.metrics("fsmark"))
            .collect();
        assert!(metrics.iter().all(|m| m.detail && m.source == "fsmark"));
        let files = metrics
            .iter()
            .find(|m| m.name == FILES_PER_SEC && m.phase.as_deref() == Some("loop 1"))
            .unwrap();
        assert_eq!(files.label(), "loop 1 Files/sec (files/s)");
        assert_eq!(files.value, 1234.5);
        // Loops in any order, other numbers beside them: the same rows.
        metrics.push(Metric::new(
            "fsmark",
            None,
            "files created",
            400.0,
            Unit::Count,
            Better::Neither,
        ));
        assert_eq!(LoopRow::from_metrics(&metrics), rows);
        assert_eq!(loop_index("loop 12"), Some(12));
        assert_eq!(loop_index("execute"), None);
    }
}
