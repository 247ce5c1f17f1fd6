//! How a difference is said, the same in every format: the one-line
//! headline of each comparison ("create: xfs is 1.67x as fast as ext4,
//! 95% CI [1.52, 1.84]", as hyperfine's summary says it), and a change
//! from the baseline (`+5.6%`, or, from a baseline near zero, the absolute
//! difference with its unit: `+1.564 s (from 0.0010 s)`, never
//! `+156375.0%`).

use fslab_analysis::Analysis;
use fslab_stats::compare::{Direction, Row};
use fslab_stats::verdict::{self, Verdict};
use fslab_stats::{fmt_num, fmt_sig};

/// A change this large (in percent) is from a baseline near zero: it is
/// said as an absolute difference.
pub const NEAR_ZERO_PCT: f64 = 1000.0;

/// The unit in a metric's name (`create time (s)`: `s`); none for a count.
pub fn unit_of(metric: &str) -> Option<&str> {
    let open = metric.rfind('(')?;
    metric.trim_end().strip_suffix(')').map(|m| &m[open + 1..])
}

/// `x` with the metric's unit (`1.564 s`; a count bare).
fn with_unit(x: f64, metric: &str) -> String {
    match unit_of(metric) {
        Some(u) if u != "%" => format!("{} {u}", fmt_num(x)),
        Some(u) => format!("{}{u}", fmt_num(x)),
        None if x.fract() == 0.0 => format!("{x:.0}"),
        None => fmt_num(x),
    }
}

/// Whether a row's change is said as an absolute difference.
pub fn absolute(r: &Row) -> bool {
    r.diff_pct.is_some_and(|p| p.abs() >= NEAR_ZERO_PCT)
}

/// A row's change from the baseline, `baseline` being the baseline's mean:
/// `+5.6%`, or `+1.564 s (from 0.0010 s)` when [`absolute`].
pub fn change(r: &Row, baseline: f64) -> Option<String> {
    let p = r.diff_pct?;
    if absolute(r) {
        let d = r.summary.mean - baseline;
        let sign = if d >= 0.0 { "+" } else { "" };
        return Some(format!(
            "{sign}{} (from {})",
            with_unit(d, &r.metric),
            with_unit(baseline, &r.metric)
        ));
    }
    Some(format!("{p:+.1}%"))
}

/// A row's 95% interval as printed beside its change: in percent, or as
/// ratios for an absolute change.
pub fn interval(r: &Row) -> Option<String> {
    let (lo, hi) = (r.ci_low_pct?, r.ci_high_pct?);
    Some(if absolute(r) {
        let x = |p: f64| format!("{}x", fmt_sig(1.0 + p / 100.0, 3));
        format!("95% CI [{}, {}]", x(lo), x(hi))
    } else {
        format!("95% CI [{lo:+.1}%, {hi:+.1}%]")
    })
}

/// The baseline's mean for each row of `rows` (one metric's rows, one a
/// group, the baseline among them).
pub fn baseline_mean(rows: &[Row]) -> f64 {
    rows.iter()
        .find(|r| r.diff_pct.is_none() && r.summary.n > 0)
        .map_or(f64::NAN, |r| r.summary.mean)
}

/// What the metric says in a headline: the phase of a rate or time
/// (`create rate (ops/s)`: `create`), else its name without its unit.
fn what(metric: &str) -> &str {
    let bare = metric
        .rfind(" (")
        .map_or(metric, |i| &metric[..i])
        .trim_end();
    bare.strip_suffix(" rate")
        .or_else(|| bare.strip_suffix(" time"))
        .unwrap_or(bare)
}

/// The one-line headline of row `r` against the baseline `base`, or None
/// for the baseline itself and a group without runs.
pub fn line(r: &Row, direction: Direction, base: &str) -> Option<String> {
    let p = r.diff_pct?;
    let ratio = 1.0 + p / 100.0;
    let ci = r.ci_low_pct.zip(r.ci_high_pct);
    let x = |v: f64| fmt_sig(v, 3);
    let (claim, ci) = match direction {
        Direction::Rate => (
            format!("{} is {}x as fast as {base}", r.group, x(ratio)),
            ci.map(|(lo, hi)| (1.0 + lo / 100.0, 1.0 + hi / 100.0)),
        ),
        // A time: as fast is the inverse ratio, its interval turned round.
        Direction::Time => (
            format!("{} is {}x as fast as {base}", r.group, x(1.0 / ratio)),
            ci.map(|(lo, hi)| (1.0 / (1.0 + hi / 100.0), 1.0 / (1.0 + lo / 100.0))),
        ),
        Direction::Cost => (
            format!("{} takes {}x what {base} takes", r.group, x(ratio)),
            ci.map(|(lo, hi)| (1.0 + lo / 100.0, 1.0 + hi / 100.0)),
        ),
    };
    let mut s = format!("{}: {claim}", what(&r.metric));
    if r.interval == Some(fslab_stats::interval::Method::Deterministic.name()) {
        s.push_str(" (exact)");
    } else if let Some((lo, hi)) = ci {
        s.push_str(&format!(", 95% CI [{}, {}]", x(lo), x(hi)));
    }
    if let Some(v @ (Verdict::Same | Verdict::Unresolved)) = r.verdict {
        let delta = r.delta_pct.unwrap_or(verdict::DEFAULT_DELTA_PCT);
        s.push_str(&format!(": {}", v.words(delta)));
    }
    Some(s)
}

