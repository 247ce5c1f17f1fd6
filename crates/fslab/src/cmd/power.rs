//! Power before running ([`fslab_experiment::power`]), said.

use std::path::Path;

use fslab_experiment::power::lines;
use fslab_experiment::spec::Experiment;

/// The dry run's power lines (on stdout, for the planned repetitions), or
/// before a run with `--until-resolved MAX` the same for MAX (on stderr).
pub fn say(exp: &Experiment, at: (&Path, &str, &str, f64), dry_run: bool) {
    if dry_run {
        for l in lines(exp, at, exp.repetitions) {
            println!("{l}");
        }
    } else if let Some(max) = exp.until_resolved {
        for l in lines(exp, at, max) {
            eprintln!("fslab: until resolved, at most {max} repetitions a cell: {l}");
        }
    }
}
