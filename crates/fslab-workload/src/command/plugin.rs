//! The program workload as a [`Workload`]: `fslab exec` on the command
//! line, `kind = "command"` in an experiment.

use std::path::PathBuf;

use super::CommandArgs;
use crate::plugin::{Example, RankPlace, Refused, Start, Workload};
use crate::{CommonArgs, Report};

/// A benchmark program fslab runs.
pub struct Exec;

/// The subcommand's help: what it is and examples.
pub const ABOUT: &str = "Run a benchmark program (fio, the IO500 app, IOR, mdtest, elbencho, any) as a workload: timed, probed, its output kept and parsed into metrics";
pub const EXAMPLES: &str = "Examples:
  fslab exec -C /mnt/test -- fio --name=rw --directory=/mnt/test --rw=randwrite --bs=4k --size=64m --output-format=json+
  fslab exec -C /mnt/test --parser regex --metric 'copy rate (MB/s)=copied, [0-9.]+ s, ([0-9.]+) MB/s' -- dd if=/dev/zero of=/mnt/test/f bs=1M count=64 conv=fsync
  fslab results output 12 stdout        # what the program printed

The parser is the one named after the program (fio, io500, ior, mdtest, elbencho) unless --parser
names another (or none). In an experiment: [workload] kind = \"command\", args = [\"fio\", ...],
parser = \"fio\", metrics = [...]; {dir} is the program's directory.";

impl Workload for Exec {
    type Options = CommandArgs;
    const NAME: &'static str = "command";

    fn command() -> clap::Command {
        clap::Command::new(Self::NAME)
            .visible_alias("exec")
            .about(ABOUT)
            .after_help(EXAMPLES)
    }
    fn common(o: &CommandArgs) -> &CommonArgs {
        &o.common
    }
    fn common_mut(o: &mut CommandArgs) -> &mut CommonArgs {
        &mut o.common
    }
    fn validate(o: &CommandArgs) -> crate::Result<()> {
        o.validate().map(|_| ())
    }
    fn experiment_prefix() -> &'static [&'static str] {
        &["--dir", "{dir}"]
    }
    fn experiment_keys() -> &'static [(&'static str, &'static str)] {
        &[
            ("parser", "--parser"),
            ("metrics", "--metric"),
            ("inputs", "--input"),
            ("parse_file", "--parse-file"),
        ]
    }
    fn launches_ranks() -> bool {
        true
    }
    fn set_launcher(o: &mut CommandArgs, launcher: Vec<String>) {
        o.launcher = launcher;
    }
    fn allow_commands(o: &mut CommandArgs, programs: &[String]) {
        o.allow_command.extend(programs.iter().cloned());
    }
    /// Its directory, every path among its arguments and its result file.
    fn outputs(o: &CommandArgs) -> Vec<(&'static str, PathBuf)> {
        let mut v = vec![("--dir", o.dir.clone())];
        v.extend(
            o.argument_paths()
                .into_iter()
                .map(|(_, p)| ("an argument of the program", p)),
        );
        if let Some(f) = &o.parse_file {
            v.push(("--parse-file", o.dir.join(f)));
        }
        v
    }
    fn workdir(o: &CommandArgs) -> PathBuf {
        o.dir.clone()
    }
    /// A program's arguments are its own: `--scale` leaves them alone.
    fn scale(_o: &mut CommandArgs, _factor: f64) {}
    fn example() -> Example {
        Example {
            args: "--dir {dir} -- true",
            scale: 0.01,
            scaled: &[],
            refused: Refused {
                args: "--dir {dir} --parser nosuch -- true",
                option: "--parser",
                value: "nosuch",
            },
        }
    }
    /// Each rank's program runs in a directory of its own (`DIR/rankNNNN`).
    fn on_rank(o: &mut CommandArgs, place: &dyn RankPlace) -> crate::Result<()> {
        o.dir = place.dir(&o.dir)?;
        Ok(())
    }
    /// Its text is the program's, as the program prints it.
    fn speaks_for_ranks() -> bool {
        true
    }
    fn run(o: &CommandArgs, start: Start<'_, '_>) -> crate::Result<Box<dyn Report>> {
        Ok(Box::new(super::run(o, start)?))
    }
}
