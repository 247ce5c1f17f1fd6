//! `fslab history`: the change points of one experiment's stored runs over
//! time (numbers in fslab-analysis and fslab-stats, text and sheet in
//! fslab-present), in `--format text|json|csv|markdown`.

use std::path::Path;

use fslab_present::format::Format;

use crate::Failure;
use fslab_present::select_args::OutputArgs;

pub fn run(
    name: Option<&str>,
    out: &OutputArgs,
    delta: Option<f64>,
    alpha: f64,
    db: &Path,
) -> Result<(), Failure> {
    super::check_output(out.output.as_deref())?;
    let store = super::open_store_read(db)?;
    let policy = fslab_stats::verdict::Policy {
        alpha,
        delta_pct: delta,
        ..Default::default()
    };
    let h =
        fslab_analysis::history::history(&store, name, policy).map_err(super::analysis_failure)?;
    super::emit(
        out.format.map(Format::name),
        out.output.as_deref(),
        "text",
        |f| {
            let format = fslab_present::output::format_named(f).map_err(super::output_failure)?;
            Ok(match format {
                Format::Text => fslab_present::history::text(&h, policy),
                f => fslab_present::history::sheet(&h).render(f, "history"),
            })
        },
    )
}
