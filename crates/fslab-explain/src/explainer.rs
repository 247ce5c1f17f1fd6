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
    fn explain(&self, a: &mut Analysis, store: &Store) -> fslab_analysis::Result<()> {
        let said = explained(a, store);
        a.explanations.extend(said);
        fslab_analysis::add_caveats(a);
        Ok(())
    }
}

/// What the instruments say about `a`: the runs' instruments that could
/// not be read are one note, not a failed comparison.
fn explained(a: &Analysis, store: &Store) -> Vec<Said> {
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
    } else if e.sides.len() > 1
        && e.sides
            .iter()
            .all(|s| s.confounders.is_empty() && s.within.is_empty())
    {
        v.push(Said {
            about: About::Selection,
            kind: Kind::Note,
            says: format!("no machine fact differs from {}'s in any group", e.baseline),
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
    }
    // Then each group's clock.
    v.extend(e.sides.iter().filter_map(|s| clock(s, &e.baseline)));
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

/// A caveat on each verdict against the baseline: the clock, when it
/// moved as much as a faster/slower difference (then the verdict gives
/// way), else the machines' differences.
fn caveats(e: &Explanation, a: &Analysis) -> Vec<Said> {
    a.rows
        .iter()
        .filter(|r| r.verdict.is_some())
        .filter_map(|r| {
            let clock = e
                .clock_confound(&r.group, &r.metric, r.diff_pct)
                .filter(|_| matches!(r.verdict, Some(Verdict::Faster | Verdict::Slower)));
            let (kind, says) = match clock {
                Some(words) => (Kind::Confounded, words),
                None => (Kind::Confounder, e.machines_differ(&r.group)?),
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
                    "perf against {} ({}): the shares that moved most: {}",
                    e.baseline,
                    match (p.base_samples, p.samples) {
                        (Some(b), Some(o)) => format!("{b} and {o} samples"),
                        _ => "sample counts not recorded".into(),
                    },
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

#[cfg(test)]
mod tests {
    use fslab_analysis::{analyse, Input, RunSamples, Settings};
    use fslab_model::catalogue;
    use fslab_model::facts::{names, Machine, PhaseMachine};
    use fslab_model::{Fact, MachineFacts, PhaseFacts, PhaseResult};

    use super::*;
    use crate::evidence::RunEvidence;
    use crate::explain::{explain, Group};

    /// A run of one create phase at `rate` on a machine whose scheduler is
    /// `sched`, clocked at `mhz`.
    fn run(rate: f64, sched: &str, mhz: f64) -> RunEvidence {
        RunEvidence {
            machine: Machine {
                hosts: vec![MachineFacts {
                    host: "h".into(),
                    facts: vec![Fact::known(names::SCHEDULER, sched, "t")],
                }],
                phases: vec![PhaseMachine {
                    phase_index: 0,
                    facts: PhaseFacts {
                        clock_mhz: Some(mhz),
                        clock_source: "sampled".into(),
                        ..Default::default()
                    },
                }],
            },
            phases: vec![PhaseResult::timed("create", (rate * 10.0) as u64, 10.0)],
            ..Default::default()
        }
    }

    fn analysis(groups: &[Group]) -> Analysis {
        let input = Input {
            labels: groups.iter().map(|g| g.label.clone()).collect(),
            runs: groups
                .iter()
                .enumerate()
                .flat_map(|(i, g)| {
                    g.runs.iter().map(move |r| RunSamples {
                        group: i,
                        run: None,
                        samples: catalogue::samples(&catalogue::RunNumbers {
                            phases: &r.phases,
                            ..Default::default()
                        }),
                    })
                })
                .collect(),
        };
        analyse(&input, &Settings::default())
    }

    fn said_about<'a>(v: &'a [Said], metric: &str) -> Option<&'a Said> {
        v.iter()
            .find(|s| matches!(&s.about, About::Comparison { metric: m, .. } if m == metric))
    }

    #[test]
    fn a_clock_that_moved_as_much_takes_a_faster_verdicts_place_else_the_machines_come_first() {
        // 10% faster on a clock 12% higher, on another scheduler.
        let g = |label: &str, rate: f64, sched: &str, mhz: f64| Group {
            label: label.into(),
            runs: [0.99, 1.0, 1.01]
                .iter()
                .map(|f| run(rate * f, sched, mhz))
                .collect(),
        };
        let groups = [
            g("a", 1000.0, "none", 2000.0),
            g("b", 1100.0, "mq-deadline", 2240.0),
        ];
        let e = explain(&groups, 0, &WaitTable::builtin());
        let mut a = analysis(&groups);
        let v = said(&e, &a);
        // The machines first: the scheduler, then each group's clock.
        assert_eq!(v[0].kind, Kind::Confounder);
        assert_eq!(
            v[0].says,
            "its machine differs from a's in device scheduler"
        );
        assert_eq!(v[0].evidence, ["device scheduler: none vs mq-deadline"]);
        assert!(v.iter().take_while(|s| s.before_verdicts()).count() >= 3);
        let rate = said_about(&v, "create rate (ops/s)").unwrap();
        assert_eq!(
            (rate.kind, rate.says.as_str()),
            (Kind::Confounded, "confounded: the CPU clock moved +12.0%")
        );
        // The time is not faster/slower-judged by the clock alone here:
        // a CPU-seconds cost row is named for the scheduler.
        let cost = said_about(&v, "create sys cpu (s)").unwrap();
        assert_eq!(cost.kind, Kind::Confounder);
        assert_eq!(cost.says, "machines differ: device scheduler");
        // The analysis gives each row its caveat from what was said.
        a.explanations = v;
        fslab_analysis::add_caveats(&mut a);
        let caveat = |metric: &str| {
            a.rows
                .iter()
                .find(|r| r.group == "b" && r.metric == metric)
                .and_then(|r| r.caveat.clone())
                .map(|c| (c.words, c.replaces_verdict))
        };
        assert_eq!(
            caveat("create rate (ops/s)"),
            Some(("confounded: the CPU clock moved +12.0%".into(), true))
        );
        assert_eq!(
            caveat("create sys cpu (s)"),
            Some(("machines differ: device scheduler".into(), false))
        );
        assert!(a
            .rows
            .iter()
            .filter(|r| r.group == "a")
            .all(|r| r.caveat.is_none()));
    }
}
