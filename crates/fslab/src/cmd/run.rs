//! `fslab run EXPERIMENT`.

use std::path::Path;
use std::sync::atomic::Ordering;

use fslab_experiment::launch::{executor, outcome, prepare, scheduled, start, Prepared, Ready};
use fslab_experiment::runner;
use fslab_present::run::display::Display;

use crate::Failure;
use fslab_experiment::run_args::{ending, Ending, Planned, RunArgs};

pub fn run(args: RunArgs, db: &Path) -> Result<(), Failure> {
    if args.list {
        return super::say(fslab_experiment::builtin::list());
    }
    let remark = |line: &str| remark!("{line}");
    let ready = match prepare(&args, db, cfg!(feature = "mpi"), &remark)? {
        Prepared::NothingLeft(nothing) => return super::say(nothing + "\n"),
        Prepared::Ready(ready) => ready,
    };
    let Ready {
        planned:
            Planned {
                file,
                text,
                scale,
                exp,
                ..
            },
        resume,
        allowed,
        cost,
        root,
    } = *ready;
    if args.dry_run {
        super::say(runner::dry_run(&exp, scale, &allowed, root))?;
        super::say(cost.describe())?;
        super::power::say(&exp, (db, &file, &text, scale), true);
        return Ok(());
    }
    super::power::say(&exp, (db, &file, &text, scale), false);
    let mut exec = executor(&exp, db, &file)?;
    let mut store = super::open_store(db)?;
    let (stop, journal, cfg) = start(&args, (file, text, scale), resume)?;
    let mut display = Display::new(super::quiet());
    let shown = (&mut display, &*stop);
    let result = scheduled((&exp, &cfg), &mut exec, &mut store, shown, journal, "run");
    let outcome = outcome(result, &stop)?;
    super::say(fslab_present::run::closing::text(
        &exp,
        &outcome,
        args.scale,
        Some((&store, fslab_explain::EXPLAINERS)),
    ))?;
    if args.calibrate.is_some() {
        let kept = fslab_experiment::aa::record(&mut store, &exp, &outcome)
            .map_err(|e| Failure::Failed(e.to_string()))?;
        super::say(kept)?;
    }
    for p in &outcome.teardown_problems {
        eprintln!("fslab: run: teardown: {p}");
    }
    match ending(&outcome, stop.load(Ordering::Relaxed)) {
        Ending::Complete => Ok(()),
        Ending::Interrupted(line) => {
            eprintln!("fslab: {line}");
            Err(Failure::Interrupted)
        }
        Ending::Failed(line) => Err(Failure::Failed(line)),
    }
}
