//! A/A calibrations: the noise between a cell and itself, per metric,
//! filesystem and machine (schema migration 7).

use rusqlite::params;
use serde::Serialize;

use crate::{Store, StoreError};

/// One metric's calibration.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Calibration {
    /// The A/A experiment it came from (its id names the calibration).
    pub experiment_id: i64,
    pub created_at: String,
    pub hostname: String,
    pub fs_type: String,
    pub workload: String,
    /// The workload's options, paths aside, as `name = value; ...`.
    pub options: String,
    pub metric: String,
    /// Runs per copy.
    pub n: u32,
    /// The pooled standard deviation of the runs' logs.
    pub sd_log: f64,
    /// Copy 2 over copy 1 (ratio of geometric means).
    pub ratio: f64,
    /// The noise threshold it gives, in percent.
    pub delta_pct: f64,
}

impl Store {
    /// Keeps the calibrations of one A/A experiment (replacing any it had).
    pub fn record_calibrations(&mut self, rows: &[Calibration]) -> Result<(), StoreError> {
        let tx = self.conn.transaction().map_err(|e| StoreError::Sqlite {
            path: self.path.clone(),
            source: e,
        })?;
        for c in rows {
            tx.execute(
                "INSERT OR REPLACE INTO calibrations VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
                params![
                    c.experiment_id,
                    c.created_at,
                    c.hostname,
                    c.fs_type,
                    c.workload,
                    c.options,
                    c.metric,
                    c.n,
                    c.sd_log,
                    c.ratio,
                    c.delta_pct
                ],
            )
            .map_err(|e| StoreError::Sqlite {
                path: self.path.clone(),
                source: e,
            })?;
        }
        tx.commit().map_err(|e| StoreError::Sqlite {
            path: self.path.clone(),
            source: e,
        })
    }

    /// Every calibration, newest experiment first.
    pub fn calibrations(&self) -> Result<Vec<Calibration>, StoreError> {
        let q = || -> rusqlite::Result<Vec<Calibration>> {
            let mut st = self.conn().prepare(
                "SELECT experiment_id, created_at, hostname, fs_type, workload, options, metric, n,
                    sd_log, ratio, delta_pct FROM calibrations ORDER BY experiment_id DESC, metric",
            )?;
            let rows = st.query_map([], |r| {
                Ok(Calibration {
                    experiment_id: r.get(0)?,
                    created_at: r.get(1)?,
                    hostname: r.get(2)?,
                    fs_type: r.get(3)?,
                    workload: r.get(4)?,
                    options: r.get(5)?,
                    metric: r.get(6)?,
                    n: r.get(7)?,
                    sd_log: r.get(8)?,
                    ratio: r.get(9)?,
                    delta_pct: r.get(10)?,
                })
            })?;
            rows.collect()
        };
        q().map_err(|e| self.err(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fslab_model::{ExperimentInfo, ExperimentRecorder};

    #[test]
    fn calibrations_are_kept_and_read_back_newest_first() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Store::open(&dir.path().join("r.sqlite")).unwrap();
        let info = ExperimentInfo {
            name: "cal A/A x".into(),
            file: "x.toml".into(),
            text: String::new(),
            scale: 1.0,
            repetitions: 3,
            command_line: vec!["fslab".into()],
            fslab_version: "0".into(),
            kernel: "k".into(),
            hostname: "h".into(),
            started_at: "t".into(),
        };
        let (e1, e2) = (
            s.begin_experiment(&info).unwrap(),
            s.begin_experiment(&info).unwrap(),
        );
        let row = |experiment_id, delta_pct| Calibration {
            experiment_id,
            created_at: "2026-11-25".into(),
            hostname: "h".into(),
            fs_type: "ext4".into(),
            workload: "fsmark".into(),
            options: "n = 100".into(),
            metric: "create rate (ops/s)".into(),
            n: 3,
            sd_log: 0.02,
            ratio: 1.01,
            delta_pct,
        };
        s.record_calibrations(&[row(e1, 3.0)]).unwrap();
        s.record_calibrations(&[row(e2, 4.0)]).unwrap();
        // Kept again: replaced, not doubled.
        s.record_calibrations(&[row(e2, 5.0)]).unwrap();
        assert_eq!(s.calibrations().unwrap(), vec![row(e2, 5.0), row(e1, 3.0)]);
    }
}
