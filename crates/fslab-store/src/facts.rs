//! The machine a run ran on, read back: each host's facts (table `facts`,
//! migration 11) and what the `machine` probe measured in each phase (its
//! notes), as one value that `results show`, the JSON documents and the
//! explanations read.

use fslab_model::facts::{Machine, PhaseMachine};
use fslab_model::facts::{PHASE_KEY, PHASE_PROBE};
use fslab_model::{Fact, MachineFacts};

use crate::{Store, StoreError};

impl Store {
    /// The machine run `id` ran on (empty for runs recorded before facts were).
    pub fn machine(&self, id: i64) -> Result<Machine, StoreError> {
        let q = || -> rusqlite::Result<Machine> {
            let c = self.conn();
            let mut st = c.prepare(
                "SELECT host, name, value, source FROM facts WHERE run_id = ?1
                 ORDER BY rowid",
            )?;
            let rows = st.query_map([id], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    Fact {
                        name: r.get(1)?,
                        value: r.get(2)?,
                        source: r.get(3)?,
                    },
                ))
            })?;
            let mut m = Machine::default();
            for row in rows {
                let (host, fact) = row?;
                match m.hosts.iter_mut().find(|h| h.host == host) {
                    Some(h) => h.facts.push(fact),
                    None => m.hosts.push(MachineFacts {
                        host,
                        facts: vec![fact],
                    }),
                }
            }
            let mut st = c.prepare(
                "SELECT phase_index, value FROM probe_notes
                 WHERE run_id = ?1 AND probe = ?2 AND key = ?3 AND phase_index IS NOT NULL
                 ORDER BY phase_index, rowid",
            )?;
            let rows = st.query_map(rusqlite::params![id, PHASE_PROBE, PHASE_KEY], |r| {
                Ok((r.get::<_, u32>(0)?, r.get::<_, String>(1)?))
            })?;
            for row in rows {
                let (phase_index, v) = row?;
                m.phases.push(PhaseMachine {
                    phase_index,
                    facts: serde_json::from_str(&v).unwrap_or_default(),
                });
            }
            Ok(m)
        };
        q().map_err(|e| self.err(e))
    }
}
