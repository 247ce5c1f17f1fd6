//! The metric catalogue: the one place where a run's numbers get their
//! names, units and directions. `fslab run`'s summary, its findings and
//! `--until-resolved`, `fslab compare`, the report, `results history` and a
//! resumed experiment all read a run through [`samples`], so a number is
//! named alike wherever it is shown.
//!
//! A run gives, in this order: each phase's time, rate, system and user
//! CPU (`PHASE time (s)`, `PHASE rate (ops/s)`, `PHASE sys cpu (s)`,
//! `PHASE usr cpu (s)`), the tool's own numbers ([`Metric::label`] after its
//! source: `dbench Throughput (MB/s)`), then what `fslab run` measured
//! around it (`unmount (s)`, `remount (s)`, [`IMAGE_EXTENTS`]).

pub use crate::Direction;

use crate::{Better, Metric, PhaseResult, Unit, IMAGE_EXTENTS};

/// What a sample is to the comparisons.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// A number that stands for the run: each phase's rate and the tool's
    /// own headline number ([`crate::metric::headline`]); what
    /// `--until-resolved` waits on and `results history` follows.
    Headline,
    /// Compared and summarized, not waited on.
    Plain,
    /// A breakdown row (one of dbench's operations, one fs_mark loop):
    /// shown by `results show` and the exports, left out of summaries and
    /// comparisons, where the run's own totals stand for it.
    Detail,
}

/// One named number of one run.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// The name every listing shows (`create rate (ops/s)`).
    pub name: String,
    pub unit: Unit,
    pub direction: Direction,
    pub value: f64,
    pub role: Role,
    /// Declared exact by construction by its workload ([`Metric::exact`]).
    pub exact: bool,
}

impl Sample {
    /// Whether summaries and comparisons take it (every role but
    /// [`Role::Detail`]).
    pub fn compared(&self) -> bool {
        self.role != Role::Detail
    }
}

/// What a run gives the catalogue: what its workload recorded and what
/// `fslab run` measured around it (none for a run started by hand).
#[derive(Debug, Clone, Copy, Default)]
pub struct RunNumbers<'a> {
    pub phases: &'a [PhaseResult],
    /// The tool's own numbers (and its probes').
    pub metrics: &'a [Metric],
    pub unmount_s: Option<f64>,
    pub remount_s: Option<f64>,
    /// The image's extents on the host after the run.
    pub image_extents: Option<u64>,
}

/// How a tool's number compares: a rate that is better higher is faster
/// up, a time that is better lower is slower up, anything else more or
/// less.
pub fn direction_of(m: &Metric) -> Direction {
    if m.unit.is_rate() && m.better == Better::Higher {
        Direction::Rate
    } else if m.unit.is_time() && m.better == Better::Lower {
        Direction::Time
    } else {
        Direction::Cost
    }
}

/// A phase's own numbers, as every listing names them: its time, rate
/// (the headline), system and user CPU. A phase nothing counted has no
/// rate of operations; one its tool reported has no CPU time of its own
/// (the program's phase, which fslab timed, holds it).
fn phase_numbers(p: &PhaseResult) -> Vec<(&'static str, Unit, Direction, f64)> {
    let mut v = vec![("time", Unit::Seconds, Direction::Time, p.elapsed_s)];
    if p.counted {
        v.push(("rate", Unit::OpsPerSec, Direction::Rate, p.ops_per_s));
    }
    if !p.reported {
        v.push(("sys cpu", Unit::Seconds, Direction::Cost, p.sys_cpu_s));
        v.push(("usr cpu", Unit::Seconds, Direction::Cost, p.usr_cpu_s));
    }
    v
}

/// A phase's numbers as metrics of `source` (a first pass's, kept with
/// the run it came before), named as [`samples`] names a phase's own:
/// `SOURCE PHASE rate (ops/s)`.
pub fn phase_metrics(source: &str, p: &PhaseResult) -> Vec<Metric> {
    phase_numbers(p)
        .into_iter()
        .map(|(what, unit, direction, value)| {
            let better = if direction == Direction::Rate {
                Better::Higher
            } else {
                Better::Lower
            };
            Metric::new(source, Some(&p.phase), what, value, unit, better)
        })
        .collect()
}

