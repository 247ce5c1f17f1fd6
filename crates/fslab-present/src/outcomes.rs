//! `fslab results outcomes`: the outcome tables of docs/findings.md,
//! printed from the store. Without ids: for every built-in experiment, the
//! latest stored run of its current file (the text `fslab run NAME` runs
//! now; a run of an earlier version of the file is not shown, and a
//! built-in with none says so), then the latest of every other experiment
//! name that judged findings. Each table is headed by the experiment's
//! date, kernel, scale, repetitions and runs, and says whether it is the
//! current file; each row gives a finding's id, claim, the author's
//! number, fslab's numbers, the verdict the rule gave and the stand-ins
//! named.

use fslab_model::FindingResult;
use fslab_store::{ExperimentRecord, Store};

use crate::Result;

/// A Markdown table cell: one line, no bar.
fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// The files the tables are checked against: (name, current text).
pub type Current<'a> = &'a [(&'a str, &'a str)];

/// What a table shows: an experiment, or a built-in with no stored run of
/// its current file.
enum Table {
    Run(Box<ExperimentRecord>),
    NoRun(String),
    /// A built-in whose current file states no findings: its latest run.
    NoFindings(String, i64),
}

/// Whether `e` ran the current text of its built-in (None: no built-in
/// of that name).
fn is_current(e: &ExperimentRecord, current: Current) -> Option<bool> {
    current
        .iter()
        .find(|(n, _)| *n == e.name)
        .map(|(_, t)| *t == e.text)
}

/// The tables: `ids` if given; else each built-in's latest run of its
/// current file, then the latest experiment of each other name.
fn chosen(store: &Store, ids: &[i64], current: Current) -> Result<Vec<Table>> {
    if !ids.is_empty() {
        return ids
            .iter()
            .map(|id| Ok(Table::Run(Box::new(store.experiment(*id)?))))
            .collect();
    }
    let list = store.list_experiments()?;
    let mut out = Vec::new();
    for (name, text) in current {
        // The latest first.
        let mut found = None;
        let mut bare = None;
        for e in list.iter().rev().filter(|e| e.name == *name) {
            let e = store.experiment(e.id)?;
            if e.text == *text && !e.findings.is_empty() {
                found = Some(e);
                break;
            }
            if e.text == *text && bare.is_none() {
                bare = Some(e.id);
            }
        }
        out.push(match (found, bare) {
            (Some(e), _) => Table::Run(Box::new(e)),
            (None, Some(id)) => Table::NoFindings(name.to_string(), id),
            (None, None) => Table::NoRun(name.to_string()),
        });
    }
    let mut others: Vec<(String, i64)> = Vec::new();
    for e in list
        .iter()
        .filter(|e| !current.iter().any(|(n, _)| *n == e.name))
    {
        match others.iter_mut().find(|(n, _)| *n == e.name) {
            Some(x) => x.1 = e.id,
            None => others.push((e.name.clone(), e.id)),
        }
    }
    others.sort();
    for (_, id) in others {
        let e = store.experiment(id)?;
        if !e.findings.is_empty() {
            out.push(Table::Run(Box::new(e)));
        }
    }
    Ok(out)
}

/// One finding's row.
fn row(f: &FindingResult) -> String {
    format!(
        "| {} | {} | {} | {} | **{}**: {} | {} |\n",
        cell(&f.id),
        cell(&f.says),
        cell(&f.author),
        cell(&f.detail),
        f.outcome.words(),
        cell(&f.why),
        cell(f.stand_in.as_deref().unwrap_or(""))
    )
}

/// An experiment's heading: what, when, on what kernel, at what scale.
fn heading(e: &ExperimentRecord, current: Current) -> String {
    let completed = e
        .cell_runs
        .iter()
        .filter(|r| r.status == Some(fslab_model::RunStatus::Complete))
        .count();
    let file = match is_current(e, current) {
        Some(true) => "; the current built-in file",
        Some(false) => "; an earlier version of the built-in file, not the current one",
        None => "",
    };
    format!(
        "#### {} (experiment {}: {}, kernel {}, scale {}, {} repetition{} a cell, {} of {} runs complete, {}{file})\n\n",
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
    )
}

