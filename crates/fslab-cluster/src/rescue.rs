//! Keeping what the ranks measured when a host fails or disappears.
//!
//! MPI offers no way back from a lost process: the launcher ends the job,
//! signalling the surviving ranks first (Open MPI: SIGTERM, then SIGKILL
//! after `odls_base_sigkill_timeout` seconds). So a rank stopped by a
//! signal writes what it has measured into a spool beside the results
//! store, before it tries the collectives that would hang on a dead peer;
//! rank 0, if the gather does not end soon, merges what the spool holds.
//! The ranks that sent nothing are named with their hosts. After a clean
//! ending the spool is removed.

use std::path::{Path, PathBuf};

use crate::clock::ClockOffset;
use crate::record::RankRun;

/// What rank 0 keeps in the spool at the start, so that whoever merges it
/// (rank 0's rescue, or the launcher's `fslab rescue` after mpirun ends)
/// knows the run: the workload, every rank's host, the clocks at the start,
/// and the workload's harness (how to report the run).
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize, PartialEq)]
#[serde(default)]
pub struct SpoolMeta {
    pub workload: String,
    /// `hosts[r]` is rank r's host.
    pub hosts: Vec<String>,
    pub clock_start: Vec<ClockOffset>,
    pub harness: fslab_model::protocol::Harness,
}

/// Where the launcher (`fslab run`) says it merges what the ranks keep
/// after a signal: rank 0 then leaves the spool to it (`fslab rescue`)
/// instead of merging it itself within Open MPI's SIGKILL grace, when
/// later hosts' ranks may not have kept theirs yet.
pub const LAUNCHER_RESCUES_ENV: &str = "FSLAB_LAUNCHER_RESCUES";

/// Whether this process's launcher merges the spool itself.
pub fn launcher_rescues() -> bool {
    std::env::var_os(LAUNCHER_RESCUES_ENV).is_some_and(|v| v == "1")
}

#[derive(Debug, thiserror::Error)]
pub enum RescueError {
    #[error("cannot keep the run's description in {path}: {source}")]
    Meta {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} is not a spool of fslab's ranks: {why}")]
    NotASpool { path: PathBuf, why: String },
    #[error("cannot keep rank {rank}'s results in {path}: {source}")]
    Write {
        rank: usize,
        path: PathBuf,
        source: std::io::Error,
    },
}

/// A run's spool: `DB.ranks-TOKEN/rankNNNN.json`, TOKEN agreed by the ranks
/// at the start.
#[derive(Debug, Clone)]
pub struct Spool {
    pub dir: PathBuf,
}

/// What the spool gave back: every rank's run (the lost ones as failed),
/// and the hosts with ranks that sent nothing.
pub struct Rescued {
    pub runs: Vec<RankRun>,
    /// `(host, its ranks that sent nothing)`.
    pub lost: Vec<(String, Vec<usize>)>,
}

impl Rescued {
    /// `host H: ranks 4, 5 sent no results; ...` (the hosts that failed or
    /// disappeared); None when every rank reported.
    pub fn lost_hosts(&self) -> Option<String> {
        (!self.lost.is_empty()).then(|| {
            self.lost
                .iter()
                .map(|(h, ranks)| {
                    let r: Vec<String> = ranks.iter().map(ToString::to_string).collect();
                    format!(
                        "host {h} failed or disappeared (rank{} {} sent no results)",
                        if ranks.len() == 1 { "" } else { "s" },
                        r.join(", ")
                    )
                })
                .collect::<Vec<_>>()
                .join("; ")
        })
    }
}

impl Spool {
    pub fn new(db: &Path, token: u64) -> Spool {
        let mut name = db.file_name().unwrap_or_default().to_os_string();
        name.push(format!(".ranks-{token:016x}"));
        Spool {
            dir: db.with_file_name(name),
        }
    }

