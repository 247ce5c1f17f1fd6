//! `--format text`: the comparison as a table, one block per metric (the
//! metric heads its group column; every column as wide as its widest
//! value), where each δ came from, what the instruments say, then the
//! experiments' stated findings.

use std::fmt::Write as _;

use fslab_analysis::Analysis;
use fslab_record::table::{Align, Table};
use fslab_stats::compare::Row;
use fslab_store::Store;

use super::Exporter;
use crate::comparison::{columns, provenance, COLUMNS};
use crate::Result;

/// The text format.
pub struct Text;

impl Exporter for Text {
    fn name(&self) -> &'static str {
        "text"
    }

    fn export(&self, a: &Analysis, _store: &Store) -> Result<String> {
        let mut t = machines(a);
        t.push_str(&text(&a.rows));
        t.push_str(&explanations(a));
        for e in &a.experiments {
            t.push_str(&fslab_experiment::findings::text(&e.findings));
        }
        Ok(t)
    }
}

/// What differs between the machines (or that nothing does), said before
/// any verdict, a line each with its evidence below (nothing when no
/// explainer checked).
pub fn machines(a: &Analysis) -> String {
    let mut s = String::new();
    let first: Vec<&fslab_analysis::Explanation> = a
        .explanations
        .iter()
        .filter(|e| e.before_verdicts())
        .collect();
    if first.is_empty() {
        return s;
    }
    s.push_str("machines (checked before the verdicts):\n");
    for e in first {
        let _ = writeln!(s, "  {}: {}: {}", e.about.words(), e.kind.name(), e.says);
        for l in &e.evidence {
            let _ = writeln!(s, "    {l}");
        }
    }
    s.push('\n');
    s
}

/// What else the instruments say about the analysis (what limited each
/// phase, profiles, shares, what a comparison rests on), a line each with
/// its evidence below (nothing when they say nothing).
pub fn explanations(a: &Analysis) -> String {
    let mut s = String::new();
    let rest: Vec<&fslab_analysis::Explanation> = a
        .explanations
        .iter()
        .filter(|e| !e.before_verdicts())
        .collect();
    if rest.is_empty() {
        return s;
    }
    s.push_str("\nexplanations:\n");
    for e in rest {
        let _ = writeln!(s, "  {}: {}: {}", e.about.words(), e.kind.name(), e.says);
        for l in &e.evidence {
            let _ = writeln!(s, "    {l}");
        }
    }
    s
}

/// A text table, one block per metric: the metric heads its group
/// column; every column is as wide as its widest value.
pub fn text(rows: &[Row]) -> String {
    let mut s = String::new();
    let mut blocks: Vec<(&str, Table)> = Vec::new();
    for r in rows {
        if blocks.last().is_none_or(|(m, _)| *m != r.metric) {
            let mut cols = vec![(r.metric.as_str(), Align::Left)];
            cols.extend(COLUMNS[2..10].iter().map(|c| (*c, Align::Right)));
            cols.push((COLUMNS[10], Align::Left));
            blocks.push((&r.metric, Table::new(&cols)));
        }
        if let Some((_, t)) = blocks.last_mut() {
            let mut cells = vec![r.group.clone()];
            cells.extend(columns(r));
            t.row(cells);
        }
    }
    for (i, (_, t)) in blocks.into_iter().enumerate() {
        if i > 0 {
            s.push('\n');
        }
        s.push_str(&t.render());
    }
    let notes: Vec<&str> = rows.iter().filter_map(|r| r.note.as_deref()).collect();
    if let Some(n) = notes.first() {
        let _ = writeln!(s, "\nwarning: {n}");
    }
    s.push_str(&provenance(rows));
    s
}