/// The outcome tables, one per experiment, in Markdown, against the
/// built-ins' `current` files.
pub fn outcomes(store: &Store, ids: &[i64], current: Current) -> Result<String> {
    let mut s = String::new();
    let mut any = false;
    for t in chosen(store, ids, current)? {
        let e = match t {
            Table::Run(e) => e,
            Table::NoRun(name) => {
                s.push_str(&format!(
                    "#### {name}: no stored run of the current built-in file (fslab run {name})\n\n"
                ));
                continue;
            }
            Table::NoFindings(name, id) => {
                s.push_str(&format!(
                    "#### {name}: states no findings (its latest run of the current built-in file: \
                     experiment {id}; `fslab compare --experiment {id}` compares its cells)\n\n"
                ));
                continue;
            }
        };
        any = true;
        s.push_str(&heading(&e, current));
        s.push_str("| id | claim | author | fslab | verdict (the rule: `fslab run --help`) | stand-ins |\n");
        s.push_str("|---|---|---|---|---|---|\n");
        for f in &e.findings {
            s.push_str(&row(f));
        }
        s.push('\n');
    }
    if !any {
        return Err(crate::Error::Empty(
            "no experiment in the store has judged findings of a current file (fslab run a built-in first)".into(),
        ));
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use fslab_model::{ExperimentInfo, ExperimentRecorder, FindingOutcome, RunStatus};

    fn finding(id: &str) -> FindingResult {
        FindingResult {
            id: id.into(),
            says: "claim".into(),
            author: "the author's".into(),
            outcome: FindingOutcome::NotJudged,
            ratio: None,
            ci: None,
            author_ratio: None,
            detail: String::new(),
            why: "why".into(),
            from: String::new(),
            stand_in: None,
        }
    }

    /// A store with experiment `name` run from `text`, judging finding `id`.
    fn ran(s: &mut Store, name: &str, text: &str, id: &str) -> i64 {
        let e = s
            .begin_experiment(&ExperimentInfo {
                name: name.into(),
                file: format!("builtin:{name}"),
                text: text.into(),
                scale: 0.01,
                repetitions: 3,
                command_line: Vec::new(),
                fslab_version: "0".into(),
                kernel: "6.18".into(),
                hostname: "h".into(),
                started_at: "2026-11-27T10:00:00".into(),
            })
            .unwrap();
        if !id.is_empty() {
            s.record_finding(e, 0, &finding(id)).unwrap();
        }
        s.finish_experiment(e, RunStatus::Complete).unwrap();
        e
    }

    #[test]
    fn the_tables_are_the_latest_runs_of_the_current_files_and_say_when_there_is_none() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Store::open(&dir.path().join("db")).unwrap();
        ran(&mut s, "seed000", "old text", "000-old");
        ran(&mut s, "seed000", "new text", "000-a");
        // A later run of an earlier file is not the current file's.
        ran(&mut s, "seed000", "old text", "000-older");
        ran(&mut s, "mine", "anything", "9-a");
        // A built-in without findings: its run is named, not "no run".
        ran(&mut s, "io500-md", "plain", "");
        let current = [
            ("seed000", "new text"),
            ("seed002", "text"),
            ("io500-md", "plain"),
        ];
        let t = outcomes(&s, &[], &current).unwrap();
        assert!(
            t.contains("#### io500-md: states no findings (its latest run of the current built-in file: experiment 5;"),
            "{t}"
        );
        assert!(t.contains("#### seed000 (experiment 2: 2026-11-27, kernel 6.18, scale 0.01, 3 repetitions a cell, 0 of 0 runs complete, complete; the current built-in file)"), "{t}");
        assert!(t.contains("| 000-a |") && !t.contains("000-old"), "{t}");
        assert!(
            t.contains(
                "#### seed002: no stored run of the current built-in file (fslab run seed002)"
            ),
            "{t}"
        );
        assert!(
            t.contains("#### mine (experiment 4:") && t.contains("| 9-a |"),
            "{t}"
        );
        // Asked for by id, an earlier file says so.
        let t = outcomes(&s, &[3], &current).unwrap();
        assert!(
            t.contains("an earlier version of the built-in file, not the current one"),
            "{t}"
        );
        // No current file run at all.
        let e = outcomes(&s, &[], &[("seed004", "x")]);
        assert!(e.is_ok(), "the other names still show");
    }

    #[test]
    fn a_row_carries_the_id_the_authors_number_fslabs_the_rules_verdict_and_the_stand_ins() {
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
            stand_in: Some("\"ext3\" is the ext4 driver".into()),
        };
        assert_eq!(
            row(&f),
            "| 002-a | ext3 ends with tens of thousands of extents | 50,435 extents \\| perfection 9 | ext3 [random] 128 (n=3) | **weaker**: e = 0.31 | \"ext3\" is the ext4 driver |\n"
        );
    }
}
