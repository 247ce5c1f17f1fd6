//! compilebench as a registered [`Workload`].

use std::path::PathBuf;

use super::CompileArgs;
use crate::plugin::{Example, RankPlace, Refused, Start, Workload};
use crate::work::Work;
use crate::{CommonArgs, Report, Result};

/// compilebench (seed 001).
pub struct CompileBench;

impl Workload for CompileBench {
    type Options = CompileArgs;
    const NAME: &'static str = "compilebench";

    fn command() -> clap::Command {
        clap::Command::new(Self::NAME)
            .about("compilebench: create, patch, compile, clean, read, stat and delete kernel-like trees (seed 001)")
            .after_help("Example (seed 001):\n  fslab compilebench -D /mnt/test -i 10 -r 30")
    }
    fn common(o: &CompileArgs) -> &CommonArgs {
        &o.common
    }
    fn common_mut(o: &mut CompileArgs) -> &mut CommonArgs {
        &mut o.common
    }
    fn validate(o: &CompileArgs) -> Result<()> {
        o.validate().map(|_| ())
    }
    fn outputs(o: &CompileArgs) -> Vec<(&'static str, PathBuf)> {
        vec![("-D", o.dir.clone())]
    }
    fn workdir(o: &CompileArgs) -> PathBuf {
        o.dir.clone()
    }
    /// Initial trees (`-i`) and runs (`-r`), at least 1; 0 stays 0.
    fn scale(o: &mut CompileArgs, factor: f64) {
        o.initial = crate::scale::signed(Some(o.initial), factor, 1).unwrap_or(o.initial);
        o.runs = crate::scale::signed(Some(o.runs), factor, 1).unwrap_or(o.runs);
    }
    /// Its initial trees, then a tree's files and bytes for each run; a
    /// third of the runs are assumed to leave a tree more on the disk
    /// (creates and compiles add, cleans and deletes take away).
    fn work(o: &CompileArgs) -> Option<Work> {
        let v = o.validate().ok()?;
        let (files, held) = (v.tree_files as u64, v.initial + v.runs / 3);
        Some(Work {
            ops: (v.initial + v.runs) * (files + Work::blocks(v.tree_bytes)),
            seconds: 0,
            bytes: held * v.tree_bytes,
            entries: held * files,
        })
    }
    /// Each rank's trees go in a `rankNNNN` directory of `-D`.
    fn on_rank(o: &mut CompileArgs, place: &dyn RankPlace) -> Result<()> {
        o.dir = place.dir(&o.dir)?;
        Ok(())
    }
    fn example() -> Example {
        Example {
            args: "-D {dir} -i 30 -r 0",
            scale: 0.1,
            scaled: &[("initial", "3"), ("runs", "0")],
            refused: Refused {
                args: "-D {dir} -i x",
                option: "--initial",
                value: "x",
            },
        }
    }
    fn run(o: &CompileArgs, start: Start<'_, '_>) -> Result<Box<dyn Report>> {
        let opts = o.validate()?;
        Ok(Box::new(super::run(&opts, start)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scale::FakeRank;
    use crate::WorkloadRef;

    fn argv(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn compilebench_on_a_rank_works_in_a_rank_directory() {
        let mut job = WorkloadRef::of("compilebench")
            .unwrap()
            .parse(&argv("-D /mnt/t"))
            .unwrap();
        job.on_rank(&FakeRank { rank: 3, size: 4 }).unwrap();
        assert_eq!(job.workdir(), PathBuf::from("/mnt/t/rank0003"));
    }
}
