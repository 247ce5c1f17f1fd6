//! `fslab guest-cell JOB` (hidden): what fslab runs inside a guest it
//! booted for a cell on another kernel. It runs the job's one cell once,
//! as `fslab run` would, into a store of its own, then hands the store and
//! the kernel's log back on the guest's results disk.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use fslab_experiment::backend::DeviceConsent;
use fslab_experiment::runner::guest_job::GuestJob;
use fslab_experiment::runner::{self, ProcessExecutor, RunConfig};
use fslab_experiment::state::{state_dir, Journal};

use crate::Failure;

pub fn run(job: &Path) -> Result<(), Failure> {
    let text = std::fs::read_to_string(job)
        .map_err(|e| Failure::Usage(format!("guest-cell {}: {e}", job.display())))?;
    let job: GuestJob = serde_json::from_str(&text)
        .map_err(|e| Failure::Usage(format!("guest-cell {}: {e}", job.display())))?;
    let exp = job.experiment().map_err(Failure::Usage)?;
    runner::preflight_as(&exp, true).map_err(|e| Failure::Failed(format!("guest: {e}")))?;
    let exe = std::env::current_exe()
        .map_err(|e| Failure::Failed(format!("guest: cannot find fslab itself: {e}")))?;
    let mut exec = ProcessExecutor {
        exe,
        db: job.db.clone(),
        ranks: 1,
        cluster: None,
        own_ranks: exp.workload.kind.launches_ranks(),
    };
    let argv: Vec<String> = std::env::args().collect();
    let journal = Journal::create(&state_dir(), "run", argv.clone())
        .map_err(|e| Failure::Failed(format!("guest: the state journal: {e}")))?;
    let cfg = RunConfig {
        scale: job.scale,
        resume: None,
        consent: DeviceConsent {
            format_device: Some(job.disk.clone()),
            force: true,
            keep_images: false,
        },
        file: job.file.clone(),
        text: job.text.clone(),
        command_line: argv,
    };
    let stop = AtomicBool::new(false);
    let mut store = super::open_store(&job.db)?;
    let outcome =
        match super::run::scheduled(&exp, &cfg, &mut exec, &mut store, &stop, journal, "guest") {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(e)) => Err(e.to_string()),
            Err(_) => Err("internal error (see above)".to_string()),
        };
    drop(store);
    if let Err(e) = &outcome {
        eprintln!("fslab: guest: {e}");
    }
    let store = std::fs::read(&job.db)
        .map_err(|e| Failure::Failed(format!("guest: {}: {e}", job.db.display())))?;
    let dmesg = fslab_guest::kmsg::read_all();
    fslab_guest::handoff::write(&job.out, &[("store", &store), ("dmesg", dmesg.as_bytes())])
        .map_err(|e| Failure::Failed(format!("guest: {e}")))?;
    outcome.map_err(|e| Failure::Failed(format!("guest: {e}")))
}
