//! [`Cluster`] over MPI (the `mpi` crate, on the system's MPI library).

use mpi::collective::SystemOperation;
use mpi::datatype::PartitionMut;
use mpi::environment::Universe;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use mpi::Threading;

use crate::Cluster;

/// The world communicator. MPI is finalised when this is dropped.
pub struct MpiCluster {
    world: SimpleCommunicator,
    // Dropped last: MPI_Finalize.
    _universe: Universe,
}

impl MpiCluster {
    /// MPI_Init_thread with MPI_THREAD_FUNNELED: the workloads' threads
    /// never call MPI, the main thread does.
    pub fn init() -> Result<Self, crate::JoinError> {
        let (universe, _level) = mpi::initialize_with_threading(Threading::Funneled)
            .ok_or(crate::JoinError::Init("MPI was already initialised"))?;
        Ok(MpiCluster {
            world: universe.world(),
            _universe: universe,
        })
    }
}

impl Cluster for MpiCluster {
    fn abort(&self, code: i32) -> ! {
        self.world.abort(code)
    }
    fn rank(&self) -> usize {
        self.world.rank() as usize
    }
    fn send_to(&self, to: usize, v: i64) {
        self.world.process_at_rank(to as i32).send(&v);
    }
    fn recv_from(&self, from: usize) -> i64 {
        self.world.process_at_rank(from as i32).receive::<i64>().0
    }
    fn size(&self) -> usize {
        self.world.size() as usize
    }
    fn sum(&self, v: u64) -> u64 {
        let mut out = 0u64;
        self.world
            .all_reduce_into(&v, &mut out, SystemOperation::sum());
        out
    }
    fn max(&self, v: u64) -> u64 {
        let mut out = 0u64;
        self.world
            .all_reduce_into(&v, &mut out, SystemOperation::max());
        out
    }
    fn gather(&self, bytes: &[u8]) -> Option<Vec<Vec<u8>>> {
        let root = self.world.process_at_rank(0);
        let n = bytes.len() as i32;
        if self.world.rank() != 0 {
            root.gather_into(&n);
            root.gather_varcount_into(bytes);
            return None;
        }
        let mut counts = vec![0i32; self.size()];
        root.gather_into_root(&n, &mut counts[..]);
        let displs: Vec<i32> = counts
            .iter()
            .scan(0i32, |at, &c| {
                let d = *at;
                *at += c;
                Some(d)
            })
            .collect();
        let mut all = vec![0u8; counts.iter().map(|&c| c as usize).sum()];
        {
            let mut part = PartitionMut::new(&mut all[..], &counts[..], &displs[..]);
            root.gather_varcount_into_root(bytes, &mut part);
        }
        Some(
            counts
                .iter()
                .zip(&displs)
                .map(|(&c, &d)| all[d as usize..(d + c) as usize].to_vec())
                .collect(),
        )
    }
}
