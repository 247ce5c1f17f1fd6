//! `--format csv`: the comparison as CSV, one line per metric and group,
//! every number in a column of its own.

use fslab_analysis::Analysis;
use fslab_stats::compare::Row;
use fslab_stats::verdict::Verdict;
use fslab_store::Store;

use super::Exporter;
use crate::comparison::COLUMNS;
use crate::Result;

/// The CSV format.
pub struct Csv;

impl Exporter for Csv {
    fn name(&self) -> &'static str {
        "csv"
    }

    fn export(&self, a: &Analysis, _store: &Store) -> Result<String> {
        let mut lines = vec![String::new(); a.rows.len()];
        for (i, l) in crate::headline::headlines(a) {
            lines[i] = l;
        }
        Ok(csv_with(&a.rows, &lines))
    }
}

/// CSV, one line per metric and group.
pub fn csv(rows: &[Row]) -> String {
    csv_with(rows, &vec![String::new(); rows.len()])
}

/// [`csv`] with a last column, `headline`: each row's one-line headline
/// (empty for the baseline and for metrics that are not headlines).
pub fn csv_with(rows: &[Row], headlines: &[String]) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    // The text columns up to hmean, then the numbers behind cv and the
    // difference, each on its own.
    let _ = w.write_record(COLUMNS[..9].iter().chain(&[
        "cv_pct",
        "diff_pct",
        "direction",
        "ci_low_pct",
        "ci_high_pct",
        "p_value",
        "note",
        "p_adjusted",
        "correction",
        "verdict",
        "delta_pct",
        "needed_n",
        "interval",
        "delta_from",
        "headline",
    ]));
    let o = |x: Option<f64>| x.map(|v| v.to_string()).unwrap_or_default();
    let f = |x: f64| {
        if x.is_nan() {
            String::new()
        } else {
            x.to_string()
        }
    };
    for (r, headline) in rows.iter().zip(headlines) {
        let _ = w.write_record([
            r.metric.clone(),
            r.group.clone(),
            r.summary.n.to_string(),
            f(r.summary.mean),
            f(r.summary.sd),
            f(r.summary.median),
            f(r.summary.min),
            f(r.summary.max),
            f(r.summary.hmean),
            f(r.summary.cv_pct),
            o(r.diff_pct),
            r.direction.unwrap_or("").to_string(),
            o(r.ci_low_pct),
            o(r.ci_high_pct),
            o(r.p_value),
            r.note.clone().unwrap_or_default(),
            o(r.p_adjusted),
            r.correction.unwrap_or("").to_string(),
            r.verdict.map(Verdict::name).unwrap_or("").to_string(),
            o(r.delta_pct),
            r.needed_n.map(|n| n.to_string()).unwrap_or_default(),
            r.interval.unwrap_or("").to_string(),
            r.delta_from.clone().unwrap_or_default(),
            headline.clone(),
        ]);
    }
    String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
}
