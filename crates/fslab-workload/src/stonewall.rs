//! The stonewall with wear-out, mdtest's and IO500's way, for every
//! workload that has one (mdtest's `-W`, fsmark's and createmany's
//! `--stonewall`): after S seconds every stream of items (an MPI rank, or
//! each worker thread of one) stops at its next item ([`Check`]), the ranks
//! agree on the most items any stream made (an allreduce of the maximum,
//! [`agree`]), and every stream makes items up to that count, so that
//! every later phase works on the same number of items everywhere. Both
//! rates are kept: the stonewall rate (the items all ranks had made at the
//! stonewall over the time to it) and the wear-out rate (the items made
//! after it over the time they took), with each rank's count at the
//! stonewall and the straggler spread ([`WallSummary`], [`metrics`]; the
//! names are `fslab_model::catalogue::stonewall`'s).
//!
//! One process is one rank: the stonewall ends its stretch at S seconds,
//! the agreement is its own count and nothing is left to wear out.
//!
//! Every collective here first asks whether every rank is still running
//! (a sum, the phase gate's own operation): a rank whose run ended early
//! answers the gates with 1, so the others stop instead of waiting for it.

use fslab_cluster::Cluster;
use fslab_model::{Better, Metric, Unit};
use serde::{Deserialize, Serialize};

/// True when every rank is here and running; a barrier.
pub fn all_running(c: &dyn Cluster) -> bool {
    c.sum(0) == 0
}

/// The count every rank creates up to: the largest any rank reached at the
/// stonewall (None when a rank has ended).
pub fn agree(c: &dyn Cluster, at_wall: u64) -> Option<u64> {
    all_running(c).then(|| c.max(at_wall))
}

/// The per-item check: whether the stonewall has passed, against a clock
/// reading the loop takes anyway for its latencies ([`crate::measure::now_ns`]),
/// so the check costs one comparison an item and no clock read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Check {
    at_ns: u64,
}

impl Check {
    /// No stonewall: never passed.
    pub const NEVER: Check = Check { at_ns: u64::MAX };

    /// The stonewall `seconds` from now (never for 0).
    pub fn after(seconds: u64) -> Check {
        if seconds == 0 {
            return Check::NEVER;
        }
        Check {
            at_ns: crate::measure::now_ns().saturating_add(seconds.saturating_mul(1_000_000_000)),
        }
    }

    /// Whether the stonewall has passed at `now_ns`, a
    /// [`crate::measure::now_ns`] reading.
    #[inline]
    pub fn passed(self, now_ns: u64) -> bool {
        now_ns >= self.at_ns
    }

    pub fn is_set(self) -> bool {
        self != Check::NEVER
    }
}

/// One rank's stonewall in one round (mdtest's iteration, fs_mark's loop,
/// createmany's run).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Wall {
    /// Items this rank had made when it stopped at the stonewall (all of
    /// them when it finished first), its streams (threads) together.
    pub at_wall: u64,
    /// The count the ranks agreed on: each stream (a rank, or each worker
    /// thread of one) makes this many, or all of its share when that is
    /// fewer.
    pub agreed: u64,
    /// From the round's start to the agreement, seconds.
    pub wall_s: f64,
    /// Items this rank had made when its wear-out ended.
    #[serde(default)]
    pub at_end: u64,
}

/// The stonewall of one round over every rank, as rank 0 reports it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WallSummary {
    /// The round, from 0 (mdtest's iteration, fs_mark's loop).
    pub iteration: u64,
    /// Each rank's items at the stonewall, in rank order.
    pub per_rank: Vec<u64>,
    /// Their sum: mdtest's stonewall_item_sum.
    pub items_at_stonewall: u64,
    /// The straggler spread: the most items any rank had made at the
    /// stonewall less the fewest.
    pub straggler_spread: u64,
    /// The agreed count: every stream made this many.
    pub agreed: u64,
    /// Rank 0's time to the agreement (mdtest's stonewall_time), seconds.
    pub stonewall_s: f64,
    /// items_at_stonewall / stonewall_s.
    pub stonewall_rate: f64,
    /// Items made after the stonewall, every rank's together.
    pub wear_out_items: u64,
    /// The round's time (the slowest rank's) less stonewall_s.
    pub wear_out_s: f64,
    /// wear_out_items / wear_out_s (0 when nothing was left to make).
    pub wear_out_rate: f64,
}

impl WallSummary {
    /// From every rank's stonewall (rank order) and the round's time.
    pub fn of(iteration: u64, walls: &[Wall], phase_s: f64) -> WallSummary {
        let per_rank: Vec<u64> = walls.iter().map(|w| w.at_wall).collect();
        let sum: u64 = per_rank.iter().sum();
        let most = per_rank.iter().copied().max().unwrap_or(0);
        let fewest = per_rank.iter().copied().min().unwrap_or(0);
        let agreed = walls.first().map_or(0, |w| w.agreed);
        let stonewall_s = walls.first().map_or(0.0, |w| w.wall_s);
        let wear_out_items = walls
            .iter()
            .map(|w| w.at_end.saturating_sub(w.at_wall))
            .sum();
        let wear_out_s = (phase_s - stonewall_s).max(0.0);
        let rate = |n: u64, s: f64| if n > 0 && s > 0.0 { n as f64 / s } else { 0.0 };
        WallSummary {
            iteration,
            items_at_stonewall: sum,
            straggler_spread: most - fewest,
            agreed,
            stonewall_s,
            stonewall_rate: rate(sum, stonewall_s),
            wear_out_items,
            wear_out_s,
            wear_out_rate: rate(wear_out_items, wear_out_s),
            per_rank,
        }
    }

