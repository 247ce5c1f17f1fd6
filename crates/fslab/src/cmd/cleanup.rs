//! `fslab cleanup`: undo what killed runs left behind.

use std::path::Path;

use crate::Failure;

pub fn run(db: &Path) -> Result<(), Failure> {
    let dir = fslab_lab::undo::state_dir();
    let report = fslab_lab::undo::cleanup(&dir);
    // Opening the store to write marks the runs and experiments of killed
    // processes interrupted.
    if db.is_file() {
        if let Err(e) = fslab_store::Store::open(db) {
            eprintln!("fslab: cleanup: results store {e}");
        }
    }
    if report.is_empty() {
        super::say(format!("nothing to clean up in {}\n", dir.display()))?;
    }
    let mut failed = false;
    for l in &report {
        failed |= l.contains("FAILED");
        super::say(format!("{l}\n"))?;
    }
    if failed {
        return Err(Failure::Failed(
            "cleanup could not undo everything (see above)".into(),
        ));
    }
    Ok(())
}