/// Each comparison's headline: every headline metric, every group against
/// the baseline, as (index into `a.rows`, line).
pub fn headlines(a: &Analysis) -> Vec<(usize, String)> {
    let n = a.labels.len();
    let Some(base) = a.labels.get(a.baseline) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (mi, m) in a.metrics.iter().enumerate() {
        if !a.is_headline(&m.name) {
            continue;
        }
        for (gi, r) in a.rows_of(mi).iter().enumerate() {
            if let Some(l) = line(r, m.direction, base) {
                out.push((mi * n + gi, l));
            }
        }
    }
    out
}

/// The headlines as text lines (nothing when there are none).
pub fn text(a: &Analysis) -> String {
    headlines(a).into_iter().map(|(_, l)| l + "\n").collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use fslab_analysis::{analyse, Input, RunSamples, Settings};
    use fslab_model::catalogue::Sample;

    fn analysis(metric: &str, dir: Direction, a: &[f64], b: &[f64]) -> Analysis {
        let sample = |v: f64| Sample {
            name: metric.into(),
            unit: fslab_model::metric::Unit::OpsPerSec,
            direction: dir,
            value: v,
            role: fslab_model::catalogue::Role::Headline,
            exact: false,
        };
        let mut runs = Vec::new();
        for (g, vs) in [a, b].iter().enumerate() {
            for &v in *vs {
                runs.push(RunSamples {
                    group: g,
                    run: None,
                    samples: vec![sample(v)],
                });
            }
        }
        let input = Input {
            labels: vec!["ext4".into(), "xfs".into()],
            runs,
        };
        analyse(&input, &Settings::default())
    }

    #[test]
    fn a_headline_says_how_many_times_as_fast_with_its_interval() {
        let a = analysis(
            "create rate (ops/s)",
            Direction::Rate,
            &[100.0, 102.0, 98.0, 101.0],
            &[167.0, 170.0, 164.0, 168.0],
        );
        let h = text(&a);
        assert!(
            h.starts_with("create: xfs is 1.67x as fast as ext4, 95% CI [1.6"),
            "{h}"
        );
        assert_eq!(h.lines().count(), 1, "{h}");
        // A time: half the time is twice as fast, the interval turned round.
        let a = analysis(
            "create time (s)",
            Direction::Time,
            &[10.0, 10.2, 9.8],
            &[5.0, 5.1, 4.9],
        );
        let h = text(&a);
        assert!(
            h.starts_with("create: xfs is 2x as fast as ext4, 95% CI [1.9"),
            "{h}"
        );
        let (lo, hi) = h
            .split_once('[')
            .and_then(|(_, r)| r.split_once(']'))
            .and_then(|(r, _)| r.split_once(", "))
            .unwrap();
        assert!(
            lo.parse::<f64>().unwrap() < 2.0 && hi.parse::<f64>().unwrap() > 2.0,
            "{h}"
        );
    }

    #[test]
    fn an_unresolved_headline_says_so() {
        let a = analysis("create rate (ops/s)", Direction::Rate, &[100.0], &[120.0]);
        let h = text(&a);
        assert!(h.ends_with(": unresolved\n"), "{h}");
    }

    #[test]
    fn a_change_from_near_zero_is_an_absolute_difference() {
        let a = analysis(
            "create sys cpu (s)",
            Direction::Cost,
            &[0.001, 0.001, 0.001],
            &[1.5, 1.6, 1.7],
        );
        let rows = a.rows_of(0);
        let base = baseline_mean(rows);
        let c = change(&rows[1], base).unwrap();
        assert_eq!(c, "+1.599 s (from 0.0010 s)");
        assert!(!c.contains('%'));
        assert!(interval(&rows[1]).unwrap().contains('x'));
        // An ordinary change stays a percentage.
        let a = analysis("t (s)", Direction::Time, &[10.0, 10.0], &[11.0, 11.0]);
        let rows = a.rows_of(0);
        assert_eq!(change(&rows[1], baseline_mean(rows)).unwrap(), "+10.0%");
    }
}
