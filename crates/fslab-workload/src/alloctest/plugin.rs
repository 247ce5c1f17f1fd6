//! alloctest as a registered [`Workload`].

use std::path::{Path, PathBuf};

use super::AllocArgs;
use crate::plugin::{Example, RankPlace, Refused, Start, Workload};
use crate::work::Work;
use crate::{CommonArgs, Report, Result};

/// Seed 002's mmap test.
pub struct AllocTest;

impl Workload for AllocTest {
    type Options = AllocArgs;
    const NAME: &'static str = "alloctest";

    fn command() -> clap::Command {
        clap::Command::new(Self::NAME)
            .about("Seed 002's mmap test: random page writes through MAP_SHARED, then extents and a cold read-back")
            .after_help("Example (seed 002, 1 GiB file, 8 threads touching pages):\n  fslab alloctest /mnt/test/big 1G")
    }
    fn common(o: &AllocArgs) -> &CommonArgs {
        &o.common
    }
    fn common_mut(o: &mut AllocArgs) -> &mut CommonArgs {
        &mut o.common
    }
    fn validate(o: &AllocArgs) -> Result<()> {
        o.validate().map(|_| ())
    }
    fn outputs(o: &AllocArgs) -> Vec<(&'static str, PathBuf)> {
        vec![("FILE", o.file.clone())]
    }
    /// FILE's directory.
    fn workdir(o: &AllocArgs) -> PathBuf {
        o.file
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("."))
    }
    /// LEN, in whole MiB, at least 1 MiB (a LEN that is not a size stays,
    /// for validation to refuse).
    fn scale(o: &mut AllocArgs, factor: f64) {
        if let Some(b) = fslab_model::units::parse_bytes(&o.len) {
            let mib = 1u64 << 20;
            o.len = ((((b as f64 * factor) as u64).div_ceil(mib)) * mib)
                .max(mib)
                .to_string();
        }
    }
    /// LEN written in 4 KiB pages, read back unless `--no-readback`.
    fn work(o: &AllocArgs) -> Option<Work> {
        let v = o.validate().ok()?;
        Some(Work {
            ops: Work::blocks(v.len) * (1 + u64::from(v.readback)),
            seconds: 0,
            bytes: v.len,
            entries: 1,
        })
    }
    /// Each rank's file goes in a `rankNNNN` directory of FILE's.
    fn on_rank(o: &mut AllocArgs, place: &dyn RankPlace) -> Result<()> {
        o.file = place.file(Path::new(&o.file))?;
        Ok(())
    }
    fn example() -> Example {
        Example {
            args: "--fallocate {dir}/big 1G",
            scale: 0.01,
            scaled: &[("len", "\"11534336\"")],
            refused: Refused {
                args: "{dir}/big nonsense",
                option: "LEN",
                value: "nonsense",
            },
        }
    }
    fn run(o: &AllocArgs, start: Start<'_, '_>) -> Result<Box<dyn Report>> {
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
    fn alloctest_length_scales_to_at_least_a_mib_and_junk_is_left_to_validation() {
        let kind = WorkloadRef::of("alloctest").unwrap();
        let job = kind.parse(&argv("/x/big 1G")).unwrap();
        assert_eq!(job.outputs(), vec![("FILE", PathBuf::from("/x/big"))]);
        let mut tiny = job.clone();
        tiny.scale(1e-9);
        assert_eq!(tiny.to_json()["options"]["len"], (1u64 << 20).to_string());
        let mut junk = kind.parse(&argv("/x/big lots")).unwrap();
        junk.scale(0.5);
        assert_eq!(junk.to_json()["options"]["len"], "lots");
    }

    #[test]
    fn alloctest_on_a_rank_writes_its_file_in_a_rank_directory() {
        let mut job = WorkloadRef::of("alloctest")
            .unwrap()
            .parse(&argv("/mnt/t/big 1G"))
            .unwrap();
        job.on_rank(&FakeRank { rank: 5, size: 8 }).unwrap();
        assert_eq!(job.outputs()[0].1, PathBuf::from("/mnt/t/rank0005/big"));
    }
}
