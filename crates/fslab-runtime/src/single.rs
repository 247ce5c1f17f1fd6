//! A workload's run in one process: what its harness asks (die with the
//! parent, join a cgroup, drop caches), signals, the store, the
//! probes and progress (see [`crate::harness`]), the JSON report and the
//! exit status; under MPI it hands over to [`crate::ranks`].

use std::io::Write;
use std::path::Path;

use fslab_model::protocol::ChildMessage;
use fslab_model::protocol::DropCaches;
use fslab_model::RunStatus;
use fslab_workload::{Hooks, Job, Report, Start};

use crate::harness::{
    cache_dropper, ending, finished, phase_bar, start_probes, write_output, PhaseMessages,
    ProgressLines,
};
use crate::rank::Rank;
use crate::{Context, Error, Harness, Result};

/// Checks made before the workload's own options: what the harness asks
/// that must act first, and the probe list.
pub fn prepare(name: &str, harness: &Harness) -> Result<Vec<fslab_probe::ProbeRef>> {
    if let Some(file) = &harness.output {
        let dir = file.parent().filter(|d| !d.as_os_str().is_empty());
        if let Some(dir) = dir.filter(|d| !d.is_dir()) {
            return Err(Error::OutputFile {
                name: name.into(),
                file: file.clone(),
                dir: dir.to_path_buf(),
            });
        }
    }
    if harness.die_with_parent {
        let parent = rustix::process::getppid();
        let _ =
            rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL));
        // The parent may have died before the request took effect.
        if rustix::process::getppid() != parent || parent.is_none() {
            return Err(Error::ParentGone { name: name.into() });
        }
    }
    fslab_probe::parse_list(&harness.probes).map_err(|source| Error::Probes {
        name: name.into(),
        source,
    })
}

/// What the workload's text goes to: the harness's text file, nowhere
/// under `--json`, else stdout.
pub fn text_out(name: &str, harness: &Harness) -> Result<Box<dyn Write>> {
    Ok(match (&harness.text_to, harness.json) {
        (Some(p), _) => Box::new(std::fs::File::create(p).map_err(|source| Error::Io {
            name: name.into(),
            what: format!("its text file {}", p.display()),
            source,
        })?),
        (None, true) => Box::new(std::io::sink()),
        (None, false) => Box::new(std::io::stdout().lock()),
    })
}

/// Whether the workload's text goes to a terminal (stdout, not a file nor
/// the sink of `--json`).
fn stdout_is_terminal(harness: &Harness) -> bool {
    use std::io::IsTerminal;
    harness.text_to.is_none() && !harness.json && std::io::stdout().is_terminal()
}

