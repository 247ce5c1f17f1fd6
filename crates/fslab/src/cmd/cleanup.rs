//! `fslab cleanup`: undo what killed runs left behind.

use crate::Failure;

pub fn run() -> Result<(), Failure> {
    let dir = fslab_experiment::state::state_dir();
    let report = fslab_experiment::state::cleanup(&dir);
    if report.is_empty() {
        println!("nothing to clean up in {}", dir.display());
    }
    let mut failed = false;
    for l in &report {
        failed |= l.contains("FAILED");
        println!("{l}");
    }
    if failed {
        return Err(Failure::Failed(
            "cleanup could not undo everything (see above)".into(),
        ));
    }
    Ok(())
}
