//! Reading runs back: the list, one run in full, and its export as JSON or
//! long-format CSV.

use fslab_model::{RunStatus, SeriesPoint};
use rusqlite::{params, Row};
use serde::Serialize;

use crate::{Store, StoreError};

/// (phase_index, probe, metric, samples, mean, max) of one probe metric.
/// A probe series summarised over one phase.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProbeSummary {
    pub phase_index: u32,
    pub probe: String,
    /// The series' name (the probes name them: fslab-probe's `names`).
    pub metric: String,
    pub samples: u64,
    pub mean: f64,
    pub max: f64,
}
/// (phase, op, HDR V2 bytes, min_ns, sum_ns, max_ns) as stored.
type HistogramRow = (String, String, Vec<u8>, i64, i64, i64);

/// One line of `fslab results list`.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RunRow {
    pub id: i64,
    pub workload: String,
    pub started_at: String,
    pub finished_at: Option<String>,
    pub status: RunStatus,
    pub error: Option<String>,
    pub command_line: Vec<String>,
    pub fslab_version: String,
    pub kernel: String,
    pub hostname: String,
    pub target_path: String,
    pub fs_type: String,
    pub mount_source: String,
    pub mount_point: String,
    pub mount_options: String,
    pub params: serde_json::Value,
}

/// A phase as stored.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct StoredPhase {
    pub seq: u32,
    pub phase: String,
    pub ops: u64,
    pub elapsed_s: f64,
    pub ops_per_s: f64,
    pub usr_cpu_s: f64,
    pub sys_cpu_s: f64,
    pub bytes: u64,
    pub complete: bool,
    /// Reported by the program fslab ran, after it ended (see
    /// [`fslab_model::PhaseResult::reported`]).
    pub reported: bool,
    /// Whether its count counts its work (see
    /// [`fslab_model::PhaseResult::counted`]).
    pub counted: bool,
}

impl From<StoredPhase> for fslab_model::PhaseResult {
    fn from(p: StoredPhase) -> Self {
        fslab_model::PhaseResult {
            phase: p.phase,
            ops: p.ops,
            elapsed_s: p.elapsed_s,
            ops_per_s: p.ops_per_s,
            usr_cpu_s: p.usr_cpu_s,
            sys_cpu_s: p.sys_cpu_s,
            bytes: p.bytes,
            complete: p.complete,
            reported: p.reported,
            counted: p.counted,
        }
    }
}

/// A latency distribution as stored (percentiles; the HDR blob stays in the database).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct StoredLatency {
    pub phase: String,
    pub op: String,
    pub count: u64,
    pub min_ns: u64,
    pub mean_ns: f64,
    pub p50_ns: u64,
    pub p90_ns: u64,
    pub p99_ns: u64,
    pub p999_ns: u64,
    pub max_ns: u64,
}

/// Everything recorded for one run.
#[derive(Debug, Clone, Serialize)]
pub struct RunRecord {
    pub run: RunRow,
    pub phases: Vec<StoredPhase>,
    pub latency: Vec<StoredLatency>,
    pub series: Vec<SeriesPoint>,
    /// The tool's own numbers, as it reported them.
    pub metrics: Vec<fslab_model::Metric>,
    /// The machine it ran on: each host's facts, each phase's clock,
    /// page cache and pressure.
    pub machine: fslab_model::facts::Machine,
    /// What a program the run started printed, kept with it (`fslab
    /// results output ID STREAM` prints it): each stream and its size.
    pub outputs: Vec<StoredOutput>,
}

/// One stream a program printed (or a result file it wrote), as kept.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct StoredOutput {
    /// `stdout`, `stderr` or the file's name.
    pub stream: String,
    /// Its size in bytes.
    pub bytes: u64,
}

const RUN_COLUMNS: &str =
    "id, workload, started_at, finished_at, status, error, command_line, fslab_version,
    kernel, hostname, target_path, fs_type, mount_source, mount_point, mount_options, params";

