//! The scheduler with a fake workload runner: resuming, until-resolved.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use fslab_model::{MemRecorder, PhaseResult, RunStatus};
use fslab_workload::ChildSpec;

use super::*;
use crate::backend::DeviceConsent;
use crate::spec::Experiment;
use fslab_lab::undo::Journal;

/// Answers every workload with a completed run and notes which
/// (cell, repetition) it ran, from its text file's `-cC-rR` tag; asks
/// the scheduler to stop after `stop_after` runs.
struct FakeExecutor {
    ran: Vec<(u32, u32)>,
    stop_after: Option<usize>,
}

impl Executor for FakeExecutor {
    fn run(
        &mut self,
        spec: &ChildSpec,
        _watch: Option<&Watch>,
        _limit: Option<Duration>,
        stop: &AtomicBool,
        _progress: &mut dyn Progress,
    ) -> WorkloadOutcome {
        let text_to = spec.harness.text_to.as_ref().expect("a cell's text file");
        let tag = text_to
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.split_once("-c").map(|(_, t)| t.to_string()))
            .unwrap_or_default();
        let (c, r) = tag.split_once("-r").unwrap_or(("?", "?"));
        let r: String = r.chars().take_while(char::is_ascii_digit).collect();
        self.ran.push((c.parse().unwrap(), r.parse().unwrap()));
        if self.stop_after == Some(self.ran.len()) {
            stop.store(true, Ordering::Relaxed);
        }
        let k = self.ran.len() as f64;
        WorkloadOutcome {
            run_id: Some(self.ran.len() as i64),
            status: Some(RunStatus::Complete),
            phases: vec![PhaseResult {
                phase: "create".into(),
                ops: 100,
                elapsed_s: k,
                ops_per_s: 100.0 / k,
                ..Default::default()
            }],
            ..Default::default()
        }
    }
}

fn config(resume: Option<Resume>) -> RunConfig {
    RunConfig {
        scale: 1.0,
        consent: DeviceConsent::default(),
        file: "t.toml".into(),
        text: String::new(),
        command_line: vec!["fslab".into(), "run".into()],
        resume,
    }
}

#[test]
fn an_interrupted_experiment_resumes_with_only_what_did_not_complete() {
    let d = tempfile::tempdir().unwrap();
    let text = format!(
        "name = \"t\"\nrepetitions = 2\norder = \"sequential\"\n[device]\nkind = \"directory\"\npath = \"{}\"\n[workload]\nkind = \"createmany\"\nargs = [\"-o\", \"{{dir}}/f\", \"10\"]\n",
        d.path().display()
    );
    let mut exp = crate::spec::parse("t.toml", &text, &Default::default()).unwrap();
    // Two cells of the same directory, as two variants would give.
    let mut second = exp.cells[0].clone();
    second.index = 1;
    second.label = "again".into();
    exp.cells.push(second);
    let mut journal = Journal::create(&d.path().join("state"), "run", vec![]).unwrap();
    let mut rec = MemRecorder::default();

    // The first run is stopped after its second repetition.
    let stop = AtomicBool::new(false);
    let mut exec = FakeExecutor {
        ran: Vec::new(),
        stop_after: Some(2),
    };
    let cfg = config(None);
    let first = run(
        &exp,
        &cfg,
        &mut exec,
        &mut rec,
        &mut NoProgress,
        &stop,
        &mut journal,
    )
    .unwrap();
    assert!(first.interrupted);
    assert_eq!(exec.ran, [(0, 1), (0, 2)]);
    assert_eq!(rec.experiment_status, Some(RunStatus::Interrupted));

    // The resumed run does the other cell only, in the same experiment,
    // and its outcome (the summary) holds all four.
    let stop = AtomicBool::new(false);
    let mut exec = FakeExecutor {
        ran: Vec::new(),
        stop_after: None,
    };
    let cfg = config(Some(Resume {
        experiment_id: first.experiment_id,
        done: first.runs.clone(),
    }));
    let second = run(
        &exp,
        &cfg,
        &mut exec,
        &mut rec,
        &mut NoProgress,
        &stop,
        &mut journal,
    )
    .unwrap();
    assert_eq!(exec.ran, [(1, 1), (1, 2)]);
    assert_eq!(second.experiment_id, first.experiment_id);
    assert_eq!(rec.experiments.len(), 1, "no new experiment");
    assert_eq!(second.runs.len(), 4);
    assert!(second.runs.iter().all(|r| r.ok) && !second.interrupted);
    assert_eq!(rec.experiment_status, Some(RunStatus::Complete));
    let cells: Vec<u32> = crate::summary::family(&second)
        .iter()
        .map(|s| s.cell)
        .collect();
    assert!(cells.contains(&0) && cells.contains(&1));
    // Each directory was made fresh and removed again.
    assert_eq!(
        std::fs::read_dir(d.path())
            .unwrap()
            .flatten()
            .filter(|e| e.file_name() != crate::safety::DIRECTORY_MARKER)
            .count(),
        1,
        "only the state directory (and fslab's marker) is left"
    );
    assert!(journal.resources().is_empty());
}

