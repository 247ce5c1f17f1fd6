//! `[[finding]]`: a claim of the seed's author as the experiment states it
//! (see `crate::findings` for the fields and kinds): its kind, the cells
//! and metrics it reads, the author's number, the words for what it is
//! computed from, and how the section is read. Nothing here reads a run
//! (`crate::findings` judges them), so the experiment file holds its
//! findings without depending on what judges them.

use serde::Deserialize;
use toml::Spanned;

use super::author::{AuthorNumber, NumberSpec};
use super::{Cell, Ctx, SpecError};

/// The top wait stacks a stacks finding looks at.
pub const TOP_STACKS: usize = 5;

/// What a finding computes.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum FindingKind {
    /// Two cells' means (or two metrics' means).
    Ratio {
        cell: u32,
        metric: String,
        than_cell: u32,
        than_metric: String,
        claim: Claim,
    },
    /// Two metrics of the same runs of one cell, run by run.
    Paired {
        cell: u32,
        metric: String,
        than_metric: String,
        claim: Claim,
    },
    /// A metric (per unit of work) against the author's number, from a
    /// reference: another cell's same quantity, a constant, or none (the
    /// author's value itself).
    Value {
        cell: u32,
        metric: String,
        per: Option<String>,
        reference: Reference,
        author_value: f64,
    },
    /// A probe metric (per unit of work) against a threshold in every run
    /// of a cell.
    Mechanism {
        cell: u32,
        metric: String,
        per: Option<String>,
        /// Another cell: the threshold is on the ratio of the two cells'
        /// means (its whole 95% interval), not on each run.
        than: Option<u32>,
        threshold: Threshold,
    },
    /// A kernel path the author's mechanism ran through: present when every
    /// one of `symbols` is in the running kernel (/proc/kallsyms).
    Kernel { symbols: Vec<String>, path: String },
    /// The workload's top wait stacks in a phase name these functions.
    Stacks {
        cell: u32,
        phase: String,
        functions: Vec<String>,
    },
    /// A claim this machine cannot test, with what fslab measured beside
    /// it, if anything.
    Untestable {
        why: String,
        /// The cell whose setup its stand-ins are named from, if any.
        cell: Option<u32>,
        shows: Option<Shown>,
    },
}

/// What a claim says, as the rule reads it (see `findings::rule`).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Claim {
    /// The author's ratio A (1: a claim of no difference).
    Effect(f64),
    /// No difference ("within noise"), whatever the author's two numbers.
    NoDifference,
    /// A direction without a number: R above 1 (`More`) or below (`Less`).
    More,
    Less,
    /// fslab's value over the author's value (no reference of no effect).
    About,
}

impl Claim {
    /// The author's ratio the rule measures against (1 for a value).
    pub fn author_ratio(self) -> Option<f64> {
        match self {
            Claim::Effect(a) => Some(a),
            Claim::NoDifference | Claim::About => Some(1.0),
            Claim::More | Claim::Less => None,
        }
    }
}

/// A metric an untestable claim shows beside its reason.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Shown {
    pub cell: u32,
    pub metric: String,
    pub per: Option<String>,
}

/// A value finding's reference: what no effect would be.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Reference {
    /// A constant (1 backend IO per guest IO, 9 extents).
    Constant(f64),
    /// None: the author gave no number of no effect, so fslab's value is
    /// judged against the author's own.
    Author,
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
    /// The numbers the finding takes from them (its author_value,
    /// author_values or author_ratio), as written.
    pub author_numbers: Vec<AuthorNumber>,
    /// What stands in for the author's setup, if anything does.
    pub stand_in: Option<String>,
    /// The mechanisms (ids) that must have happened for it to be judged.
    pub rests_on: Vec<String>,
    pub kind: FindingKind,
}

impl Finding {
    pub fn is_mechanism(&self) -> bool {
        matches!(
            self.kind,
            FindingKind::Mechanism { .. } | FindingKind::Kernel { .. }
        )
    }

    /// The cells it reads.
    pub fn cells(&self) -> Vec<u32> {
        match &self.kind {
            FindingKind::Ratio {
                cell, than_cell, ..
            } => vec![*cell, *than_cell],
            FindingKind::Mechanism {
                cell,
                than: Some(t),
                ..
            } => vec![*cell, *t],
            FindingKind::Paired { cell, .. }
            | FindingKind::Value { cell, .. }
            | FindingKind::Mechanism { cell, .. }
            | FindingKind::Stacks { cell, .. } => vec![*cell],
            FindingKind::Untestable { cell, .. } => cell.iter().copied().collect(),
            FindingKind::Kernel { .. } => Vec::new(),
        }
    }

