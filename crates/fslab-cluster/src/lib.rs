//! One workload on many MPI ranks, the way HPC storage benchmarks (IOR,
//! mdtest) scale out: every rank runs the same workload in a directory of its
//! own, all ranks start each phase together, and rank 0 gathers what each
//! rank measured and keeps one merged run.
//!
//! - [`Cluster`]: the few collective operations fslab needs, with
//!   [`Solo`] (one process), [`LocalCluster`] (threads, for tests) and,
//!   with the `mpi` feature, `MpiCluster`.
//! - [`Gate`]: the phase barrier, which also lets a rank whose run ended
//!   early release the others instead of leaving them waiting.
//! - [`RankRecorder`] / [`RankRun`]: everything one rank recorded.
//! - [`merge`]: the ranks' runs as one run, and [`RankRates`] per phase.

pub mod clock;
mod gate;
mod hosts;
mod local;
mod merge;
#[cfg(feature = "mpi")]
mod mpi_cluster;
pub mod netns;
mod record;
mod report;
pub mod rescue;
pub mod slurm;

pub use clock::ClockOffset;
pub use gate::Gate;
pub use hosts::{Clocks, HostFacts, LatencyCounts, RankTimeline};
pub use local::LocalCluster;
pub use merge::{merge, merge_clocked, MergedRun, MpiParams, RankRates};
#[cfg(feature = "mpi")]
pub use mpi_cluster::MpiCluster;
pub use record::{RankHist, RankRecorder, RankRun, Span, UnreadableRun};

use std::path::{Path, PathBuf};

/// The collective operations fslab uses. Every rank must make the same
/// calls in the same order.
pub trait Cluster {
    /// This process's rank, from 0.
    fn rank(&self) -> usize;
    /// How many ranks there are.
    fn size(&self) -> usize;
    /// The sum of every rank's `v`, returned on every rank (a barrier too).
    fn sum(&self, v: u64) -> u64;
    /// The largest of every rank's `v`, returned on every rank (a barrier
    /// too): mdtest's stonewall agreement (MPI_Allreduce with MPI_MAX).
    fn max(&self, v: u64) -> u64;
    /// Every rank's `bytes` in rank order, on rank 0; None on the others.
    fn gather(&self, bytes: &[u8]) -> Option<Vec<Vec<u8>>>;
    /// Ends every rank's process with exit status `code`: for a rank that
    /// cannot go on while the others would wait for it (MPI_Abort).
    fn abort(&self, code: i32) -> !;
    /// Sends one number to rank `to` (point to point; `to` must call
    /// [`Cluster::recv_from`] this rank).
    fn send_to(&self, to: usize, v: i64);
    /// Receives the next number rank `from` sent this one, waiting for it.
    fn recv_from(&self, from: usize) -> i64;
}

/// One process, no MPI.
pub struct Solo;

impl Cluster for Solo {
    fn rank(&self) -> usize {
        0
    }
    fn size(&self) -> usize {
        1
    }
    fn sum(&self, v: u64) -> u64 {
        v
    }
    fn max(&self, v: u64) -> u64 {
        v
    }
    fn gather(&self, bytes: &[u8]) -> Option<Vec<Vec<u8>>> {
        Some(vec![bytes.to_vec()])
    }
    fn abort(&self, code: i32) -> ! {
        std::process::exit(code)
    }
    fn send_to(&self, to: usize, _v: i64) {
        panic!("a run of one process has no rank {to} to send to")
    }
    fn recv_from(&self, from: usize) -> i64 {
        panic!("a run of one process has no rank {from} to receive from")
    }
}

/// How many ranks the MPI launcher that started this process made, read
/// from its environment (Open MPI's mpirun; PMI, as MPICH's Hydra and Slurm
/// set it).
pub fn launched_ranks() -> Option<usize> {
    let by_launcher = ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE"]
        .iter()
        .find_map(|k| std::env::var(k).ok()?.trim().parse().ok());
    // Ranks srun started (with PMIx, as Open MPI's direct launch): a job
    // step's task count, which a batch script's own shell has not.
    by_launcher.or_else(|| {
        std::env::var_os("PMIX_RANK")?;
        std::env::var_os("SLURM_STEP_ID")?;
        std::env::var("SLURM_STEP_NUM_TASKS")
            .ok()?
            .trim()
            .parse()
            .ok()
    })
}

/// Joins the ranks this process was started with: MPI when it was started
/// by an MPI launcher, one process otherwise.
pub fn join() -> Result<Box<dyn Cluster>, JoinError> {
    join_ranks(launched_ranks())
}

/// Why this process could not join the MPI ranks it was started as.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JoinError {
    /// Started by an MPI launcher, but built without MPI.
    #[error(
        "started as one of {0} MPI ranks, but this fslab was built without MPI: \
         build it with `cargo build --release -p fslab --features mpi`"
    )]
    NoMpi(usize),
    /// MPI could not be initialised in this process.
    #[error("{0}")]
    Init(&'static str),
}

fn join_ranks(launched: Option<usize>) -> Result<Box<dyn Cluster>, JoinError> {
    match launched {
        None => Ok(Box::new(Solo)),
        #[cfg(feature = "mpi")]
        Some(_) => Ok(Box::new(MpiCluster::init()?)),
        #[cfg(not(feature = "mpi"))]
        Some(1) => Ok(Box::new(Solo)),
        #[cfg(not(feature = "mpi"))]
        Some(n) => Err(JoinError::NoMpi(n)),
    }
}

/// The directory rank `rank` works in under `dir`: `DIR/rankNNNN`.
pub fn rank_dir(dir: &Path, rank: usize) -> PathBuf {
    dir.join(format!("rank{rank:04}"))
}

/// A file path made rank-private: `DIR/rankNNNN/NAME` for `DIR/NAME`.
pub fn rank_path(path: &Path, rank: usize) -> PathBuf {
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let name = path.file_name().unwrap_or(path.as_os_str());
    rank_dir(parent, rank).join(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_paths() {
        assert_eq!(
            rank_dir(Path::new("/mnt/t"), 3),
            Path::new("/mnt/t/rank0003")
        );
        assert_eq!(
            rank_path(Path::new("/mnt/t/f%08d"), 12),
            Path::new("/mnt/t/rank0012/f%08d")
        );
        assert_eq!(
            rank_path(Path::new("test"), 0),
            Path::new("./rank0000/test")
        );
    }

    #[cfg(not(feature = "mpi"))]
    #[test]
    fn without_mpi_one_of_many_ranks_is_refused() {
        let e = join_ranks(Some(4)).err().unwrap();
        assert_eq!(e, JoinError::NoMpi(4));
        assert_eq!(
            e.to_string(),
            "started as one of 4 MPI ranks, but this fslab was built without MPI: \
             build it with `cargo build --release -p fslab --features mpi`"
        );
        assert_eq!(join_ranks(Some(1)).unwrap().size(), 1);
        assert_eq!(join_ranks(None).unwrap().size(), 1);
    }

    #[test]
    fn solo_is_one_rank() {
        let s = Solo;
        assert_eq!((s.rank(), s.size(), s.sum(5), s.max(7)), (0, 1, 5, 7));
        assert_eq!(s.gather(b"x"), Some(vec![b"x".to_vec()]));
    }
}
