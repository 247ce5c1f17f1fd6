//! `--format json`: the comparison as one JSON document with its schema
//! version: the baseline, the groups, every row, and what the instruments
//! say (when they say anything).

use fslab_analysis::{Analysis, Explanation};
use fslab_model::json::Versioned;
use fslab_stats::compare::Row;
use fslab_store::Store;

use super::Exporter;
use crate::Result;

/// The JSON format.
pub struct Json;

impl Exporter for Json {
    fn name(&self) -> &'static str {
        "json"
    }

    fn export(&self, a: &Analysis, _store: &Store) -> Result<String> {
        Ok(json(a))
    }
}

/// The comparison as `compare --format json` prints it.
#[derive(Debug, serde::Serialize)]
pub struct Comparison<'a> {
    /// The group the differences are against.
    pub baseline: &'a str,
    pub groups: &'a [String],
    /// Each comparison's one-line headline (every headline metric, every
    /// group against the baseline), as the text format prints it first.
    pub headlines: Vec<String>,
    pub rows: &'a [Row],
    /// What the instruments say about it (when they say anything).
    #[serde(skip_serializing_if = "<[Explanation]>::is_empty")]
    pub explanations: &'a [Explanation],
}

/// The analysis as a JSON document with its schema version.
pub fn json(a: &Analysis) -> String {
    Versioned::new(Comparison {
        baseline: &a.labels[a.baseline],
        groups: &a.labels,
        headlines: crate::headline::headlines(a)
            .into_iter()
            .map(|(_, l)| l)
            .collect(),
        rows: &a.rows,
        explanations: &a.explanations,
    })
    .to_pretty()
}
