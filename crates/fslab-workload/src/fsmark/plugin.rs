//! fs_mark as a registered [`Workload`].

use std::path::PathBuf;

use super::cli::FsMarkArgs;
use crate::plugin::{Example, RankPlace, Refused, Start, Workload};
use crate::work::Work;
use crate::{CommonArgs, Report, Result};

/// fs_mark 3.3 with seed 001's stat and unlink phases.
pub struct FsMark;

impl Workload for FsMark {
    type Options = FsMarkArgs;
    const NAME: &'static str = "fsmark";

    fn command() -> clap::Command {
        // fs_mark's own -h, and a later option overriding an earlier one
        // (experiment files add to the experiment's arguments per cell).
        clap::Command::new(Self::NAME)
            .about("fs_mark 3.3: create files in loops, then optionally stat and unlink them all")
            .disable_help_flag(true)
            .args_override_self(true)
    }
    fn common(o: &FsMarkArgs) -> &CommonArgs {
        &o.common
    }
    fn common_mut(o: &mut FsMarkArgs) -> &mut CommonArgs {
        &mut o.common
    }
    fn validate(o: &FsMarkArgs) -> Result<()> {
        o.raw().validate()?;
        Ok(())
    }
    fn takes_dirs() -> bool {
        true
    }
    fn dirs(o: &FsMarkArgs) -> Vec<PathBuf> {
        o.dirs.clone()
    }
    fn set_dirs(o: &mut FsMarkArgs, dirs: Vec<PathBuf>) {
        o.dirs = dirs;
    }
    fn outputs(o: &FsMarkArgs) -> Vec<(&'static str, PathBuf)> {
        o.log_file.iter().map(|l| ("-l", l.clone())).collect()
    }
    fn workdir(o: &FsMarkArgs) -> PathBuf {
        o.dirs.first().cloned().unwrap_or_default()
    }
    /// Its worker threads (`-t` per `-d`, one per `-d` by default).
    fn threads(o: &FsMarkArgs) -> u32 {
        o.raw().validate().map_or(1, |v| v.threads)
    }
    /// Every thread's files of every loop, kept until the unlink phase (or
    /// the end), each looked at by each phase.
    fn work(o: &FsMarkArgs) -> Option<Work> {
        let v = o.raw().validate().ok()?;
        let files = v.files * u64::from(v.threads) * v.loops;
        Some(Work {
            ops: files * v.phases.len() as u64 + Work::blocks(v.file_size) * files,
            seconds: 0,
            bytes: v.file_size * files,
            entries: files,
        })
    }
    /// Files per loop (`-n`) and subdirectories (`-D`, at least 2); loops,
    /// threads, file sizes and sync methods stay as written.
    fn scale(o: &mut FsMarkArgs, factor: f64) {
        o.files = crate::scale::signed(o.files, factor, 1);
        o.subdirs = crate::scale::signed(o.subdirs, factor, 2);
    }
    /// fs_mark's log would go to the current directory; in a cell its text
    /// is stored instead.
    fn in_cell(o: &mut FsMarkArgs) {
        if o.log_file.is_none() {
            o.log_file = Some(PathBuf::from("/dev/null"));
        }
    }
    /// Each rank creates its files in a `rankNNNN` directory of each `-d`.
    fn on_rank(o: &mut FsMarkArgs, place: &dyn RankPlace) -> Result<()> {
        for d in &mut o.dirs {
            *d = place.dir(d)?;
        }
        Ok(())
    }
    /// fs_mark's table for all ranks, loop by loop, so scripts that read
    /// its rows (seed 000's `stats`) read MPI runs too.
    fn merged_text(ranks: usize, merged: &[fslab_model::Metric]) -> Option<String> {
        let loops = fslab_model::LoopRow::from_metrics(merged);
        if loops.is_empty() {
            return None;
        }
        let mut text = format!(
            "\n#\tAll {ranks} ranks, loop by loop: Count, Files/sec and App Overhead summed over \
             ranks (as fs_mark sums its threads), FSUse% the highest rank's.\n\n"
        );
        text += &super::output::columns();
        for l in &loops {
            text += &super::output::row(l, false);
        }
        Some(text)
    }

    fn example() -> Example {
        Example {
            args: "-S0 -n 100000 -D10000 -s 0 -L 63 -t 8 -d {dir}",
            scale: 0.01,
            scaled: &[
                ("files", "1000"),
                ("subdirs", "100"),
                ("loops", "63"),
                ("threads", "8"),
            ],
            refused: Refused {
                args: "-n 10 -S 9 -d {dir}",
                option: "-S",
                value: "9",
            },
        }
    }
    fn run(o: &FsMarkArgs, start: Start<'_, '_>) -> Result<Box<dyn Report>> {
        let opts = o.raw().validate()?;
        // fslab has always made the -d directories before the run (fs_mark
        // then finds them there, as its users' scripts leave them).
        for d in &opts.dirs {
            let _ = std::fs::create_dir(d);
        }
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
    fn fsmark_keeps_its_minimums_when_scaled_and_its_log_goes_nowhere_in_a_cell() {
        let kind = WorkloadRef::of("fsmark").unwrap();
        assert!(kind.takes_dirs());
        let mut job = kind.parse(&argv("-n 10 -d /mnt/a")).unwrap();
        job.in_cell();
        assert_eq!(job.to_json()["options"]["log_file"], "/dev/null");
        assert_eq!(job.outputs(), vec![("-l", PathBuf::from("/dev/null"))]);
        assert_eq!(job.filled_dir(), None);
        // A log the experiment names stays its own.
        let mut log = kind.parse(&argv("-n 10 -l /tmp/x -d /a")).unwrap();
        log.in_cell();
        assert_eq!(log.outputs(), vec![("-l", PathBuf::from("/tmp/x"))]);
        // -D keeps at least 2, -n at least 1; a 0 stays 0.
        let mut small = kind.parse(&argv("-n 3 -D 3 -d /a")).unwrap();
        small.scale(0.01);
        assert_eq!(small.to_json()["options"]["files"], 1);
        assert_eq!(small.to_json()["options"]["subdirs"], 2);
        let mut zero = kind.parse(&argv("-n 0 -d /a")).unwrap();
        zero.scale(0.01);
        assert_eq!(zero.to_json()["options"]["files"], 0);
    }

    #[test]
    fn fsmark_on_a_rank_works_in_a_rank_directory_of_each_dir() {
        let kind = WorkloadRef::of("fsmark").unwrap();
        let mut job = kind.parse(&argv("-n 10 -d /mnt/a -d /mnt/b")).unwrap();
        job.on_rank(&FakeRank { rank: 3, size: 4 }).unwrap();
        assert_eq!(
            job.dirs(),
            vec![
                PathBuf::from("/mnt/a/rank0003"),
                PathBuf::from("/mnt/b/rank0003")
            ]
        );
        let mut one = kind.parse(&argv("-n 10 -d /mnt/a")).unwrap();
        one.on_rank(&FakeRank { rank: 0, size: 1 }).unwrap();
        assert_eq!(one.dirs(), vec![PathBuf::from("/mnt/a")]);
    }
}
