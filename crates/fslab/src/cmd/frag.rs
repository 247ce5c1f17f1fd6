//! `fslab frag FILE...`: filefrag, counting the kernel's extent records.

use std::path::PathBuf;

use crate::Failure;

pub fn run(files: &[PathBuf], verbose: bool) -> Result<(), Failure> {
    let mut failed = None;
    for f in files {
        match fslab_probe::frag::report(f, verbose) {
            Ok(text) => super::say(text)?,
            Err(e) => {
                eprintln!("fslab: frag: {}: {e}", f.display());
                failed = Some(f.display().to_string());
            }
        }
    }
    match failed {
        Some(f) => Err(Failure::Failed(format!("frag: could not map {f}"))),
        None => Ok(()),
    }
}
