//! This process's place among the MPI ranks a workload runs on (one rank
//! of one when no MPI launcher started it): its directories, and whether
//! the ranks have settled their results.

use std::cell::{Cell, RefCell};
use std::path::{Path, PathBuf};

use fslab_cluster::Cluster;
use fslab_workload::plugin::RankPlace;

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

    fn make(&self, d: &Path) -> fslab_workload::Result<()> {
        std::fs::create_dir_all(d).map_err(|e| {
            fslab_workload::Error::Setup(format!("cannot make {}: {e}", d.display()))
        })?;
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

impl RankPlace for Rank<'_> {
    fn rank(&self) -> usize {
        self.cluster.rank()
    }

    fn size(&self) -> usize {
        self.cluster.size()
    }

    fn dir(&self, dir: &Path) -> fslab_workload::Result<PathBuf> {
        if self.size() == 1 {
            return Ok(dir.to_path_buf());
        }
        let d = fslab_cluster::rank_dir(dir, self.cluster.rank());
        self.make(&d)?;
        Ok(d)
    }

    fn file(&self, path: &Path) -> fslab_workload::Result<PathBuf> {
        if self.size() == 1 {
            return Ok(path.to_path_buf());
        }
        let p = fslab_cluster::rank_path(path, self.cluster.rank());
        if let Some(d) = p.parent() {
            self.make(d)?;
        }
        Ok(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_single_process_keeps_its_paths_and_makes_nothing() {
        let solo = fslab_cluster::join().unwrap();
        let r = Rank::new(&*solo);
        let d = Path::new("/nonexistent/fslab-rank-test");
        assert_eq!(r.dir(d).unwrap(), d);
        assert_eq!(r.file(&d.join("f")).unwrap(), d.join("f"));
        assert!(r.made.borrow().is_empty());
        assert!(!r.settled());
        r.settle();
        assert!(r.settled());
    }
}