    /// The spools beside `db` (`DB.ranks-*`), oldest first.
    pub fn beside(db: &Path) -> Vec<Spool> {
        let mut prefix = db.file_name().unwrap_or_default().to_os_string();
        prefix.push(".ranks-");
        let prefix = prefix.to_string_lossy().into_owned();
        let dir = match db.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let mut found: Vec<(std::time::SystemTime, Spool)> = std::fs::read_dir(&dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
            .filter(|e| e.path().is_dir())
            .map(|e| {
                let t = e
                    .metadata()
                    .and_then(|m| m.modified())
                    .unwrap_or(std::time::UNIX_EPOCH);
                (t, Spool { dir: e.path() })
            })
            .collect();
        found.sort_by_key(|(t, _)| *t);
        found.into_iter().map(|(_, s)| s).collect()
    }

    fn meta_file(&self) -> PathBuf {
        self.dir.join("run.json")
    }

    /// Keeps the run's description (rank 0, at the start).
    pub fn keep_meta(&self, meta: &SpoolMeta) -> Result<(), RescueError> {
        let path = self.meta_file();
        let err = |source| RescueError::Meta {
            path: path.clone(),
            source,
        };
        std::fs::create_dir_all(&self.dir).map_err(err)?;
        let part = path.with_extension("part");
        let text = serde_json::to_vec(meta).expect("plain data serializes");
        std::fs::write(&part, text).map_err(err)?;
        std::fs::rename(&part, &path).map_err(err)
    }

    /// The run's description rank 0 kept.
    pub fn meta(&self) -> Result<SpoolMeta, RescueError> {
        let path = self.meta_file();
        let not = |why: String| RescueError::NotASpool {
            path: self.dir.clone(),
            why,
        };
        let bytes = std::fs::read(&path).map_err(|e| not(format!("{}: {e}", path.display())))?;
        serde_json::from_slice(&bytes).map_err(|e| not(format!("{}: {e}", path.display())))
    }

    fn file(&self, rank: usize) -> PathBuf {
        self.dir.join(format!("rank{rank:04}.json"))
    }

    /// Keeps one rank's run (whole or not at all: written aside, then
    /// renamed).
    pub fn keep(&self, run: &RankRun) -> Result<(), RescueError> {
        let path = self.file(run.rank);
        let err = |source| RescueError::Write {
            rank: run.rank,
            path: path.clone(),
            source,
        };
        std::fs::create_dir_all(&self.dir).map_err(err)?;
        let part = path.with_extension("part");
        std::fs::write(&part, run.to_bytes()).map_err(err)?;
        std::fs::rename(&part, &path).map_err(err)
    }

    /// Every rank's run from the spool; `hosts[r]` is rank r's host.
    pub fn collect(&self, hosts: &[String]) -> Rescued {
        let mut lost: Vec<(String, Vec<usize>)> = Vec::new();
        let runs = hosts
            .iter()
            .enumerate()
            .map(|(r, host)| {
                let read = std::fs::read(self.file(r)).ok();
                match read.map(|b| RankRun::from_bytes(&b)) {
                    Some(Ok(run)) => run,
                    _ => {
                        match lost.iter_mut().find(|(h, _)| h == host) {
                            Some((_, ranks)) => ranks.push(r),
                            None => lost.push((host.clone(), vec![r])),
                        }
                        RankRun::failed(
                            r,
                            host,
                            format!("lost: no results from rank {r} on host {host}"),
                        )
                    }
                }
            })
            .collect();
        Rescued { runs, lost }
    }

    pub fn remove(&self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fslab_model::RunStatus;

    #[test]
    fn the_ranks_that_kept_nothing_are_named_with_their_hosts() {
        let tmp = std::env::temp_dir().join(format!("fslab-spool-{}", std::process::id()));
        std::fs::create_dir_all(&tmp).unwrap();
        let spool = Spool::new(&tmp.join("r.sqlite"), 0xab);
        assert_eq!(spool.dir, tmp.join("r.sqlite.ranks-00000000000000ab"));
        let hosts: Vec<String> = ["a", "a", "b", "b", "c", "c"].map(String::from).to_vec();
        for r in [0, 1, 2, 3, 5] {
            let mut run = RankRun::new(r, &hosts[r]);
            run.status = RunStatus::Interrupted;
            spool.keep(&run).unwrap();
        }
        // Rank 3's file is torn: as lost as no file.
        std::fs::write(spool.file(3), b"{\"rank\":").unwrap();
        let got = spool.collect(&hosts);
        assert_eq!(
            got.lost,
            vec![("b".to_string(), vec![3]), ("c".to_string(), vec![4])]
        );
        assert_eq!(
            got.lost_hosts().unwrap(),
            "host b failed or disappeared (rank 3 sent no results); \
             host c failed or disappeared (rank 4 sent no results)"
        );
        assert_eq!(got.runs.len(), 6);
        assert_eq!(got.runs[4].status, RunStatus::Failed);
        assert_eq!(got.runs[5].status, RunStatus::Interrupted);
        spool.remove();
        assert!(!spool.dir.exists());
        let _ = std::fs::remove_dir_all(&tmp);
    }

    #[test]
    fn a_spool_keeps_its_runs_description_and_is_found_beside_its_store() {
        let tmp = std::env::temp_dir().join(format!("fslab-spool-meta-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&tmp);
        std::fs::create_dir_all(&tmp).unwrap();
        let db = tmp.join("r.sqlite");
        assert!(Spool::beside(&db).is_empty());
        let spool = Spool::new(&db, 7);
        assert!(spool.meta().is_err(), "no description yet");
        let meta = SpoolMeta {
            workload: "fsmark".into(),
            hosts: vec!["a".into(), "b".into()],
            clock_start: vec![ClockOffset::default()],
            harness: fslab_model::protocol::Harness {
                json: true,
                ..Default::default()
            },
        };
        spool.keep_meta(&meta).unwrap();
        assert_eq!(spool.meta().unwrap(), meta);
        // Another store's spool is not this one's.
        Spool::new(&tmp.join("other.sqlite"), 7)
            .keep_meta(&meta)
            .unwrap();
        let found = Spool::beside(&db);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].dir, spool.dir);
        let _ = std::fs::remove_dir_all(&tmp);
    }
}
