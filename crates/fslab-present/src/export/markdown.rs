//! `--format markdown`: the comparison as one Markdown table.

use std::fmt::Write as _;

use fslab_analysis::Analysis;
use fslab_stats::compare::Row;
use fslab_store::Store;

use super::Exporter;
use crate::comparison::{table, COLUMNS};
use crate::Result;

/// The Markdown format.
pub struct Markdown;

impl Exporter for Markdown {
    fn name(&self) -> &'static str {
        "markdown"
    }

    fn export(&self, a: &Analysis, _store: &Store) -> Result<String> {
        let mut s = markdown(&a.rows);
        if !a.explanations.is_empty() {
            s.push('\n');
            for e in &a.explanations {
                let _ = writeln!(s, "- {}: {}: {}", e.about.words(), e.kind.name(), e.says);
            }
        }
        Ok(s)
    }
}

/// A Markdown table.
pub fn markdown(rows: &[Row]) -> String {
    let mut s = format!(
        "| {} |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n",
        COLUMNS.join(" | ")
    );
    for cells in table(rows) {
        let _ = writeln!(s, "| {} |", cells.join(" | "));
    }
    s
}
