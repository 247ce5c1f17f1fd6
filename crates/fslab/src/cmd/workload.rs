//! A workload command's run in one process: the options `fslab run` passes
//! (die with the parent, join a cgroup, drop caches), signals, the store,
//! the probes and progress (see [`super::harness`]), the JSON report and the
//! exit status; under MPI it hands over to [`super::ranks`].

use std::io::Write;
use std::path::Path;

use fslab_record::protocol::ChildMessage;
use fslab_record::RunStatus;
use fslab_workload::{CommonArgs, Hooks, Report};

use super::harness::{
    cache_dropper, ending, finished, progress_lines, silent_phases, start_probes,
    terminal_progress, Body, PhaseMessages,
};
use super::rank::Rank;
use crate::Failure;

/// Checks made before the workload's own options: the hidden `fslab run`
/// options that must act first, and the probe list.
pub fn prepare(name: &str, common: &CommonArgs) -> Result<Vec<fslab_probe::Kind>, Failure> {
    if common.die_with_parent {
        let parent = rustix::process::getppid();
        let _ =
            rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL));
        // The parent may have died before the request took effect.
        if rustix::process::getppid() != parent || parent.is_none() {
            return Err(Failure::Failed(format!(
                "{name}: the parent fslab run is gone"
            )));
        }
    }
    fslab_probe::parse_list(&common.probes).map_err(|e| Failure::Usage(format!("{name}: {e}")))
}

/// Runs `body` as workload `name` working in `dir`, with everything around
/// it; under MPI as one of the ranks (see [`super::ranks`]).
pub fn run<R: Report>(
    name: &str,
    common: &CommonArgs,
    kinds: &[fslab_probe::Kind],
    db: &Path,
    dir: &Path,
    rank: &Rank,
    body: impl Body<R>,
) -> Result<(), Failure> {
    if let Some(cg) = &common.cgroup {
        fslab_experiment::machine::MemCgroup::add_process(cg, std::process::id())
            .map_err(|e| Failure::Failed(format!("{name}: --cgroup: {e}")))?;
    }
    if common.drop_caches || common.drop_caches_once {
        fslab_experiment::machine::drop_caches()
            .map_err(|e| Failure::Failed(format!("{name}: --drop-caches: {e}")))?;
    }
    if rank.size() > 1 {
        return super::ranks::run(name, common, kinds, db, dir, rank, body);
    }
    let mut store = super::open_store(db)?;
    let stop = super::stop_on_signals()?;
    let stdout = std::io::stdout();
    let mut text_out: Box<dyn Write> = match (&common.text_to, common.json) {
        (Some(p), _) => Box::new(
            std::fs::File::create(p)
                .map_err(|e| Failure::Failed(format!("{name}: --text-to {}: {e}", p.display())))?,
        ),
        (None, true) => Box::new(std::io::sink()),
        (None, false) => Box::new(stdout.lock()),
    };
    let mut probes = start_probes(name, common, kinds, dir);
    let inner = probes.as_mut().map(|p| p as &mut dyn fslab_record::Monitor);
    let counting = silent_phases(name, common);
    let mut messages = PhaseMessages {
        inner,
        messages: common.progress,
        acks: common.phase_acks,
        erase: counting.is_some(),
    };
    let mut hooks = Hooks::default();
    if common.drop_caches {
        let mut drop_caches = cache_dropper(name.to_string());
        hooks.before_phase = Some(Box::new(move |_| drop_caches()));
    }
    if common.progress {
        hooks.run_started = Some(Box::new(|run_id| {
            eprintln!("{}", ChildMessage::RunStarted { run_id }.line());
        }));
        hooks.each_second = Some(progress_lines());
    }
    if let Some(kind) = counting {
        hooks.each_second = Some(terminal_progress(kind));
    }
    hooks.monitor = if messages.messages || messages.erase {
        Some(&mut messages)
    } else {
        messages.inner
    };
    let report = body(&stop, &mut *text_out, &mut store, &mut hooks)
        .map_err(|e| super::workload_failure(name, e))?;
    drop(text_out);
    if common.json {
        print!(
            "{}",
            fslab_record::json::Versioned::new(&report as &dyn Report).to_pretty()
        );
    }
    for n in report.notes() {
        eprintln!("fslab: {name}: {n}");
    }
    if common.progress {
        finished(
            Some(report.run_id()),
            report.status(),
            report.error(),
            report.phases(),
            report.metrics(),
        );
    }
    let kept = format!("run {} in {}", report.run_id(), store.path().display());
    if report.status() == RunStatus::Complete && !common.progress {
        // Where to find it again (`fslab results show N`); on stderr, so
        // the tool's own output stays as its readers expect it.
        remark!("fslab: {name}: recorded as {kept}");
    }
    ending(name, report.status(), report.error(), &kept)
}
