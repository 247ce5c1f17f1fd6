//! Each kind of finding computed from the run: its estimate, handed to the
//! one rule ([`super::rule`]), and the words that say from what.

use fslab_record::{FindingOutcome, FindingResult};
use fslab_stats::interval::{paired_ratio, ratio, RatioInterval};

use super::rule::{judge, judge_presence, Estimate};
use super::Runs;
use crate::spec::finding::{fmt, how, Finding, Kind, Reference, TOP_STACKS};

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
        Kind::Untestable { why } => {
            r.why.clone_from(why);
        }
        Kind::Ratio {
            cell,
            metric,
            than_cell,
            than_metric,
            author_ratio,
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
            finish(&mut r, i, (av.len(), bv.len()), *author_ratio);
        }
        Kind::Paired {
            cell,
            metric,
            than_metric,
            author_ratio,
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
            finish(&mut r, i, (pairs.len(), pairs.len()), *author_ratio);
        }
        Kind::Value { .. } => value(f, runs, &mut r),
        Kind::Mechanism {
            cell,
            metric,
            threshold,
        } => {
            let v = runs.values(*cell, metric);
            if v.is_empty() {
                r.why = format!(
                    "no value of {metric:?} of {} (not measured in this run)",
                    runs.label(*cell)
                );
                return r;
            }
            let vs = vals(&v);
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
        Kind::Stacks {
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

/// A value finding: the quantity (per unit of work, run by run) against a
/// reference; the author's ratio is the author's number over the reference.
fn value(f: &Finding, runs: &Runs, r: &mut FindingResult) {
    let Kind::Value {
        cell,
        metric,
        per,
        reference,
        author_value,
    } = &f.kind
    else {
        return;
    };
    let quantity = |c: u32| -> Result<Vec<f64>, String> {
        let m = runs.values(c, metric);
        let name = |x: &str| format!("no value of {x:?} of {}", runs.label(c));
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
    };
    let b = match quantity(*cell) {
        Ok(b) => b,
        Err(e) => {
            r.why = e;
            return;
        }
    };
    let (a, ref_words, n_ref) = match reference {
        Reference::Cell(c) => match quantity(*c) {
            Ok(a) => {
                let words = side(runs.label(*c), &a);
                let n = a.len();
                (a, format!("{words} (n={n})"), n)
            }
            Err(e) => {
                r.why = e;
                return;
            }
        },
        // A constant reference is known exactly: as many of it as runs.
        Reference::Constant(x) => (
            vec![*x; b.len().max(2)],
            format!("{} (no effect)", fmt(*x)),
            usize::MAX,
        ),
    };
    let ref_mean = geomean(&a);
    r.detail = format!(
        "{} (n={}) against {ref_words}; the author's {} is {}x the reference",
        side(runs.label(*cell), &b),
        b.len(),
        fmt(*author_value),
        fmt(author_value / ref_mean)
    );
    let i = ratio(&a, &b, LEVEL, false);
    finish(r, i, (n_ref, b.len()), author_value / ref_mean);
}

/// The rule's verdict and the numbers it was given.
fn finish(r: &mut FindingResult, i: Option<RatioInterval>, n: (usize, usize), author_ratio: f64) {
    r.author_ratio = Some(author_ratio);
    if let Some(i) = i {
        r.ratio = Some(i.ratio);
        r.ci = Some((i.low, i.high));
        r.detail.push_str(&format!(
            ": {}x, 95% interval [{}, {}] ({}); the author's {}x",
            fmt(i.ratio),
            fmt(i.low),
            fmt(i.high),
            i.method.name(),
            fmt(author_ratio)
        ));
    }
    (r.outcome, r.why) = judge(&Estimate {
        interval: i,
        n,
        author_ratio,
    });
}

fn vals(v: &[(u32, f64)]) -> Vec<f64> {
    v.iter().map(|x| x.1).collect()
}

fn geomean(v: &[f64]) -> f64 {
    if v.iter().all(|x| *x > 0.0) {
        (v.iter().map(|x| x.ln()).sum::<f64>() / v.len() as f64).exp()
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
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
