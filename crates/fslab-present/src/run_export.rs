//! One run in each format (`results show ID` and `results export ID`,
//! `--format text|json|csv|markdown`): the text is `results show`'s; JSON
//! and CSV are the run's document (`fslab_store::RunDocument`), which
//! carries every stored latency histogram's bins and the percentiles asked
//! for (`--percentiles 50,99,99.99`).

use fslab_model::json::Versioned;
use fslab_model::table::{Align, Table};
use fslab_store::{ExportedHistogram, Store, DEFAULT_PERCENTILES};

use crate::format::Format;
use crate::Result;

/// Run `id` in `format`, its latencies with `percentiles` (none: the
/// defaults).
pub fn run(store: &Store, id: i64, format: Format, percentiles: &[f64]) -> Result<String> {
    match format {
        Format::Text => {
            let mut t = crate::show::run_text(store, id)?;
            if !percentiles.is_empty() && percentiles != DEFAULT_PERCENTILES {
                t.push_str(&text_percentiles(
                    &store.exported_histograms(id, percentiles)?,
                ));
            }
            Ok(t)
        }
        Format::Markdown => Ok(format!(
            "## run {id}\n\n```text\n{}```\n",
            run(store, id, Format::Text, percentiles)?
        )),
        Format::Json => Ok(Versioned::new(store.run_document(id, percentiles)?).to_pretty()),
        Format::Csv => Ok(store.run_document(id, percentiles)?.to_csv()),
    }
}

/// The percentiles asked for, as `results show` adds them (microseconds).
fn text_percentiles(hs: &[ExportedHistogram]) -> String {
    let Some(first) = hs.first() else {
        return String::new();
    };
    let names: Vec<String> = first
        .percentiles
        .iter()
        .map(|p| format!("p{}", p.percentile))
        .collect();
    let mut cols = vec![("phase", Align::Left), ("call", Align::Left)];
    cols.extend(names.iter().map(|n| (n.as_str(), Align::Right)));
    let mut t = Table::new(&cols);
    for h in hs {
        let mut row = vec![h.phase.clone(), h.op.clone()];
        row.extend(
            h.percentiles
                .iter()
                .map(|p| format!("{:.1}", p.ns as f64 / 1000.0)),
        );
        t.row(row);
    }
    format!(
        "\nlatency percentiles asked for (microseconds):\n{}",
        t.render()
    )
}
