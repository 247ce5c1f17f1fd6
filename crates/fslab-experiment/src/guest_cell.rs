//! `fslab guest-cell JOB` (hidden): what fslab runs inside a guest it
//! booted for a cell on another kernel. It runs the job's one cell once,
//! as `fslab run` would, into a store of its own, then hands the store and
//! the kernel's log back on the guest's results disk.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use crate::backend::DeviceConsent;
use crate::launch::{self, Display, Refusal};
use crate::runner::{self, guest_job::GuestJob};

/// Runs the cell of the job file `job`, shown on the display `display`
/// makes once everything is set up.
pub fn run<D: Display>(job: &Path, display: impl FnOnce() -> D) -> Result<(), Refusal> {
    let text = std::fs::read_to_string(job)
        .map_err(|e| Refusal::usage(format!("guest-cell {}: {e}", job.display())))?;
    let job: GuestJob = serde_json::from_str(&text)
        .map_err(|e| Refusal::usage(format!("guest-cell {}: {e}", job.display())))?;
    let exp = job
        .experiment()
        .map_err(|e| Refusal::usage(e.to_string()))?;
    runner::preflight_as(&exp, true).map_err(|e| Refusal::failed(format!("guest: {e}")))?;
    let (mut exec, mut cfg, journal) =
        launch::one_host(&exp, &job.db, job.scale, (&job.file, &job.text))
            .map_err(|e| Refusal::failed(format!("guest: {e}")))?;
    cfg.consent = DeviceConsent {
        format_device: Some(job.disk.clone()),
        force: true,
        keep_images: false,
    };
    let stop = AtomicBool::new(false);
    let mut store = fslab_store::Store::open(&job.db).map_err(Refusal::store)?;
    let mut display = display();
    let outcome = match launch::scheduled(
        (&exp, &cfg),
        &mut exec,
        &mut store,
        (&mut display, &stop),
        journal,
        "guest",
    ) {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err("internal error (see above)".to_string()),
    };
    drop(store);
    if let Err(e) = &outcome {
        eprintln!("fslab: guest: {e}");
    }
    let store = std::fs::read(&job.db)
        .map_err(|e| Refusal::failed(format!("guest: {}: {e}", job.db.display())))?;
    let dmesg = fslab_guest::kmsg::read_all();
    fslab_guest::handoff::write(&job.out, &[("store", &store), ("dmesg", dmesg.as_bytes())])
        .map_err(|e| Refusal::failed(format!("guest: {e}")))?;
    outcome.map_err(|e| Refusal::failed(format!("guest: {e}")))
}
