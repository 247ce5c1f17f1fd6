//! `fslab results list | experiments | outcomes | show | export` (rendered by fslab-present).

use std::path::Path;

use fslab_present::show;

use crate::cli::{ExportFormat, ResultsCommand};
use crate::Failure;

pub fn run(cmd: ResultsCommand, db: &Path) -> Result<(), Failure> {
    let store = super::open_store_read(db)?;
    if let ResultsCommand::Output { id, stream } = &cmd {
        return output(&store, *id, stream);
    }
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
        ResultsCommand::Output { .. } => unreachable!("handled above"),
    }
    .map_err(super::results_failure)?;
    super::print_all(text.as_bytes())
}

/// `fslab results output ID STREAM`: the bytes kept, as the program wrote
/// them; a run or stream with nothing kept is bad input, naming what is.
fn output(store: &fslab_store::Store, id: i64, stream: &str) -> Result<(), Failure> {
    let rec = store
        .run(id)
        .map_err(|e| super::results_failure(fslab_present::Error::from(e)))?;
    match store.output(id, stream) {
        Ok(Some(bytes)) => super::print_all(&bytes),
        Ok(None) if rec.outputs.is_empty() => Err(Failure::Usage(format!(
            "results output {id}: run {id} ({}) kept no program output",
            rec.run.workload
        ))),
        Ok(None) => Err(Failure::Usage(format!(
            "results output {id} {stream}: no such stream (kept: {})",
            rec.outputs
                .iter()
                .map(|o| o.stream.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
        Err(e) => Err(Failure::Failed(format!("results store: {e}"))),
    }
}
