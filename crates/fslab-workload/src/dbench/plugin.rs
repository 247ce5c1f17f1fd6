//! dbench as a registered [`Workload`].

use std::path::PathBuf;

use super::DbenchArgs;
use crate::plugin::{Example, RankPlace, Refused, Start, Workload};
use crate::work::Work;
use crate::{CommonArgs, Report, Result};

/// dbench 4 (seed 001).
pub struct Dbench;

/// The data a dbench client is allowed for on the disk in the dry run's
/// estimate (an allowance, not read from its loadfile).
pub const DBENCH_CLIENT_BYTES: u64 = 256 << 20;

impl Workload for Dbench {
    type Options = DbenchArgs;
    const NAME: &'static str = "dbench";

    fn command() -> clap::Command {
        clap::Command::new(Self::NAME)
            .about("dbench: replay a dbench 4 loadfile with N clients (seed 001)")
            .override_usage("fslab dbench [OPTIONS] NPROCS\n       fslab dbench --print-loadfile")
            .after_help("Examples (seed 001):\n  fslab dbench -D /mnt/test -t 60 8\n  fslab dbench -D /mnt/test -c /usr/share/dbench/client.txt -t 60 8")
    }
    fn common(o: &DbenchArgs) -> &CommonArgs {
        &o.common
    }
    fn common_mut(o: &mut DbenchArgs) -> &mut CommonArgs {
        &mut o.common
    }
    /// `--print-loadfile` prints the built-in loadfile.
    fn instead(o: &DbenchArgs) -> Option<String> {
        o.print_loadfile.then(crate::dbench::load::model)
    }
    fn validate(o: &DbenchArgs) -> Result<()> {
        o.validate().map(|_| ())
    }
    fn outputs(o: &DbenchArgs) -> Vec<(&'static str, PathBuf)> {
        vec![("-D", o.dir.clone())]
    }
    fn workdir(o: &DbenchArgs) -> PathBuf {
        o.dir.clone()
    }
    /// Its clients (NPROCS).
    fn threads(o: &DbenchArgs) -> u32 {
        o.nprocs
            .map_or(1, |n| n.clamp(1, i64::from(u32::MAX)) as u32)
    }
    /// Its warm-up and its run (`-t`); its clients' files are an
    /// allowance of [`DBENCH_CLIENT_BYTES`] each (not read from the loadfile).
    fn work(o: &DbenchArgs) -> Option<Work> {
        let clients = u64::from(Self::threads(o));
        Some(Work {
            ops: 0,
            seconds: o.time + o.warmup.unwrap_or(0),
            bytes: clients * DBENCH_CLIENT_BYTES,
            entries: clients * 1000,
        })
    }
    /// Seconds (`-t`) and warm-up (`--warmup`), at least 1 s; no warm-up
    /// stays none.
    fn scale(o: &mut DbenchArgs, factor: f64) {
        o.time = crate::scale::count(o.time, factor, 1);
        o.warmup = o.warmup.map(|w| crate::scale::count(w, factor, 1));
    }
    /// Each rank's clients work in a `rankNNNN` directory of `-D`.
    fn on_rank(o: &mut DbenchArgs, place: &dyn RankPlace) -> Result<()> {
        o.dir = place.dir(&o.dir)?;
        Ok(())
    }
    fn example() -> Example {
        Example {
            args: "-t 120 --warmup 0 -x -D {dir} 8",
            scale: 0.01,
            scaled: &[("time", "1"), ("warmup", "0"), ("nprocs", "8")],
            refused: Refused {
                args: "-D {dir} -t 0 2",
                option: "-t",
                value: "0",
            },
        }
    }
    fn run(o: &DbenchArgs, start: Start<'_, '_>) -> Result<Box<dyn Report>> {
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
    fn dbench_print_loadfile_prints_instead_of_running() {
        let kind = WorkloadRef::of("dbench").unwrap();
        assert!(kind.parse(&argv("-D /m 2")).unwrap().instead().is_none());
        let print = kind.parse(&argv("--print-loadfile")).unwrap();
        assert!(print.instead().unwrap().starts_with("# fslab's"));
    }

    #[test]
    fn dbench_on_a_rank_works_in_a_rank_directory() {
        let mut job = WorkloadRef::of("dbench")
            .unwrap()
            .parse(&argv("-D /mnt/t 2"))
            .unwrap();
        job.on_rank(&FakeRank { rank: 0, size: 2 }).unwrap();
        assert_eq!(job.workdir(), PathBuf::from("/mnt/t/rank0000"));
    }
}