fn run_row(r: &Row) -> rusqlite::Result<RunRow> {
    let status: String = r.get(4)?;
    let argv: String = r.get(6)?;
    let params: String = r.get(15)?;
    Ok(RunRow {
        id: r.get(0)?,
        workload: r.get(1)?,
        started_at: r.get(2)?,
        finished_at: r.get(3)?,
        status: RunStatus::parse(&status).unwrap_or(RunStatus::Failed),
        error: r.get(5)?,
        command_line: serde_json::from_str(&argv).unwrap_or_default(),
        fslab_version: r.get(7)?,
        kernel: r.get(8)?,
        hostname: r.get(9)?,
        target_path: r.get(10)?,
        fs_type: r.get(11)?,
        mount_source: r.get(12)?,
        mount_point: r.get(13)?,
        mount_options: r.get(14)?,
        params: serde_json::from_str(&params).unwrap_or_default(),
    })
}

impl Store {
    /// All runs, oldest first.
    pub fn list_runs(&self) -> Result<Vec<RunRow>, StoreError> {
        let q = || -> rusqlite::Result<Vec<RunRow>> {
            let mut st = self
                .conn()
                .prepare(&format!("SELECT {RUN_COLUMNS} FROM runs ORDER BY id"))?;
            let rows = st.query_map([], run_row)?;
            rows.collect()
        };
        q().map_err(|e| self.err(e))
    }

    /// Every stored run's id, oldest first (what `latest`, `latest~N` and
    /// ranges of run ids are resolved against).
    pub fn run_ids(&self) -> Result<Vec<i64>, StoreError> {
        let q = || -> rusqlite::Result<Vec<i64>> {
            let mut st = self.conn().prepare("SELECT id FROM runs ORDER BY id")?;
            let rows = st.query_map([], |r| r.get(0))?;
            rows.collect()
        };
        q().map_err(|e| self.err(e))
    }

    /// Run `id`'s row: who ran what, where, and how it ended (without its
    /// phases, series and numbers: see [`Store::run`]).
    pub fn run_row(&self, id: i64) -> Result<RunRow, StoreError> {
        let q = || -> rusqlite::Result<Option<RunRow>> {
            let mut st = self
                .conn()
                .prepare(&format!("SELECT {RUN_COLUMNS} FROM runs WHERE id = ?1"))?;
            let row = st.query_map([id], run_row)?.next().transpose();
            row
        };
        q().map_err(|e| self.err(e))?
            .ok_or(StoreError::NoSuchRun(id))
    }

    /// The phases of a run, in order.
    pub fn phases(&self, id: i64) -> Result<Vec<StoredPhase>, StoreError> {
        let q = || -> rusqlite::Result<Vec<StoredPhase>> {
            let mut st = self.conn().prepare(
                "SELECT seq, phase, ops, elapsed_s, ops_per_s, usr_cpu_s, sys_cpu_s, bytes, complete,
                    reported, counted
                 FROM phases WHERE run_id = ?1 ORDER BY seq",
            )?;
            let rows = st.query_map([id], |r| {
                Ok(StoredPhase {
                    seq: r.get(0)?,
                    phase: r.get(1)?,
                    ops: r.get::<_, i64>(2)? as u64,
                    elapsed_s: r.get(3)?,
                    ops_per_s: r.get(4)?,
                    usr_cpu_s: r.get(5)?,
                    sys_cpu_s: r.get(6)?,
                    bytes: r.get::<_, i64>(7)? as u64,
                    complete: r.get(8)?,
                    reported: r.get(9)?,
                    counted: r.get(10)?,
                })
            })?;
            rows.collect()
        };
        q().map_err(|e| self.err(e))
    }

    /// What run `id`'s program printed on `stream` (`stdout`, `stderr`, a
    /// result file's name), as it printed it; None when nothing was kept
    /// under that name.
    pub fn output(&self, id: i64, stream: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let q = || -> rusqlite::Result<Option<Vec<u8>>> {
            let mut st = self
                .conn()
                .prepare("SELECT bytes FROM outputs WHERE run_id = ?1 AND stream = ?2")?;
            let found = st
                .query_map(params![id, stream], |r| r.get(0))?
                .next()
                .transpose();
            found
        };
        q().map_err(|e| self.err(e))
    }

