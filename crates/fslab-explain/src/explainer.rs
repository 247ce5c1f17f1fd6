//! The instruments as the analysis' explainer (`fslab_analysis::Explainer`):
//! a comparison explained ([`crate::explain`]) said as explanations that
//! compare, the report and `fslab run`'s summary show: the machines first
//! (what differs, each group's clock), a caveat on each verdict the
//! machines may have made, then each phase's limiter, the differential
//! profiles and where mixed workloads' time went.

use fslab_analysis::{About, Analysis, Explanation as Said, ExplanationKind as Kind};
use fslab_stats::verdict::Verdict;
use fslab_store::Store;

use crate::explain::{Explanation, Side};
use crate::waits::{entries_of_text, WaitTable};

/// The explainer fslab's commands give the analysis.
pub struct Instruments;

/// fslab's explainers, as the commands hand them to the analysis.
pub const EXPLAINERS: &[&dyn fslab_analysis::Explainer] = &[&Instruments];

impl fslab_analysis::Explainer for Instruments {
    fn explain(&self, a: &Analysis, store: &Store) -> Vec<Said> {
        // The experiments' own wait classes first (checked when each was
        // read; a table an older fslab accepted falls back to the built-in).
        let entries: Vec<_> = a
            .experiments
            .iter()
            .flat_map(|e| entries_of_text(&e.text))
            .collect();
        let waits = WaitTable::with(&entries).unwrap_or_else(|_| WaitTable::builtin());
        let ids: Vec<Vec<i64>> = a
            .runs
            .iter()
            .map(|rs| rs.iter().map(|r| r.id).collect())
            .collect();
        match crate::stored::explain_stored(store, &a.labels, &ids, a.baseline, &waits) {
            Ok(e) => said(&e, a),
            Err(err) => vec![Said {
                about: About::Selection,
                kind: Kind::Note,
                says: format!("the runs' instruments could not be read: {err}"),
                evidence: Vec::new(),
            }],
        }
    }
}

fn group(s: &Side) -> About {
    About::Group {
        group: s.group.clone(),
    }
}

fn phase(s: &Side, p: &str) -> About {
    About::Phase {
        group: s.group.clone(),
        phase: p.to_string(),
    }
}

