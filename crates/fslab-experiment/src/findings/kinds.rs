//! Each kind of finding computed from the run: its estimate, handed to the
//! one rule ([`super::rule`]), and the words that say from what.

use fslab_model::{FindingOutcome, FindingResult};
use fslab_stats::interval::{paired_ratio, ratio, RatioInterval, Spread};

use super::rule::{judge, judge_presence, Estimate};
use super::Runs;
use crate::spec::finding::{fmt, how, Claim, Finding, FindingKind, Reference, TOP_STACKS};

const LEVEL: f64 = 0.95;

fn result(f: &Finding) -> FindingResult {
    FindingResult {
        id: f.id.clone(),
        says: f.says.clone(),
        author: f.author.clone(),
        outcome: FindingOutcome::NotJudged,
        ratio: None,
        ci: None,
        author_ratio: None,
        detail: String::new(),
        why: String::new(),
        from: String::new(),
        stand_in: f.stand_in.clone(),
    }
}

/// The finding over the run's samples and evidence.
pub fn evaluate(f: &Finding, runs: &Runs) -> FindingResult {
    let mut r = result(f);
    r.from = how(f, runs.labels);
    match &f.kind {
        FindingKind::Untestable { why, shows, .. } => {
            r.why.clone_from(why);
            if let Some(sh) = shows {
                r.detail = match quantity(runs, sh.cell, &sh.metric, &sh.per) {
                    Ok(v) => format!(
                        "{} (n={}), shown beside the claim, not judged",
                        side(runs.label(sh.cell), &v),
                        v.len()
                    ),
                    Err(e) => e.to_string(),
                };
            }
        }
        FindingKind::Ratio {
            cell,
            metric,
            than_cell,
            than_metric,
            claim,
        } => {
            let a = runs.values(*than_cell, than_metric);
            let b = runs.values(*cell, metric);
            let name = |c: u32, m: &str| format!("{m:?} of {}", runs.label(c));
            if let Some(miss) = missing(&[
                (&b, name(*cell, metric)),
                (&a, name(*than_cell, than_metric)),
            ]) {
                r.why = miss;
                return r;
            }
            let (av, bv) = (vals(&a), vals(&b));
            let i = ratio(&av, &bv, LEVEL, false);
            r.detail = format!(
                "{} (n={}) over {} (n={})",
                side(runs.label(*cell), &bv),
                bv.len(),
                side(runs.label(*than_cell), &av),
                av.len()
            );
            finish(
                &mut r,
                i,
                (av.len(), bv.len()),
                *claim,
                Spread::sides(&av, &bv),
            );
        }
        FindingKind::Paired {
            cell,
            metric,
            than_metric,
            claim,
        } => {
            let a = runs.values(*cell, than_metric);
            let b = runs.values(*cell, metric);
            let pairs: Vec<(f64, f64)> = a
                .iter()
                .filter_map(|(rep, x)| b.iter().find(|(q, _)| q == rep).map(|(_, y)| (*x, *y)))
                .collect();
            if pairs.is_empty() {
                r.why = format!(
                    "no value of {metric:?} and {than_metric:?} in the same run of {}",
                    runs.label(*cell)
                );
                return r;
            }
            let (av, bv): (Vec<f64>, Vec<f64>) = pairs.iter().copied().unzip();
            r.detail = format!(
                "{} {} over {} (n={} runs)",
                runs.label(*cell),
                side(metric.clone(), &bv),
                side(than_metric.clone(), &av),
                pairs.len()
            );
            let i = paired_ratio(&pairs, LEVEL);
            finish(
                &mut r,
                i,
                (pairs.len(), pairs.len()),
                *claim,
                Spread::paired(&pairs),
            );
        }
        FindingKind::Value { .. } => value(f, runs, &mut r),
        FindingKind::Mechanism { .. } => mechanism(f, runs, &mut r),
        FindingKind::Kernel { symbols, path } => kernel(symbols, path, runs, &mut r),
        FindingKind::Stacks {
            cell,
            phase,
            functions,
        } => {
            let seen: Vec<bool> = runs
                .evidence
                .iter()
                .filter(|(c, _, _)| c == cell)
                .filter_map(|(_, _, e)| e.stacks_name(phase, functions, TOP_STACKS))
                .collect();
            if seen.is_empty() {
                r.why = format!(
                    "no wait stacks of phase {phase} in {} (the stacks probe did not run)",
                    runs.label(*cell)
                );
                return r;
            }
            let shown = seen.iter().filter(|s| **s).count();
            r.detail = format!("named in {shown} of {} runs", seen.len());
            (r.outcome, r.why) = judge_presence(shown, seen.len());
        }
    }
    r
}

