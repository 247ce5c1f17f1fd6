//! Runs read from the store as the explanations take them: the one place
//! this crate reads anything (the rest are pure functions over what this
//! hands them).

use fslab_store::{Store, StoreError};

use crate::evidence::{OpTime, RunEvidence};
use crate::explain::{explain, Explanation, Group};
use crate::waits::WaitTable;

/// Run `id` as evidence: its machine, phases, probe notes (without their
/// binary data), metrics and operation times.
pub fn run_evidence(store: &Store, id: i64) -> Result<RunEvidence, StoreError> {
    Ok(RunEvidence {
        machine: store.machine(id)?,
        phases: store.phases(id)?.into_iter().map(Into::into).collect(),
        notes: store.note_values(id)?,
        metrics: store.metrics(id)?,
        ops: store
            .op_totals(id)?
            .into_iter()
            .map(|o| OpTime {
                phase: o.phase,
                op: o.op,
                count: o.count,
                total_s: o.sum_ns as f64 / 1e9,
            })
            .collect(),
    })
}

/// The explanation of groups of stored runs (`labels[i]`: the run ids of
/// `runs[i]`) against group `baseline`, wait stacks classed by `waits`.
pub fn explain_stored(
    store: &Store,
    labels: &[String],
    runs: &[Vec<i64>],
    baseline: usize,
    waits: &WaitTable,
) -> Result<Explanation, StoreError> {
    let groups = labels
        .iter()
        .zip(runs)
        .map(|(label, ids)| {
            Ok(Group {
                label: label.clone(),
                runs: ids
                    .iter()
                    .map(|&id| run_evidence(store, id))
                    .collect::<Result<_, StoreError>>()?,
            })
        })
        .collect::<Result<Vec<_>, StoreError>>()?;
    Ok(explain(&groups, baseline, waits))
}

#[cfg(test)]
mod tests {
    use fslab_model::{Fact, MachineFacts, PhaseResult, Recorder, RunInfo, TargetInfo};

    use super::*;

    fn a_run(s: &mut Store, sched: &str) -> i64 {
        let id = s
            .begin_run(&RunInfo {
                workload: "fsmark".into(),
                command_line: vec!["fslab".into()],
                fslab_version: "0".into(),
                kernel: "6".into(),
                hostname: "h".into(),
                started_at: "now".into(),
                target: TargetInfo::default(),
                params: serde_json::json!({}),
            })
            .unwrap();
        s.record_facts(
            id,
            &MachineFacts {
                host: "h".into(),
                facts: vec![Fact::known("device scheduler", sched, "t")],
            },
        )
        .unwrap();
        s.record_phase(id, &PhaseResult::timed("create", 10, 1.0))
            .unwrap();
        let mut h = fslab_model::LatencyHistogram::new();
        h.record(2_000_000);
        s.record_latency(id, "create", "creat", &h).unwrap();
        id
    }

    #[test]
    fn stored_runs_are_explained_with_their_facts_and_operation_times() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Store::open(&dir.path().join("r.sqlite")).unwrap();
        let (a, b) = (a_run(&mut s, "none"), a_run(&mut s, "mq-deadline"));
        let r = run_evidence(&s, a).unwrap();
        assert_eq!(r.ops[0].total_s, 0.002);
        assert_eq!(r.phases[0].phase, "create");
        let e = explain_stored(
            &s,
            &["a".to_string(), "b".to_string()],
            &[vec![a], vec![b]],
            0,
            &WaitTable::builtin(),
        )
        .unwrap();
        assert_eq!(e.sides[1].confounders[0].other, "mq-deadline");
    }
}