/// Answers each (cell, repetition) with a create rate from `rate`.
struct RateExecutor {
    ran: Vec<(u32, u32)>,
    rate: fn(u32, u32) -> f64,
}

impl Executor for RateExecutor {
    fn run(
        &mut self,
        spec: &ChildSpec,
        watch: Option<&Watch>,
        limit: Option<Duration>,
        stop: &AtomicBool,
        progress: &mut dyn Progress,
    ) -> WorkloadOutcome {
        let mut fake = FakeExecutor {
            ran: Vec::new(),
            stop_after: None,
        };
        let mut o = fake.run(spec, watch, limit, stop, progress);
        let (c, r) = fake.ran[0];
        self.ran.push((c, r));
        let rate = (self.rate)(c, r);
        o.run_id = Some(self.ran.len() as i64);
        o.phases[0].ops_per_s = rate;
        o.phases[0].elapsed_s = 100.0 / rate;
        o
    }
}

fn two_cells(dir: &Path, until: u32) -> Experiment {
    let text = format!(
        "name = \"t\"\nrepetitions = 3\nuntil_resolved = {until}\n[device]\nkind = \"directory\"\npath = \"{}\"\n[workload]\nkind = \"createmany\"\nargs = [\"-o\", \"{{dir}}/f\", \"10\"]\n",
        dir.display()
    );
    let mut exp = crate::spec::parse("t.toml", &text, &Default::default()).unwrap();
    let mut second = exp.cells[0].clone();
    second.index = 1;
    second.label = "b".into();
    exp.cells.push(second);
    exp
}

fn run_until(
    exp: &Experiment,
    dir: &Path,
    rate: fn(u32, u32) -> f64,
) -> (Vec<(u32, u32)>, ExperimentOutcome) {
    let mut journal = Journal::create(&dir.join("state"), "run", vec![]).unwrap();
    let mut exec = RateExecutor {
        ran: Vec::new(),
        rate,
    };
    let o = run(
        exp,
        &config(None),
        &mut exec,
        &mut MemRecorder::default(),
        &mut NoProgress,
        &AtomicBool::new(false),
        &mut journal,
    )
    .unwrap();
    (exec.ran, o)
}

#[test]
fn a_warm_up_runs_every_cell_first_is_recorded_and_is_compared_never() {
    let d = tempfile::tempdir().unwrap();
    let mut exp = two_cells(d.path(), 3);
    exp.warm_up = true;
    let mut journal = Journal::create(&d.path().join("state"), "run", vec![]).unwrap();
    // The warm-up round is ten times slower than every later run.
    let mut exec = RateExecutor {
        ran: Vec::new(),
        rate: |_, r| if r == 0 { 10.0 } else { 100.0 },
    };
    let mut rec = MemRecorder::default();
    let o = run(
        &exp,
        &config(None),
        &mut exec,
        &mut rec,
        &mut NoProgress,
        &AtomicBool::new(false),
        &mut journal,
    )
    .unwrap();
    assert_eq!(exec.ran[..2], [(0, 0), (1, 0)], "{:?}", exec.ran);
    assert_eq!(exec.ran.len(), 8);
    let recorded: Vec<_> = rec
        .cell_runs
        .iter()
        .map(|r| (r.cell, r.repetition))
        .collect();
    assert!(
        recorded.contains(&(0, 0)) && recorded.contains(&(1, 0)),
        "{recorded:?}"
    );
    assert_eq!(o.runs.len(), 6);
    assert!(o.runs.iter().all(|r| r.repetition > 0), "{:?}", o.runs);
}