    /// Whether any metric it reads (metric, than_metric, per) names `what`.
    pub fn reads(&self, what: &str) -> bool {
        let names: Vec<&str> = match &self.kind {
            FindingKind::Ratio {
                metric,
                than_metric,
                ..
            }
            | FindingKind::Paired {
                metric,
                than_metric,
                ..
            } => vec![metric, than_metric],
            FindingKind::Value { metric, per, .. } | FindingKind::Mechanism { metric, per, .. } => {
                std::iter::once(metric.as_str())
                    .chain(per.as_deref())
                    .collect()
            }
            FindingKind::Untestable { shows: Some(s), .. } => std::iter::once(s.metric.as_str())
                .chain(s.per.as_deref())
                .collect(),
            _ => Vec::new(),
        };
        names.iter().any(|n| n.contains(what))
    }

    /// The claim's id in CLAIMS.md (`000-d` of `000-d.2`).
    pub fn claim_id(&self) -> &str {
        self.id.split('.').next().unwrap_or_default()
    }

    /// What the dry run lists: the id, the claim and the author's number.
    pub fn listing(&self, labels: &[String]) -> String {
        let mut s = format!("{} {}", self.id, self.says);
        if !self.author.is_empty() {
            s.push_str(&format!(" (author: {})", self.author));
        }
        match &self.kind {
            FindingKind::Untestable { why, .. } => s.push_str(&format!("\n    {why}")),
            _ => s.push_str(&format!("\n    judged from: {}", how(self, labels))),
        }
        if !self.author_numbers.is_empty() && !matches!(self.kind, FindingKind::Untestable { .. }) {
            let n: Vec<String> = self
                .author_numbers
                .iter()
                .map(AuthorNumber::words)
                .collect();
            s.push_str(&format!("\n    the author's numbers: {}", n.join(", ")));
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
        FindingKind::Ratio {
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
        FindingKind::Paired {
            cell,
            metric,
            than_metric,
            ..
        } => format!(
            "{metric:?} over {than_metric:?} in the same runs of {}, paired run by run",
            l(cell)
        ),
        FindingKind::Value {
            cell,
            metric,
            per,
            reference,
            ..
        } => {
            let r = match reference {
                Reference::Constant(x) => format!("against {} (no effect)", fmt(*x)),
                Reference::Author => "against the author's value (a factor of 2 either way)".into(),
            };
            format!("{} of {} {r}", quantity(metric, per), l(cell))
        }
        FindingKind::Mechanism {
            cell,
            metric,
            per,
            than: None,
            threshold,
        } => format!(
            "{} of {} {} in every run",
            quantity(metric, per),
            l(cell),
            threshold.words()
        ),
        FindingKind::Mechanism {
            cell,
            metric,
            per,
            than: Some(t),
            threshold,
        } => format!(
            "the ratio of means of {} of {} over {}, its whole 95% interval {}",
            quantity(metric, per),
            l(cell),
            l(t),
            threshold.words()
        ),
        FindingKind::Kernel { symbols, path } => format!(
            "{path}: {} in the running kernel's symbols (/proc/kallsyms)",
            symbols.join(", ")
        ),
        FindingKind::Stacks {
            cell,
            phase,
            functions,
        } => format!(
            "the stacks probe's top {TOP_STACKS} wait stacks of the workload in phase {phase} of {}, naming {}",
            l(cell),
            functions.join(" and ")
        ),
        FindingKind::Untestable { .. } => String::new(),
    }
}

/// `"METRIC"`, or `"METRIC" per "PER", run by run,`.
fn quantity(metric: &str, per: &Option<String>) -> String {
    match per {
        Some(p) => format!("{metric:?} per {p:?}, run by run,"),
        None => format!("{metric:?}"),
    }
}

pub(crate) fn fmt(x: f64) -> String {
    fslab_stats::fmt_sig(x, 4)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct FindingSpec {
    id: Spanned<String>,
    says: Spanned<String>,
    #[serde(default)]
    author: String,
    kind: Spanned<String>,
    metric: Option<Spanned<String>>,
    cell: Option<Spanned<String>>,
    than: Option<Spanned<String>>,
    than_metric: Option<Spanned<String>>,
    per: Option<Spanned<String>>,
    reference: Option<Spanned<f64>>,
    author_ratio: Option<Spanned<NumberSpec>>,
    author_values: Option<Spanned<Vec<NumberSpec>>>,
    author_value: Option<Spanned<NumberSpec>>,
    claim: Option<Spanned<String>>,
    at_least: Option<Spanned<f64>>,
    at_most: Option<Spanned<f64>>,
    phase: Option<Spanned<String>>,
    functions: Option<Spanned<Vec<String>>>,
    symbols: Option<Spanned<Vec<String>>>,
    path: Option<Spanned<String>>,
    why: Option<Spanned<String>>,
    stand_in: Option<String>,
    #[serde(default)]
    rests_on: Vec<Spanned<String>>,
}

/// Every `[[finding]]`, with ids unique and every `rests_on` a mechanism
/// of the same file.
pub(super) fn findings(
    ctx: &Ctx,
    specs: &[FindingSpec],
    cells: &[Cell],
) -> Result<Vec<Finding>, SpecError> {
    let found = specs
        .iter()
        .map(|f| finding(ctx, f, cells))
        .collect::<Result<Vec<_>, _>>()?;
    for (i, (f, spec)) in found.iter().zip(specs).enumerate() {
        if found[..i].iter().any(|g| g.id == f.id) {
            return ctx.err(
                spec.id.span(),
                "finding.id",
                format!("{:?} is the id of an earlier finding", f.id),
            );
        }
        for (m, s) in f.rests_on.iter().zip(&spec.rests_on) {
            if !found.iter().any(|g| g.id == *m && g.is_mechanism()) {
                return ctx.err(
                    s.span(),
                    "finding.rests_on",
                    format!("{m:?} is not the id of a mechanism finding of this file"),
                );
            }
        }
    }
    Ok(found)
}

fn text(s: &Spanned<String>) -> String {
    s.get_ref().trim().to_string()
}

/// One `[[finding]]`.
fn finding(ctx: &Ctx, f: &FindingSpec, cells: &[Cell]) -> Result<Finding, SpecError> {
    let id = text(&f.id);
    if id.is_empty() {
        return ctx.err(f.id.span(), "finding.id", "must not be empty");
    }
    let author_numbers = author_numbers(ctx, f)?;
    let kind = kind(ctx, f, cells, &author_numbers)?;
    if !matches!(
        kind,
        FindingKind::Mechanism { .. } | FindingKind::Kernel { .. }
    ) && f.author.trim().is_empty()
    {
        return ctx.err(
            f.says.span(),
            "finding.author",
            format!(
                "{id}: give the author's numbers (`author = \"...\"`, as CLAIMS.md quotes them)"
            ),
        );
    }
    Ok(Finding {
        id,
        says: text(&f.says),
        author: f.author.trim().to_string(),
        author_numbers: author_numbers.into_iter().map(|(_, n)| n).collect(),
        stand_in: f.stand_in.as_ref().map(|s| s.trim().to_string()),
        rests_on: f.rests_on.iter().map(text).collect(),
        kind,
    })
}

/// The author's numbers the finding gives (author_value, author_values,
/// author_ratio), each read, with the field it came from.
fn author_numbers(
    ctx: &Ctx,
    f: &FindingSpec,
) -> Result<Vec<(&'static str, AuthorNumber)>, SpecError> {
    let mut out = Vec::new();
    let one = |ctx: &Ctx, field: &'static str, x: &NumberSpec, span| {
        x.resolve()
            .map(|n| (field, n))
            .or_else(|e| ctx.err(span, &format!("finding.{field}"), e.to_string()))
    };
    if let Some(x) = &f.author_value {
        out.push(one(ctx, "author_value", x.get_ref(), x.span())?);
    }
    if let Some(x) = &f.author_ratio {
        out.push(one(ctx, "author_ratio", x.get_ref(), x.span())?);
    }
    if let Some(v) = &f.author_values {
        if v.get_ref().len() != 2 {
            return ctx.err(
                v.span(),
                "finding.author_values",
                "give two numbers above 0: [the claim's side, the other side]",
            );
        }
        for x in v.get_ref() {
            out.push(one(ctx, "author_values", x, v.span())?);
        }
    }
    Ok(out)
}

/// A required field of the finding's kind.
fn need<'a, T>(
    ctx: &Ctx,
    f: &FindingSpec,
    v: &'a Option<Spanned<T>>,
    field: &str,
) -> Result<&'a Spanned<T>, SpecError> {
    match v {
        Some(x) => Ok(x),
        None => ctx.err(
            f.kind.span(),
            &format!("finding.{field}"),
            format!(
                "a {:?} finding needs `{field}` ({})",
                f.kind.get_ref(),
                f.id.get_ref()
            ),
        ),
    }
}