/// The machines: what differs from the baseline's (or that nothing
/// does), what differs among a group's own runs, each group's clock.
fn machines(e: &Explanation) -> Vec<Said> {
    let mut v = Vec::new();
    let diff_lines = |d: &[crate::confound::FactDiff]| -> Vec<String> {
        d.iter()
            .map(|d| format!("{}: {} vs {}", d.name, d.base, d.other))
            .collect()
    };
    let names = |d: &[crate::confound::FactDiff]| -> String {
        d.iter()
            .map(|d| d.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    if e.sides.iter().all(|s| !s.has_facts) {
        v.push(Said {
            about: About::Selection,
            kind: Kind::Note,
            says: "no machine facts recorded (runs from before they were kept): the machines cannot be compared".into(),
            evidence: Vec::new(),
        });
    } else if e
        .sides
        .iter()
        .all(|s| s.confounders.is_empty() && s.within.is_empty())
    {
        v.push(Said {
            about: About::Selection,
            kind: Kind::Note,
            says: format!(
                "no machine fact differs between the groups and {}",
                e.baseline
            ),
            evidence: Vec::new(),
        });
    }
    for s in &e.sides {
        if !s.has_facts && e.sides.iter().any(|x| x.has_facts) {
            v.push(Said {
                about: group(s),
                kind: Kind::Note,
                says: "no machine facts recorded: its machine cannot be compared".into(),
                evidence: Vec::new(),
            });
        }
        if !s.confounders.is_empty() {
            v.push(Said {
                about: group(s),
                kind: Kind::Confounder,
                says: format!(
                    "its machine differs from {}'s in {}",
                    e.baseline,
                    names(&s.confounders)
                ),
                evidence: diff_lines(&s.confounders),
            });
        }
        if !s.within.is_empty() {
            v.push(Said {
                about: group(s),
                kind: Kind::Confounder,
                says: format!("its own runs' machines differ in {}", names(&s.within)),
                evidence: diff_lines(&s.within),
            });
        }
        v.extend(clock(s, &e.baseline));
    }
    v
}

fn clock(s: &Side, baseline: &str) -> Option<Said> {
    let c = s.clocks.iter().find(|c| c.clock.phase.is_none())?;
    let mut says = format!("CPU clock {:.0} MHz", c.clock.mhz);
    if let Some(m) = c.moved_pct {
        says.push_str(&format!(" ({m:+.1}% against {baseline})"));
    }
    let mut evidence = vec![format!("measured by {}", c.clock.source)];
    evidence.extend(s.clocks.iter().filter_map(|c| {
        let p = c.clock.phase.as_deref()?;
        Some(match c.moved_pct {
            Some(m) => format!("{p}: {:.0} MHz ({m:+.1}%)", c.clock.mhz),
            None => format!("{p}: {:.0} MHz", c.clock.mhz),
        })
    }));
    Some(Said {
        about: About::Group {
            group: s.group.clone(),
        },
        kind: Kind::Note,
        says,
        evidence,
    })
}

/// A caveat on each verdict of a difference: the clock, when it moved as
/// much (then the verdict gives way), else the machines' differences.
fn caveats(e: &Explanation, a: &Analysis) -> Vec<Said> {
    a.rows
        .iter()
        .filter(|r| r.verdict.is_some_and(Verdict::differs))
        .filter_map(|r| {
            let (says, replaces) = e.caveat(&r.group, &r.metric, r.diff_pct)?;
            let kind = match (replaces, r.verdict) {
                (true, Some(Verdict::Faster | Verdict::Slower)) => Kind::Confounded,
                (true, _) => return None,
                (false, _) => Kind::Confounder,
            };
            Some(Said {
                about: About::Comparison {
                    metric: r.metric.clone(),
                    group: r.group.clone(),
                },
                kind,
                says,
                evidence: Vec::new(),
            })
        })
        .collect()
}

/// Each phase's limiter, differential profile and operation shares.
fn phases(e: &Explanation) -> Vec<Said> {
    let mut v = Vec::new();
    for s in &e.sides {
        for l in &s.limiters {
            v.push(Said {
                about: phase(s, &l.phase),
                kind: Kind::Limiter,
                says: format!("{}: {}", l.limit.words(), l.evidence),
                evidence: Vec::new(),
            });
        }
        for p in &s.profiles {
            let top: Vec<String> = p
                .symbols
                .iter()
                .take(3)
                .map(|d| format!("{} {:+.2} points", d.symbol, d.delta_pp))
                .collect();
            let pct = |x: Option<f64>| x.map_or_else(|| "<0.5%".into(), |p| format!("{p:.2}%"));
            v.push(Said {
                about: phase(s, &p.phase),
                kind: Kind::Profile,
                says: format!(
                    "perf against {}: the shares that moved most: {}",
                    e.baseline,
                    top.join(", ")
                ),
                evidence: p
                    .symbols
                    .iter()
                    .map(|d| {
                        format!(
                            "{}{}: {} -> {} ({:+.2} points, ratio {})",
                            d.symbol,
                            if d.kernel {
                                String::new()
                            } else {
                                format!(" ({})", d.dso)
                            },
                            pct(d.base_pct),
                            pct(d.other_pct),
                            d.delta_pp,
                            d.ratio.map_or_else(|| "-".into(), |r| format!("{r:.2}"))
                        )
                    })
                    .collect(),
            });
        }
        for p in &s.shares {
            let ops: Vec<String> = p
                .ops
                .iter()
                .map(|o| format!("{} {:.1}%", o.op, o.share_pct))
                .collect();
            v.push(Said {
                about: phase(s, &p.phase),
                kind: Kind::Share,
                says: format!("of the phase's call time: {}", ops.join(", ")),
                evidence: Vec::new(),
            });
        }
    }
    v
}

/// An explanation as the analysis' explanations, in the order shown.
pub fn said(e: &Explanation, a: &Analysis) -> Vec<Said> {
    let mut v = machines(e);
    v.extend(caveats(e, a));
    v.extend(phases(e));
    v
}
