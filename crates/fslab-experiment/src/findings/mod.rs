//! Findings: every claim of the seed's author (experiments/CLAIMS.md), with
//! the author's number beside fslab's, judged by one rule ([`rule::RULE`]).
//!
//! ```toml
//! [[finding]]
//! id = "002-a"                     # the claim's id in CLAIMS.md
//! says = "ext3 ends with tens of thousands of extents where perfection is 9"
//! author = "50,435 extents, perfection 9 (10,000-20,000 in the program's comment)"
//! kind = "ratio"                   # ratio | paired | value | mechanism | stacks | untestable
//! metric = "alloctest filefrag extents found"   # as `fslab compare` names it
//! cell = "ext3 [random]"
//! reference = 9                    # value: a constant reference, or `than = "CELL"`
//! author_value = 50435             # value: the author's number
//! rests_on = ["002-m1"]            # mechanisms that must have happened
//! ```
//!
//! Kinds:
//! - `ratio`: mean of `metric` in `cell` over mean of `than_metric` (default:
//!   `metric`) in `than`; `author_ratio` or `author_values = [LEFT, RIGHT]`.
//! - `paired`: `metric` over `than_metric` in the same runs of `cell`.
//! - `value`: `metric` (per `per`, run by run) in `cell` against `than`'s
//!   same quantity or a constant `reference`; `author_value`.
//! - `mechanism`: `metric` (per `per`) in every run of `cell` `at_least`
//!   or `at_most` a value: what claims `rests_on`.
//! - `kernel`: a kernel path the author's mechanism ran through, present
//!   when the running kernel has every one of `symbols` (a claim resting
//!   on one it lacks is "not judgeable on this kernel").
//! - `stacks`: the workload's top 5 wait stacks in `phase` of `cell` name
//!   every one of `functions`.
//! - `untestable`: `why` this machine cannot test it (with `metric` of
//!   `cell`, what fslab measured beside it).
//!
//! Every judged finding names the stand-ins of its cells ([`Facts`]).

pub mod facts;
mod kinds;
pub mod rule;

use fslab_model::{FindingOutcome, FindingResult};

pub use crate::evidence::{self, Evidence};
pub use crate::spec::finding::{Claim, Finding, FindingKind, Reference, Threshold};
pub use facts::{CellFacts, Facts, MachineFacts};

use crate::summary::RepetitionValue;

/// Everything a run gives its findings: the cells' labels, every sample
/// with its repetition, and each run's probe evidence.
pub struct Runs<'a> {
    pub labels: &'a [String],
    pub samples: &'a [RepetitionValue],
    /// (cell, repetition, evidence) of each completed run.
    pub evidence: &'a [(u32, u32, &'a Evidence)],
    /// The machine and the cells' setups.
    pub facts: &'a Facts,
}

impl Runs<'_> {
    /// The cell's label.
    fn label(&self, c: u32) -> String {
        self.labels.get(c as usize).cloned().unwrap_or_default()
    }

    /// `metric`'s (repetition, value) in `cell`'s runs. A count's name
    /// matches with or without its "(count)".
    fn values(&self, cell: u32, metric: &str) -> Vec<(u32, f64)> {
        self.samples
            .iter()
            .filter(|s| s.cell == cell && same_metric(&s.metric, metric))
            .map(|s| (s.repetition, s.value))
            .collect()
    }
}

/// Two metric names are the same, a count's "(count)" aside.
pub fn same_metric(a: &str, b: &str) -> bool {
    let bare = |s: &str| s.trim().trim_end_matches(" (count)").to_string();
    bare(a) == bare(b)
}

/// Judges every finding over the run: mechanisms first, then the claims,
/// a claim resting on a mechanism that did not happen not judged. Results
/// come back in the file's order.
pub fn evaluate_all(findings: &[Finding], runs: &Runs) -> Vec<FindingResult> {
    let mut out: Vec<Option<FindingResult>> = vec![None; findings.len()];
    for (i, f) in findings
        .iter()
        .enumerate()
        .filter(|(_, f)| f.is_mechanism())
    {
        out[i] = Some(kinds::evaluate(f, runs));
    }
    for (i, f) in findings
        .iter()
        .enumerate()
        .filter(|(_, f)| !f.is_mechanism())
    {
        let mut gone = Vec::new();
        let failed: Vec<String> = f
            .rests_on
            .iter()
            .filter_map(|m| {
                let (g, r) = findings
                    .iter()
                    .zip(&out)
                    .find(|(g, _)| g.id == *m)
                    .map(|(g, r)| (g, r.as_ref()))?;
                match r {
                    Some(r) if r.outcome == FindingOutcome::Happened => None,
                    Some(r)
                        if r.outcome == FindingOutcome::DidNotHappen
                            && matches!(g.kind, FindingKind::Kernel { .. }) =>
                    {
                        gone.push(format!("{} ({})", r.id, r.why));
                        None
                    }
                    Some(r) => Some(format!(
                        "{} {} ({}: {})",
                        r.id,
                        r.outcome.words(),
                        r.says,
                        r.why
                    )),
                    None => Some(format!("{m} (not in this experiment)")),
                }
            })
            .collect();
        // A mechanism that did not happen decides, whatever else the
        // numbers say (few runs, a missing value): it is named.
        let mut r = kinds::evaluate(f, runs);
        if !gone.is_empty() {
            r.outcome = FindingOutcome::NotJudged;
            r.why = format!("not judgeable on this kernel: {}", gone.join("; "));
        } else if !failed.is_empty() {
            r.outcome = FindingOutcome::NotJudged;
            r.why = format!(
                "the mechanism it rests on is not shown by this run: {}",
                failed.join("; ")
            );
        }
        let named = runs.facts.stand_ins(&f.cells());
        if !named.is_empty() {
            let mut all: Vec<String> = r.stand_in.take().into_iter().collect();
            all.extend(named);
            r.stand_in = Some(all.join("; "));
        }
        out[i] = Some(r);
    }
    out.into_iter().flatten().collect()
}

/// The findings as `fslab run`, `compare` print them: the id, the verdict
/// the rule gave, the claim; the author's number, fslab's, why, from what.
pub fn text(results: &[FindingResult]) -> String {
    let mut s = String::new();
    if results.is_empty() {
        return s;
    }
    s.push_str("\nfindings (the rule: fslab run --help):\n");
    for r in results {
        let id = if r.id.is_empty() { "-" } else { r.id.as_str() };
        s.push_str(&format!("  {id} {}: {}\n", r.outcome.words(), r.says));
        if !r.author.is_empty() {
            s.push_str(&format!("    author: {}\n", r.author));
        }
        if !r.detail.is_empty() {
            s.push_str(&format!("    fslab:  {}\n", r.detail));
        }
        if !r.why.is_empty() {
            s.push_str(&format!("    why:    {}\n", r.why));
        }
        if !r.from.is_empty() {
            s.push_str(&format!("    from:   {}\n", r.from));
        }
        if let Some(si) = &r.stand_in {
            s.push_str(&format!("    stand-in: {si}\n"));
        }
    }
    s
}

#[cfg(test)]
mod tests;
