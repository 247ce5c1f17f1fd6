//! What a finding states, as the experiment file gives it: its kind, the
//! cells and metrics it reads, the author's number, and the words for
//! what it is computed from. Nothing here reads a run (see
//! [`super::evaluate_all`]), so the experiment file's parser
//! ([`crate::spec`]) can hold findings without depending on the run.

/// The top wait stacks a stacks finding looks at.
pub const TOP_STACKS: usize = 5;

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
            _ => s.push_str(&format!("\n    judged from: {}", how(self, labels))),
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

/// What the finding is computed from, in words.
pub fn how(f: &Finding, labels: &[String]) -> String {
    let l = |c: &u32| labels.get(*c as usize).cloned().unwrap_or_default();
    match &f.kind {
        Kind::Ratio {
            cell,
            metric,
            than_cell,
            than_metric,
            ..
        } => format!(
            "the ratio of means: {metric:?} of {} over {than_metric:?} of {} (Welch t on logs)",
            l(cell),
            l(than_cell)
        ),
        Kind::Paired {
            cell,
            metric,
            than_metric,
            ..
        } => format!(
            "{metric:?} over {than_metric:?} in the same runs of {}, paired run by run",
            l(cell)
        ),
        Kind::Value {
            cell,
            metric,
            per,
            reference,
            ..
        } => {
            let q = match per {
                Some(p) => format!("{metric:?} per {p:?}, run by run,"),
                None => format!("{metric:?}"),
            };
            let r = match reference {
                Reference::Cell(c) => format!("the same in {}", l(c)),
                Reference::Constant(x) => format!("{} (no effect)", fmt(*x)),
            };
            format!("{q} of {} against {r}", l(cell))
        }
        Kind::Mechanism {
            cell,
            metric,
            threshold,
        } => format!(
            "{metric:?} of {} {} in every run",
            l(cell),
            threshold.words()
        ),
        Kind::Stacks {
            cell,
            phase,
            functions,
        } => format!(
            "the stacks probe's top {TOP_STACKS} wait stacks of the workload in phase {phase} of {}, naming {}",
            l(cell),
            functions.join(" and ")
        ),
        Kind::Untestable { .. } => String::new(),
    }
}

pub(crate) fn fmt(x: f64) -> String {
    fslab_stats::fmt_g(x, 4)
}
