//! A comparison explained: for each group of runs, against the baseline's,
//! the facts that differ, each phase's clock, each phase's limiter with its
//! evidence, the differential profile where perf ran on both sides, and
//! where mixed workloads' time went. One value ([`Explanation`]) that
//! compare, the report, `fslab run`'s summary and the findings print.

use fslab_probe::notes::PerfTop;
use serde::Serialize;

use crate::confound::{self, Clock, FactDiff};
use crate::evidence::{PhaseEvidence, RunEvidence};
use crate::limiter::{self, Limiter};
use crate::profile::{self, SymbolDelta};
use crate::shares::{self, OpShare};
use crate::waits::WaitTable;

/// A group of runs (a cell's repetitions, or `--runs A,B`).
#[derive(Debug, Clone, Default)]
pub struct Group {
    pub label: String,
    pub runs: Vec<RunEvidence>,
}

/// One phase's clock, and how far it moved from the baseline's.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PhaseClock {
    #[serde(flatten)]
    pub clock: Clock,
    /// Against the baseline's clock of the same phase, %.
    pub moved_pct: Option<f64>,
}

/// The differential profile of one phase against the baseline's.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PhaseProfile {
    pub phase: String,
    pub symbols: Vec<SymbolDelta>,
    /// The samples the baseline's and this side's shares are of (their
    /// runs' together); None where a run's profile has no counts.
    pub base_samples: Option<u64>,
    pub samples: Option<u64>,
}

/// Where one phase's time went.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PhaseShares {
    pub phase: String,
    pub ops: Vec<OpShare>,
}

/// One group, explained.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Side {
    pub group: String,
    /// Whether its runs recorded the machine's facts at all.
    pub has_facts: bool,
    /// Facts that differ from the baseline's machine (none for the baseline).
    pub confounders: Vec<FactDiff>,
    /// Facts in which the group's own runs differ from its first run.
    pub within: Vec<FactDiff>,
    /// The clock of each phase, and over the run (phase None).
    pub clocks: Vec<PhaseClock>,
    pub limiters: Vec<Limiter>,
    /// Against the baseline, where perf ran on both sides.
    pub profiles: Vec<PhaseProfile>,
    pub shares: Vec<PhaseShares>,
}

/// A comparison explained.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Explanation {
    pub baseline: String,
    pub sides: Vec<Side>,
}

/// How many symbols a differential profile shows.
pub const PROFILE_SYMBOLS: usize = 10;

/// Every phase name of `runs`, in first-seen order.
fn phases_of(runs: &[&RunEvidence]) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    for p in runs.iter().flat_map(|r| &r.phases) {
        if !v.contains(&p.phase) {
            v.push(p.phase.clone());
        }
    }
    v
}

/// The runs' profiles of `phase` pooled, and the samples they hold (None
/// when one of them has no counts).
fn profile_of(runs: &[&RunEvidence], phase: &str) -> Option<(PerfTop, Option<u64>)> {
    let tops: Vec<PerfTop> = runs
        .iter()
        .filter_map(|r| r.note::<PerfTop>(r.phase_index(phase)?))
        .filter(|t| !t.0.is_empty())
        .collect();
    let samples = tops.iter().map(PerfTop::samples).sum();
    (!tops.is_empty()).then(|| (profile::pooled(&tops), samples))
}

fn clocks_of(runs: &[&RunEvidence], phases: &[String], base: Option<&Side>) -> Vec<PhaseClock> {
    phases
        .iter()
        .map(Some)
        .chain([None])
        .filter_map(|p| {
            let clock = confound::clock(runs, p.map(String::as_str))?;
            let moved_pct = base
                .and_then(|b| b.clocks.iter().find(|c| c.clock.phase == clock.phase))
                .map(|b| confound::moved_pct(&b.clock, &clock));
            Some(PhaseClock { clock, moved_pct })
        })
        .collect()
}

