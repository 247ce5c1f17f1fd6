//! `fslab io500md`'s options (IO500's ini settings that its metadata phases
//! read, as options) and the mdtest command line of each phase, argument
//! for argument as IO500's phase_mdtest_*.c build them.

use std::path::{Path, PathBuf};

use clap::{Args, FromArgMatches};
use serde::{Deserialize, Serialize};

use crate::common::CommonArgs;
use crate::mdtest::{MdtestArgs, Options as MdtestOptions};

/// IO500's stonewall time and minimum write time (src/phase_dbg.c's
/// `stonewall-time` default, src/main.c's `opt.minwrite`), seconds.
pub const IO500_STONEWALL_S: u64 = 300;
/// IO500's minimum write time, seconds (30 under its student cluster
/// competition rules, which fslab does not model).
pub const IO500_MINWRITE_S: u64 = 300;
/// mdtest-hard's bytes per file (`-w 3901 -e 3901`) and the find's `-size`.
pub const HARD_BYTES: u64 = 3901;

/// `fslab io500md [options] [-d DIR | CONFIG.ini]`: IO500's metadata phases.
#[derive(Debug, Clone, Args, Serialize, Deserialize)]
pub struct Io500Args {
    /// IO500's configuration file: its [global], [debug], [mdtest-easy], [mdtest-hard] and [find] keys set the options (its datadir and resultdir with IO500's defaults, timestamped unless it turns that off)
    #[arg(value_name = "CONFIG.ini")]
    pub config: Option<PathBuf>,
    /// IO500's datadir: mdtest-easy and mdtest-hard are made (and removed) under it
    #[arg(
        short = 'd',
        long = "dir",
        value_name = "DIR",
        default_value = "./datafiles"
    )]
    pub dir: PathBuf,
    /// IO500's resultdir: the stonewall files, the timestamp file, each phase's mdtest text and per-rank CSV (default DIR/results)
    #[arg(long = "resultdir", value_name = "DIR")]
    pub resultdir: Option<PathBuf>,
    /// [mdtest-easy] n: files per process (IO500's default 1000000; --scale scales it)
    #[arg(long = "easy-n", value_name = "N", default_value_t = 1_000_000)]
    pub easy_n: u64,
    /// [mdtest-hard] n: files per process (IO500's default 1000000; --scale scales it)
    #[arg(long = "hard-n", value_name = "N", default_value_t = 1_000_000)]
    pub hard_n: u64,
    /// [debug] stonewall-time: the write phases' stonewall, seconds (IO500's 300; --scale scales it)
    #[arg(long = "stonewall-time", value_name = "SECONDS", default_value_t = IO500_STONEWALL_S)]
    pub stonewall_time: u64,
    /// The minimum time of a write phase for a valid run, seconds (IO500's 300; --scale scales it)
    #[arg(long = "minwrite", value_name = "SECONDS", default_value_t = IO500_MINWRITE_S)]
    pub minwrite: u64,
    /// The ini's `[mdtest-easy] run = FALSE`: its phases are not run (score 0).
    #[arg(skip)]
    #[serde(default)]
    pub skip_easy: bool,
    /// The ini's `[mdtest-hard] run = FALSE`.
    #[arg(skip)]
    #[serde(default)]
    pub skip_hard: bool,
    /// The ini's `[find] run = FALSE`.
    #[arg(skip)]
    #[serde(default)]
    pub skip_find: bool,
    /// The ini as given (written back as `config-orig.ini`).
    #[arg(skip)]
    #[serde(default)]
    pub config_text: Option<String>,
    #[command(flatten)]
    pub common: CommonArgs,
}

/// The two mdtest configurations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tree {
    Easy,
    Hard,
}

/// What an mdtest phase does (the letter IO500 adds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// `-C -Y -W STONEWALL`
    Write,
    /// `-T`
    Stat,
    /// `-E` (IO500 adds `-X`, data verification, which fslab's mdtest has not)
    Read,
    /// `-r`
    Delete,
}

/// One of IO500's mdtest phases.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MdPhase {
    pub tree: Tree,
    pub step: Step,
}

impl MdPhase {
    /// IO500's name for it (`mdtest-easy-write`).
    pub fn name(self) -> String {
        format!("{}-{}", self.tree.name(), self.step.name())
    }
}

impl Tree {
    /// `mdtest-easy`, `mdtest-hard`: the phase group and its directory's name.
    pub fn name(self) -> &'static str {
        match self {
            Tree::Easy => "mdtest-easy",
            Tree::Hard => "mdtest-hard",
        }
    }
}

impl Step {
    pub fn name(self) -> &'static str {
        match self {
            Step::Write => "write",
            Step::Stat => "stat",
            Step::Read => "read",
            Step::Delete => "delete",
        }
    }
}

impl Io500Args {
    /// The result directory (DIR/results unless given).
    pub fn results(&self) -> PathBuf {
        self.resultdir
            .clone()
            .unwrap_or_else(|| self.dir.join("results"))
    }

    /// The tree's directory under the datadir (`DIR/mdtest-easy`).
    pub fn tree_dir(&self, t: Tree) -> PathBuf {
        self.dir.join(t.name())
    }

