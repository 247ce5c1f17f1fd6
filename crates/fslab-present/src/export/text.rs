//! `--format text`: what could confound the verdicts (when an instrument
//! says so), each comparison's one-line headline, the comparison as a table, one block per metric (the metric
//! heads its group column; every column as wide as its widest value),
//! where each δ came from, what else the instruments say, then the
//! experiments' stated findings.

use std::fmt::Write as _;

use fslab_analysis::{Analysis, Explanation, ExplanationKind};
use fslab_model::table::{Align, Table};
use fslab_stats::compare::Row;
use fslab_store::Store;

use super::Exporter;
use crate::comparison::{baseline_of, columns, provenance, COLUMNS};
use crate::Result;

/// The text format.
pub struct Text;

impl Exporter for Text {
    fn name(&self) -> &'static str {
        "text"
    }

    fn export(&self, a: &Analysis, _store: &Store) -> Result<String> {
        let mut t = before_verdicts(a);
        let headlines = crate::headline::text(a);
        if !headlines.is_empty() {
            t.push_str(&headlines);
            t.push('\n');
        }
        t.push_str(&text(&a.rows));
        t.push_str(&after_verdicts(a));
        for e in &a.experiments {
            t.push_str(&fslab_experiment::findings::text(&e.findings));
        }
        Ok(t)
    }
}

/// What is said before any verdict: the machines (what differs, or that
/// nothing does, each group's clock) and each confounder no row carries as
/// its caveat, then a blank line (nothing when nothing is).
pub fn before_verdicts(a: &Analysis) -> String {
    let carried = |e: &Explanation| {
        a.rows.iter().any(|r| {
            r.caveat.as_ref().is_some_and(|c| c.words == e.says)
                && matches!(&e.about, fslab_analysis::About::Comparison { metric, group }
                    if *metric == r.metric && *group == r.group)
        })
    };
    let first: Vec<&Explanation> = a
        .explanations
        .iter()
        .filter(|e| e.before_verdicts() || (is_confounder(e) && !carried(e)))
        .collect();
    let mut s = explanations("before the verdicts", &first);
    if !s.is_empty() {
        s.push('\n');
    }
    s
}

/// What else the instruments say (what limited each phase, profiles,
/// shares), after a blank line (nothing when they say nothing).
pub fn after_verdicts(a: &Analysis) -> String {
    let rest: Vec<&Explanation> = a
        .explanations
        .iter()
        .filter(|e| !e.before_verdicts() && !is_confounder(e))
        .collect();
    match explanations("explanations", &rest) {
        s if s.is_empty() => s,
        s => format!("\n{s}"),
    }
}

fn is_confounder(e: &Explanation) -> bool {
    matches!(
        e.kind,
        ExplanationKind::Confounder | ExplanationKind::Confounded
    )
}

/// What the instruments say, under `heading`, a line each with its
/// evidence below (nothing when they say nothing).
pub fn explanations(heading: &str, said: &[&Explanation]) -> String {
    let mut s = String::new();
    if said.is_empty() {
        return s;
    }
    let _ = writeln!(s, "{heading}:");
    for e in said {
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
            cells.extend(columns(r, baseline_of(rows, r)));
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
