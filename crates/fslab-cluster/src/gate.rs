//! The phase barrier.
//!
//! Every rank calls [`Gate::before_phase`] before each phase and
//! [`Gate::finish`] once its run is over; each call is one collective sum.
//! A rank that is still running adds 0, a finished one adds 1. So when one
//! rank's run ends early (an error, a full filesystem) the others learn it at
//! their next phase and stop too, and the finished rank keeps answering
//! their gates until every rank has finished: nobody waits forever.

use crate::Cluster;

pub struct Gate<'c> {
    cluster: &'c dyn Cluster,
}

impl<'c> Gate<'c> {
    pub fn new(cluster: &'c dyn Cluster) -> Self {
        Gate { cluster }
    }

    /// Waits for every rank to reach this point. True when all are still
    /// running; false when some rank has finished, and this one should stop.
    pub fn before_phase(&self) -> bool {
        self.cluster.sum(0) == 0
    }

    /// Called once, after the run: answers the other ranks' gates until all
    /// ranks have finished.
    pub fn finish(&self) {
        let n = self.cluster.size() as u64;
        while self.cluster.sum(1) < n {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::LocalCluster;

    #[test]
    fn all_ranks_pass_every_gate_together() {
        let passed = LocalCluster::run(3, |c| {
            let g = Gate::new(c);
            let r = (g.before_phase(), g.before_phase());
            g.finish();
            r
        });
        assert_eq!(passed, vec![(true, true); 3]);
    }

    #[test]
    fn a_rank_that_ends_early_stops_the_others_at_their_next_phase() {
        // Rank 1 fails in its first phase; ranks 0 and 2 go on to three more.
        let seen = LocalCluster::run(3, |c| {
            let g = Gate::new(c);
            let mut gates = vec![g.before_phase()];
            if c.rank() != 1 {
                for _ in 0..3 {
                    gates.push(g.before_phase());
                }
            }
            g.finish();
            gates
        });
        assert_eq!(seen[1], vec![true]);
        assert_eq!(seen[0], vec![true, false, false, false]);
        assert_eq!(seen[2], seen[0]);
    }
}
