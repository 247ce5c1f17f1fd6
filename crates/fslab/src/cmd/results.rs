//! `fslab results list | experiments | outcomes | show | export` (rendered by fslab-present).

use std::path::Path;

use fslab_present::results_args::{results_text, ResultsCommand};

use crate::Failure;

pub fn run(cmd: ResultsCommand, db: &Path) -> Result<(), Failure> {
    let store = super::open_store_read(db)?;
    let text = results_text(&store, cmd).map_err(super::results_failure)?;
    super::print_all(text.as_bytes())
}