/// Runs `job`, working in `dir`, with everything around it; under MPI as
/// one of the ranks (see [`crate::ranks`]).
pub fn run(
    job: &Job,
    harness: &Harness,
    cx: &Context<'_>,
    kinds: &[fslab_probe::ProbeRef],
    dir: &Path,
    rank: &Rank,
) -> Result<()> {
    let name = job.kind().name();
    // A cell's machine facts are read before it joins its memory cgroup:
    // read inside a small limit (kallsyms, the kernel's config), they
    // waited on the cgroup's disabled OOM killer for ever.
    let early = harness.cgroup.as_ref().map(|_| {
        let existing = dir.ancestors().find(|a| a.exists()).unwrap_or(dir);
        fslab_probe::facts::machine(
            &fslab_probe::source::Machine,
            &fslab_probe::resolve(existing),
        )
    });
    if let Some(cg) = &harness.cgroup {
        fslab_lab::vm::join_cgroup(cg, std::process::id()).map_err(|source| Error::Machine {
            name: name.into(),
            what: "its cgroup",
            source,
        })?;
    }
    if harness.drop_caches != DropCaches::Never {
        fslab_lab::vm::drop_caches().map_err(|source| Error::Machine {
            name: name.into(),
            what: "--drop-caches",
            source,
        })?;
    }
    if rank.cluster().size() > 1 {
        return crate::ranks::run(job, harness, cx, kinds, dir, rank);
    }
    // A store this run makes is removed again if the workload refuses its
    // options (it validates them first, before anything is recorded).
    let fresh = !cx.db.exists();
    let mut store = crate::open_store(cx.db)?;
    let stop = crate::stop_on_signals()?;
    let bar = phase_bar(harness, cx.quiet);
    let mut out = text_out(name, harness)?;
    if let Some(b) = bar.as_ref().filter(|_| stdout_is_terminal(harness)) {
        // The workload's text on the same terminal: the line is erased
        // while a line of it is written.
        out = b.above(out);
    }
    let mut probes = start_probes(name, harness, kinds, dir);
    // The run's facts read the probes' targets (resolved once, no call of
    // their own in the run); a cell (its probes run in `fslab run`)
    // resolves them; with `--probes none` the device's facts are unknown.
    let targets = probes.as_ref().and_then(|p| p.targets.clone());
    let cell = harness.acks;
    let inner = probes.as_mut().map(|p| p as &mut dyn fslab_model::Monitor);
    let mut messages = PhaseMessages {
        inner,
        messages: harness.progress,
        acks: harness.acks,
    };
    let mut hooks = Hooks {
        machine_facts: Some(Box::new(move |dir: &Path| {
            if let Some(facts) = early {
                return facts;
            }
            let targets = match targets {
                Some(t) => t,
                None if cell => {
                    fslab_probe::resolve(dir.ancestors().find(|a| a.exists()).unwrap_or(dir))
                }
                None => fslab_probe::Targets::default(),
            };
            fslab_probe::facts::machine(&fslab_probe::source::Machine, &targets)
        })),
        ..Hooks::default()
    };
    if harness.drop_caches == DropCaches::EachPhase {
        let mut drop_caches = cache_dropper(name.to_string());
        hooks.before_phase = Some(Box::new(move |_| drop_caches()));
    }
    if harness.progress {
        hooks.run_started = Some(Box::new(|run_id| {
            eprintln!("{}", ChildMessage::RunStarted { run_id }.line());
        }));
        hooks.watch = Some(Box::new(ProgressLines::default()));
    }
    if let Some(b) = bar {
        hooks.watch = Some(Box::new(b));
    }
    hooks.monitor = if messages.messages {
        Some(&mut messages)
    } else {
        messages.inner
    };
    let start = Start {
        argv: &harness.command_line,
        cluster: rank.cluster(),
        stop: &stop,
        out: &mut *out,
        rec: &mut store,
        hooks: &mut hooks,
    };
    let report = match job.run(start) {
        Ok(r) => r,
        Err(source) => {
            if source.is_usage() && fresh {
                drop(store);
                remove_store(cx.db);
            }
            return Err(Error::Workload {
                name: name.into(),
                source,
            });
        }
    };
    drop(out);
    ended(name, harness, cx, &*report, &store)
}

/// Removes a store file and SQLite's files beside it.
fn remove_store(db: &Path) {
    let _ = std::fs::remove_file(db);
    for ext in ["-wal", "-shm", "-journal"] {
        let mut p = db.as_os_str().to_os_string();
        p.push(ext);
        let _ = std::fs::remove_file(p);
    }
}

/// What is said once the run is over: the JSON report, the notes, the
/// message `fslab run` reads, where the run is kept, how it ended.
fn ended(
    name: &str,
    harness: &Harness,
    cx: &Context<'_>,
    report: &dyn Report,
    store: &fslab_store::Store,
) -> Result<()> {
    if harness.json {
        // The run's one JSON shape, as `results export` prints it.
        let doc = store
            .run_json(report.run_id())
            .map_err(|source| Error::ReadBack {
                name: name.into(),
                source,
            })?;
        crate::say(name, &doc)?;
    }
    write_output(name, harness, store, report.run_id())?;
    for n in report.notes() {
        eprintln!("fslab: {name}: {n}");
    }
    if harness.progress {
        finished(
            Some(report.run_id()),
            report.status(),
            report.error(),
            report.phases(),
            report.metrics(),
        );
    }
    let kept = format!("run {} in {}", report.run_id(), store.path().display());
    if report.status() == RunStatus::Complete && !harness.progress && !cx.quiet {
        // Where to find it again (`fslab results show N`); on stderr, so
        // the tool's own output stays as its readers expect it.
        eprintln!("fslab: {name}: recorded as {kept}");
    }
    ending(name, report.status(), report.error(), &kept)
}
