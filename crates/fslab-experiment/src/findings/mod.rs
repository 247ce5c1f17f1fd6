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
//! - `mechanism`: `metric` in every run of `cell` `at_least` or `at_most`
//!   a value: what claims `rests_on`.
//! - `stacks`: the workload's top 5 wait stacks in `phase` of `cell` name
//!   every one of `functions`.
//! - `untestable`: `why` this machine cannot test it.

pub mod evidence;
mod kinds;
pub mod rule;

use fslab_record::{FindingOutcome, FindingResult};

pub use evidence::Evidence;

use crate::summary::Sample;

/// What a finding computes.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Kind {
    /// Two cells' means (or two metrics' means).
    Ratio {
        cell: u32,
        metric: String,
        than_cell: u32,
        than_metric: String,
        author_ratio: f64,
    },
    /// Two metrics of the same runs of one cell, run by run.
    Paired {
        cell: u32,
        metric: String,
        than_metric: String,
        author_ratio: f64,
    },
    /// A metric (per unit of work) against the author's number, from a
    /// reference: another cell's same quantity, or a constant.
    Value {
        cell: u32,
        metric: String,
        per: Option<String>,
        reference: Reference,
        author_value: f64,
    },
    /// A probe metric against a threshold in every run of a cell.
    Mechanism {
        cell: u32,
        metric: String,
        threshold: Threshold,
    },
    /// The workload's top wait stacks in a phase name these functions.
    Stacks {
        cell: u32,
        phase: String,
        functions: Vec<String>,
    },
    /// A claim this machine cannot test.
    Untestable { why: String },
}

/// A value finding's reference: what no effect would be.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Reference {
    /// The same quantity in another cell (by index).
    Cell(u32),
    /// A constant (1 backend IO per guest IO, 9 extents).
    Constant(f64),
}

/// A mechanism's threshold.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Threshold {
    AtLeast(f64),
    AtMost(f64),
}

impl Threshold {
    pub fn holds(self, x: f64) -> bool {
        match self {
            Threshold::AtLeast(t) => x >= t,
            Threshold::AtMost(t) => x <= t,
        }
    }

    pub fn words(self) -> String {
        match self {
            Threshold::AtLeast(t) => format!("at least {}", fmt(t)),
            Threshold::AtMost(t) => format!("at most {}", fmt(t)),
        }
    }
}

/// A stated finding.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Finding {
    /// The claim's id in CLAIMS.md (`000-a`), or a mechanism's (`000-m1`).
    pub id: String,
    /// The claim's words.
    pub says: String,
    /// The author's numbers, as CLAIMS.md quotes them.
    pub author: String,
    /// What stands in for the author's setup, if anything does.
    pub stand_in: Option<String>,
    /// The mechanisms (ids) that must have happened for it to be judged.
    pub rests_on: Vec<String>,
    pub kind: Kind,
}

impl Finding {
    pub fn is_mechanism(&self) -> bool {
        matches!(self.kind, Kind::Mechanism { .. })
    }

    /// What the dry run lists: the id, the claim and the author's number.
    pub fn listing(&self, labels: &[String]) -> String {
        let mut s = format!("{} {}", self.id, self.says);
        if !self.author.is_empty() {
            s.push_str(&format!(" (author: {})", self.author));
        }
        match &self.kind {
            Kind::Untestable { why } => s.push_str(&format!("\n    {why}")),
            _ => s.push_str(&format!("\n    judged from: {}", kinds::how(self, labels))),
        }
        if let Some(si) = &self.stand_in {
            s.push_str(&format!("\n    stand-in: {si}"));
        }
        if !self.rests_on.is_empty() {
            s.push_str(&format!("\n    rests on: {}", self.rests_on.join(", ")));
        }
        s
    }
}

/// Everything a run gives its findings: the cells' labels, every sample
/// with its repetition, and each run's probe evidence.
pub struct Runs<'a> {
    pub labels: &'a [String],
    pub samples: &'a [Sample],
    /// (cell, repetition, evidence) of each completed run.
    pub evidence: &'a [(u32, u32, &'a Evidence)],
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

fn fmt(x: f64) -> String {
    fslab_stats::fmt_g(x, 4)
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
        let failed: Vec<String> = f
            .rests_on
            .iter()
            .filter_map(|m| {
                let r = findings
                    .iter()
                    .zip(&out)
                    .find(|(g, _)| g.id == *m)
                    .and_then(|(_, r)| r.as_ref());
                match r {
                    Some(r) if r.outcome == FindingOutcome::Happened => None,
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
        let mut r = kinds::evaluate(f, runs);
        if !failed.is_empty() && r.outcome != FindingOutcome::NotJudged {
            r.outcome = FindingOutcome::NotJudged;
            r.why = format!(
                "the mechanism it rests on is not shown by this run: {}",
                failed.join("; ")
            );
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
