//! `fslab bisect EXPERIMENT --good K1 --bad K2`: the experiment's cell on
//! each kernel the search needs, each step recorded as an experiment of its
//! own in the store (run by [`fslab_experiment::bisect_steps`]).

use std::path::Path;

use fslab_experiment::bisect_args::BisectArgs;
use fslab_experiment::bisect_steps::{self, Shown};
use fslab_present::run::display::Display;

use crate::Failure;

pub fn run(args: BisectArgs, db: &Path) -> Result<(), Failure> {
    let shown = Shown {
        display: &|| Display::new(super::quiet()),
        remark: &|line| remark!("{line}"),
    };
    let b = bisect_steps::run(&args, db, shown)?;
    print!("{}", b.text);
    if b.interrupted {
        return Err(Failure::Interrupted);
    }
    match b.found {
        true => Ok(()),
        false => Err(Failure::Failed(
            "bisect: no first bad kernel found (see above)".into(),
        )),
    }
}