/// A cell by its label.
fn cell_of(ctx: &Ctx, s: &Spanned<String>, field: &str, cells: &[Cell]) -> Result<u32, SpecError> {
    match cells.iter().find(|c| c.label == *s.get_ref()) {
        Some(c) => Ok(c.index),
        None => {
            let labels: Vec<&str> = cells.iter().map(|c| c.label.as_str()).collect();
            ctx.err(
                s.span(),
                field,
                format!(
                    "no cell labelled {:?} (cells: {})",
                    s.get_ref(),
                    labels.join(", ")
                ),
            )
        }
    }
}

/// A positive, finite number.
fn positive(ctx: &Ctx, x: &Spanned<f64>, field: &str) -> Result<f64, SpecError> {
    let v = *x.get_ref();
    if v > 0.0 && v.is_finite() {
        Ok(v)
    } else {
        ctx.err(x.span(), field, format!("{v} is not a number above 0"))
    }
}

/// The claim of a ratio or paired finding: `claim = "no difference" |
/// "more" | "less"`, else the author's ratio (`author_ratio = R` or
/// `author_values = [L, R]`).
fn claim(ctx: &Ctx, f: &FindingSpec, nums: &[(&str, AuthorNumber)]) -> Result<Claim, SpecError> {
    if let Some(c) = &f.claim {
        return match c.get_ref().as_str() {
            "no difference" => Ok(Claim::NoDifference),
            "more" => Ok(Claim::More),
            "less" => Ok(Claim::Less),
            other => ctx.err(
                c.span(),
                "finding.claim",
                format!("unknown claim {other:?} (use \"no difference\", \"more\" or \"less\")"),
            ),
        };
    }
    match nums {
        [("author_ratio", r)] => Ok(Claim::Effect(r.value)),
        [("author_values", l), ("author_values", r)] => Ok(Claim::Effect(l.value / r.value)),
        _ => ctx.err(
            f.kind.span(),
            "finding",
            format!(
                "{}: give exactly one of `author_ratio = R` or `author_values = [LEFT, RIGHT]` \
                 (or `claim = \"no difference\"`, \"more\" or \"less\")",
                f.id.get_ref()
            ),
        ),
    }
}

