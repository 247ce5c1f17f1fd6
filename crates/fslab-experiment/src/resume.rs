//! `fslab run --resume ID`: an earlier experiment read back from the
//! store, as the runner carries it on: its file's text and scale as run,
//! and the repetitions that completed, each with its phases, numbers and
//! probe evidence (for the summary and the findings, which judge every
//! run, earlier ones too).

use fslab_model::{PhaseResult, RunStatus};
use fslab_store::{Store, StoreError};

use crate::evidence::Evidence;
use crate::outcome::RepOutcome;
use crate::runner::Resume;

/// An earlier experiment, as `--resume` carries it on.
#[derive(Debug, Clone)]
pub struct Earlier {
    pub file: String,
    pub text: String,
    pub scale: f64,
    pub repetitions: u32,
    /// As stored (`running` when it was killed, or runs now).
    pub status: RunStatus,
    /// Its id and the repetitions that completed.
    pub resume: Resume,
}

/// Experiment `id` read back from `store`.
pub fn earlier(store: &Store, id: i64) -> Result<Earlier, StoreError> {
    let e = store.experiment(id)?;
    let mut done = Vec::new();
    for r in e
        .cell_runs
        .iter()
        .filter(|r| r.status == Some(RunStatus::Complete))
    {
        let (phases, metrics, evidence) = match r.run_id {
            Some(run) => {
                let phases: Vec<PhaseResult> = store
                    .phases(run)?
                    .into_iter()
                    .map(PhaseResult::from)
                    .collect();
                let names: Vec<String> = phases.iter().map(|p| p.phase.clone()).collect();
                (
                    phases,
                    store.metrics(run)?,
                    Evidence::stored(store, run, &names)?,
                )
            }
            None => Default::default(),
        };
        done.push(RepOutcome {
            cell: r.cell,
            repetition: r.repetition,
            ok: true,
            error: None,
            run_id: r.run_id,
            phases,
            metrics,
            unmount_s: r.unmount_s,
            remount_s: r.remount_s,
            image_extents: r.image_extents,
            output: r.output.clone(),
            guest_accel: r.guest.as_ref().map(|g| g.accel.clone()),
            evidence,
        });
    }
    Ok(Earlier {
        file: e.file,
        text: e.text,
        scale: e.scale,
        repetitions: e.repetitions,
        status: e.status,
        resume: Resume {
            experiment_id: id,
            done,
        },
    })
}

/// Why experiment ID cannot be resumed (bad input, or the store failed).
#[derive(Debug, thiserror::Error)]
pub enum ResumeError {
    /// No store at the path.
    #[error("--resume {id}: no results store at {} (give --db)", .db.display())]
    NoStore { id: i64, db: std::path::PathBuf },
    /// The store has no such experiment.
    #[error("--resume {id}: no such experiment in {}", .db.display())]
    NoSuchExperiment { id: i64, db: std::path::PathBuf },
    /// It is marked running, and a `fslab run` is running now.
    #[error(
        "--resume {id}: experiment {id} is marked running, and `{}` (pid {pid}) is running now: \
         let it finish, or stop it first",
        .argv.join(" ")
    )]
    Running {
        id: i64,
        pid: u32,
        argv: Vec<String>,
    },
    /// `--scale` asks for another scale than it ran at.
    #[error(
        "--scale {asked}: experiment {id} ran at scale {ran}; a resumed experiment keeps its scale"
    )]
    Scale { id: i64, asked: f64, ran: f64 },
    /// The store could not be read.
    #[error("results store {0}")]
    Store(#[source] StoreError),
}

/// Experiment `id` of the store at `db` read back, checked against the
/// command line: it exists, it is not running now (journals in
/// `state_dir`), `scale` (1: not given) is the one it ran at.
pub fn checked(
    db: &std::path::Path,
    id: i64,
    scale: f64,
    state_dir: &std::path::Path,
) -> Result<Earlier, ResumeError> {
    if !db.exists() {
        return Err(ResumeError::NoStore {
            id,
            db: db.to_path_buf(),
        });
    }
    let store = Store::open_read(db).map_err(ResumeError::Store)?;
    let e = earlier(&store, id).map_err(|e| match e {
        StoreError::NoSuchExperiment(_) => ResumeError::NoSuchExperiment {
            id,
            db: db.to_path_buf(),
        },
        e => ResumeError::Store(e),
    })?;
    // Marked running: killed (then resumable), or running now.
    if e.status == RunStatus::Running {
        if let Some((pid, argv)) = fslab_lab::undo::live_runs(state_dir).into_iter().next() {
            return Err(ResumeError::Running { id, pid, argv });
        }
    }
    if scale != 1.0 && scale != e.scale {
        return Err(ResumeError::Scale {
            id,
            asked: scale,
            ran: e.scale,
        });
    }
    Ok(e)
}

