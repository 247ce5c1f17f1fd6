//! `fslab results list | experiments | outcomes | show | export` (rendered
//! by fslab-present), each in `--format text|json|csv|markdown`, optionally
//! written to `--output FILE`.

use std::path::Path;

use fslab_present::format::Format;
use fslab_present::show;

use crate::Failure;
use fslab_present::results_args::ResultsCommand;
use fslab_present::select_args::OutputArgs;

pub fn run(cmd: ResultsCommand, db: &Path) -> Result<(), Failure> {
    let store = super::open_store_read(db)?;
    let fail = super::results_failure;
    match cmd {
        ResultsCommand::List {
            workload,
            limit,
            wide,
            json,
            out,
        } => {
            super::check_output(out.output.as_deref())?;
            let format = out.format.or(json.then_some(Format::Json));
            let mut hidden = 0;
            emit(format, &out, Format::Text, |f| {
                let listing = show::Listing {
                    workload: workload.map(|k| k.name()),
                    limit,
                    wide,
                    format: f,
                };
                let (text, left_out) = show::list(&store, listing).map_err(fail)?;
                hidden = left_out;
                Ok(text)
            })?;
            if hidden > 0 {
                remark!(
                    "fslab: results list: {hidden} older run{} not shown (--limit 0 shows all)",
                    if hidden == 1 { "" } else { "s" }
                );
            }
            Ok(())
        }
        ResultsCommand::Experiments { out } => {
            super::check_output(out.output.as_deref())?;
            emit(out.format, &out, Format::Text, |f| {
                show::experiments(&store, f).map_err(fail)
            })
        }
        ResultsCommand::Outcomes { ids } => {
            let text =
                fslab_present::outcomes::outcomes(&store, &ids, fslab_experiment::builtin::BUILTIN)
                    .map_err(fail)?;
            super::print_all(text.as_bytes())
        }
        ResultsCommand::Show { id, out } => {
            let percentiles: Vec<f64> = Vec::new();
            super::check_output(out.output.as_deref())?;
            let id = super::run_id(&store, &id)?;
            emit(out.format, &out, Format::Text, |f| {
                fslab_present::run_export::run(&store, id, f, &percentiles).map_err(fail)
            })
        }
        ResultsCommand::Export {
            id,
            out,
            percentiles,
        } => {
            super::check_output(out.output.as_deref())?;
            let id = super::run_id(&store, &id)?;
            emit(out.format, &out, Format::Json, |f| {
                fslab_present::run_export::run(&store, id, f, &percentiles).map_err(fail)
            })
        }
        ResultsCommand::Output { id, stream } => {
            super::print_all(&fslab_present::output::kept(&store, id, &stream).map_err(fail)?)
        }
    }
}

/// [`super::emit`] for the four formats of a results command.
fn emit(
    format: Option<Format>,
    out: &OutputArgs,
    default: Format,
    mut render: impl FnMut(Format) -> Result<String, Failure>,
) -> Result<(), Failure> {
    super::emit(
        format.map(Format::name),
        out.output.as_deref(),
        default.name(),
        |name| render(fslab_present::output::format_named(name).map_err(super::output_failure)?),
    )
}