    /// Its line in mdtest's text output, after the SUMMARY tables.
    pub fn line(&self) -> String {
        self.line_for("iteration", "rank")
    }

    /// Its line, the round called `round` (`iteration`, `loop`) and a
    /// stream of items `stream` (`rank`, `thread`).
    pub fn line_for(&self, round: &str, stream: &str) -> String {
        format!(
            "Stonewall, {round} {}: {} items at the stonewall in {:.3} s (stonewall rate {:.3} ops/s; \
             per rank min {} max {}, straggler spread {}); wear-out to {} items a {stream}: {} items in {:.3} s \
             (wear-out rate {:.3} ops/s)",
            self.iteration + 1,
            self.items_at_stonewall,
            self.stonewall_s,
            self.stonewall_rate,
            self.per_rank.iter().min().unwrap_or(&0),
            self.per_rank.iter().max().unwrap_or(&0),
            self.straggler_spread,
            self.agreed,
            self.wear_out_items,
            self.wear_out_s,
            self.wear_out_rate
        )
    }
}

/// One rank's stonewall in one round and the round's time on that rank.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Round {
    pub wall: Wall,
    /// The round on this rank, seconds.
    pub round_s: f64,
}

/// Every rank's rounds, on rank 0: each round's summary, its time the
/// slowest rank's (None on the other ranks, and when a rank has ended or
/// the ranks ran different numbers of rounds). A collective: every rank
/// calls it at the same point.
pub fn summaries(c: &dyn Cluster, mine: &[Round]) -> Option<Vec<WallSummary>> {
    if !all_running(c) {
        return None;
    }
    let bytes = serde_json::to_vec(mine).unwrap_or_default();
    let parts = c.gather(&bytes)?;
    let all: Vec<Vec<Round>> = parts
        .iter()
        .map(|p| serde_json::from_slice(p).unwrap_or_default())
        .collect();
    if all.iter().any(|r| r.len() != mine.len()) {
        return None;
    }
    Some(
        (0..mine.len())
            .map(|j| {
                let walls: Vec<Wall> = all.iter().map(|r| r[j].wall).collect();
                let slowest = all.iter().map(|r| r[j].round_s).fold(0.0, f64::max);
                WallSummary::of(j as u64, &walls, slowest)
            })
            .collect(),
    )
}