/// A mechanism: its metric (per unit of work) against its threshold in
/// every run of its cell.
fn mechanism(f: &Finding, runs: &Runs, r: &mut FindingResult) {
    let FindingKind::Mechanism {
        cell,
        metric,
        per,
        than,
        threshold,
    } = &f.kind
    else {
        return;
    };
    let vs = match quantity(runs, *cell, metric, per) {
        Ok(v) => v,
        Err(e) => {
            r.why = format!("{e} (not measured in this run)");
            return;
        }
    };
    if let Some(t) = than {
        return mechanism_ratio(runs, (*cell, &vs), *t, metric, per, *threshold, r);
    }
    let list: Vec<String> = vs.iter().map(|x| fmt(*x)).collect();
    r.detail = format!("{} (n={})", list.join(", "), vs.len());
    let fails = vs.iter().filter(|x| !threshold.holds(**x)).count();
    r.outcome = if fails == 0 {
        FindingOutcome::Happened
    } else {
        FindingOutcome::DidNotHappen
    };
    r.why = format!(
        "{} of {} runs {}",
        vs.len() - fails,
        vs.len(),
        threshold.words()
    );
}

/// A mechanism on two cells: the ratio of their means, its whole interval
/// past the threshold.
fn mechanism_ratio(
    runs: &Runs,
    (cell, b): (u32, &[f64]),
    than: u32,
    metric: &str,
    per: &Option<String>,
    threshold: crate::spec::finding::Threshold,
    r: &mut FindingResult,
) {
    use crate::spec::finding::Threshold;
    let a = match quantity(runs, than, metric, per) {
        Ok(a) => a,
        Err(e) => {
            r.why = format!("{e} (not measured in this run)");
            return;
        }
    };
    let Some(i) = ratio(&a, b, LEVEL, false) else {
        r.why = "no interval: a value that is not positive, or too few runs".into();
        return;
    };
    r.detail = format!(
        "{} (n={}) over {} (n={}): {}x, 95% interval [{}, {}]",
        side(runs.label(cell), b),
        b.len(),
        side(runs.label(than), &a),
        a.len(),
        fmt(i.ratio),
        fmt(i.low),
        fmt(i.high)
    );
    let held = match threshold {
        Threshold::AtLeast(x) => i.low >= x,
        Threshold::AtMost(x) => i.high <= x,
    };
    r.outcome = if held {
        FindingOutcome::Happened
    } else {
        FindingOutcome::DidNotHappen
    };
    r.why = format!(
        "the whole interval {}: {}",
        threshold.words(),
        if held { "it is" } else { "it is not" }
    );
}

/// A kernel path: every one of its symbols in the running kernel.
fn kernel(symbols: &[String], path: &str, runs: &Runs, r: &mut FindingResult) {
    let m = &runs.facts.machine;
    if let Some(k) = runs.facts.cells.iter().find_map(|c| c.guest.as_deref()) {
        r.why = format!(
            "a cell runs on kernel {k} in a guest, whose symbols fslab does not read (only this machine's /proc/kallsyms)"
        );
        return;
    }
    if !m.kallsyms {
        r.why = "the running kernel's symbols could not be read (/proc/kallsyms)".into();
        return;
    }
    let missing: Vec<&str> = symbols
        .iter()
        .filter(|s| m.has(s) != Some(true))
        .map(String::as_str)
        .collect();
    r.detail = format!("kernel {}", m.kernel);
    if missing.is_empty() {
        r.outcome = FindingOutcome::Happened;
        r.why = format!("this kernel has {}", symbols.join(", "));
    } else {
        r.outcome = FindingOutcome::DidNotHappen;
        r.why = format!(
            "{path}: this kernel ({}) has no {} (/proc/kallsyms)",
            m.kernel,
            missing.join(", ")
        );
    }
}

/// A metric a finding needs that a cell's runs do not have.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("no value of {metric:?} of {cell}")]
struct NoValue {
    metric: String,
    /// The cell's label.
    cell: String,
}