#[cfg(test)]
mod tests {
    use fslab_model::{
        Better, CellInfo, CellRunInfo, ExperimentInfo, ExperimentRecorder, Metric, Recorder,
        RunInfo, TargetInfo, Unit,
    };

    use super::*;

    /// A store with experiment 1: cell 0 repetition 1 complete (run 1, a
    /// phase and a metric), repetition 2 failed.
    fn store(dir: &std::path::Path) -> Store {
        let mut s = Store::open(&dir.join("r.sqlite")).unwrap();
        let exp = s
            .begin_experiment(&ExperimentInfo {
                name: "e".into(),
                file: "e.toml".into(),
                text: "name = \"e\"".into(),
                scale: 0.5,
                repetitions: 2,
                command_line: Vec::new(),
                fslab_version: "0.1.0".into(),
                kernel: "6.1.0".into(),
                hostname: "here".into(),
                started_at: fslab_model::time::now(),
            })
            .unwrap();
        s.record_cell(
            exp,
            &CellInfo {
                label: "ext4".into(),
                ..Default::default()
            },
        )
        .unwrap();
        let run = s
            .begin_run(&RunInfo {
                workload: "dbench".into(),
                command_line: Vec::new(),
                fslab_version: "0.1.0".into(),
                kernel: "6.1.0".into(),
                hostname: "here".into(),
                started_at: fslab_model::time::now(),
                target: TargetInfo::default(),
                params: serde_json::json!({}),
            })
            .unwrap();
        s.record_phase(
            run,
            &PhaseResult {
                phase: "execute".into(),
                ops: 10,
                elapsed_s: 2.0,
                ops_per_s: 5.0,
                complete: true,
                ..Default::default()
            },
        )
        .unwrap();
        let m = Metric::new(
            "dbench",
            None,
            "Throughput",
            9.0,
            Unit::MbPerSec,
            Better::Higher,
        );
        s.record_metrics(run, &[m]).unwrap();
        s.finish_run(run, RunStatus::Complete, None).unwrap();
        for (repetition, run_id, status) in [
            (1, Some(run), RunStatus::Complete),
            (2, None, RunStatus::Failed),
        ] {
            s.record_cell_run(
                exp,
                &CellRunInfo {
                    cell: 0,
                    repetition,
                    run_id,
                    status: Some(status),
                    unmount_s: Some(0.25),
                    ..Default::default()
                },
            )
            .unwrap();
        }
        s
    }

    #[test]
    fn the_completed_repetitions_come_back_with_their_numbers() {
        let dir = tempfile::tempdir().unwrap();
        let s = store(dir.path());
        let e = earlier(&s, 1).unwrap();
        assert_eq!(
            (e.file.as_str(), e.scale, e.repetitions),
            ("e.toml", 0.5, 2)
        );
        assert_eq!(e.resume.experiment_id, 1);
        assert_eq!(e.resume.done.len(), 1, "the failed repetition runs again");
        let r = &e.resume.done[0];
        assert_eq!((r.cell, r.repetition, r.run_id), (0, 1, Some(1)));
        assert_eq!(r.phases[0].phase, "execute");
        assert_eq!(r.metrics[0].value, 9.0);
        assert_eq!(r.unmount_s, Some(0.25));
        assert!(matches!(
            earlier(&s, 7),
            Err(StoreError::NoSuchExperiment(7))
        ));
    }

    #[test]
    fn a_missing_store_or_experiment_is_refused_naming_both() {
        let d = tempfile::tempdir().unwrap();
        let db = d.path().join("results.sqlite");
        let e = checked(&db, 3, 1.0, d.path()).unwrap_err();
        assert!(matches!(e, ResumeError::NoStore { id: 3, .. }), "{e:?}");
        assert!(
            e.to_string()
                .starts_with("--resume 3: no results store at "),
            "{e}"
        );
        drop(Store::open(&db).unwrap());
        let e = checked(&db, 3, 1.0, d.path()).unwrap_err();
        assert!(
            matches!(e, ResumeError::NoSuchExperiment { id: 3, .. }),
            "{e:?}"
        );
        assert!(e.to_string().contains("no such experiment in"), "{e}");
    }
}
