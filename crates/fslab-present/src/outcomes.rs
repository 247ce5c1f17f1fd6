//! `fslab results outcomes`: docs/findings.md's outcome table, printed from the
//! store: for each experiment name, its latest experiment with findings
//! (or the ones asked for), each finding's id, claim, the author's number,
//! fslab's numbers and the verdict the rule gave, under the run's date,
//! kernel, scale and repetitions.

use fslab_record::FindingResult;
use fslab_store::{ExperimentRecord, Store};

use crate::Result;

/// A Markdown table cell: one line, no bar.
fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// The experiments the table shows: `ids` if given, else the latest
/// experiment of each name that judged findings.
fn chosen(store: &Store, ids: &[i64]) -> Result<Vec<ExperimentRecord>> {
    if !ids.is_empty() {
        return ids
            .iter()
            .map(|id| store.experiment(*id).map_err(Into::into))
            .collect();
    }
    let mut latest: Vec<(String, i64)> = Vec::new();
    for e in store.list_experiments()? {
        match latest.iter_mut().find(|(n, _)| *n == e.name) {
            Some(x) => x.1 = e.id,
            None => latest.push((e.name.clone(), e.id)),
        }
    }
    latest.sort();
    let mut out = Vec::new();
    for (_, id) in latest {
        let e = store.experiment(id)?;
        if !e.findings.is_empty() {
            out.push(e);
        }
    }
    Ok(out)
}

/// One finding's row.
fn row(f: &FindingResult) -> String {
    let mut fslab = f.detail.clone();
    if let Some(si) = &f.stand_in {
        fslab.push_str(&format!(" (stand-in: {si})"));
    }
    format!(
        "| {} | {} | {} | {} | **{}**: {} |\n",
        cell(&f.id),
        cell(&f.says),
        cell(&f.author),
        cell(&fslab),
        f.outcome.words(),
        cell(&f.why)
    )
}

/// The outcome tables, one per experiment, in Markdown.
pub fn outcomes(store: &Store, ids: &[i64]) -> Result<String> {
    let exps = chosen(store, ids)?;
    let mut s = String::new();
    for e in exps {
        let completed = e
            .cell_runs
            .iter()
            .filter(|r| r.status == Some(fslab_record::RunStatus::Complete))
            .count();
        s.push_str(&format!(
            "#### {} (experiment {}: {}, kernel {}, scale {}, {} repetition{} a cell, {} of {} runs complete, {})\n\n",
            e.name,
            e.id,
            e.started_at.get(..10).unwrap_or(&e.started_at),
            e.kernel,
            e.scale,
            e.repetitions,
            if e.repetitions == 1 { "" } else { "s" },
            completed,
            e.cell_runs.len(),
            e.status
        ));
        s.push_str("| id | claim | author | fslab | verdict (the rule: `fslab run --help`) |\n");
        s.push_str("|---|---|---|---|---|\n");
        for f in &e.findings {
            s.push_str(&row(f));
        }
        s.push('\n');
    }
    if s.is_empty() {
        return Err(crate::Error::Empty(
            "no experiment in the store has judged findings (fslab run a built-in first)".into(),
        ));
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use fslab_record::FindingOutcome;

    #[test]
    fn a_row_carries_the_id_the_authors_number_fslabs_and_the_rules_verdict() {
        let f = FindingResult {
            id: "002-a".into(),
            says: "ext3 ends with tens of thousands of extents".into(),
            author: "50,435 extents | perfection 9".into(),
            outcome: FindingOutcome::Weaker,
            ratio: Some(14.2),
            ci: Some((12.0, 16.0)),
            author_ratio: Some(5604.0),
            detail: "ext3 [random] 128 (n=3)".into(),
            why: "e = 0.31".into(),
            from: String::new(),
            stand_in: None,
        };
        assert_eq!(
            row(&f),
            "| 002-a | ext3 ends with tens of thousands of extents | 50,435 extents \\| perfection 9 | ext3 [random] 128 (n=3) | **weaker**: e = 0.31 |\n"
        );
    }
}
