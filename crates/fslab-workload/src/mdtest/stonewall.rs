//! The stonewall with wear-out, mdtest's and IO500's way: after -W seconds
//! every task stops creating at its next item, the tasks agree on the most
//! items any task made (an allreduce of the maximum), and every task
//! creates up to that count, so that every later phase works on the same
//! number of items in every task. Both rates are kept: the stonewall rate
//! (the items all tasks had made at the stonewall over the time to it) and
//! the wear-out rate (the items made after it over the time they took).
//!
//! Every collective here first asks whether every rank is still running
//! (a sum, the phase gate's own operation): a rank whose run ended early
//! answers the gates with 1, so the others stop instead of waiting for it.

use fslab_cluster::Cluster;
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

/// One task's stonewall in one iteration.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Wall {
    /// Items this task had made when it stopped at the stonewall (all of
    /// them when it finished first).
    pub at_wall: u64,
    /// The count the tasks agreed on.
    pub agreed: u64,
    /// From the phase's start to the agreement, seconds.
    pub wall_s: f64,
}

/// The stonewall of one iteration over every task, as rank 0 reports it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WallSummary {
    pub iteration: u64,
    /// Each rank's items at the stonewall, in rank order.
    pub per_rank: Vec<u64>,
    /// Their sum: mdtest's stonewall_item_sum.
    pub items_at_stonewall: u64,
    /// The straggler spread: the most items any rank had made at the
    /// stonewall less the fewest.
    pub straggler_spread: u64,
    /// The agreed count: every rank made this many.
    pub agreed: u64,
    /// Rank 0's time to the agreement (mdtest's stonewall_time), seconds.
    pub stonewall_s: f64,
    /// items_at_stonewall / stonewall_s.
    pub stonewall_rate: f64,
    /// Items made after the stonewall: agreed x ranks - items_at_stonewall.
    pub wear_out_items: u64,
    /// The create phase's time (the slowest rank's, past its closing
    /// barrier) less stonewall_s.
    pub wear_out_s: f64,
    /// wear_out_items / wear_out_s (0 when nothing was left to make).
    pub wear_out_rate: f64,
}

impl WallSummary {
    /// From every rank's stonewall (rank order) and the phase's time.
    pub fn of(iteration: u64, walls: &[Wall], phase_s: f64) -> WallSummary {
        let per_rank: Vec<u64> = walls.iter().map(|w| w.at_wall).collect();
        let sum: u64 = per_rank.iter().sum();
        let most = per_rank.iter().copied().max().unwrap_or(0);
        let fewest = per_rank.iter().copied().min().unwrap_or(0);
        let agreed = walls.first().map_or(0, |w| w.agreed);
        let stonewall_s = walls.first().map_or(0.0, |w| w.wall_s);
        let wear_out_items = (agreed * walls.len() as u64).saturating_sub(sum);
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

    /// Its line in fslab's text output, after the SUMMARY tables.
    pub fn line(&self) -> String {
        format!(
            "Stonewall, iteration {}: {} items at the stonewall in {:.3} s (stonewall rate {:.3} ops/s; \
             per rank min {} max {}, straggler spread {}); wear-out to {} items a rank: {} items in {:.3} s \
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

/// Writes the agreed count to the -x file (rank 0), as mdtest does.
pub fn keep_count(path: &std::path::Path, count: u64) -> Result<(), String> {
    std::fs::write(path, count.to_string()).map_err(|e| {
        format!(
            "-x {}: cannot write the stonewall status: {e}",
            path.display()
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
            },
            Wall {
                at_wall: 130,
                agreed: 130,
                wall_s: 2.0,
            },
            Wall {
                at_wall: 90,
                agreed: 130,
                wall_s: 2.0,
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
}