/// Every named number of a run, detail rows included (see [`Role`]), in
/// the catalogue's order (see the module's documentation).
pub fn samples(run: &RunNumbers) -> Vec<Sample> {
    let mut v = Vec::new();
    let plain = |name: String, unit: Unit, direction, value: f64| Sample {
        name,
        unit,
        direction,
        value,
        role: Role::Plain,
        exact: false,
    };
    for p in run.phases {
        let name = |what: &str, unit: Unit| format!("{} {what} ({})", p.phase, unit.symbol());
        for (what, unit, direction, value) in phase_numbers(p) {
            let role = if direction == Direction::Rate {
                Role::Headline
            } else {
                Role::Plain
            };
            v.push(Sample {
                role,
                ..plain(name(what, unit), unit, direction, value)
            });
        }
    }
    let headline = crate::metric::headline(run.metrics);
    for m in run.metrics {
        let role = if m.detail {
            Role::Detail
        } else if headline == Some(m) {
            Role::Headline
        } else {
            Role::Plain
        };
        v.push(Sample {
            role,
            exact: m.exact,
            ..plain(tool_name(m), m.unit, direction_of(m), m.value)
        });
    }
    let seconds = |what: &str| format!("{what} ({})", Unit::Seconds.symbol());
    if let Some(u) = run.unmount_s {
        v.push(plain(seconds("unmount"), Unit::Seconds, Direction::Time, u));
    }
    if let Some(r) = run.remount_s {
        v.push(plain(seconds("remount"), Unit::Seconds, Direction::Time, r));
    }
    if let Some(n) = run.image_extents {
        v.push(plain(
            IMAGE_EXTENTS.into(),
            Unit::Count,
            Direction::Cost,
            n as f64,
        ));
    }
    v
}

/// A numbered item's word and number: `loop 3` is ("loop", 3), `entries
/// 1090` ("entries", 1090). Breakdown rows of numbered items (a workload's
/// loops, its rate as its directory grows) are shown as tables, one row an
/// item, and their rates charted against the number.
pub fn numbered(phase: &str) -> Option<(&str, u64)> {
    let (word, n) = phase.rsplit_once(' ')?;
    Some((word, n.parse().ok()?))
}

/// The name of a tool's own number: `SOURCE PHASE NAME (UNIT)`.
pub fn tool_name(m: &Metric) -> String {
    format!("{} {}", m.source, m.label())
}

/// The stonewall's numbers (mdtest's `-W`, fsmark's and createmany's
/// `--stonewall`), one name each whichever workload measured them: the
/// items every rank had made at the stonewall, their rate over the time to
/// the agreement, that time, the items made after it to the agreed count
/// and their rate, the straggler spread (the most items any rank had made
/// at the stonewall less the fewest), and each rank's items at the
/// stonewall as detail rows ([`stonewall::of_rank`]).
pub mod stonewall {
    pub const ITEMS_AT_STONEWALL: &str = "items at stonewall";
    pub const STONEWALL_RATE: &str = "stonewall rate";
    pub const STONEWALL_TIME: &str = "stonewall time";
    pub const WEAR_OUT_RATE: &str = "wear-out rate";
    pub const WEAR_OUT_ITEMS: &str = "wear-out items";
    pub const STRAGGLER_SPREAD: &str = "straggler spread";