fn side(g: &Group, base: Option<(&Group, &Side)>, waits: &WaitTable) -> Side {
    let runs: Vec<&RunEvidence> = g.runs.iter().collect();
    let phases = phases_of(&runs);
    let first = runs.iter().find_map(|r| r.machine.first());
    let within = match first {
        Some(f) => runs
            .iter()
            .filter_map(|r| r.machine.first())
            .flat_map(|m| confound::differing(f, m))
            .fold(Vec::new(), |mut v: Vec<FactDiff>, d| {
                if !v.contains(&d) {
                    v.push(d);
                }
                v
            }),
        None => Vec::new(),
    };
    let confounders = match (
        base.and_then(|(bg, _)| bg.runs.iter().find_map(|r| r.machine.first())),
        first,
    ) {
        (Some(b), Some(f)) => confound::differing(b, f),
        _ => Vec::new(),
    };
    let profiles = match base {
        Some((bg, _)) => {
            let bruns: Vec<&RunEvidence> = bg.runs.iter().collect();
            phases
                .iter()
                .filter_map(|p| {
                    let ((b, base_samples), (o, samples)) =
                        (profile_of(&bruns, p)?, profile_of(&runs, p)?);
                    Some(PhaseProfile {
                        phase: p.clone(),
                        symbols: profile::diff(&b, &o, PROFILE_SYMBOLS),
                        base_samples,
                        samples,
                    })
                })
                .collect()
        }
        None => Vec::new(),
    };
    let ops: Vec<_> = runs.iter().flat_map(|r| r.ops.iter().cloned()).collect();
    Side {
        group: g.label.clone(),
        has_facts: first.is_some(),
        confounders,
        within,
        clocks: clocks_of(&runs, &phases, base.map(|b| b.1)),
        // A phase a program reported (a job of fio's) had no probes of its
        // own: the program's phase, which fslab timed, holds its evidence.
        limiters: phases
            .iter()
            .filter(|p| {
                runs.iter()
                    .flat_map(|r| &r.phases)
                    .any(|x| x.phase == **p && !x.reported)
            })
            .map(|p| limiter::judge(&PhaseEvidence::pool(p, &runs, waits)))
            .collect(),
        profiles,
        shares: phases
            .iter()
            .map(|p| PhaseShares {
                phase: p.clone(),
                ops: shares::op_shares(&ops, p),
            })
            .filter(|s| !s.ops.is_empty())
            .collect(),
    }
}

/// Explains `groups` against group `baseline`, blocked stacks classed by
/// `waits`.
pub fn explain(groups: &[Group], baseline: usize, waits: &WaitTable) -> Explanation {
    let Some(bg) = groups.get(baseline) else {
        return Explanation {
            baseline: String::new(),
            sides: Vec::new(),
        };
    };
    let base = side(bg, None, waits);
    let sides = groups
        .iter()
        .enumerate()
        .map(|(i, g)| {
            if i == baseline {
                base.clone()
            } else {
                side(g, Some((bg, &base)), waits)
            }
        })
        .collect();
    Explanation {
        baseline: bg.label.clone(),
        sides,
    }
}

impl Explanation {
    /// The side of group `label`.
    pub fn side(&self, label: &str) -> Option<&Side> {
        self.sides.iter().find(|s| s.group == label)
    }

    /// What a verdict on `metric` of group `label` must say first (a
    /// difference of `diff_pct` from the baseline), and whether it
    /// replaces a faster/slower verdict: the clock, when it moved at least
    /// as much as the difference ([`Explanation::clock_confound`]); else
    /// the facts that differ ([`Explanation::machines_differ`]).
    pub fn caveat(
        &self,
        label: &str,
        metric: &str,
        diff_pct: Option<f64>,
    ) -> Option<(String, bool)> {
        match self.clock_confound(label, metric, diff_pct) {
            Some(words) => Some((words, true)),
            None => self.machines_differ(label).map(|w| (w, false)),
        }
    }

    /// `confounded: the CPU clock moved N%` when group `label`'s clock in
    /// the metric's phase (over the run, for a metric of no phase) moved
    /// from the baseline's at least as much as the difference.
    pub fn clock_confound(
        &self,
        label: &str,
        metric: &str,
        diff_pct: Option<f64>,
    ) -> Option<String> {
        if label == self.baseline {
            return None;
        }
        let s = self.side(label)?;
        let phase_clock = s
            .clocks
            .iter()
            .filter(|c| {
                c.clock
                    .phase
                    .as_deref()
                    .is_some_and(|p| metric.starts_with(&format!("{p} ")))
            })
            .max_by_key(|c| c.clock.phase.as_ref().map_or(0, String::len))
            .or_else(|| s.clocks.iter().find(|c| c.clock.phase.is_none()));
        confound::confounded_by_clock(diff_pct?, phase_clock?.moved_pct?)
    }

    /// `machines differ: NAMES` when group `label`'s machine differs from
    /// the baseline's.
    pub fn machines_differ(&self, label: &str) -> Option<String> {
        if label == self.baseline {
            return None;
        }
        let s = self.side(label)?;
        (!s.confounders.is_empty()).then(|| {
            let names: Vec<&str> = s.confounders.iter().map(|d| d.name.as_str()).collect();
            format!("machines differ: {}", names.join(", "))
        })
    }
}

#[cfg(test)]
mod tests;
