//! A workload's arguments as an experiment file gives them, checked when
//! the experiment is loaded (so `fslab run --dry-run` refuses what the run
//! would refuse): parsed by the workload's own parser, validated by its own
//! rules, with the options `fslab run` sets itself refused, and every path
//! the workload will write to inside the cell's filesystem.

use std::path::{Component, Path, PathBuf};

use clap::{Args, FromArgMatches};

use crate::alloctest::AllocArgs;
use crate::common::CommonArgs;
use crate::compilebench::CompileArgs;
use crate::createmany::CreateManyArgs;
use crate::dbench::DbenchArgs;
use crate::fsmark::cli::FsMarkArgs;
use crate::tiotest::TioArgs;
use fslab_record::WorkloadKind;

/// What the check needs to know of a workload's parsed arguments.
trait Checked: Args + FromArgMatches {
    fn common(&self) -> &CommonArgs;
    /// `-d` directories (fsmark, tiotest), which `fslab run` gives.
    fn dirs(&self) -> &[PathBuf] {
        &[]
    }
    /// Every path the workload creates, writes or removes, by option.
    fn outputs(&self) -> Vec<(&'static str, PathBuf)>;
    /// The workload's own validation of its options.
    fn validate(&self) -> Result<(), String>;
}

impl Checked for FsMarkArgs {
    fn common(&self) -> &CommonArgs {
        &self.common
    }
    fn dirs(&self) -> &[PathBuf] {
        &self.dirs
    }
    fn outputs(&self) -> Vec<(&'static str, PathBuf)> {
        self.log_file.iter().map(|l| ("-l", l.clone())).collect()
    }
    fn validate(&self) -> Result<(), String> {
        self.raw().validate().map(|_| ()).map_err(|e| e.to_string())
    }
}

impl Checked for TioArgs {
    fn common(&self) -> &CommonArgs {
        &self.common
    }
    fn dirs(&self) -> &[PathBuf] {
        &self.dirs
    }
    fn outputs(&self) -> Vec<(&'static str, PathBuf)> {
        Vec::new()
    }
    fn validate(&self) -> Result<(), String> {
        TioArgs::validate(self)
            .map(|_| ())
            .map_err(|e| e.to_string())
    }
}

impl Checked for CreateManyArgs {
    fn common(&self) -> &CommonArgs {
        &self.common
    }
    fn outputs(&self) -> Vec<(&'static str, PathBuf)> {
        let mut v = vec![("FMT", PathBuf::from(&self.fmt))];
        v.extend(self.unlink_fmt.iter().map(|f| ("-r", PathBuf::from(f))));
        v.extend(self.link.iter().map(|l| ("-l", l.clone())));
        v
    }
    fn validate(&self) -> Result<(), String> {
        CreateManyArgs::validate(self)
            .map(|_| ())
            .map_err(|e| e.to_string())
    }
}

impl Checked for AllocArgs {
    fn common(&self) -> &CommonArgs {
        &self.common
    }
    fn outputs(&self) -> Vec<(&'static str, PathBuf)> {
        vec![("FILE", self.file.clone())]
    }
    fn validate(&self) -> Result<(), String> {
        AllocArgs::validate(self)
            .map(|_| ())
            .map_err(|e| e.to_string())
    }
}

impl Checked for DbenchArgs {
    fn common(&self) -> &CommonArgs {
        &self.common
    }
    fn outputs(&self) -> Vec<(&'static str, PathBuf)> {
        vec![("-D", self.dir.clone())]
    }
    fn validate(&self) -> Result<(), String> {
        DbenchArgs::validate(self)
            .map(|_| ())
            .map_err(|e| e.to_string())
    }
}

impl Checked for CompileArgs {
    fn common(&self) -> &CommonArgs {
        &self.common
    }
    fn outputs(&self) -> Vec<(&'static str, PathBuf)> {
        vec![("-D", self.dir.clone())]
    }
    fn validate(&self) -> Result<(), String> {
        CompileArgs::validate(self)
            .map(|_| ())
            .map_err(|e| e.to_string())
    }
}

/// `path` with `.` and `..` resolved by name alone; None when `..` climbs
/// above where the path starts (or above `/`).
fn lexical(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    let mut depth = 0usize;
    for c in path.components() {
        match c {
            Component::RootDir | Component::Prefix(_) => out.push(c.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => {
                depth = depth.checked_sub(1)?;
                out.pop();
            }
            Component::Normal(n) => {
                depth += 1;
                out.push(n);
            }
        }
    }
    Some(out)
}

/// Whether `path` (absolute, or relative to the workload's directory
/// `inside`, where `fslab run` starts it) stays below `inside` by name.
pub fn stays_inside(path: &Path, inside: &Path) -> bool {
    let full = if path.is_absolute() {
        path.to_path_buf()
    } else {
        inside.join(path)
    };
    match (lexical(&full), lexical(inside)) {
        (Some(p), Some(i)) => p.starts_with(&i),
        _ => false,
    }
}

/// clap's error as one line: its first paragraph, which names the bad
/// option or value (its message spans several lines).
pub fn clap_error_line(e: &clap::Error) -> String {
    let text = e.render().to_string();
    let first: Vec<&str> = text
        .lines()
        .map(str::trim)
        .take_while(|l| !l.is_empty())
        .collect();
    let mut line = first.join(" ").trim_start_matches("error: ").to_string();
    // clap's suggestion ("a similar subcommand exists: 'fsmark'") is worth the line.
    if let Some(tip) = text
        .lines()
        .map(str::trim)
        .find_map(|l| l.strip_prefix("tip: "))
    {
        line.push_str(&format!(" ({tip})"));
    }
    line
}

/// `argv` (no program name) parsed as `T`'s options under `cmd`.
fn parse_with<T: Args + FromArgMatches>(cmd: clap::Command, argv: &[String]) -> Result<T, String> {
    let m = T::augment_args(cmd.no_binary_name(true))
        .try_get_matches_from(argv)
        .map_err(|e| clap_error_line(&e))?;
    T::from_arg_matches(&m).map_err(|e| clap_error_line(&e))
}

/// fsmark's command for experiment arguments: fs_mark's own `-h`, and a
/// later option overriding an earlier one.
fn fsmark_command() -> clap::Command {
    clap::Command::new("workload")
        .disable_help_flag(true)
        .args_override_self(true)
}

/// Parses fsmark arguments as an experiment file gives them.
pub fn parse_fsmark(argv: &[String]) -> Result<FsMarkArgs, String> {
    parse_with(fsmark_command(), argv)
}

fn check_as<T: Checked>(
    cmd: clap::Command,
    argv: &[String],
    fslab_dirs: usize,
    cell: &Path,
) -> Result<(), String> {
    let a: T = parse_with(cmd, argv)?;
    if a.dirs().len() != fslab_dirs {
        return Err(
            "-d is set by fslab run (one per workload.dirs, on the cell's filesystem)".into(),
        );
    }
    let c = a.common();
    let owned = [
        ("--json", c.json),
        ("--cgroup", c.cgroup.is_some()),
        ("--die-with-parent", c.die_with_parent),
        ("--progress", c.progress),
        ("--phase-acks", c.phase_acks),
        ("--text-to", c.text_to.is_some()),
        ("--drop-caches (use [machine] drop_caches)", c.drop_caches),
        (
            "--drop-caches-once (use [machine] drop_caches = \"once\")",
            c.drop_caches_once,
        ),
        (
            "--probes (use probes = [...] in [workload], or fslab run --probes)",
            c.probes != "default",
        ),
    ];
    if let Some((opt, _)) = owned.iter().find(|(_, set)| *set) {
        return Err(format!(
            "{opt} is set by fslab run, not by the experiment file"
        ));
    }
    for (opt, p) in a.outputs() {
        if !p.is_absolute() || !stays_inside(&p, cell) {
            return Err(format!(
                "{opt} {}: outside the cell's filesystem (start workload paths with {{dir}})",
                p.display()
            ));
        }
    }
    a.validate()
}

/// Checks a workload's full argument list as `fslab run` would start it
/// (after the workload's name, `{dir}` replaced by directories below
/// `cell`, which must exist) with `fslab_dirs` `-d` options of fslab's own
/// at its end. The error is one line naming the bad option or value.
pub fn check_experiment_args(
    kind: WorkloadKind,
    argv: &[String],
    fslab_dirs: usize,
    cell: &Path,
) -> crate::Result<()> {
    let cmd = clap::Command::new("workload");
    let checked = match kind {
        WorkloadKind::FsMark => check_as::<FsMarkArgs>(fsmark_command(), argv, fslab_dirs, cell),
        WorkloadKind::TioTest => check_as::<TioArgs>(cmd, argv, fslab_dirs, cell),
        WorkloadKind::CreateMany => check_as::<CreateManyArgs>(cmd, argv, fslab_dirs, cell),
        WorkloadKind::AllocTest => check_as::<AllocArgs>(cmd, argv, fslab_dirs, cell),
        WorkloadKind::Dbench => check_as::<DbenchArgs>(cmd, argv, fslab_dirs, cell),
        WorkloadKind::CompileBench => check_as::<CompileArgs>(cmd, argv, fslab_dirs, cell),
    };
    checked.map_err(crate::Error::Options)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A check's error as its message, after making sure it is a usage error.
    fn usage(r: crate::Result<()>) -> Result<(), String> {
        r.map_err(|e| {
            assert!(e.is_usage(), "{e:?}");
            e.to_string()
        })
    }

    fn argv(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn every_option_has_a_long_name_beside_the_originals_letter() {
        let cmd = || clap::Command::new("workload");
        for (name, c) in [
            ("fsmark", FsMarkArgs::augment_args(fsmark_command())),
            ("tiotest", TioArgs::augment_args(cmd())),
            ("createmany", CreateManyArgs::augment_args(cmd())),
            ("alloctest", AllocArgs::augment_args(cmd())),
            ("dbench", DbenchArgs::augment_args(cmd())),
            ("compilebench", CompileArgs::augment_args(cmd())),
        ] {
            let mut longs = std::collections::BTreeSet::new();
            for a in c.get_arguments().filter(|a| !a.is_positional()) {
                let long = a.get_long().unwrap_or_else(|| {
                    panic!("{name} -{}: no long name", a.get_short().unwrap_or('?'))
                });
                assert!(longs.insert(long), "{name} --{long} twice");
            }
            assert!(longs.len() > 3, "{name}: {longs:?}");
        }
    }

    #[test]
    fn paths_that_climb_out_by_name_are_outside() {
        let cell = Path::new("/run/fslab/mnt-1/c0-r1");
        assert!(stays_inside(Path::new("/run/fslab/mnt-1/c0-r1/0/f"), cell));
        assert!(stays_inside(Path::new("0/log"), cell));
        assert!(!stays_inside(
            Path::new("/run/fslab/mnt-1/c0-r1/0/../../x"),
            cell
        ));
        assert!(!stays_inside(Path::new("../x"), cell));
        assert!(!stays_inside(Path::new("/tmp/x"), cell));
        assert!(!stays_inside(Path::new("/dev/null"), cell));
    }

    #[test]
    fn each_workload_refuses_bad_values_and_options_fslab_owns() {
        let dir = tempfile::tempdir().unwrap();
        let cell = dir.path();
        std::fs::create_dir(cell.join("0")).unwrap();
        let d0 = cell.join("0").display().to_string();
        let fs = |s: &str| {
            let mut v = argv(s);
            v.extend(["-d".to_string(), d0.clone()]);
            usage(check_experiment_args(
                WorkloadKind::of("fsmark").unwrap(),
                &v,
                1,
                cell,
            ))
        };
        assert_eq!(fs("-n 10 -s 0"), Ok(()));
        assert!(fs("-n abc").unwrap_err().contains("abc"));
        assert!(fs("--bogus").unwrap_err().contains("--bogus"));
        assert!(fs("-d/tmp/x")
            .unwrap_err()
            .contains("-d is set by fslab run"));
        assert!(fs("-l /tmp/log").unwrap_err().contains("outside"));
        assert!(fs("--json").unwrap_err().contains("--json"));
        assert!(fs("--text-to=/etc/x").unwrap_err().contains("--text-to"));
        assert!(fs("--db /tmp/x.sqlite").unwrap_err().contains("--db"));

        let cm = |s: &str| {
            usage(check_experiment_args(
                WorkloadKind::of("createmany").unwrap(),
                &argv(s),
                0,
                cell,
            ))
        };
        assert_eq!(cm(&format!("-m {d0}/f 10")), Ok(()));
        assert!(cm(&format!("-m {d0}/../../../x 10"))
            .unwrap_err()
            .contains("outside"));
        assert!(cm("-m f 10").unwrap_err().contains("outside"), "relative");
        let al = |s: &str| {
            usage(check_experiment_args(
                WorkloadKind::of("alloctest").unwrap(),
                &argv(s),
                0,
                cell,
            ))
        };
        assert!(al("/tmp/big 1G").unwrap_err().contains("outside"));
        assert!(al(&format!("{d0}/big nonsense")).is_err());
        let db = |s: &str| {
            usage(check_experiment_args(
                WorkloadKind::of("dbench").unwrap(),
                &argv(s),
                0,
                cell,
            ))
        };
        assert!(db(&format!("-D {d0} -t 1 2")).is_ok());
        assert!(db("-D / -t 1 2").unwrap_err().contains("outside"));
        let cb = |s: &str| {
            usage(check_experiment_args(
                WorkloadKind::of("compilebench").unwrap(),
                &argv(s),
                0,
                cell,
            ))
        };
        assert!(cb(&format!("-D {d0} -i x")).is_err());
        let tio = |s: &str| {
            let mut v = argv(s);
            v.extend(["-d".to_string(), d0.clone()]);
            usage(check_experiment_args(
                WorkloadKind::of("tiotest").unwrap(),
                &v,
                1,
                cell,
            ))
        };
        assert!(tio("-t 2 -f 1 -r 10").is_ok());
        assert!(tio("-d /tmp -t 1").unwrap_err().contains("-d is set"));
        assert!(WorkloadKind::of("nosuch").is_none());
    }
}
