//! This process's place among the MPI ranks a workload command runs on
//! (one rank of one when no MPI launcher started it): its directories, and
//! whether the ranks have settled their results.

use std::cell::{Cell, RefCell};
use std::path::{Path, PathBuf};

use fslab_cluster::Cluster;

use crate::Failure;

/// The cluster this process is a rank of, with what the rank made.
pub struct Rank<'a> {
    cluster: &'a dyn Cluster,
    /// Rank directories made here, removed at the end if left empty.
    made: RefCell<Vec<PathBuf>>,
    /// The ranks have gathered their results: from here a rank may end on
    /// its own without leaving the others waiting.
    settled: Cell<bool>,
}

impl<'a> Rank<'a> {
    pub fn new(cluster: &'a dyn Cluster) -> Rank<'a> {
        Rank {
            cluster,
            made: RefCell::new(Vec::new()),
            settled: Cell::new(false),
        }
    }

    pub fn cluster(&self) -> &'a dyn Cluster {
        self.cluster
    }

    pub fn size(&self) -> usize {
        self.cluster.size()
    }

    /// Under MPI, the directory of this rank under `dir` (`DIR/rankNNNN`,
    /// made here); `dir` itself in a one-process run.
    pub fn dir(&self, name: &str, dir: &Path) -> Result<PathBuf, Failure> {
        if self.size() == 1 {
            return Ok(dir.to_path_buf());
        }
        let d = fslab_cluster::rank_dir(dir, self.cluster.rank());
        self.make(name, &d)?;
        Ok(d)
    }

    /// Under MPI, `path` moved into this rank's directory
    /// (`DIR/rankNNNN/NAME`, the directory made here); `path` itself in a
    /// one-process run.
    pub fn file(&self, name: &str, path: &Path) -> Result<PathBuf, Failure> {
        if self.size() == 1 {
            return Ok(path.to_path_buf());
        }
        let p = fslab_cluster::rank_path(path, self.cluster.rank());
        if let Some(d) = p.parent() {
            self.make(name, d)?;
        }
        Ok(p)
    }

    fn make(&self, name: &str, d: &Path) -> Result<(), Failure> {
        std::fs::create_dir_all(d)
            .map_err(|e| Failure::Failed(format!("{name}: cannot make {}: {e}", d.display())))?;
        self.made.borrow_mut().push(d.to_path_buf());
        Ok(())
    }

    /// The ranks have gathered their results: notes it, and removes the
    /// rank directories made here that the workload left empty (-k and
    /// --no-cleanup leave files, and so the directory).
    pub fn settle(&self) {
        self.settled.set(true);
        for d in self.made.borrow().iter() {
            let _ = std::fs::remove_dir(d);
        }
    }

    pub fn settled(&self) -> bool {
        self.settled.get()
    }
}
