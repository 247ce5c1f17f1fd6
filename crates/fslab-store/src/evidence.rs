//! What the explanations read of a run beside its numbers, cheaply: its
//! probe notes without their binary data (a block trace can be large), and
//! each operation's count and total latency.

use fslab_model::ProbeNote;

use crate::{Store, StoreError};

/// One operation's latencies in one phase: their count and sum.
#[derive(Debug, Clone, PartialEq)]
pub struct OpTotal {
    pub phase: String,
    pub op: String,
    pub count: u64,
    pub sum_ns: u64,
}

impl Store {
    /// Run `id`'s probe notes, in the order recorded, without their blobs.
    pub fn note_values(&self, id: i64) -> Result<Vec<ProbeNote>, StoreError> {
        let q = || -> rusqlite::Result<Vec<ProbeNote>> {
            let mut st = self.conn().prepare(
                "SELECT phase_index, probe, key, value FROM probe_notes WHERE run_id = ?1 ORDER BY rowid",
            )?;
            let rows = st.query_map([id], |r| {
                let v: String = r.get(3)?;
                Ok(ProbeNote {
                    phase_index: r.get(0)?,
                    probe: r.get(1)?,
                    key: r.get(2)?,
                    value: serde_json::from_str(&v).unwrap_or_default(),
                    blob: None,
                })
            })?;
            rows.collect()
        };
        q().map_err(|e| self.err(e))
    }

    /// Run `id`'s operations: count and total latency per phase and call.
    pub fn op_totals(&self, id: i64) -> Result<Vec<OpTotal>, StoreError> {
        let q = || -> rusqlite::Result<Vec<OpTotal>> {
            let mut st = self.conn().prepare(
                "SELECT phase, op, count, sum_ns FROM latency WHERE run_id = ?1 ORDER BY rowid",
            )?;
            let rows = st.query_map([id], |r| {
                Ok(OpTotal {
                    phase: r.get(0)?,
                    op: r.get(1)?,
                    count: r.get::<_, i64>(2)?.max(0) as u64,
                    sum_ns: r.get::<_, i64>(3)?.max(0) as u64,
                })
            })?;
            rows.collect()
        };
        q().map_err(|e| self.err(e))
    }
}
