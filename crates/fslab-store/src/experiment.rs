//! Experiments in the store: writing them (ExperimentRecorder) and reading them back.

use fslab_model::{
    CellInfo, CellRunInfo, ExperimentInfo, ExperimentRecorder, FindingResult, RecordResult,
    RunStatus,
};
use rusqlite::params;
use serde::Serialize;

use crate::{json, rec_err, Store, StoreError};

impl ExperimentRecorder for Store {
    fn begin_experiment(&mut self, e: &ExperimentInfo) -> RecordResult<i64> {
        let me = fslab_model::process::ProcessId::current();
        self.conn()
            .execute(
                "INSERT INTO experiments (name, file, text, scale, repetitions, command_line, fslab_version,
                    kernel, hostname, started_at, status, pid, pid_start)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, 'running', ?11, ?12)",
                params![
                    e.name,
                    e.file,
                    e.text,
                    e.scale,
                    e.repetitions,
                    json(&e.command_line),
                    e.fslab_version,
                    e.kernel,
                    e.hostname,
                    e.started_at,
                    me.pid,
                    me.start as i64
                ],
            )
            .map_err(rec_err)?;
        Ok(self.conn().last_insert_rowid())
    }

    fn record_cell(&mut self, experiment: i64, c: &CellInfo) -> RecordResult<()> {
        self.conn()
            .execute(
                "INSERT OR REPLACE INTO cells VALUES (?1, ?2, ?3, ?4, ?5)",
                params![experiment, c.index, c.label, c.fs_type, json(c)],
            )
            .map_err(rec_err)?;
        Ok(())
    }

    fn record_finding(&mut self, experiment: i64, seq: u32, f: &FindingResult) -> RecordResult<()> {
        self.conn()
            .execute(
                "INSERT OR REPLACE INTO findings VALUES (?1, ?2, ?3, ?4, ?5)",
                params![experiment, seq, f.says, f.outcome.name(), json(f)],
            )
            .map_err(rec_err)?;
        Ok(())
    }

    fn record_cell_run(&mut self, experiment: i64, r: &CellRunInfo) -> RecordResult<()> {
        self.conn()
            .execute(
                "INSERT OR REPLACE INTO cell_runs VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                params![
                    experiment,
                    r.cell,
                    r.repetition,
                    r.run_id,
                    r.status.map(|s| s.as_str()).unwrap_or("failed"),
                    r.error,
                    r.unmount_s,
                    r.remount_s,
                    json(r)
                ],
            )
            .map_err(rec_err)?;
        Ok(())
    }

    fn reopen_experiment(&mut self, experiment: i64, repetitions: u32) -> RecordResult<()> {
        let me = fslab_model::process::ProcessId::current();
        let n = self
            .conn()
            .execute(
                "UPDATE experiments SET status = 'running', finished_at = NULL,
                    repetitions = MAX(repetitions, ?2), pid = ?3, pid_start = ?4 WHERE id = ?1",
                params![experiment, repetitions, me.pid, me.start as i64],
            )
            .map_err(rec_err)?;
        if n == 0 {
            return Err(fslab_model::RecordError::NoSuchExperiment(experiment));
        }
        Ok(())
    }

    fn import_run(&mut self, from: &std::path::Path, run: i64) -> RecordResult<i64> {
        Store::import_run(self, from, run)
    }

    fn finish_experiment(&mut self, experiment: i64, status: RunStatus) -> RecordResult<()> {
        self.conn()
            .execute(
                "UPDATE experiments SET status = ?2, finished_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE id = ?1",
                params![experiment, status.as_str()],
            )
            .map_err(rec_err)?;
        Ok(())
    }
}

