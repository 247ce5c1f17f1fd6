//! tiotest as a registered [`Workload`].

use std::path::PathBuf;

use super::TioArgs;
use crate::plugin::{Example, RankPlace, Refused, Start, Workload};
use crate::work::Work;
use crate::{CommonArgs, Report, Result};

/// tiobench's tiotest (seed 003).
pub struct TioTest;

impl Workload for TioTest {
    type Options = TioArgs;
    const NAME: &'static str = "tiotest";

    fn command() -> clap::Command {
        clap::Command::new(Self::NAME)
            .about("tiobench's tiotest: threaded sequential and random writes and reads (seed 003)")
            .after_help(
                "Example (seed 003):\n  fslab tiotest -t 4 -f 9000 -r 15000 -b 4096 -d /mnt/test",
            )
    }
    fn common(o: &TioArgs) -> &CommonArgs {
        &o.common
    }
    fn common_mut(o: &mut TioArgs) -> &mut CommonArgs {
        &mut o.common
    }
    /// tiotest's `-F` is fslab's `--drop-caches`.
    fn parsed(o: &mut TioArgs) -> Result<()> {
        o.common.drop_caches |= o.drop;
        Ok(())
    }
    fn validate(o: &TioArgs) -> Result<()> {
        o.validate().map(|_| ())
    }
    fn takes_dirs() -> bool {
        true
    }
    fn dirs(o: &TioArgs) -> Vec<PathBuf> {
        o.dirs.clone()
    }
    fn set_dirs(o: &mut TioArgs, dirs: Vec<PathBuf>) {
        o.dirs = dirs;
    }
    fn outputs(_o: &TioArgs) -> Vec<(&'static str, PathBuf)> {
        Vec::new()
    }
    fn workdir(o: &TioArgs) -> PathBuf {
        o.dirs.first().cloned().unwrap_or_default()
    }
    /// Its threads (`-t`).
    fn threads(o: &TioArgs) -> u32 {
        o.threads.clamp(1, i64::from(u32::MAX)) as u32
    }
    /// Each thread's file written and read in blocks, and its random
    /// writes and reads (`-r` each).
    fn work(o: &TioArgs) -> Option<Work> {
        let v = o.validate().ok()?;
        let t = u64::from(v.threads);
        Some(Work {
            ops: t * 2 * (Work::blocks(v.file_bytes) + v.random_ops),
            seconds: 0,
            bytes: t * v.file_bytes,
            entries: t,
        })
    }
    /// Megabytes per file (`-f`); not the random operations (`-r`): the
    /// random phases keep their length, so their CPU and latency figures
    /// stay measurable, as seed 003 needs.
    fn scale(o: &mut TioArgs, factor: f64) {
        o.mb = crate::scale::signed(Some(o.mb), factor, 1).unwrap_or(o.mb);
    }
    /// Each rank's files go in a `rankNNNN` directory of each `-d`.
    fn on_rank(o: &mut TioArgs, place: &dyn RankPlace) -> Result<()> {
        for d in &mut o.dirs {
            *d = place.dir(d)?;
        }
        Ok(())
    }
    fn example() -> Example {
        Example {
            args: "-f 9000 -r 15000 -b 4096 -t 2 -d {dir}",
            scale: 0.01,
            scaled: &[("mb", "90"), ("random_ops", "15000")],
            refused: Refused {
                args: "-t 0 -d {dir}",
                option: "-t",
                value: "0",
            },
        }
    }
    fn run(o: &TioArgs, start: Start<'_, '_>) -> Result<Box<dyn Report>> {
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
    fn tiotest_f_is_drop_caches() {
        let kind = WorkloadRef::of("tiotest").unwrap();
        assert!(kind.takes_dirs());
        let f = kind.parse(&argv("-F -d /mnt/a")).unwrap();
        assert!(f.common().drop_caches, "-F is --drop-caches");
    }

    #[test]
    fn tiotest_on_a_rank_works_in_a_rank_directory() {
        let mut job = WorkloadRef::of("tiotest")
            .unwrap()
            .parse(&argv("-d /mnt/a"))
            .unwrap();
        job.on_rank(&FakeRank { rank: 1, size: 2 }).unwrap();
        assert_eq!(job.dirs(), vec![PathBuf::from("/mnt/a/rank0001")]);
    }
}
