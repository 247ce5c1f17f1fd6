//! `fslab fsmark`.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use fslab_record::RunStatus;
use fslab_workload::fsmark::{self, FsMarkError, RawOptions};

use crate::cli::FsMarkArgs;
use crate::Failure;

pub fn run(args: FsMarkArgs, db: &PathBuf) -> Result<(), Failure> {
    let raw = RawOptions {
        dirs: args.dirs,
        threads: args.threads,
        files: args.files,
        file_size: args.size,
        io_size: args.io_size,
        sync: args.sync,
        subdirs: args.subdirs,
        per_subdir: args.per_subdir,
        subdir_secs: args.subdir_secs,
        name_len: args.name_len,
        rand_len: args.rand_len,
        loops: args.loops,
        keep: args.keep,
        fill: args.fill,
        log_file: args.log_file,
        verbose: args.verbose,
        phases: Some(args.phases),
    };
    let opts = raw.validate().map_err(|e| Failure::Usage(format!("fsmark: {e}")))?;
    let mut store = super::open_store(db)?;

    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        // A second signal while stopping ends the process at once.
        signal_hook::flag::register_conditional_shutdown(sig, 130, Arc::clone(&stop))
            .and_then(|_| signal_hook::flag::register(sig, Arc::clone(&stop)))
            .map_err(|e| Failure::Failed(format!("cannot install signal handlers: {e}")))?;
    }

    let argv: Vec<String> = std::env::args().collect();
    let stdout = std::io::stdout();
    let mut text_out: Box<dyn std::io::Write> =
        if args.json { Box::new(std::io::sink()) } else { Box::new(stdout.lock()) };
    let report = fsmark::run(&opts, &argv, &stop, &mut *text_out, &mut store).map_err(|e| match e {
        FsMarkError::Setup(m) => Failure::Failed(format!("fsmark: {m}")),
        e @ FsMarkError::Store(_) => Failure::Failed(format!("fsmark: {e}")),
    })?;
    drop(text_out);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report).unwrap_or_default());
    }
    for n in &report.notes {
        eprintln!("fslab: fsmark: {n}");
    }
    let kept = format!("run {} in {}", report.run_id, store.path().display());
    match report.status {
        RunStatus::Complete | RunStatus::Running => Ok(()),
        RunStatus::Interrupted => {
            eprintln!("fslab: fsmark: interrupted; what was measured is printed above and kept as {kept}");
            Err(Failure::Interrupted)
        }
        RunStatus::Failed => Err(Failure::Failed(format!(
            "fsmark: stopped: {}; what was measured is printed above and kept as {kept}",
            report.error.as_deref().unwrap_or("unknown error")
        ))),
    }
}
