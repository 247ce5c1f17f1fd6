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

    /// The machines checked first, then the table, then the rest of what
    /// the instruments say.
    fn export(&self, a: &Analysis, _store: &Store) -> Result<String> {
        let line = |e: &fslab_analysis::Explanation| {
            format!("- {}: {}: {}\n", e.about.words(), e.kind.name(), e.says)
        };
        let mut s: String = a
            .explanations
            .iter()
            .filter(|e| e.before_verdicts())
            .map(line)
            .collect();
        if !s.is_empty() {
            s = format!("**before the verdicts:**\n\n{s}\n");
        }
        for (_, l) in crate::headline::headlines(a) {
            let _ = write!(s, "**{l}**\n\n");
        }
        s.push_str(&markdown(&a.rows));
        let after: String = a
            .explanations
            .iter()
            .filter(|e| !e.before_verdicts())
            .map(line)
            .collect();
        if !after.is_empty() {
            let _ = write!(s, "\n{after}");
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