/// An experiment read back, with its cells and their repetitions.
#[derive(Debug, Clone, Serialize)]
pub struct ExperimentRecord {
    pub id: i64,
    pub name: String,
    pub file: String,
    /// The experiment file's text as run.
    #[serde(skip)]
    pub text: String,
    /// `uname -r` of the machine it ran on.
    pub kernel: String,
    pub scale: f64,
    pub repetitions: u32,
    pub started_at: String,
    /// How the experiment ended (running while it runs, or after a kill
    /// until `fslab cleanup` marks it interrupted).
    pub status: RunStatus,
    pub cells: Vec<CellInfo>,
    /// The measured repetitions (warm-ups apart).
    pub cell_runs: Vec<CellRunInfo>,
    /// The warm-up runs (`warm_up`, repetition 0): kept, never compared.
    pub warm_ups: Vec<CellRunInfo>,
    /// The experiment's stated findings as evaluated.
    pub findings: Vec<FindingResult>,
}

/// How the filesystem of one run was made: its experiment, cell and
/// repetition (for a run that `fslab run` started).
#[derive(Debug, Clone, Serialize)]
pub struct RunOrigin {
    pub experiment_id: i64,
    pub experiment: String,
    pub cell: CellInfo,
    pub cell_run: CellRunInfo,
}

/// One line of the experiment list.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ExperimentRow {
    pub id: i64,
    pub name: String,
    pub file: String,
    pub scale: f64,
    pub repetitions: u32,
    pub started_at: String,
    /// How the experiment ended (running while it runs, or after a kill
    /// until `fslab cleanup` marks it interrupted).
    pub status: RunStatus,
    pub cells: u32,
    /// Repetitions recorded, and how many of them completed.
    pub runs: u32,
    pub completed: u32,
}

impl Store {
    /// Every experiment, oldest first.
    pub fn list_experiments(&self) -> Result<Vec<ExperimentRow>, StoreError> {
        let q = || -> rusqlite::Result<Vec<ExperimentRow>> {
            let c = self.conn();
            let mut st = c.prepare(
                "SELECT e.id, e.name, e.file, e.scale, e.repetitions, e.started_at, e.status,
                    (SELECT COUNT(*) FROM cells c WHERE c.experiment_id = e.id),
                    (SELECT COUNT(*) FROM cell_runs r WHERE r.experiment_id = e.id AND r.repetition > 0),
                    (SELECT COUNT(*) FROM cell_runs r WHERE r.experiment_id = e.id AND r.repetition > 0 AND r.status = 'complete')
                 FROM experiments e ORDER BY e.id",
            )?;
            let rows = st
                .query_map([], |r| {
                    Ok(ExperimentRow {
                        id: r.get(0)?,
                        name: r.get(1)?,
                        file: r.get(2)?,
                        scale: r.get(3)?,
                        repetitions: r.get(4)?,
                        started_at: r.get(5)?,
                        status: status(r, 6)?,
                        cells: r.get(7)?,
                        runs: r.get(8)?,
                        completed: r.get(9)?,
                    })
                })?
                .collect();
            rows
        };
        q().map_err(|e| self.err(e))
    }