    /// Everything recorded for run `id`.
    pub fn run(&self, id: i64) -> Result<RunRecord, StoreError> {
        let q = || -> rusqlite::Result<Option<RunRecord>> {
            let c = self.conn();
            let mut st = c.prepare(&format!("SELECT {RUN_COLUMNS} FROM runs WHERE id = ?1"))?;
            let Some(run) = st.query_map([id], run_row)?.next().transpose()? else {
                return Ok(None);
            };
            let mut st = c.prepare(
                "SELECT phase, op, count, min_ns, mean_ns, p50_ns, p90_ns, p99_ns, p999_ns, max_ns
                 FROM latency WHERE run_id = ?1 ORDER BY rowid",
            )?;
            let latency = st
                .query_map([id], |r| {
                    Ok(StoredLatency {
                        phase: r.get(0)?,
                        op: r.get(1)?,
                        count: r.get::<_, i64>(2)? as u64,
                        min_ns: r.get::<_, i64>(3)? as u64,
                        mean_ns: r.get(4)?,
                        p50_ns: r.get::<_, i64>(5)? as u64,
                        p90_ns: r.get::<_, i64>(6)? as u64,
                        p99_ns: r.get::<_, i64>(7)? as u64,
                        p999_ns: r.get::<_, i64>(8)? as u64,
                        max_ns: r.get::<_, i64>(9)? as u64,
                    })
                })?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            let mut st = c.prepare(
                "SELECT phase_index, t_s, ops, total_ops FROM series WHERE run_id = ?1 ORDER BY phase_index, t_s",
            )?;
            let series = st
                .query_map(params![id], |r| {
                    Ok(SeriesPoint {
                        phase_index: r.get(0)?,
                        t_s: r.get(1)?,
                        ops: r.get::<_, i64>(2)? as u64,
                        total_ops: r.get::<_, i64>(3)? as u64,
                    })
                })?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            let mut st = c.prepare(
                "SELECT stream, length(bytes) FROM outputs WHERE run_id = ?1 ORDER BY rowid",
            )?;
            let outputs = st
                .query_map([id], |r| {
                    Ok(StoredOutput {
                        stream: r.get(0)?,
                        bytes: r.get::<_, i64>(1)? as u64,
                    })
                })?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(Some(RunRecord {
                run,
                phases: Vec::new(),
                latency,
                series,
                metrics: Vec::new(),
                machine: fslab_model::facts::Machine::default(),
                outputs,
            }))
        };
        let mut rec = q()
            .map_err(|e| self.err(e))?
            .ok_or(StoreError::NoSuchRun(id))?;
        rec.phases = self.phases(id)?;
        rec.metrics = self.metrics(id)?;
        rec.machine = self.machine(id)?;
        Ok(rec)
    }
}

/// A unit-like enum from its serde name in column `i`.
fn enum_of<T: serde::de::DeserializeOwned>(t: String, i: usize) -> rusqlite::Result<T> {
    serde_json::from_value(serde_json::Value::String(t)).map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(i, rusqlite::types::Type::Text, Box::new(e))
    })
}

impl Store {
    /// The numbers run `id`'s tool reported, in the order it reported them.
    pub fn metrics(&self, id: i64) -> Result<Vec<fslab_model::Metric>, StoreError> {
        let q = || -> rusqlite::Result<Vec<fslab_model::Metric>> {
            let c = self.conn();
            let mut st = c.prepare(
                "SELECT source, phase, name, value, unit, better, detail, exact FROM metrics
                 WHERE run_id = ?1 ORDER BY rowid",
            )?;
            let rows = st.query_map([id], |r| {
                let unit: String = r.get(4)?;
                let better: String = r.get(5)?;
                Ok(fslab_model::Metric {
                    source: r.get(0)?,
                    phase: r.get(1)?,
                    name: r.get(2)?,
                    value: r.get(3)?,
                    unit: enum_of(unit, 4)?,
                    better: enum_of(better, 5)?,
                    detail: r.get(6)?,
                    exact: r.get(7)?,
                })
            })?;
            rows.collect()
        };
        q().map_err(|e| self.err(e))
    }
}