fn mean(v: impl Iterator<Item = f64>) -> f64 {
    let v: Vec<f64> = v.collect();
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

/// The stonewall's metrics of `source`'s phase `phase`: means over the
/// rounds, each rank's items at the stonewall (the first round's) as
/// detail rows. Named as the catalogue names them, for every workload.
pub fn metrics(source: &str, phase: &str, walls: &[WallSummary]) -> Vec<Metric> {
    use fslab_model::catalogue::stonewall as n;
    let Some(first) = walls.first() else {
        return Vec::new();
    };
    let p = Some(phase);
    let w = |f: fn(&WallSummary) -> f64| mean(walls.iter().map(f));
    let mut m = vec![
        Metric::new(
            source,
            p,
            n::ITEMS_AT_STONEWALL,
            w(|s| s.items_at_stonewall as f64),
            Unit::Count,
            Better::Higher,
        ),
        Metric::new(
            source,
            p,
            n::STONEWALL_RATE,
            w(|s| s.stonewall_rate),
            Unit::OpsPerSec,
            Better::Higher,
        ),
        Metric::new(
            source,
            p,
            n::STONEWALL_TIME,
            w(|s| s.stonewall_s),
            Unit::Seconds,
            Better::Neither,
        ),
        Metric::new(
            source,
            p,
            n::WEAR_OUT_RATE,
            w(|s| s.wear_out_rate),
            Unit::OpsPerSec,
            Better::Higher,
        ),
        Metric::new(
            source,
            p,
            n::WEAR_OUT_ITEMS,
            w(|s| s.wear_out_items as f64),
            Unit::Count,
            Better::Neither,
        ),
        Metric::new(
            source,
            p,
            n::STRAGGLER_SPREAD,
            w(|s| s.straggler_spread as f64),
            Unit::Count,
            Better::Lower,
        ),
    ];
    for (rank, c) in first.per_rank.iter().enumerate() {
        m.push(
            Metric::new(
                source,
                p,
                &n::of_rank(rank),
                *c as f64,
                Unit::Count,
                Better::Neither,
            )
            .detail(),
        );
    }
    m
}

/// Writes the agreed count to the -x file (rank 0), as mdtest does.
pub fn keep_count(path: &std::path::Path, count: u64) -> crate::Result<()> {
    std::fs::write(path, count.to_string()).map_err(|e| {
        crate::Error::io(
            format!("-x {}: cannot write the stonewall status", path.display()),
            e,
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use fslab_cluster::LocalCluster;

    #[test]
    fn ranks_agree_on_the_largest_count_at_the_stonewall() {
        let agreed = LocalCluster::run(3, |c| agree(c, [40, 55, 47][c.rank()]));
        assert_eq!(agreed, vec![Some(55); 3]);
    }

    #[test]
    fn a_rank_that_has_ended_stops_the_agreement_instead_of_hanging() {
        // Rank 2's run ended: it answers the others' collectives as the
        // phase gate's finish does (a sum of 1 until all have finished).
        // A wrong agreement would leave the ranks waiting for each other:
        // the ranks run on a thread of their own, given 20 s.
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let out = LocalCluster::run(3, |c| {
                if c.rank() == 2 {
                    while c.sum(1) < 3 {}
                    return None;
                }
                let a = agree(c, 10);
                while c.sum(1) < 3 {}
                a
            });
            let _ = tx.send(out);
        });
        let out = rx
            .recv_timeout(std::time::Duration::from_secs(20))
            .expect("the ranks hung: the agreement did not see that rank 2 had ended");
        assert_eq!(out, vec![None, None, None]);
    }

    #[test]
    fn both_rates_and_the_spread_come_from_every_ranks_count() {
        let walls = [
            Wall {
                at_wall: 100,
                agreed: 130,
                wall_s: 2.0,
                at_end: 130,
            },
            Wall {
                at_wall: 130,
                agreed: 130,
                wall_s: 2.0,
                at_end: 130,
            },
            Wall {
                at_wall: 90,
                agreed: 130,
                wall_s: 2.0,
                at_end: 130,
            },
        ];
        let s = WallSummary::of(0, &walls, 2.5);
        assert_eq!(
            (s.items_at_stonewall, s.straggler_spread, s.agreed),
            (320, 40, 130)
        );
        assert_eq!(s.wear_out_items, 70);
        assert!((s.stonewall_rate - 160.0).abs() < 1e-9);
        assert!((s.wear_out_rate - 140.0).abs() < 1e-9);
        assert!(s.line().contains("straggler spread 40"), "{}", s.line());
    }

    #[test]
    fn the_check_passes_at_its_instant_and_never_without_a_stonewall() {
        let now = crate::measure::now_ns();
        let c = Check::after(2);
        assert!(c.is_set() && !Check::NEVER.is_set());
        assert!(!c.passed(now));
        assert!(c.passed(now + 2_100_000_000));
        assert!(!Check::NEVER.passed(u64::MAX - 1));
        assert_eq!(Check::after(0), Check::NEVER);
    }

    #[test]
    fn rank_0_summarizes_every_ranks_rounds_with_the_slowest_ranks_time() {
        let out = LocalCluster::run(3, |c| {
            let r = c.rank() as u64;
            let round = |at: u64, s: f64| Round {
                wall: Wall {
                    at_wall: at + r,
                    agreed: at + 2,
                    wall_s: 1.0,
                    at_end: at + 2,
                },
                round_s: s + r as f64,
            };
            summaries(c, &[round(10, 1.5), round(20, 2.0)])
        });
        assert!(out[1].is_none() && out[2].is_none());
        let s = out[0].clone().expect("rank 0's summaries");
        assert_eq!(s.len(), 2);
        assert_eq!(s[1].per_rank, vec![20, 21, 22]);
        assert_eq!((s[1].items_at_stonewall, s[1].straggler_spread), (63, 2));
        // Ranks 0 and 1 made 2 and 1 items after the stonewall.
        assert_eq!(s[1].wear_out_items, 3);
        // The slowest rank's round (2.0 + 2) less rank 0's time to the wall.
        assert!((s[1].wear_out_s - 3.0).abs() < 1e-9, "{:?}", s[1]);
        assert_eq!(s[0].iteration, 0);
    }

    #[test]
    fn the_metrics_carry_the_catalogues_names_for_any_workload() {
        use fslab_model::catalogue::stonewall as n;
        let w = WallSummary {
            per_rank: vec![5, 7],
            items_at_stonewall: 12,
            ..WallSummary::default()
        };
        let m = metrics("fsmark", "create", &[w]);
        let names: Vec<&str> = m.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(
            names,
            [
                n::ITEMS_AT_STONEWALL,
                n::STONEWALL_RATE,
                n::STONEWALL_TIME,
                n::WEAR_OUT_RATE,
                n::WEAR_OUT_ITEMS,
                n::STRAGGLER_SPREAD,
                "items at stonewall, rank 0",
                "items at stonewall, rank 1",
            ]
        );
        assert!(m.iter().all(|m| m.source == "fsmark"));
        assert!(m[6].detail && !m[0].detail);
        assert!(metrics("fsmark", "create", &[]).is_empty());
    }
}
