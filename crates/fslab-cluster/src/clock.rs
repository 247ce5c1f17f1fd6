//! Each rank's clock against rank 0's, so that every rank's timeline can be
//! put on one clock (rank 0's) even when the hosts' clocks disagree.
//!
//! Rank 0 and each other rank play ping-pong with timestamps: rank 0 notes
//! `t0`, the rank answers with its own time `t1`, rank 0 notes `t2` when the
//! answer arrives. If the message took as long each way, the rank's clock
//! read `t1` when rank 0's read `(t0 + t2) / 2`: the offset is
//! `t1 - (t0 + t2) / 2`, uncertain by at most half the round trip. Of
//! several rounds the one with the shortest round trip is kept (Cristian's
//! minimum-RTT estimate).

use serde::{Deserialize, Serialize};

use crate::Cluster;

/// Rounds of ping-pong per rank at each measurement.
pub const ROUNDS: usize = 16;

/// One rank's clock against rank 0's.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct ClockOffset {
    pub rank: usize,
    /// The rank's clock minus rank 0's, in nanoseconds.
    pub offset_ns: i64,
    /// The round trip of the round the offset was taken from (the offset
    /// is exact to within half of it), in nanoseconds.
    pub rtt_ns: i64,
    /// When it was measured, on rank 0's clock (Unix time, nanoseconds).
    pub at_ns: i64,
}

/// One round: rank 0's send time, the rank's reply time, rank 0's receive
/// time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Round {
    pub t0: i64,
    pub t1: i64,
    pub t2: i64,
}

/// The minimum-RTT estimate of `rank`'s offset from its rounds; None when
/// there are none.
pub fn estimate(rank: usize, rounds: &[Round]) -> Option<ClockOffset> {
    let best = rounds.iter().min_by_key(|r| r.t2 - r.t0)?;
    let mid = best.t0 + (best.t2 - best.t0) / 2;
    Some(ClockOffset {
        rank,
        offset_ns: best.t1 - mid,
        rtt_ns: best.t2 - best.t0,
        at_ns: mid,
    })
}

/// This host's clock now: Unix time in nanoseconds.
pub fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as i64)
        .unwrap_or(0)
}

/// Measures every rank's offset against rank 0 with `clock`. A collective:
/// every rank calls it. On rank 0, one offset per rank (rank 0's own is 0);
/// None on the others.
pub fn measure(cluster: &dyn Cluster, clock: &dyn Fn() -> i64) -> Option<Vec<ClockOffset>> {
    let me = cluster.rank();
    if me != 0 {
        for _ in 0..ROUNDS {
            cluster.recv_from(0);
            cluster.send_to(0, clock());
        }
        return None;
    }
    let now = clock();
    let mut out = vec![ClockOffset {
        rank: 0,
        offset_ns: 0,
        rtt_ns: 0,
        at_ns: now,
    }];
    for r in 1..cluster.size() {
        let rounds: Vec<Round> = (0..ROUNDS)
            .map(|_| {
                let t0 = clock();
                cluster.send_to(r, t0);
                let t1 = cluster.recv_from(r);
                Round {
                    t0,
                    t1,
                    t2: clock(),
                }
            })
            .collect();
        out.extend(estimate(r, &rounds));
    }
    Some(out)
}

/// `t` (on the clock of a rank whose offset was `start` at the run's start
/// and `end` at its end) on rank 0's clock: the offset drifts linearly
/// between the two measurements.
pub fn to_rank0(t: i64, start: &ClockOffset, end: Option<&ClockOffset>) -> i64 {
    let Some(end) = end.filter(|e| e.at_ns > start.at_ns) else {
        return t - start.offset_ns;
    };
    // The offset at rank 0's time T is o0 + k (T - a0) between the two
    // measurements, so the rank's t = T + o0 + k (T - a0); solved for T.
    let k = (end.offset_ns - start.offset_ns) as f64 / (end.at_ns - start.at_ns) as f64;
    let rel = (t - start.offset_ns - start.at_ns) as f64 / (1.0 + k);
    let at = start.at_ns + rel.round() as i64;
    if at <= start.at_ns {
        t - start.offset_ns
    } else if at >= end.at_ns {
        t - end.offset_ns
    } else {
        at
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::LocalCluster;

    #[test]
    fn the_round_with_the_shortest_trip_gives_the_offset() {
        // The rank's clock is 5 000 ns ahead. The first round's answer
        // waited 3 000 ns on the way back (asymmetric: its estimate is off
        // by 1 500); the second is symmetric and shorter.
        let rounds = [
            Round {
                t0: 1_000,
                t1: 1_000 + 1_000 + 5_000,
                t2: 1_000 + 1_000 + 4_000,
            },
            Round {
                t0: 10_000,
                t1: 10_000 + 500 + 5_000,
                t2: 10_000 + 1_000,
            },
        ];
        let o = estimate(3, &rounds).unwrap();
        assert_eq!(
            (o.rank, o.offset_ns, o.rtt_ns, o.at_ns),
            (3, 5_000, 1_000, 10_500)
        );
        assert_eq!(estimate(1, &[]), None);
    }

    #[test]
    fn offsets_of_clocks_set_apart_are_found_within_half_a_round_trip() {
        // Ranks as threads whose clocks are set 0, +2 ms and -7 ms apart.
        let skew = [0i64, 2_000_000, -7_000_000];
        let got = LocalCluster::run(3, |c| {
            let s = skew[c.rank()];
            measure(c, &move || now_ns() + s)
        });
        let offsets = got[0].clone().expect("rank 0 has the offsets");
        assert!(got[1..].iter().all(Option::is_none));
        assert_eq!(offsets.len(), 3);
        for (o, s) in offsets.iter().zip(skew) {
            assert!(
                (o.offset_ns - s).abs() <= o.rtt_ns / 2 + 1,
                "rank {}: {} against {s} (rtt {})",
                o.rank,
                o.offset_ns,
                o.rtt_ns
            );
        }
    }

    #[test]
    fn a_time_moves_to_rank_0s_clock_with_the_drift_between_measurements() {
        let start = ClockOffset {
            rank: 1,
            offset_ns: 1_000,
            rtt_ns: 10,
            at_ns: 0,
        };
        let end = ClockOffset {
            offset_ns: 3_000,
            at_ns: 1_000_000,
            ..start
        };
        // Halfway through, the offset has drifted to 2 000.
        assert_eq!(to_rank0(500_000 + 2_000, &start, Some(&end)), 500_000);
        assert_eq!(to_rank0(1_000, &start, None), 0);
        // Past the end measurement the end offset holds.
        assert_eq!(to_rank0(2_000_000 + 3_000, &start, Some(&end)), 2_000_000);
    }
}
