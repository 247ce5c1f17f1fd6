//! Confounders: what differs between the machines two sides ran on, named
//! before any verdict, and the CPU clock each phase ran at. A clock that
//! moved at least as much as a difference turns "faster" or "slower" into
//! "confounded".

use fslab_model::facts::names;
use fslab_model::MachineFacts;
use serde::Serialize;

use crate::evidence::RunEvidence;

/// One fact that differs between the baseline's machine and another's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FactDiff {
    pub name: String,
    /// The values as shown (`unknown` when not read).
    pub base: String,
    pub other: String,
}

/// Facts that differ between any two runs by construction: not confounders.
const NOT_CONFOUNDERS: [&str; 1] = [names::DEVICE];

/// The facts in which `other` differs from `base` (a fact read on one side
/// only differs from `unknown`), in `base`'s order then `other`'s.
pub fn differing(base: &MachineFacts, other: &MachineFacts) -> Vec<FactDiff> {
    let mut names_seen: Vec<&str> = base.facts.iter().map(|f| f.name.as_str()).collect();
    for f in &other.facts {
        if !names_seen.contains(&f.name.as_str()) {
            names_seen.push(&f.name);
        }
    }
    names_seen
        .into_iter()
        .filter(|n| !NOT_CONFOUNDERS.contains(n))
        .filter_map(|n| {
            let shown = |m: &MachineFacts| {
                m.get(n)
                    .map_or(fslab_model::facts::UNKNOWN, |f| f.shown())
                    .to_string()
            };
            let (a, b) = (shown(base), shown(other));
            (a != b).then(|| FactDiff {
                name: n.to_string(),
                base: a,
                other: b,
            })
        })
        .collect()
}

/// The CPU clock of a group's runs in one phase (or the whole run).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Clock {
    /// None: every phase, weighted by its time.
    pub phase: Option<String>,
    pub mhz: f64,
    /// How it was measured (the first run's words).
    pub source: String,
}

/// The mean clock of `runs` in `phase` (None: over all phases, weighted
/// by their time); None when no run measured it.
pub fn clock(runs: &[&RunEvidence], phase: Option<&str>) -> Option<Clock> {
    let mut sum = 0.0;
    let mut weight = 0.0;
    let mut source = None;
    for r in runs {
        for m in &r.machine.phases {
            let Some(p) = r.phases.get(m.phase_index as usize) else {
                continue;
            };
            if phase.is_some_and(|ph| ph != p.phase) {
                continue;
            }
            let Some(mhz) = m.facts.clock_mhz else {
                continue;
            };
            let w = if phase.is_some() {
                1.0
            } else {
                p.elapsed_s.max(1e-9)
            };
            sum += mhz * w;
            weight += w;
            source.get_or_insert_with(|| m.facts.clock_source.clone());
        }
    }
    (weight > 0.0).then(|| Clock {
        phase: phase.map(String::from),
        mhz: sum / weight,
        source: source.unwrap_or_default(),
    })
}

/// How much the clock moved from `base` to `other`, %.
pub fn moved_pct(base: &Clock, other: &Clock) -> f64 {
    (other.mhz / base.mhz - 1.0) * 100.0
}

/// The verdict's words when the clock moved at least as much as the
/// difference (`diff_pct`): None when the difference stands.
pub fn confounded_by_clock(diff_pct: f64, clock_moved_pct: f64) -> Option<String> {
    (clock_moved_pct.abs() >= diff_pct.abs() && clock_moved_pct != 0.0)
        .then(|| format!("confounded: the CPU clock moved {clock_moved_pct:+.1}%"))
}

#[cfg(test)]
mod tests {
    use fslab_model::facts::{Machine, PhaseMachine};
    use fslab_model::{Fact, PhaseFacts, PhaseResult};

    use super::*;

    fn facts(pairs: &[(&str, Option<&str>)]) -> MachineFacts {
        MachineFacts {
            host: "h".into(),
            facts: pairs
                .iter()
                .map(|(n, v)| match v {
                    Some(v) => Fact::known(n, *v, "test"),
                    None => Fact::unknown(n, "not read"),
                })
                .collect(),
        }
    }

    #[test]
    fn the_facts_that_differ_and_not_the_device_name() {
        let a = facts(&[
            (names::DEVICE, Some("loop3")),
            (names::SCHEDULER, Some("none")),
            (names::CRC32C, Some("crc32c-intel (priority 200)")),
            (names::GOVERNOR, None),
            (names::DIRTY_RATIO, Some("20")),
        ]);
        let b = facts(&[
            (names::DEVICE, Some("loop5")),
            (names::SCHEDULER, Some("mq-deadline")),
            (names::CRC32C, Some("crc32c-intel (priority 200)")),
            (names::GOVERNOR, None),
            (names::THP, Some("never")),
        ]);
        let d: Vec<(String, String, String)> = differing(&a, &b)
            .into_iter()
            .map(|d| (d.name, d.base, d.other))
            .collect();
        let s = |x: &str| x.to_string();
        assert_eq!(
            d,
            [
                (s(names::SCHEDULER), s("none"), s("mq-deadline")),
                (s(names::DIRTY_RATIO), s("20"), s("unknown")),
                (s(names::THP), s("unknown"), s("never")),
            ]
        );
        assert!(differing(&a, &a).is_empty());
    }

    fn run(phases: &[(&str, f64, Option<f64>)]) -> RunEvidence {
        RunEvidence {
            phases: phases
                .iter()
                .map(|(p, s, _)| PhaseResult::timed(p, 1, *s))
                .collect(),
            machine: Machine {
                hosts: Vec::new(),
                phases: phases
                    .iter()
                    .enumerate()
                    .map(|(i, (_, _, mhz))| PhaseMachine {
                        phase_index: i as u32,
                        facts: PhaseFacts {
                            clock_mhz: *mhz,
                            clock_source: "sampled".into(),
                            ..Default::default()
                        },
                    })
                    .collect(),
            },
            ..Default::default()
        }
    }

    #[test]
    fn a_clock_per_phase_and_over_the_run_and_when_it_confounds() {
        let a = run(&[("create", 3.0, Some(2000.0)), ("stat", 1.0, Some(3000.0))]);
        let b = run(&[("create", 3.0, Some(2200.0)), ("stat", 1.0, None)]);
        let ca = clock(&[&a], Some("create")).unwrap();
        let cb = clock(&[&b], Some("create")).unwrap();
        assert!((moved_pct(&ca, &cb) - 10.0).abs() < 1e-9);
        // Over the run, weighted by time: (3 x 2000 + 1 x 3000) / 4.
        assert_eq!(clock(&[&a], None).unwrap().mhz, 2250.0);
        assert_eq!(clock(&[&b], Some("stat")), None);
        // Two runs of a group: their mean.
        assert_eq!(clock(&[&a, &b], Some("create")).unwrap().mhz, 2100.0);
        assert_eq!(
            confounded_by_clock(-8.0, 10.0).as_deref(),
            Some("confounded: the CPU clock moved +10.0%")
        );
        assert_eq!(confounded_by_clock(-12.0, 10.0), None);
        assert_eq!(confounded_by_clock(0.0, 0.0), None);
    }
}
