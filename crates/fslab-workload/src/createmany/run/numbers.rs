//! The numbers createmany records: its total line's, the rates over the
//! first and last tenth of the entries, the rate against entries made, and
//! the calls made again after ENOMEM.

use std::io::Write;

use super::super::{CreateManyOptions, RateAt};

/// createmany's numbers: its total line's, and with `tenths` (a complete
/// run) the rates over the first and last tenth of the entries.
pub(super) fn metrics(
    o: &CreateManyOptions,
    total: u64,
    secs: f64,
    tenths: Option<(f64, f64)>,
) -> Vec<fslab_model::Metric> {
    let rate = total as f64 / secs.max(1e-9);
    use fslab_model::{Better, Metric, Unit};
    let words = o.op_words();
    let op = Some(words.as_str());
    let mut metrics = Vec::new();
    // The rate as the directory grows: over its first and last tenth
    // of entries (seed 004's finding), for a run that made them all.
    if let Some((first, last)) = tenths {
        for (name, v) in [(FIRST_TENTH, first), (LAST_TENTH, last)] {
            metrics.push(Metric::new(
                "createmany",
                op,
                name,
                v,
                Unit::OpsPerSec,
                Better::Higher,
            ));
        }
    }
    metrics.extend([
        Metric::new(
            "createmany",
            op,
            "total",
            total as f64,
            Unit::Count,
            Better::Neither,
        ),
        Metric::new(
            "createmany",
            op,
            "seconds",
            secs,
            Unit::Seconds,
            Better::Lower,
        ),
        Metric::new(
            "createmany",
            op,
            "ops/second",
            rate,
            Unit::OpsPerSec,
            Better::Higher,
        ),
    ]);
    // The run's own rate first: it is the headline.
    let own = metrics.len() - 3;
    metrics.rotate_left(own);
    metrics
}

/// Calls made again after ENOMEM, as fs_mark's: a line and a metric, only
/// when there were (createmany has no such line).
pub(super) fn enomem<W: Write + ?Sized>(
    out: &mut W,
    verb: &str,
    retries: u64,
) -> Option<fslab_model::Metric> {
    if retries == 0 {
        return None;
    }
    let _ = writeln!(
        out,
        "ENOMEM retries: {retries} (a memory cgroup at its limit)"
    );
    Some(fslab_model::Metric::new(
        "createmany",
        Some(verb),
        crate::patience::ENOMEM_RETRIES,
        retries as f64,
        fslab_model::Unit::Count,
        fslab_model::Better::Lower,
    ))
}

/// The rate as the directory grows, as breakdown rows of numbered items
/// (`entries N`, see `fslab_model::catalogue::numbered`): the report
/// charts them against the entries.
pub(super) fn entries_metrics(rates: &[RateAt]) -> Vec<fslab_model::Metric> {
    rates
        .iter()
        .map(|r| {
            fslab_model::Metric::new(
                "createmany",
                Some(&format!("entries {}", r.entries)),
                "rate",
                r.ops_per_s,
                fslab_model::Unit::OpsPerSec,
                fslab_model::Better::Higher,
            )
            .detail()
        })
        .collect()
}

/// The names of the rates over the first and last tenth of the entries.
pub const FIRST_TENTH: &str = "ops/second, first tenth";
pub const LAST_TENTH: &str = "ops/second, last tenth";

/// The create rate against entries made, at about eight points per
/// doubling: each point averages the seconds whose counts fall in its band.
pub fn by_entries(series: &[fslab_model::SeriesPoint]) -> Vec<RateAt> {
    let mut out: Vec<RateAt> = Vec::new();
    let mut band_end = 1000.0f64;
    let (mut ops, mut secs, mut prev_t) = (0u64, 0.0f64, 0.0f64);
    for p in series {
        ops += p.ops;
        secs += p.t_s - prev_t;
        prev_t = p.t_s;
        if p.total_ops as f64 >= band_end {
            out.push(RateAt {
                entries: p.total_ops,
                ops_per_s: ops as f64 / secs.max(1e-9),
            });
            while band_end <= p.total_ops as f64 {
                band_end *= 2f64.powf(1.0 / 8.0);
            }
            ops = 0;
            secs = 0.0;
        }
    }
    if ops > 0 {
        if let Some(last) = series.last() {
            out.push(RateAt {
                entries: last.total_ops,
                ops_per_s: ops as f64 / secs.max(1e-9),
            });
        }
    }
    out
}