    /// The experiment cell that run `run_id` belongs to, if any.
    pub fn run_origin(&self, run_id: i64) -> Result<Option<RunOrigin>, StoreError> {
        let q = || -> rusqlite::Result<Option<(i64, String, String, String)>> {
            let c = self.conn();
            let mut st = c.prepare(
                "SELECT cr.experiment_id, e.name, c.info, cr.info FROM cell_runs cr
                 JOIN experiments e ON e.id = cr.experiment_id
                 JOIN cells c ON c.experiment_id = cr.experiment_id AND c.idx = cr.cell
                 WHERE cr.run_id = ?1",
            )?;
            let row = st
                .query_map([run_id], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
                })?
                .next()
                .transpose();
            row
        };
        let Some((experiment_id, experiment, cell, cell_run)) = q().map_err(|e| self.err(e))?
        else {
            return Ok(None);
        };
        let (Ok(cell), Ok(cell_run)) = (
            serde_json::from_str::<CellInfo>(&cell),
            serde_json::from_str::<CellRunInfo>(&cell_run),
        ) else {
            return Ok(None);
        };
        Ok(Some(RunOrigin {
            experiment_id,
            experiment,
            cell,
            cell_run,
        }))
    }

    /// The id of the most recent experiment, if any.
    pub fn latest_experiment(&self) -> Result<Option<i64>, StoreError> {
        self.conn()
            .query_row("SELECT MAX(id) FROM experiments", [], |r| r.get(0))
            .map_err(|e| self.err(e))
    }

    /// Experiment `id` with its cells and cell runs.
    pub fn experiment(&self, id: i64) -> Result<ExperimentRecord, StoreError> {
        let q = || -> rusqlite::Result<Option<ExperimentRecord>> {
            let c = self.conn();
            let mut st = c.prepare(
                "SELECT id, name, file, scale, repetitions, started_at, status, text, kernel FROM experiments WHERE id = ?1",
            )?;
            let Some(mut e) = st
                .query_map([id], |r| {
                    Ok(ExperimentRecord {
                        id: r.get(0)?,
                        name: r.get(1)?,
                        file: r.get(2)?,
                        scale: r.get(3)?,
                        repetitions: r.get(4)?,
                        started_at: r.get(5)?,
                        status: status(r, 6)?,
                        text: r.get(7)?,
                        kernel: r.get(8)?,
                        cells: Vec::new(),
                        cell_runs: Vec::new(),
                        warm_ups: Vec::new(),
                        findings: Vec::new(),
                    })
                })?
                .next()
                .transpose()?
            else {
                return Ok(None);
            };
            let mut st =
                c.prepare("SELECT info FROM cells WHERE experiment_id = ?1 ORDER BY idx")?;
            e.cells = st
                .query_map([id], |r| r.get::<_, String>(0))?
                .filter_map(|t| t.ok().and_then(|t| serde_json::from_str(&t).ok()))
                .collect();
            let mut st = c.prepare(
                "SELECT info FROM cell_runs WHERE experiment_id = ?1 ORDER BY cell, repetition",
            )?;
            (e.warm_ups, e.cell_runs) = st
                .query_map([id], |r| r.get::<_, String>(0))?
                .filter_map(|t| t.ok().and_then(|t| serde_json::from_str(&t).ok()))
                .partition(CellRunInfo::is_warm_up);
            let mut st =
                c.prepare("SELECT result FROM findings WHERE experiment_id = ?1 ORDER BY seq")?;
            e.findings = st
                .query_map([id], |r| r.get::<_, String>(0))?
                .filter_map(|t| t.ok().and_then(|t| serde_json::from_str(&t).ok()))
                .map(before_the_rule)
                .collect();
            Ok(Some(e))
        };
        q().map_err(|e| self.err(e))?
            .ok_or(StoreError::NoSuchExperiment(id))
    }
}

/// A finding recorded before fslab's one rule (no claim id: a ratio
/// checked against a bound of the file's own) is shown as not judged,
/// with what the old check said, never under the rule's words.
fn before_the_rule(mut f: FindingResult) -> FindingResult {
    if f.id.is_empty() && f.why.is_empty() {
        f.why = format!(
            "recorded before fslab judged findings by one rule (its old check said {:?}): run the experiment again",
            f.outcome.words()
        );
        f.outcome = fslab_model::FindingOutcome::NotJudged;
    }
    f
}

/// Column `i`'s status as the store writes it.
fn status(r: &rusqlite::Row, i: usize) -> rusqlite::Result<RunStatus> {
    let s: String = r.get(i)?;
    Ok(RunStatus::parse(&s).unwrap_or(RunStatus::Failed))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_finding_stored_before_the_rule_reads_back_not_judged() {
        let old = r#"{"says":"btrfs 10x xfs","outcome":"reproduced","ratio":190.0,"ci":[180.0,200.0],"confident":true,"detail":"btrfs 3e4 is 190x xfs's"}"#;
        let f = before_the_rule(serde_json::from_str(old).unwrap());
        assert_eq!(f.outcome, fslab_model::FindingOutcome::NotJudged);
        assert!(
            f.why.contains("its old check said \"reproduced\""),
            "{}",
            f.why
        );
        let old = r#"{"says":"x","outcome":"not_evaluated","ratio":null,"ci":null,"confident":false,"detail":""}"#;
        let f: FindingResult = serde_json::from_str(old).unwrap();
        assert_eq!(f.outcome, fslab_model::FindingOutcome::NotJudged);
    }
}
