//! Where a mixed workload's time went: each operation's share of the time
//! its calls took in a phase (the sum of its latencies over the sum of all
//! operations'), so that beside a verdict on the total a reader sees that
//! an operation which is 3% of the time cannot move the total by more
//! than 3%.

use serde::Serialize;

use crate::evidence::OpTime;

/// One operation's share of a phase's call time.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OpShare {
    pub op: String,
    pub count: u64,
    /// Its calls' time, seconds.
    pub total_s: f64,
    /// Of all the phase's operations' time, %.
    pub share_pct: f64,
}

/// The shares of phase `phase`'s operations, largest first; empty when
/// the phase has fewer than two operations (nothing is mixed).
pub fn op_shares(ops: &[OpTime], phase: &str) -> Vec<OpShare> {
    let mut mine: Vec<OpShare> = Vec::new();
    for o in ops.iter().filter(|o| o.phase == phase) {
        match mine.iter_mut().find(|m| m.op == o.op) {
            Some(m) => {
                m.count += o.count;
                m.total_s += o.total_s;
            }
            None => mine.push(OpShare {
                op: o.op.clone(),
                count: o.count,
                total_s: o.total_s,
                share_pct: 0.0,
            }),
        }
    }
    let total: f64 = mine.iter().map(|m| m.total_s).sum();
    if mine.len() < 2 || total <= 0.0 {
        return Vec::new();
    }
    for m in &mut mine {
        m.share_pct = m.total_s / total * 100.0;
    }
    mine.sort_by(|a, b| b.share_pct.total_cmp(&a.share_pct));
    mine
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(phase: &str, op: &str, count: u64, total_s: f64) -> OpTime {
        OpTime {
            phase: phase.into(),
            op: op.into(),
            count,
            total_s,
        }
    }

    #[test]
    fn each_operations_share_of_the_phases_call_time() {
        let ops = [
            op("run", "NTCreateX", 100, 3.0),
            op("run", "ReadX", 400, 6.0),
            op("run", "Flush", 10, 1.0),
            // A second run of the same cell adds up.
            op("run", "Flush", 10, 0.0),
            op("other", "x", 1, 100.0),
        ];
        let s = op_shares(&ops, "run");
        let got: Vec<(&str, u64, f64)> = s
            .iter()
            .map(|x| (x.op.as_str(), x.count, x.share_pct))
            .collect();
        assert_eq!(
            got,
            [
                ("ReadX", 400, 60.0),
                ("NTCreateX", 100, 30.0),
                ("Flush", 20, 10.0)
            ]
        );
        // One operation: nothing mixed, nothing to say.
        assert!(op_shares(&ops, "other").is_empty());
    }
}