    /// The checks: each refusal one line naming the bad value; then every
    /// phase's mdtest command line is checked as mdtest checks it.
    pub fn validate(&self) -> crate::Result<()> {
        for (opt, v) in [("--easy-n", self.easy_n), ("--hard-n", self.hard_n)] {
            if v == 0 {
                return Err(crate::opt(opt, 0, "must be at least 1"));
            }
        }
        for (opt, v, io500) in [
            ("--stonewall-time", self.stonewall_time, IO500_STONEWALL_S),
            ("--minwrite", self.minwrite, IO500_MINWRITE_S),
        ] {
            if v == 0 {
                return Err(crate::opt(
                    opt,
                    0,
                    format!("must be at least 1 second (IO500's is {io500})"),
                ));
            }
        }
        if self.resultdir.as_deref() == Some(self.dir.as_path()) {
            return Err(crate::opt(
                "--resultdir",
                self.dir.display(),
                "must not be the datadir (-d), which the find walks",
            ));
        }
        for p in crate::io500::PHASES.iter().filter_map(|p| p.mdtest()) {
            self.mdtest(p)?;
        }
        Ok(())
    }

    /// Phase `p`'s mdtest command line (after the program), as IO500's
    /// mdtest_easy_add_params / mdtest_hard_add_params and the phase's own
    /// letters build it, less `--dataPacketType` and `-G` (the data's
    /// pattern and its seed: fslab's mdtest writes zeros) and `-X`.
    pub fn mdtest_argv(&self, p: MdPhase) -> Vec<String> {
        let res = self.results();
        let path = |p: &Path| p.display().to_string();
        let mut a: Vec<String> = match p.tree {
            Tree::Easy => vec![
                "-n".into(),
                self.easy_n.to_string(),
                "-u".into(),
                "-L".into(),
                "-F".into(),
                "-P".into(),
                "-N".into(),
                "1".into(),
                "-d".into(),
                path(&self.tree_dir(Tree::Easy)),
                "-x".into(),
                path(&res.join("mdtest-easy.stonewall")),
            ],
            Tree::Hard => vec![
                "-n".into(),
                self.hard_n.to_string(),
                "-t".into(),
                "-w".into(),
                HARD_BYTES.to_string(),
                "-e".into(),
                HARD_BYTES.to_string(),
                "-P".into(),
                "-N".into(),
                "1".into(),
                "-F".into(),
                "-d".into(),
                path(&self.tree_dir(Tree::Hard)),
                "-x".into(),
                path(&res.join("mdtest-hard.stonewall")),
            ],
        };
        match p.step {
            Step::Write => a.extend([
                "-C".into(),
                "-Y".into(),
                "-W".into(),
                self.stonewall_time.to_string(),
            ]),
            Step::Stat => a.push("-T".into()),
            Step::Read => a.push("-E".into()),
            Step::Delete => a.push("-r".into()),
        }
        a.push(format!(
            "--saveRankPerformanceDetails={}",
            path(&res.join(format!("{}.csv", p.name())))
        ));
        a
    }

    /// Phase `p`'s mdtest command line as recorded and kept (`mdtest ...`).
    pub fn mdtest_command(&self, p: MdPhase) -> Vec<String> {
        std::iter::once("mdtest".to_string())
            .chain(self.mdtest_argv(p))
            .collect()
    }

    /// What `result.txt` says phase `p` runs (its `exe`): fslab's mdtest
    /// with its arguments, fslab's find with IO500's criteria; none for
    /// the timestamp.
    pub fn exe(&self, p: super::Phase) -> Option<String> {
        match p {
            super::Phase::Md(m) => Some(self.mdtest_command(m).join(" ")),
            super::Phase::Find => Some(format!(
                "fslab-find {} -newer {} -size {HARD_BYTES}c -name *01*",
                self.dir.display(),
                self.results().join("timestampfile").display()
            )),
            super::Phase::Timestamp => None,
        }
    }

    /// Whether phase `p` runs (the ini's `run = FALSE` turns a group off).
    pub fn runs(&self, p: super::Phase) -> bool {
        match p {
            super::Phase::Md(m) => match m.tree {
                Tree::Easy => !self.skip_easy,
                Tree::Hard => !self.skip_hard,
            },
            super::Phase::Find => !self.skip_find,
            super::Phase::Timestamp => true,
        }
    }

    /// Phase `p`'s mdtest options, checked by mdtest's own rules.
    pub fn mdtest(&self, p: MdPhase) -> crate::Result<MdtestOptions> {
        let argv = self.mdtest_argv(p);
        let refused = |e: clap::Error| {
            let first = e.to_string();
            let first = first.lines().next().unwrap_or_default().to_string();
            crate::Error::Options(format!("{}: mdtest {}: {first}", p.name(), argv.join(" ")))
        };
        let cmd = MdtestArgs::augment_args(clap::Command::new("mdtest"));
        let m = cmd
            .try_get_matches_from(std::iter::once("mdtest".to_string()).chain(argv.clone()))
            .map_err(refused)?;
        let args = MdtestArgs::from_arg_matches(&m).map_err(refused)?;
        args.validate().map_err(|e| {
            crate::Error::Options(format!("{}: mdtest {}: {e}", p.name(), argv.join(" ")))
        })
    }
}