impl Store {
    /// Run `id` as the one JSON document of a run (`fslab_model::json`'s
    /// shape, `schema/run.schema.json`): what a workload's `--json` and
    /// `results export --format json` print alike.
    pub fn run_json(&self, id: i64) -> Result<String, StoreError> {
        Ok(fslab_model::json::Versioned::new(self.run_document(id, &[])?).to_pretty())
    }
}

impl RunRecord {
    /// The run as long-format CSV: `run_id,table,phase,op,index,metric,value`,
    /// one measured value per line (tidy data for R, pandas or a spreadsheet).
    pub fn to_csv(&self) -> String {
        let id = self.run.id.to_string();
        let mut w = csv::Writer::from_writer(Vec::new());
        let _ = w.write_record(["run_id", "table", "phase", "op", "index", "metric", "value"]);
        let mut line =
            |table: &str, phase: &str, op: &str, index: &str, metric: &str, value: String| {
                let _ = w.write_record([id.as_str(), table, phase, op, index, metric, &value]);
            };
        for m in &self.metrics {
            let phase = m.phase.as_deref().unwrap_or("");
            line(
                "metric",
                phase,
                &m.source,
                "",
                &m.name_with_unit(),
                m.value.to_string(),
            );
        }
        for p in &self.phases {
            let i = p.seq.to_string();
            for (metric, v) in [
                ("ops", p.ops.to_string()),
                ("elapsed_s", p.elapsed_s.to_string()),
                ("ops_per_s", p.ops_per_s.to_string()),
                ("usr_cpu_s", p.usr_cpu_s.to_string()),
                ("sys_cpu_s", p.sys_cpu_s.to_string()),
                ("bytes", p.bytes.to_string()),
                ("complete", (p.complete as u8).to_string()),
            ] {
                line("phase", &p.phase, "", &i, metric, v);
            }
        }
        for l in &self.latency {
            for (m, v) in [
                ("count", l.count as f64),
                ("min_ns", l.min_ns as f64),
                ("mean_ns", l.mean_ns),
                ("p50_ns", l.p50_ns as f64),
                ("p90_ns", l.p90_ns as f64),
                ("p99_ns", l.p99_ns as f64),
                ("p999_ns", l.p999_ns as f64),
                ("max_ns", l.max_ns as f64),
            ] {
                line("latency", &l.phase, &l.op, "", m, v.to_string());
            }
        }
        let phase_name = |i: u32| {
            self.phases
                .iter()
                .find(|p| p.seq == i)
                .map(|p| p.phase.clone())
                .unwrap_or_default()
        };
        for h in &self.machine.hosts {
            for f in &h.facts {
                line("fact", "", &h.host, "", &f.name, f.shown().to_string());
            }
        }
        for p in &self.machine.phases {
            let phase = phase_name(p.phase_index);
            for (metric, v) in p.facts.numbers() {
                line("machine", &phase, "", "", metric, v.to_string());
            }
        }
        for (i, s) in self.series.iter().enumerate() {
            let phase = phase_name(s.phase_index);
            line(
                "series",
                &phase,
                "",
                &i.to_string(),
                "t_s",
                s.t_s.to_string(),
            );
            line(
                "series",
                &phase,
                "",
                &i.to_string(),
                "ops",
                s.ops.to_string(),
            );
        }
        String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
    }
}

/// A probe note as stored, with its binary data.
#[derive(Debug, Clone, Serialize)]
pub struct StoredNote {
    pub phase_index: Option<u32>,
    pub probe: String,
    pub key: String,
    pub value: serde_json::Value,
    #[serde(skip)]
    pub blob: Option<Vec<u8>>,
}

