//! `[[finding]]`: a claim of the seed's author as the experiment states it
//! (see `crate::findings` for the fields and kinds): its kind, the cells
//! and metrics it reads, the author's number, the words for what it is
//! computed from, and how the section is read. Nothing here reads a run
//! (`crate::findings` judges them), so the experiment file holds its
//! findings without depending on what judges them.

use serde::Deserialize;
use toml::Spanned;

use super::{Cell, Ctx, SpecError};

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
    author_ratio: Option<Spanned<f64>>,
    author_values: Option<Spanned<Vec<f64>>>,
    author_value: Option<Spanned<f64>>,
    at_least: Option<Spanned<f64>>,
    at_most: Option<Spanned<f64>>,
    phase: Option<Spanned<String>>,
    functions: Option<Spanned<Vec<String>>>,
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
    let kind = kind(ctx, f, cells)?;
    if !matches!(kind, Kind::Mechanism { .. }) && f.author.trim().is_empty() {
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
        stand_in: f.stand_in.as_ref().map(|s| s.trim().to_string()),
        rests_on: f.rests_on.iter().map(text).collect(),
        kind,
    })
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

/// The author's ratio: `author_ratio = R` or `author_values = [L, R]`.
fn author_ratio(ctx: &Ctx, f: &FindingSpec) -> Result<f64, SpecError> {
    match (&f.author_ratio, &f.author_values) {
        (Some(r), None) => positive(ctx, r, "finding.author_ratio"),
        (None, Some(v)) => match v.get_ref()[..] {
            [l, r] if l > 0.0 && r > 0.0 && l.is_finite() && r.is_finite() => Ok(l / r),
            _ => ctx.err(
                v.span(),
                "finding.author_values",
                "give two numbers above 0: [the claim's side, the other side]",
            ),
        },
        _ => ctx.err(
            f.kind.span(),
            "finding",
            format!(
                "{}: give exactly one of `author_ratio = R` or `author_values = [LEFT, RIGHT]`",
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

/// The finding's kind and its fields.
fn kind(ctx: &Ctx, f: &FindingSpec, cells: &[Cell]) -> Result<Kind, SpecError> {
    let cell = |ctx: &Ctx| cell_of(ctx, need(ctx, f, &f.cell, "cell")?, "finding.cell", cells);
    Ok(match f.kind.get_ref().as_str() {
        "untestable" => Kind::Untestable {
            why: text(need(ctx, f, &f.why, "why")?),
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
            Kind::Ratio {
                cell,
                metric,
                than_cell,
                than_metric,
                author_ratio: author_ratio(ctx, f)?,
            }
        }
        "paired" => Kind::Paired {
            cell: cell(ctx)?,
            metric: metric(ctx, f)?,
            than_metric: text(need(ctx, f, &f.than_metric, "than_metric")?),
            author_ratio: author_ratio(ctx, f)?,
        },
        "value" => {
            let reference = match (&f.than, &f.reference) {
                (Some(t), None) => Reference::Cell(cell_of(ctx, t, "finding.than", cells)?),
                (None, Some(r)) => Reference::Constant(positive(ctx, r, "finding.reference")?),
                _ => {
                    return ctx.err(
                        f.kind.span(),
                        "finding",
                        format!(
                            "{}: a \"value\" finding needs one reference: `than = \"CELL\"` or \
                             `reference = NUMBER` (what no effect would be)",
                            f.id.get_ref()
                        ),
                    )
                }
            };
            Kind::Value {
                cell: cell(ctx)?,
                metric: metric(ctx, f)?,
                per: f.per.as_ref().map(text),
                reference,
                author_value: positive(
                    ctx,
                    need(ctx, f, &f.author_value, "author_value")?,
                    "finding.author_value",
                )?,
            }
        }
        "mechanism" => Kind::Mechanism {
            cell: cell(ctx)?,
            metric: metric(ctx, f)?,
            threshold: match (&f.at_least, &f.at_most) {
                (Some(x), None) => Threshold::AtLeast(*x.get_ref()),
                (None, Some(x)) => Threshold::AtMost(*x.get_ref()),
                _ => {
                    return ctx.err(
                        f.kind.span(),
                        "finding",
                        format!(
                            "{}: a mechanism needs exactly one of `at_least` or `at_most`",
                            f.id.get_ref()
                        ),
                    )
                }
            },
        },
        "stacks" => Kind::Stacks {
            cell: cell(ctx)?,
            phase: text(need(ctx, f, &f.phase, "phase")?),
            functions: need(ctx, f, &f.functions, "functions")?.get_ref().clone(),
        },
        other => {
            return ctx.err(
                f.kind.span(),
                "finding.kind",
                format!(
                    "unknown kind {other:?} (use ratio, paired, value, mechanism, stacks or untestable)"
                ),
            )
        }
    })
}

#[cfg(test)]
mod tests {
    use super::{Kind, Reference, Threshold};
    use crate::spec::{parse, Defaults};

    const HEAD: &str = "name = \"x\"\n[workload]\nkind = \"alloctest\"\nargs = [\"{dir}/big\", \"1G\"]\n[[target]]\nfs = \"ext3\"\n[[target]]\nfs = \"ext4\"\n";

    fn with(findings: &str) -> Result<crate::spec::Experiment, String> {
        parse("x.toml", &format!("{HEAD}{findings}"), &Defaults::default())
            .map_err(|e| e.to_string())
    }

    #[test]
    fn findings_parse_into_their_kinds_with_mechanisms_they_rest_on() {
        let e = with(
            "[[finding]]\nid = \"9-m1\"\nkind = \"mechanism\"\nsays = \"writeback\"\nmetric = \"mem touched dirty written (MiB)\"\ncell = \"ext3\"\nat_least = 1\n\
             [[finding]]\nid = \"9-a\"\nkind = \"value\"\nsays = \"s\"\nauthor = \"50,435\"\nmetric = \"m\"\nper = \"p\"\ncell = \"ext3\"\nreference = 1\nauthor_value = 5604\nrests_on = [\"9-m1\"]\n\
             [[finding]]\nid = \"9-b\"\nkind = \"ratio\"\nsays = \"s\"\nauthor = \"a\"\nmetric = \"m\"\ncell = \"ext4\"\nthan = \"ext3\"\nauthor_values = [35, 50435]\n",
        )
        .unwrap();
        assert_eq!(
            e.findings[0].kind,
            Kind::Mechanism {
                cell: 0,
                metric: "mem touched dirty written (MiB)".into(),
                threshold: Threshold::AtLeast(1.0)
            }
        );
        assert!(matches!(
            &e.findings[1].kind,
            Kind::Value { reference: Reference::Constant(r), author_value, per: Some(p), .. }
                if *r == 1.0 && *author_value == 5604.0 && p == "p"
        ));
        assert_eq!(e.findings[1].rests_on, vec!["9-m1".to_string()]);
        assert!(matches!(
            e.findings[2].kind,
            Kind::Ratio { cell: 1, than_cell: 0, author_ratio, .. } if (author_ratio - 35.0 / 50435.0).abs() < 1e-12
        ));
    }

    #[test]
    fn bad_findings_are_refused_naming_the_line_and_field() {
        let e = with("[[finding]]\nid = \"9-a\"\nkind = \"bound\"\nsays = \"s\"\nauthor = \"a\"\n")
            .unwrap_err();
        assert!(
            e.starts_with("x.toml:11: finding.kind: unknown kind \"bound\""),
            "{e}"
        );
        // A per-finding bound is not the rule's: refused.
        let e = with("[[finding]]\nid = \"9-a\"\nkind = \"ratio\"\nsays = \"s\"\nauthor = \"a\"\nmetric = \"m\"\ncell = \"ext3\"\nthan = \"ext4\"\nabove = 10\n").unwrap_err();
        assert!(e.contains("unknown field `above`"), "{e}");
        let e = with("[[finding]]\nid = \"9-a\"\nkind = \"ratio\"\nsays = \"s\"\nmetric = \"m\"\ncell = \"ext3\"\nthan = \"ext4\"\nauthor_ratio = 2\n").unwrap_err();
        assert!(
            e.contains("finding.author: 9-a: give the author's numbers"),
            "{e}"
        );
        let e = with("[[finding]]\nid = \"9-a\"\nkind = \"untestable\"\nsays = \"s\"\nauthor = \"a\"\nwhy = \"8 CPUs\"\nrests_on = [\"9-z\"]\n").unwrap_err();
        assert!(
            e.contains("finding.rests_on: \"9-z\" is not the id of a mechanism"),
            "{e}"
        );
        let e = with("[[finding]]\nid = \"9-a\"\nkind = \"value\"\nsays = \"s\"\nauthor = \"a\"\nmetric = \"m\"\ncell = \"ext3\"\nauthor_value = 2\n").unwrap_err();
        assert!(e.contains("needs one reference"), "{e}");
        let e = with("[[finding]]\nid = \"9-a\"\nkind = \"paired\"\nsays = \"s\"\nauthor = \"a\"\nmetric = \"m\"\ncell = \"xfs\"\nthan_metric = \"n\"\nauthor_ratio = 2\n").unwrap_err();
        assert!(
            e.contains("no cell labelled \"xfs\" (cells: ext3, ext4)"),
            "{e}"
        );
        let two = "[[finding]]\nid = \"9-a\"\nkind = \"untestable\"\nsays = \"s\"\nauthor = \"a\"\nwhy = \"w\"\n";
        let e = with(&format!("{two}{two}")).unwrap_err();
        assert!(e.contains("\"9-a\" is the id of an earlier finding"), "{e}");
    }
}

#[cfg(test)]
mod builtin_gates {
    use crate::findings::{evaluate_all, Runs};
    use crate::spec::{parse, Defaults};
    use crate::summary::{Direction, Sample};
    use fslab_record::FindingOutcome;

    /// Seed 001's walk and unlink claims rest on the caches being reclaimed
    /// (its memory cgroup hit in both ext4 cells' stat and unlink phases):
    /// without that in every run, they are not judged, naming it.
    #[test]
    fn seed001s_walk_and_unlink_claims_are_not_judged_when_a_cell_did_not_reclaim() {
        let text = include_str!("../../../experiments/seed001-crc-overhead.toml");
        let e = parse("seed001.toml", text, &Defaults::default()).unwrap();
        let labels: Vec<String> = e.cells.iter().map(|c| c.label.clone()).collect();
        let cell = |l: &str| labels.iter().position(|x| x == l).unwrap() as u32;
        let (on, off) = (
            cell("ext4 -O metadata_csum"),
            cell("ext4 -O ^metadata_csum,uninit_bg"),
        );
        let judge = |off_stat_hits: [f64; 3]| {
            let mut v = Vec::new();
            let mut put = |c: u32, r: u32, m: &str, x: f64| {
                v.push(Sample {
                    cell: c,
                    repetition: r,
                    metric: m.into(),
                    direction: Direction::Cost,
                    value: x,
                    headline: false,
                    exact: false,
                });
            };
            for r in 1..=3 {
                let i = r as usize - 1;
                put(on, r, "stat time (s)", [494.0, 490.0, 498.0][i]);
                put(off, r, "stat time (s)", [339.0, 341.0, 337.0][i]);
                put(on, r, "unlink time (s)", [959.0, 955.0, 962.0][i]);
                put(off, r, "unlink time (s)", [692.0, 690.0, 695.0][i]);
                put(on, r, "mem stat limit hits", 500.0);
                put(off, r, "mem stat limit hits", off_stat_hits[i]);
                put(on, r, "mem unlink limit hits", 50.0);
                put(off, r, "mem unlink limit hits", 40.0);
            }
            let runs = Runs {
                labels: &labels,
                samples: &v,
                evidence: &[],
            };
            let out = evaluate_all(&e.findings, &runs);
            let of = |id: &str| out[e.findings.iter().position(|f| f.id == id).unwrap()].clone();
            (of("001-c"), of("001-d"))
        };
        let (walk, unlink) = judge([100.0, 80.0, 90.0]);
        assert_eq!(walk.outcome, FindingOutcome::Reproduced, "{walk:?}");
        assert_eq!(unlink.outcome, FindingOutcome::Reproduced, "{unlink:?}");
        // The cell without checksums kept its caches in one walk.
        let (walk, unlink) = judge([100.0, 0.0, 90.0]);
        assert_eq!(walk.outcome, FindingOutcome::NotJudged, "{walk:?}");
        assert!(walk.why.contains("001-m2 did not happen"), "{}", walk.why);
        assert_eq!(unlink.outcome, FindingOutcome::Reproduced, "{unlink:?}");
    }
}
