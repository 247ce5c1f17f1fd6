//! `fslab fsmark`.

use std::path::PathBuf;

use fslab_record::RunStatus;
use fslab_record::SeriesPoint;
use fslab_workload::fsmark::cli::FsMarkArgs;
use fslab_workload::fsmark::{self, FsMarkError, Hooks, Phase};

use crate::Failure;

pub fn run(args: FsMarkArgs, db: &PathBuf) -> Result<(), Failure> {
    let raw = args.raw();
    if args.die_with_parent {
        let parent = rustix::process::getppid();
        let _ =
            rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL));
        // The parent may have died before the request took effect.
        if rustix::process::getppid() != parent || parent.is_none() {
            return Err(Failure::Failed(
                "fsmark: the parent fslab run is gone".into(),
            ));
        }
    }
    let opts = raw
        .validate()
        .map_err(|e| Failure::Usage(format!("fsmark: {e}")))?;
    if let Some(cg) = &args.cgroup {
        fslab_experiment::machine::MemCgroup::add_process(cg, std::process::id())
            .map_err(|e| Failure::Failed(format!("fsmark: --cgroup: {e}")))?;
    }
    if args.drop_caches {
        fslab_experiment::machine::drop_caches()
            .map_err(|e| Failure::Failed(format!("fsmark: --drop-caches: {e}")))?;
    }
    let kinds = fslab_probe::parse_list(&args.probes)
        .map_err(|e| Failure::Usage(format!("fsmark: {e}")))?;
    let mut store = super::open_store(db)?;

    let stop = super::stop_on_signals()?;

    let argv: Vec<String> = std::env::args().collect();
    let stdout = std::io::stdout();
    let mut text_out: Box<dyn std::io::Write> = if args.json {
        Box::new(std::io::sink())
    } else {
        Box::new(stdout.lock())
    };
    // The -d directories must exist for the probes to find their filesystem.
    for d in &opts.dirs {
        let _ = std::fs::create_dir(d);
    }
    let mut probes = (!kinds.is_empty()).then(|| {
        fslab_probe::ProbeSet::start(
            &kinds,
            &opts.dirs[0],
            &fslab_probe::scratch_dir(),
            args.probes != "default",
        )
    });
    if let Some(p) = &probes {
        for problem in &p.problems {
            eprintln!("fslab: fsmark: {problem}");
        }
    }
    let mut hooks = Hooks::default();
    let mut first_phase = true;
    if args.drop_caches {
        hooks.before_phase = Some(Box::new(move |_| {
            // The first phase's caches were dropped before the run started.
            if !std::mem::take(&mut first_phase) {
                if let Err(e) = fslab_experiment::machine::drop_caches() {
                    eprintln!("fslab: fsmark: --drop-caches: {e}");
                }
            }
        }));
    }
    if args.progress {
        hooks.run_started = Some(Box::new(|id| eprintln!("fslab-run-id {id}")));
        let mut last_t = 0.0;
        hooks.each_second = Some(Box::new(move |phase: Phase, p: &SeriesPoint| {
            if p.t_s < last_t {
                last_t = 0.0;
            }
            let dt = p.t_s - last_t;
            last_t = p.t_s;
            let rate = if dt > 0.0 { p.ops as f64 / dt } else { 0.0 };
            eprintln!("fslab-progress {} {rate:.1} {}", phase.name(), p.total_ops);
        }));
    }
    hooks.monitor = probes.as_mut().map(|p| p as &mut dyn fslab_record::Monitor);
    let report = fsmark::run_with(&opts, &argv, &stop, &mut *text_out, &mut store, &mut hooks)
        .map_err(|e| match e {
            FsMarkError::Setup(m) => Failure::Failed(format!("fsmark: {m}")),
            e @ FsMarkError::Store(_) => Failure::Failed(format!("fsmark: {e}")),
        })?;
    drop(text_out);
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&report).unwrap_or_default()
        );
    }
    for n in &report.notes {
        eprintln!("fslab: fsmark: {n}");
    }
    let kept = format!("run {} in {}", report.run_id, store.path().display());
    match report.status {
        RunStatus::Complete | RunStatus::Running => Ok(()),
        RunStatus::Interrupted => {
            eprintln!(
                "fslab: fsmark: interrupted; what was measured is printed above and kept as {kept}"
            );
            Err(Failure::Interrupted)
        }
        RunStatus::Failed => Err(Failure::Failed(format!(
            "fsmark: stopped: {}; what was measured is printed above and kept as {kept}",
            report.error.as_deref().unwrap_or("unknown error")
        ))),
    }
}