#[test]
fn until_resolved_adds_interleaved_repetitions_while_a_comparison_is_open() {
    let d = tempfile::tempdir().unwrap();
    // A clear 30% difference: resolved at 3, nothing added.
    let exp = two_cells(d.path(), 10);
    let (ran, o) = run_until(&exp, d.path(), |c, r| {
        100.0 * if c == 1 { 1.3 } else { 1.0 } + f64::from(r % 2)
    });
    assert_eq!(ran.len(), 6, "{ran:?}");
    assert_eq!(
        o.resolution.as_deref(),
        Some("until resolved: every headline comparison is resolved after 3 repetitions")
    );

    // A 20% difference under noise that settles: more repetitions,
    // the baseline and the open cell in turn, until it is resolved.
    let noisy = |c: u32, r: u32| {
        let noise = [10.0, -10.0, 6.0, -6.0, 2.0, -2.0];
        let base = if c == 1 { 120.0 } else { 100.0 };
        base + noise
            .get(r as usize - 1)
            .copied()
            .unwrap_or(if r.is_multiple_of(2) { 0.5 } else { -0.5 })
    };
    let (ran, o) = run_until(&exp, d.path(), noisy);
    let extra = &ran[6..];
    assert!(!extra.is_empty(), "{ran:?}");
    for (i, pair) in extra.chunks(2).enumerate() {
        let rep = 4 + i as u32;
        assert_eq!(pair, [(0, rep), (1, rep)], "interleaved: {ran:?}");
    }
    let said = o.resolution.unwrap();
    let reps = 3 + extra.len() / 2;
    assert_eq!(
        said,
        format!("until resolved: every headline comparison is resolved after {reps} repetitions")
    );
    assert_eq!(o.runs.len(), ran.len());

    // The same at a maximum of 4: it stops there and says what is open.
    let exp = two_cells(d.path(), 4);
    let (ran, o) = run_until(&exp, d.path(), noisy);
    assert_eq!(ran.len(), 8, "{ran:?}");
    let said = o.resolution.unwrap();
    assert!(
        said.starts_with("until resolved: after 4 repetitions 1 headline comparison(s) unresolved (b: create rate (ops/s))")
            && said.ends_with("stopped at the maximum, 4"),
        "{said}"
    );
}

/// Runs every workload of the experiment, then panics (a bug in the
/// workload's runner, say).
struct PanickingExecutor;

impl Executor for PanickingExecutor {
    fn run(
        &mut self,
        _spec: &ChildSpec,
        _watch: Option<&Watch>,
        _limit: Option<Duration>,
        _stop: &AtomicBool,
        _progress: &mut dyn Progress,
    ) -> WorkloadOutcome {
        panic!("the workload's runner failed");
    }
}

fn one_directory_cell(dir: &Path) -> Experiment {
    let text = format!(
        "name = \"t\"\n[device]\nkind = \"directory\"\npath = \"{}\"\n[workload]\nkind = \"createmany\"\nargs = [\"-o\", \"{{dir}}/f\", \"10\"]\n",
        dir.display()
    );
    crate::spec::parse("t.toml", &text, &Default::default()).unwrap()
}

/// What is left in a directory device after a run, but the state
/// directory and fslab's marker.
fn left_in(dir: &Path) -> Vec<std::ffi::OsString> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .filter(|n| n != crate::safety::DIRECTORY_MARKER && n != "state")
        .collect()
}

#[test]
fn a_cell_whose_workload_step_panics_is_still_torn_down() {
    let d = tempfile::tempdir().unwrap();
    let exp = one_directory_cell(d.path());
    let mut journal = Journal::create(&d.path().join("state"), "run", vec![]).unwrap();
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        run(
            &exp,
            &config(None),
            &mut PanickingExecutor,
            &mut MemRecorder::default(),
            &mut NoProgress,
            &AtomicBool::new(false),
            &mut journal,
        )
    }));
    assert!(r.is_err(), "the panic goes on up");
    // The cell's guard undid the fresh directory and the log file, and
    // struck them from the journal, on the way out.
    assert_eq!(left_in(d.path()), Vec::<std::ffi::OsString>::new());
    assert!(journal.resources().is_empty(), "{:?}", journal.resources());
}

#[test]
fn a_store_that_refuses_a_record_stops_the_run_with_its_error_as_the_source() {
    let d = tempfile::tempdir().unwrap();
    let exp = one_directory_cell(d.path());
    let mut journal = Journal::create(&d.path().join("state"), "run", vec![]).unwrap();
    let mut exec = FakeExecutor {
        ran: Vec::new(),
        stop_after: None,
    };
    // Resuming an experiment the store does not have.
    let cfg = config(Some(Resume {
        experiment_id: 42,
        done: Vec::new(),
    }));
    let e = run(
        &exp,
        &cfg,
        &mut exec,
        &mut MemRecorder::default(),
        &mut NoProgress,
        &AtomicBool::new(false),
        &mut journal,
    )
    .unwrap_err();
    assert_eq!(e.to_string(), "results store: no experiment 42");
    assert!(matches!(e, RunError::Store(_)), "{e:?}");
    let source = std::error::Error::source(&e).expect("the store's error");
    assert_eq!(source.to_string(), "no experiment 42");
    assert!(exec.ran.is_empty(), "nothing ran");
}