    /// Rank `rank`'s items at the stonewall: `items at stonewall, rank 2`.
    pub fn of_rank(rank: usize) -> String {
        format!("{ITEMS_AT_STONEWALL}, rank {rank}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_of(phases: &[PhaseResult], metrics: &[Metric]) -> Vec<Sample> {
        samples(&RunNumbers {
            phases,
            metrics,
            unmount_s: Some(0.5),
            remount_s: None,
            image_extents: Some(9),
        })
    }

    #[test]
    fn a_phase_the_tool_reported_has_its_time_and_rate_but_no_cpu_of_its_own() {
        let fio = PhaseResult {
            reported: true,
            ..PhaseResult::timed("rw", 1024, 0.5)
        };
        let ior = PhaseResult {
            reported: true,
            counted: false,
            bytes: 1 << 30,
            ..PhaseResult::timed("ior-easy-write", 0, 2.0)
        };
        let names: Vec<String> = run_of(&[fio, ior], &[])
            .into_iter()
            .map(|s| s.name)
            .collect();
        assert_eq!(
            names,
            [
                "rw time (s)",
                "rw rate (ops/s)",
                "ior-easy-write time (s)",
                "unmount (s)",
                "image extents"
            ]
        );
    }

    #[test]
    fn a_run_is_named_phase_by_phase_then_the_tools_numbers_then_around_it() {
        let phases = [PhaseResult {
            usr_cpu_s: 0.25,
            sys_cpu_s: 1.5,
            ..PhaseResult::timed("create", 100, 2.0)
        }];
        let total = Metric::new(
            "dbench",
            None,
            "Throughput",
            30.0,
            Unit::MbPerSec,
            Better::Higher,
        );
        let op = Metric::new(
            "dbench",
            Some("NTCreateX"),
            "AvgLat",
            2.0,
            Unit::Milliseconds,
            Better::Lower,
        )
        .detail();
        let files = Metric::new(
            "fsmark",
            None,
            "files created",
            100.0,
            Unit::Count,
            Better::Neither,
        )
        .exact();
        let s = run_of(&phases, &[op, total, files]);
        let names: Vec<(&str, Role)> = s.iter().map(|s| (s.name.as_str(), s.role)).collect();
        assert_eq!(
            names,
            [
                ("create time (s)", Role::Plain),
                ("create rate (ops/s)", Role::Headline),
                ("create sys cpu (s)", Role::Plain),
                ("create usr cpu (s)", Role::Plain),
                ("dbench NTCreateX AvgLat (ms)", Role::Detail),
                ("dbench Throughput (MB/s)", Role::Headline),
                ("fsmark files created", Role::Plain),
                ("unmount (s)", Role::Plain),
                ("image extents", Role::Plain),
            ]
        );
        let dirs: Vec<Direction> = s.iter().map(|s| s.direction).collect();
        use Direction::*;
        assert_eq!(dirs, [Time, Rate, Cost, Cost, Time, Rate, Cost, Time, Cost]);
        assert_eq!(s[1].value, 50.0);
        assert_eq!((s[3].unit, s[3].value), (Unit::Seconds, 0.25));
        assert_eq!(s[5].unit, Unit::MbPerSec);
        assert!(s[6].exact && !s[5].exact);
        assert!(!s[4].compared() && s[5].compared());
    }

    #[test]
    fn a_numbered_item_is_a_word_and_a_number() {
        assert_eq!(numbered("loop 3"), Some(("loop", 3)));
        assert_eq!(numbered("entries 1090"), Some(("entries", 1090)));
        assert_eq!(numbered("execute"), None);
        assert_eq!(numbered("Write 4k"), None);
    }

    #[test]
    fn only_a_better_higher_rate_is_faster_and_a_better_lower_time_slower() {
        let m = |unit, better| Metric::new("t", None, "x", 1.0, unit, better);
        assert_eq!(
            direction_of(&m(Unit::OpsPerSec, Better::Higher)),
            Direction::Rate
        );
        assert_eq!(
            direction_of(&m(Unit::Seconds, Better::Lower)),
            Direction::Time
        );
        assert_eq!(
            direction_of(&m(Unit::OpsPerSec, Better::Neither)),
            Direction::Cost
        );
        assert_eq!(
            direction_of(&m(Unit::Seconds, Better::Higher)),
            Direction::Cost
        );
        assert_eq!(
            direction_of(&m(Unit::Count, Better::Lower)),
            Direction::Cost
        );
    }
}
