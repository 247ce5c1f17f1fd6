//! `[[finding]]`: a claim of the seed's author as the experiment judges it
//! (see `crate::findings` for the fields and kinds).

use serde::Deserialize;
use toml::Spanned;

use super::{Cell, Ctx, SpecError};
use crate::findings::finding::{Finding, Kind, Reference, Threshold};

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
    use crate::findings::finding::{Kind, Reference, Threshold};
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
