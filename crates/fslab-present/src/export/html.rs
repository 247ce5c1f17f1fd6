//! `--format html`: the report's page (what `fslab report` writes), on
//! stdout.

use fslab_analysis::Analysis;
use fslab_store::Store;

use super::Exporter;
use crate::Result;

/// The HTML format.
pub struct Html;

impl Exporter for Html {
    fn name(&self) -> &'static str {
        "html"
    }

    fn export(&self, a: &Analysis, store: &Store) -> Result<String> {
        Ok(crate::report::page::build(store, a)?.html)
    }
}
