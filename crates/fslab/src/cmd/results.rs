//! `fslab results list | experiments | outcomes | show | export` (rendered by fslab-present).

use std::path::Path;

use fslab_present::show;

use crate::cli::{ExportFormat, ResultsCommand};
use crate::Failure;

pub fn run(cmd: ResultsCommand, db: &Path) -> Result<(), Failure> {
    let store = super::open_store_read(db)?;
    let text = match cmd {
        ResultsCommand::List { workload, json } => {
            if json {
                show::list_json(&store, workload.map(|k| k.name()))
            } else {
                show::list(&store, workload.map(|k| k.name()))
            }
        }
        ResultsCommand::Experiments => show::experiments(&store),
        ResultsCommand::Outcomes { ids } => fslab_present::outcomes::outcomes(&store, &ids),
        ResultsCommand::Show { id } => show::run_text(&store, id),
        ResultsCommand::Export { id, format } => match format {
            ExportFormat::Json => show::export_json(&store, id),
            ExportFormat::Csv => show::export_csv(&store, id),
        },
    }
    .map_err(super::results_failure)?;
    super::print_all(text.as_bytes())
}
