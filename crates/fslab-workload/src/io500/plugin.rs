//! io500md as a [`Workload`]: its subcommand, checks, paths, scaling and
//! run through fslab's workload seam.

use std::path::PathBuf;

use crate::plugin::{Example, Plugin, RankPlace, Refused, Start, Workload};
use crate::work::Work;
use crate::{CommonArgs, Report};

use super::options::Io500Args;

/// IO500's metadata phases.
pub struct Io500Md;

/// Its registration.
pub static IO500MD: Plugin<Io500Md> = Plugin::new();

/// The subcommand's help: what it is and an example.
pub const ABOUT: &str = "IO500's metadata phases: mdtest-easy and mdtest-hard write, stat, read and delete and the parallel find, in IO500's order, with the MD score (kIOPS) and IO500's validity rules";
pub const EXAMPLES: &str = "Examples:
  fslab io500md io500.ini                                   # IO500's own configuration file
  fslab io500md -d /mnt/test/io500                          # IO500's sizes and times: 300 s stonewall
  fslab io500md --easy-n 20000 --hard-n 20000 --stonewall-time 3 --minwrite 3 -d /mnt/test/io500
  mpirun -np 4 fslab io500md --stonewall-time 30 --minwrite 30 -d /mnt/test/io500
  fslab run io500-md --scale 0.01                           # the built-in: ext4 and xfs, 3 s times";

impl Workload for Io500Md {
    type Options = Io500Args;
    const NAME: &'static str = "io500md";

    fn command() -> clap::Command {
        clap::Command::new(Self::NAME)
            .about(ABOUT)
            .after_help(EXAMPLES)
    }
    fn common(o: &Io500Args) -> &CommonArgs {
        &o.common
    }
    fn common_mut(o: &mut Io500Args) -> &mut CommonArgs {
        &mut o.common
    }
    /// IO500's ini file, when given, sets the options.
    fn parsed(o: &mut Io500Args) -> crate::Result<()> {
        o.apply_config()
    }
    fn validate(o: &Io500Args) -> crate::Result<()> {
        o.validate()
    }
    fn one_tree() -> bool {
        true
    }
    fn takes_dirs() -> bool {
        true
    }
    fn dirs(o: &Io500Args) -> Vec<PathBuf> {
        vec![o.dir.clone()]
    }
    fn set_dirs(o: &mut Io500Args, dirs: Vec<PathBuf>) {
        if let Some(d) = dirs.into_iter().next() {
            o.dir = d;
        }
    }
    fn outputs(o: &Io500Args) -> Vec<(&'static str, PathBuf)> {
        vec![("-d", o.dir.clone()), ("--resultdir", o.results())]
    }
    fn workdir(o: &Io500Args) -> PathBuf {
        o.dir.clone()
    }
    /// The files per process and both times: at --scale 0.01 IO500's
    /// 300 s stonewall and minimum write time are 3 s.
    fn scale(o: &mut Io500Args, factor: f64) {
        o.easy_n = crate::scale::count(o.easy_n, factor, 1);
        o.hard_n = crate::scale::count(o.hard_n, factor, 1);
        o.stonewall_time = crate::scale::count(o.stonewall_time, factor, 1);
        o.minwrite = crate::scale::count(o.minwrite, factor, 1);
    }
    /// Each write phase lasts until its stonewall or its count at
    /// [`crate::work::ASSUMED_OPS_PER_S`]; the stat, read and delete phases
    /// each about as long again (easy: write, stat, delete; hard: write,
    /// stat, read, delete); hard files hold 3901 bytes.
    fn work(o: &Io500Args) -> Option<Work> {
        let rate = crate::work::ASSUMED_OPS_PER_S;
        let written = |n: u64, skip: bool| -> u64 {
            if skip {
                return 0;
            }
            n.min((rate * o.stonewall_time.max(1) as f64) as u64)
        };
        let (easy, hard) = (
            written(o.easy_n, o.skip_easy),
            written(o.hard_n, o.skip_hard),
        );
        Some(Work {
            ops: 3 * easy + 4 * hard,
            seconds: 0,
            bytes: hard * 3901,
            entries: easy + hard,
        })
    }
    /// The ranks share its trees, as IO500's mdtest runs do.
    fn on_rank(_o: &mut Io500Args, _place: &dyn RankPlace) -> crate::Result<()> {
        Ok(())
    }
    /// Rank 0 prints the result lines of every rank's phases.
    fn speaks_for_ranks() -> bool {
        true
    }
    fn example() -> Example {
        Example {
            args: "-d {dir}",
            scale: 0.01,
            scaled: &[
                ("stonewall_time", "3"),
                ("minwrite", "3"),
                ("easy_n", "10000"),
            ],
            refused: Refused {
                args: "--hard-n 0 -d {dir}",
                option: "--hard-n",
                value: "0",
            },
        }
    }
    fn run(o: &Io500Args, start: Start<'_, '_>) -> crate::Result<Box<dyn Report>> {
        Ok(Box::new(super::run(o, start)?))
    }
}
