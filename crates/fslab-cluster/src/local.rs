//! Ranks as threads of one process: the collectives of [`Cluster`] without
//! MPI, so gates and merging are tested anywhere.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Barrier, Condvar, Mutex};

use crate::Cluster;

struct Shared {
    barrier: Barrier,
    sums: Mutex<Vec<u64>>,
    parts: Mutex<Vec<Vec<u8>>>,
    /// Point-to-point messages in flight, by (from, to).
    mail: Mutex<HashMap<(usize, usize), VecDeque<i64>>>,
    posted: Condvar,
}

/// One rank of a cluster of threads.
pub struct LocalCluster {
    rank: usize,
    size: usize,
    shared: Arc<Shared>,
}

impl LocalCluster {
    /// Runs `f` on `size` threads, one per rank; returns their results in
    /// rank order.
    pub fn run<T: Send>(size: usize, f: impl Fn(&LocalCluster) -> T + Sync) -> Vec<T> {
        let shared = Arc::new(Shared {
            barrier: Barrier::new(size),
            sums: Mutex::new(vec![0; size]),
            parts: Mutex::new(vec![Vec::new(); size]),
            mail: Mutex::new(HashMap::new()),
            posted: Condvar::new(),
        });
        std::thread::scope(|s| {
            let handles: Vec<_> = (0..size)
                .map(|rank| {
                    let c = LocalCluster {
                        rank,
                        size,
                        shared: Arc::clone(&shared),
                    };
                    let f = &f;
                    s.spawn(move || f(&c))
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("a rank panicked"))
                .collect()
        })
    }
}

impl Cluster for LocalCluster {
    fn rank(&self) -> usize {
        self.rank
    }
    fn size(&self) -> usize {
        self.size
    }
    fn sum(&self, v: u64) -> u64 {
        self.shared.sums.lock().unwrap()[self.rank] = v;
        self.shared.barrier.wait();
        let total = self.shared.sums.lock().unwrap().iter().sum();
        // Nobody writes the next round's value before all have read this one.
        self.shared.barrier.wait();
        total
    }
    fn max(&self, v: u64) -> u64 {
        self.shared.sums.lock().unwrap()[self.rank] = v;
        self.shared.barrier.wait();
        let most = self.shared.sums.lock().unwrap().iter().copied().max();
        self.shared.barrier.wait();
        most.unwrap_or(v)
    }
    fn gather(&self, bytes: &[u8]) -> Option<Vec<Vec<u8>>> {
        self.shared.parts.lock().unwrap()[self.rank] = bytes.to_vec();
        self.shared.barrier.wait();
        let out = (self.rank == 0).then(|| self.shared.parts.lock().unwrap().clone());
        self.shared.barrier.wait();
        out
    }
    fn abort(&self, code: i32) -> ! {
        panic!("rank {} aborted the cluster with status {code}", self.rank)
    }
    fn send_to(&self, to: usize, v: i64) {
        let mut mail = self.shared.mail.lock().unwrap();
        mail.entry((self.rank, to)).or_default().push_back(v);
        self.shared.posted.notify_all();
    }
    fn recv_from(&self, from: usize) -> i64 {
        let mut mail = self.shared.mail.lock().unwrap();
        loop {
            if let Some(v) = mail
                .get_mut(&(from, self.rank))
                .and_then(VecDeque::pop_front)
            {
                return v;
            }
            mail = self.shared.posted.wait(mail).unwrap();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_and_gathers_in_rank_order() {
        let out = LocalCluster::run(4, |c| {
            let s = c.sum(c.rank() as u64 + 1);
            let g = c.gather(&[c.rank() as u8; 2]);
            (s, g)
        });
        assert!(out.iter().all(|(s, _)| *s == 10));
        assert_eq!(
            out[0].1,
            Some(vec![vec![0, 0], vec![1, 1], vec![2, 2], vec![3, 3]])
        );
        assert!(out[1..].iter().all(|(_, g)| g.is_none()));
    }

    #[test]
    fn every_rank_gets_the_largest_value_of_any_rank() {
        // Twice in a row: a round's values must not leak into the next.
        let out = LocalCluster::run(4, |c| {
            let v = [3u64, 17, 5, 9][c.rank()];
            (c.max(v), c.max(100 - v), c.sum(1))
        });
        assert!(out.iter().all(|r| *r == (17, 97, 4)), "{out:?}");
    }
}