fn metric(ctx: &Ctx, f: &FindingSpec) -> Result<String, SpecError> {
    let m = need(ctx, f, &f.metric, "metric")?;
    let t = text(m);
    if t.is_empty() {
        return ctx.err(m.span(), "finding.metric", "must not be empty");
    }
    Ok(t)
}

/// A value finding: against the author's reference of no effect, or none.
fn value(
    ctx: &Ctx,
    f: &FindingSpec,
    cell: u32,
    nums: &[(&str, AuthorNumber)],
) -> Result<FindingKind, SpecError> {
    if let Some(t) = &f.than {
        return ctx.err(
            t.span(),
            "finding.than",
            format!(
                "{}: a \"value\" finding's reference is the author's (`reference = NUMBER`, \
                 what no effect would be) or none (judged against the author's value): \
                 another cell's value is fslab's, not the author's (for two cells the \
                 author measured, use kind = \"ratio\" with author_values)",
                f.id.get_ref()
            ),
        );
    }
    let reference = match &f.reference {
        Some(r) => Reference::Constant(positive(ctx, r, "finding.reference")?),
        None => Reference::Author,
    };
    let author_value = match nums {
        [("author_value", v)] => v.value,
        _ => {
            return ctx.err(
                f.kind.span(),
                "finding.author_value",
                format!(
                    "a \"value\" finding needs `author_value` alone ({})",
                    f.id.get_ref()
                ),
            )
        }
    };
    Ok(FindingKind::Value {
        cell,
        metric: metric(ctx, f)?,
        per: f.per.as_ref().map(text),
        reference,
        author_value,
    })
}

