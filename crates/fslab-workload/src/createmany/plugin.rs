//! createmany as a registered [`Workload`].

use std::path::{Path, PathBuf};

use super::CreateManyArgs;
use crate::plugin::{Example, RankPlace, Refused, Start, Workload};
use crate::work::Work;
use crate::{CommonArgs, Error, Report, Result};

/// Lustre's createmany (seed 004).
pub struct CreateMany;

impl Workload for CreateMany {
    type Options = CreateManyArgs;
    const NAME: &'static str = "createmany";

    fn command() -> clap::Command {
        clap::Command::new(Self::NAME)
            .about("Lustre's createmany: create (open, mknod, mkdir, link) or unlink many names (seed 004)")
            .after_help(
                "Examples:\n  fslab createmany -m /mnt/test/f 20000000          # seed 004: mknod 20M names in one directory\n  fslab createmany -o -k -x 100 /mnt/test/d/f%08d 10 5000\n  mpirun -np 4 fslab createmany -m --stonewall 30 /mnt/test/f   # each rank creates for 30 s, then all wear out to the largest count",
            )
    }
    fn common(o: &CreateManyArgs) -> &CommonArgs {
        &o.common
    }
    fn common_mut(o: &mut CreateManyArgs) -> &mut CommonArgs {
        &mut o.common
    }
    fn validate(o: &CreateManyArgs) -> Result<()> {
        o.validate().map(|_| ())
    }
    fn outputs(o: &CreateManyArgs) -> Vec<(&'static str, PathBuf)> {
        let mut v = vec![("FMT", PathBuf::from(&o.fmt))];
        v.extend(o.unlink_fmt.iter().map(|f| ("-r", PathBuf::from(f))));
        v.extend(o.link.iter().map(|l| ("-l", l.clone())));
        v
    }
    /// FMT's directory, where the names go.
    fn workdir(o: &CreateManyArgs) -> PathBuf {
        Path::new(&o.fmt)
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .map(PathBuf::from)
            .unwrap_or_else(|| ".".into())
    }
    /// FMT's directory, filled with the names (seed 004's htree depth).
    fn filled_dir(o: &CreateManyArgs) -> Option<PathBuf> {
        Some(Self::workdir(o))
    }
    /// COUNT (the last of `[START] COUNT`).
    fn scale(o: &mut CreateManyArgs, factor: f64) {
        if let Some(count) = o.numbers.last_mut() {
            *count = crate::scale::text(count, factor, 1);
        }
    }
    /// COUNT names (each also removed with `-u`, each written with `-W`);
    /// without COUNT, its `-t` or `--stonewall` seconds.
    fn work(o: &CreateManyArgs) -> Option<Work> {
        let count = o.numbers.last().and_then(|c| c.parse::<u64>().ok());
        let seconds = o
            .seconds
            .or(o.stonewall.and_then(|s| u64::try_from(s).ok()));
        let written = o.write.as_deref().and_then(fslab_model::units::parse_bytes);
        let (count, seconds) = match (count, seconds) {
            (Some(c), _) => (c, 0),
            (None, Some(s)) => (0, s),
            (None, None) => return None,
        };
        let written = written.unwrap_or(0);
        Some(Work {
            ops: count * (1 + u64::from(o.unlink) + Work::blocks(written)),
            seconds,
            bytes: if o.unlink { 0 } else { count * written },
            entries: if o.unlink { 0 } else { count },
        })
    }
    /// Each rank's names go in a `rankNNNN` directory of FMT's (a `-l`
    /// target is shared); with `--shared-dir` all share FMT's directory and
    /// rank R takes the numbers from START + R x COUNT.
    fn on_rank(o: &mut CreateManyArgs, place: &dyn RankPlace) -> Result<()> {
        if !o.shared_dir {
            let ranked = |f: &str| {
                place
                    .file(Path::new(f))
                    .map(|p| p.to_string_lossy().into_owned())
            };
            o.fmt = ranked(&o.fmt)?;
            if let Some(u) = o.unlink_fmt.take() {
                o.unlink_fmt = Some(ranked(&u)?);
            }
            return Ok(());
        }
        if place.size() == 1 {
            return Ok(());
        }
        let num = |s: &str| {
            s.parse::<i64>()
                .map_err(|_| Error::Options(format!("{s:?} is not a whole number")))
        };
        let (start, count) = match o.numbers.as_slice() {
            [] => {
                return Err(Error::Options(
                    "--shared-dir needs COUNT: rank R takes the numbers from START + R x COUNT"
                        .into(),
                ))
            }
            [c] => (0, num(c)?),
            [s, c, ..] => (num(s)?, num(c)?),
        };
        let rank = place.rank() as i64;
        let first = count
            .checked_mul(rank)
            .and_then(|off| start.checked_add(off))
            .ok_or_else(|| {
                Error::Options(format!(
                    "--shared-dir: rank {rank}'s numbers would pass {}",
                    i64::MAX
                ))
            })?;
        o.numbers = vec![first.to_string(), count.to_string()];
        Ok(())
    }
    fn example() -> Example {
        Example {
            args: "-m -t 600 {dir}/f%08d 20000000",
            scale: 0.001,
            scaled: &[("numbers", "[\"20000\"]"), ("seconds", "600")],
            refused: Refused {
                args: "-o -m {dir}/f 10",
                option: "-o",
                value: "-m",
            },
        }
    }
    fn run(o: &CreateManyArgs, start: Start<'_, '_>) -> Result<Box<dyn Report>> {
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
    fn createmany_scales_its_count_not_its_start_and_fills_its_names_directory() {
        let dir = tempfile::tempdir().unwrap();
        let fmt = dir.path().join("f%08d").display().to_string();
        let kind = WorkloadRef::of("createmany").unwrap();
        assert!(!kind.takes_dirs());
        let mut two = kind.parse(&argv(&format!("-o {fmt} 7 5000"))).unwrap();
        two.scale(0.01);
        assert_eq!(
            two.to_json()["options"]["numbers"],
            serde_json::json!(["7", "50"])
        );
        assert_eq!(two.filled_dir().as_deref(), Some(dir.path()));
        assert_eq!(two.outputs(), vec![("FMT", PathBuf::from(&fmt))]);
    }

    #[test]
    fn createmany_on_a_rank_names_in_its_own_directory_or_its_own_numbers() {
        let kind = WorkloadRef::of("createmany").unwrap();
        let mut job = kind
            .parse(&argv("-m -r /mnt/t/g%d -l /mnt/t/target /mnt/t/f%08d 100"))
            .unwrap();
        job.on_rank(&FakeRank { rank: 2, size: 3 }).unwrap();
        let o = job.to_json()["options"].clone();
        assert_eq!(o["fmt"], "/mnt/t/rank0002/f%08d");
        assert_eq!(o["unlink_fmt"], "/mnt/t/rank0002/g%d");
        assert_eq!(o["link"], "/mnt/t/target", "a link target is shared");

        let mut shared = kind.parse(&argv("-m --shared-dir /mnt/t/f 5 100")).unwrap();
        shared.on_rank(&FakeRank { rank: 2, size: 3 }).unwrap();
        let o = shared.to_json()["options"].clone();
        assert_eq!(o["fmt"], "/mnt/t/f");
        assert_eq!(o["numbers"], serde_json::json!(["205", "100"]));

        let mut alone = kind.parse(&argv("-m --shared-dir /mnt/t/f 100")).unwrap();
        alone.on_rank(&FakeRank { rank: 0, size: 1 }).unwrap();
        assert_eq!(
            alone.to_json()["options"]["numbers"],
            serde_json::json!(["100"])
        );

        let mut no_count = kind.parse(&argv("-m --shared-dir -t 5 /mnt/t/f")).unwrap();
        let e = no_count
            .on_rank(&FakeRank { rank: 1, size: 2 })
            .unwrap_err();
        assert!(e.is_usage() && e.to_string().contains("needs COUNT"), "{e}");
        let mut over = kind
            .parse(&argv(&format!(
                "-m --shared-dir /mnt/t/f {} 10",
                i64::MAX - 5
            )))
            .unwrap();
        let e = over.on_rank(&FakeRank { rank: 1, size: 2 }).unwrap_err();
        assert!(e.to_string().contains("would pass"), "{e}");
    }
}
