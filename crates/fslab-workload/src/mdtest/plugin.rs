//! mdtest as a [`Workload`]: its subcommand, checks, paths, scaling and
//! run through fslab's workload seam.

use std::path::PathBuf;

use crate::plugin::{Example, Plugin, RankPlace, Refused, Start, Workload};
use crate::work::Work;
use crate::{CommonArgs, Report};

use super::options::MdtestArgs;

/// hpc/ior's mdtest.
pub struct Mdtest;

/// Its registration.
pub static MDTEST: Plugin<Mdtest> = Plugin::new();

/// The subcommand's help: what it is and an example.
pub const ABOUT: &str =
    "hpc/ior's mdtest: create, stat, read and remove files and directories in a tree, per MPI rank (IO500's metadata phases)";
pub const EXAMPLES: &str = "Examples:
  fslab mdtest -n 1000 -d /mnt/test/md                         # every phase, files and directories
  mpirun -np 8 fslab mdtest -n 100000 -u -L -F -W 30 -x /mnt/test/sw -C -d /mnt/test/easy
  mpirun -np 8 fslab mdtest -n 100000 -u -L -F -x /mnt/test/sw -T -r -d /mnt/test/easy";

impl Workload for Mdtest {
    type Options = MdtestArgs;
    const NAME: &'static str = "mdtest";

    fn command() -> clap::Command {
        clap::Command::new(Self::NAME)
            .about(ABOUT)
            .after_help(EXAMPLES)
    }
    fn common(o: &MdtestArgs) -> &CommonArgs {
        &o.common
    }
    fn common_mut(o: &mut MdtestArgs) -> &mut CommonArgs {
        &mut o.common
    }
    fn validate(o: &MdtestArgs) -> crate::Result<()> {
        o.validate()?;
        parent_exists(o)
    }
    fn one_tree() -> bool {
        true
    }
    fn takes_dirs() -> bool {
        true
    }
    fn dirs(o: &MdtestArgs) -> Vec<PathBuf> {
        vec![o.dir.clone()]
    }
    fn set_dirs(o: &mut MdtestArgs, dirs: Vec<PathBuf>) {
        if let Some(d) = dirs.into_iter().next() {
            o.dir = d;
        }
    }
    fn outputs(o: &MdtestArgs) -> Vec<(&'static str, PathBuf)> {
        let mut out = vec![("-d", o.dir.clone())];
        out.extend(o.stonewall_file.iter().map(|x| ("-x", x.clone())));
        out.extend(
            o.rank_details
                .iter()
                .map(|x| ("--saveRankPerformanceDetails", x.clone())),
        );
        out
    }
    fn workdir(o: &MdtestArgs) -> PathBuf {
        o.dir.clone()
    }
    fn scale(o: &mut MdtestArgs, factor: f64) {
        let scaled = |n: u64| ((n as f64 * factor).round() as u64).max(1);
        o.items = o.items.map(scaled);
        o.items_per_dir = o.items_per_dir.map(scaled);
        if o.stonewall > 0 {
            o.stonewall = scaled(o.stonewall);
        }
    }
    /// `-n` items (files, directories or both) through each phase asked
    /// for, each of `-i` iterations; a stonewall's seconds beside.
    fn work(o: &MdtestArgs) -> Option<Work> {
        let v = o.validate().ok()?;
        let kinds = u64::from(v.files) + u64::from(v.dirs);
        let phases = [v.create, v.stat, v.read, v.remove]
            .iter()
            .filter(|p| **p)
            .count() as u64;
        let items = v.items * kinds;
        Some(Work {
            ops: items * phases * v.iterations + Work::blocks(v.write_bytes) * v.items,
            seconds: v.stonewall_s,
            bytes: v.items * v.write_bytes,
            entries: items,
        })
    }
    /// mdtest places its ranks itself: one tree with every rank's names,
    /// or with -u a tree per rank, all under -d.
    /// Its SUMMARY is computed over every rank within the phases: rank 0
    /// prints it, as mdtest's rank 0 does.
    fn speaks_for_ranks() -> bool {
        true
    }
    fn on_rank(_o: &mut MdtestArgs, _place: &dyn RankPlace) -> crate::Result<()> {
        Ok(())
    }
    fn example() -> Example {
        Example {
            args: "-n 1000 -W 10 -F -d {dir}",
            scale: 0.1,
            scaled: &[("items", "100"), ("stonewall", "1")],
            refused: Refused {
                args: "-n 0 -d {dir}",
                option: "-n",
                value: "0",
            },
        }
    }
    fn run(o: &MdtestArgs, start: Start<'_, '_>) -> crate::Result<Box<dyn Report>> {
        let opts = o.validate()?;
        parent_exists(o)?;
        Ok(Box::new(super::run(&opts, start)?))
    }
}

/// -d's parent (-d itself is made if missing, not its parents): refused
/// in one line before the header.
fn parent_exists(o: &MdtestArgs) -> crate::Result<()> {
    let parent = match o.dir.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => std::path::Path::new("."),
    };
    if !o.dir.is_dir() && !parent.is_dir() {
        return Err(crate::Error::Options(format!(
            "-d {}: no such directory {} (-d is made if missing, not its parents)",
            o.dir.display(),
            parent.display()
        )));
    }
    Ok(())
}