/// A mechanism's threshold: exactly one of `at_least` or `at_most`.
fn threshold(ctx: &Ctx, f: &FindingSpec) -> Result<Threshold, SpecError> {
    match (&f.at_least, &f.at_most) {
        (Some(x), None) => Ok(Threshold::AtLeast(*x.get_ref())),
        (None, Some(x)) => Ok(Threshold::AtMost(*x.get_ref())),
        _ => ctx.err(
            f.kind.span(),
            "finding",
            format!(
                "{}: a mechanism needs exactly one of `at_least` or `at_most`",
                f.id.get_ref()
            ),
        ),
    }
}

/// The finding's kind and its fields.
fn kind(
    ctx: &Ctx,
    f: &FindingSpec,
    cells: &[Cell],
    nums: &[(&str, AuthorNumber)],
) -> Result<FindingKind, SpecError> {
    let cell = |ctx: &Ctx| cell_of(ctx, need(ctx, f, &f.cell, "cell")?, "finding.cell", cells);
    let per = f.per.as_ref().map(text);
    Ok(match f.kind.get_ref().as_str() {
        "untestable" => FindingKind::Untestable {
            why: text(need(ctx, f, &f.why, "why")?),
            cell: match &f.cell {
                Some(c) => Some(cell_of(ctx, c, "finding.cell", cells)?),
                None => None,
            },
            shows: match &f.metric {
                Some(_) => Some(Shown {
                    cell: cell(ctx)?,
                    metric: metric(ctx, f)?,
                    per,
                }),
                None => None,
            },
        },
        "ratio" => {
            let (cell, metric) = (cell(ctx)?, metric(ctx, f)?);
            let than_cell = match &f.than {
                Some(t) => cell_of(ctx, t, "finding.than", cells)?,
                None => cell,
            };
            let than_metric = f.than_metric.as_ref().map_or(metric.clone(), text);
            if than_cell == cell && than_metric == metric {
                return ctx.err(
                    f.says.span(),
                    "finding",
                    "compares a metric of a cell with itself: give `than` (another cell) or \
                     `than_metric` (kind = \"paired\" for two metrics of the same runs)",
                );
            }
            FindingKind::Ratio {
                cell,
                metric,
                than_cell,
                than_metric,
                claim: claim(ctx, f, nums)?,
            }
        }
        "paired" => FindingKind::Paired {
            cell: cell(ctx)?,
            metric: metric(ctx, f)?,
            than_metric: text(need(ctx, f, &f.than_metric, "than_metric")?),
            claim: claim(ctx, f, nums)?,
        },
        "value" => value(ctx, f, cell(ctx)?, nums)?,
        "mechanism" => FindingKind::Mechanism {
            cell: cell(ctx)?,
            metric: metric(ctx, f)?,
            per,
            than: match &f.than {
                Some(t) => Some(cell_of(ctx, t, "finding.than", cells)?),
                None => None,
            },
            threshold: threshold(ctx, f)?,
        },
        "kernel" => {
            let symbols = need(ctx, f, &f.symbols, "symbols")?;
            if symbols.get_ref().is_empty() || symbols.get_ref().iter().any(|s| s.trim().is_empty())
            {
                return ctx.err(
                    symbols.span(),
                    "finding.symbols",
                    "name at least one kernel symbol, none empty",
                );
            }
            FindingKind::Kernel {
                symbols: symbols.get_ref().iter().map(|s| s.trim().to_string()).collect(),
                path: text(need(ctx, f, &f.path, "path")?),
            }
        }
        "stacks" => FindingKind::Stacks {
            cell: cell(ctx)?,
            phase: text(need(ctx, f, &f.phase, "phase")?),
            functions: need(ctx, f, &f.functions, "functions")?.get_ref().clone(),
        },
        other => {
            return ctx.err(
                f.kind.span(),
                "finding.kind",
                format!(
                    "unknown kind {other:?} (use ratio, paired, value, mechanism, kernel, stacks or untestable)"
                ),
            )
        }
    })
}

#[cfg(test)]
#[path = "spec_finding_tests.rs"]
mod tests;