impl Store {
    /// The probe notes of run `id`, in the order recorded.
    pub fn probe_notes(&self, id: i64) -> Result<Vec<StoredNote>, StoreError> {
        let q = || -> rusqlite::Result<Vec<StoredNote>> {
            let mut st = self.conn().prepare("SELECT phase_index, probe, key, value, blob FROM probe_notes WHERE run_id = ?1 ORDER BY rowid")?;
            let rows = st.query_map([id], |r| {
                let v: String = r.get(3)?;
                Ok(StoredNote {
                    phase_index: r.get(0)?,
                    probe: r.get(1)?,
                    key: r.get(2)?,
                    value: serde_json::from_str(&v).unwrap_or_default(),
                    blob: r.get(4)?,
                })
            })?;
            rows.collect()
        };
        q().map_err(|e| self.err(e))
    }

    /// Per-probe, per-metric summaries of a run's probe points, phase by phase.
    pub fn probe_point_summary(&self, id: i64) -> Result<Vec<ProbeSummary>, StoreError> {
        let q = || -> rusqlite::Result<Vec<ProbeSummary>> {
            let mut st = self.conn().prepare(
                "SELECT phase_index, probe, metric, COUNT(*), AVG(value), MAX(value) FROM probe_points
                 WHERE run_id = ?1 GROUP BY phase_index, probe, metric ORDER BY phase_index, probe, metric",
            )?;
            let rows = st.query_map([id], |r| {
                Ok(ProbeSummary {
                    phase_index: r.get(0)?,
                    probe: r.get(1)?,
                    metric: r.get(2)?,
                    samples: r.get::<_, i64>(3)? as u64,
                    mean: r.get(4)?,
                    max: r.get(5)?,
                })
            })?;
            rows.collect()
        };
        q().map_err(|e| self.err(e))
    }
}

/// One stored probe point.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StoredPoint {
    pub phase_index: u32,
    /// Seconds into the phase.
    pub t_s: f64,
    pub probe: String,
    /// The series' name (the probes name them: fslab-probe's `names`).
    pub metric: String,
    pub value: f64,
}

/// A latency histogram as stored, with its phase and call.
#[derive(Debug, Clone)]
pub struct StoredHistogram {
    pub phase: String,
    pub op: String,
    pub histogram: fslab_model::LatencyHistogram,
}

impl Store {
    /// All probe points of run `id`, in time order within each phase.
    pub fn probe_points(&self, id: i64) -> Result<Vec<StoredPoint>, StoreError> {
        let q = || -> rusqlite::Result<Vec<StoredPoint>> {
            let mut st = self.conn().prepare(
                "SELECT phase_index, t_s, probe, metric, value FROM probe_points WHERE run_id = ?1 ORDER BY phase_index, t_s",
            )?;
            let rows = st.query_map([id], |r| {
                Ok(StoredPoint {
                    phase_index: r.get(0)?,
                    t_s: r.get(1)?,
                    probe: r.get(2)?,
                    metric: r.get(3)?,
                    value: r.get(4)?,
                })
            })?;
            rows.collect()
        };
        q().map_err(|e| self.err(e))
    }

    /// The latency histograms of run `id`.
    pub fn latency_histograms(&self, id: i64) -> Result<Vec<StoredHistogram>, StoreError> {
        let q = || -> rusqlite::Result<Vec<HistogramRow>> {
            let mut st = self.conn().prepare("SELECT phase, op, hdr, min_ns, sum_ns, max_ns FROM latency WHERE run_id = ?1 ORDER BY rowid")?;
            let rows = st.query_map([id], |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                ))
            })?;
            rows.collect()
        };
        Ok(q()
            .map_err(|e| self.err(e))?
            .into_iter()
            .filter_map(|(p, o, b, min, sum, max)| {
                fslab_model::LatencyHistogram::from_v2_bytes(
                    &b,
                    min as u64,
                    sum as u128,
                    max as u64,
                )
                .ok()
                .map(|histogram| StoredHistogram {
                    phase: p,
                    op: o,
                    histogram,
                })
            })
            .collect())
    }
}