/// `metric` (per `per`, run by run) in `cell`'s runs, or [`NoValue`].
fn quantity(runs: &Runs, c: u32, metric: &str, per: &Option<String>) -> Result<Vec<f64>, NoValue> {
    let m = runs.values(c, metric);
    let name = |x: &str| NoValue {
        metric: x.to_string(),
        cell: runs.label(c).clone(),
    };
    if m.is_empty() {
        return Err(name(metric));
    }
    let Some(p) = per else { return Ok(vals(&m)) };
    let w = runs.values(c, p);
    let v: Vec<f64> = m
        .iter()
        .filter_map(|(rep, x)| {
            w.iter()
                .find(|(q, y)| q == rep && *y > 0.0)
                .map(|(_, y)| x / y)
        })
        .collect();
    if v.is_empty() {
        return Err(name(p));
    }
    Ok(v)
}

/// A value finding: the quantity (per unit of work, run by run) against a
/// constant reference of no effect (the author's ratio is the author's
/// number over it), or against the author's value itself.
fn value(f: &Finding, runs: &Runs, r: &mut FindingResult) {
    let FindingKind::Value {
        cell,
        metric,
        per,
        reference,
        author_value,
    } = &f.kind
    else {
        return;
    };
    let b = match quantity(runs, *cell, metric, per) {
        Ok(b) => b,
        Err(e) => {
            r.why = e.to_string();
            return;
        }
    };
    let authors = f
        .author_numbers
        .first()
        .map_or_else(|| fmt(*author_value), |n| n.words());
    // A constant is known exactly: as many of it as runs.
    let constant = |x: f64| vec![x; b.len().max(2)];
    let (a, n_ref, claim) = match reference {
        Reference::Constant(x) => {
            r.detail = format!(
                "{} (n={}) against {} (no effect); the author's {authors} is {}x it",
                side(runs.label(*cell), &b),
                b.len(),
                fmt(*x),
                fmt(author_value / x)
            );
            (constant(*x), usize::MAX, Claim::Effect(author_value / x))
        }
        Reference::Author => {
            r.detail = format!(
                "{} (n={}) against the author's {authors}",
                side(runs.label(*cell), &b),
                b.len()
            );
            (constant(*author_value), usize::MAX, Claim::About)
        }
    };
    let i = ratio(&a, &b, LEVEL, false);
    let spread = Spread::sides(&a, &b);
    finish(r, i, (n_ref, b.len()), claim, spread);
}

/// The rule's verdict and the numbers it was given.
fn finish(
    r: &mut FindingResult,
    i: Option<RatioInterval>,
    n: (usize, usize),
    claim: Claim,
    spread: Option<Spread>,
) {
    r.author_ratio = claim.author_ratio();
    if let Some(i) = i {
        r.ratio = Some(i.ratio);
        r.ci = Some((i.low, i.high));
        let authors = match claim {
            Claim::Effect(a) => format!("; the author's {}x", fmt(a)),
            Claim::NoDifference => "; the author's: no difference".into(),
            Claim::More => "; the author's: above 1".into(),
            Claim::Less => "; the author's: below 1".into(),
            Claim::About => String::new(),
        };
        r.detail.push_str(&format!(
            ": {}x, 95% interval [{}, {}] ({}){authors}",
            fmt(i.ratio),
            fmt(i.low),
            fmt(i.high),
            i.method.name(),
        ));
    }
    (r.outcome, r.why) = judge(&Estimate {
        interval: i,
        n,
        claim,
        spread,
    });
}

fn vals(v: &[(u32, f64)]) -> Vec<f64> {
    v.iter().map(|x| x.1).collect()
}

/// `NAME MEAN` of a side's values.
fn side(name: String, v: &[f64]) -> String {
    format!("{name} {}", fmt(v.iter().sum::<f64>() / v.len() as f64))
}

/// "no value of ..." naming each empty side, or None.
fn missing(sides: &[(&Vec<(u32, f64)>, String)]) -> Option<String> {
    let m: Vec<&str> = sides
        .iter()
        .filter(|(v, _)| v.is_empty())
        .map(|(_, n)| n.as_str())
        .collect();
    (!m.is_empty()).then(|| {
        format!(
            "no value of {} (a failed cell, or a metric this run does not have)",
            m.join(" or ")
        )
    })
}
