//! compilebench as a registered [`Workload`].

use std::path::PathBuf;

use super::CompileArgs;
use crate::plugin::{RankPlace, Start, Workload};
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
    /// Each rank's trees go in a `rankNNNN` directory of `-D`.
    fn on_rank(o: &mut CompileArgs, place: &dyn RankPlace) -> Result<()> {
        o.dir = place.dir(&o.dir)?;
        Ok(())
    }
    fn run(o: &CompileArgs, start: Start<'_, '_>) -> Result<Box<dyn Report>> {
        let opts = o.validate()?;
        let report = super::run(
            &opts,
            start.argv,
            start.stop,
            start.out,
            start.rec,
            start.hooks,
        )?;
        Ok(Box::new(report))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugin::Job;
    use crate::scale::FakeRank;
    use crate::Kind;

    fn argv(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn compilebench_parses_scales_and_comes_back_from_json_equal() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().display().to_string();
        let kind = Kind::of("compilebench").unwrap();
        let mut job = kind.parse(&argv(&format!("-D {d} -i 30 -r 0"))).unwrap();
        job.scale(0.1);
        job.validate().unwrap();
        let json = job.to_json();
        assert_eq!(
            (
                json["options"]["initial"].clone(),
                json["options"]["runs"].clone()
            ),
            (3.into(), 0.into())
        );
        let back = Job::from_json(&json).unwrap();
        assert_eq!(back.to_json(), json);
        assert_eq!(back.outputs(), vec![("-D", dir.path().to_path_buf())]);
        assert!(kind.parse(&argv(&format!("-D {d} -i x"))).is_err());
    }

    #[test]
    fn compilebench_on_a_rank_works_in_a_rank_directory() {
        let mut job = Kind::of("compilebench")
            .unwrap()
            .parse(&argv("-D /mnt/t"))
            .unwrap();
        job.on_rank(&FakeRank { rank: 3, size: 4 }).unwrap();
        assert_eq!(job.workdir(), PathBuf::from("/mnt/t/rank0003"));
    }
}
