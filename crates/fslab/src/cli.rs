//! The command line: global options and one subcommand per tool.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// `fslab --version`: the version, the commit, and whether MPI is built
/// in (workloads on MPI ranks, `[cluster]` experiments of fslab's own
/// workloads) or not (`cargo build --features mpi` builds it in).
pub const VERSION: &str = if cfg!(feature = "mpi") {
    concat!(
        env!("CARGO_PKG_VERSION"),
        " (git ",
        env!("FSLAB_GIT_REV"),
        "), MPI: built in (Open MPI, the mpi crate)"
    )
} else {
    concat!(
        env!("CARGO_PKG_VERSION"),
        " (git ",
        env!("FSLAB_GIT_REV"),
        "), MPI: not built in (cargo build --features mpi)"
    )
};

/// A filesystem benchmark laboratory.
#[derive(Debug, Parser)]
#[command(
    name = "fslab",
    version = VERSION,
    about,
    long_about = None
)]
pub struct Cli {
    /// Results database [default: $FSLAB_DB, else ~/.local/share/fslab/results.sqlite]
    #[arg(long, global = true, value_name = "PATH")]
    pub db: Option<PathBuf>,

    /// Say only results, warnings and errors: no progress display and no remarks on stderr
    #[arg(long, global = true)]
    pub quiet: bool,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// crc32c self-test and throughput, software and SSE4.2 (seed 001's baseline)
    #[command(after_help = "Example:\n  fslab crc32c --chunks 1000")]
    Crc32c {
        /// Random chunks to checksum
        #[arg(long, default_value_t = 200, value_name = "N")]
        chunks: usize,
    },
    /// Run an experiment: make filesystems, run the workload on each, compare
    #[command(
        after_help = format!(
            "Examples:\n  fslab run --list\n  fslab run seed000-fsmark-sparse --scale 0.01 --repetitions 3\n  fslab run seed004-large-dir --dry-run     # its claims, ids and the author's numbers\n  fslab run my-experiment.toml --dry-run\n  fslab run seed004-large-dir --cell-time-limit 30m\n\n{}",
            fslab_experiment::findings::rule::RULE
        )
    )]
    Run(RunArgs),
    /// Find the first kernel of an ordered list on which a metric is bad: the experiment's
    /// cell on each kernel (in a guest), by binary search between a good and a bad one
    #[command(
        after_help = "The kernels: the experiment's [[target]] kernel = [K1, K2, ...] in order,\n\
        or, for two Debian kernels of one version and flavour, every ABI number between them.\n\
        A kernel is good when all its repetitions fall on the good kernel's side of the\n\
        midpoint between the good and the bad kernel's means (see docs/kernels.md).\n\
        Examples:\n  fslab bisect my-kernels.toml --good k47 --bad k56 --metric 'htree levels'\n  \
        fslab bisect createmany.toml --good debian:6.1.0-47-cloud-amd64 --bad debian:6.1.0-56-cloud-amd64"
    )]
    Bisect(BisectArgs),
    /// Undo what a killed `fslab run` left behind (mounts, loop devices, images, sysctls, cgroups)
    #[command(after_help = "Example (after a kill -9 of fslab run):\n  fslab cleanup")]
    Cleanup,
    /// Read back recorded runs
    #[command(
        subcommand,
        after_help = "Examples:\n  fslab results list --workload fsmark\n  fslab results show 12\n  fslab results export 12 --format csv > run12.csv"
    )]
    Results(ResultsCommand),
    /// Compare the cells of an experiment (default: the latest) or groups of runs, with statistics
    #[command(
        after_help = "Examples:\n  fslab compare\n  fslab compare --experiment 3 --experiment 5 --format markdown\n  fslab compare --runs 1,2,3 --runs 4,5,6 --delta 2\n  fslab compare --calibration 7 --correction holm --alpha 0.01"
    )]
    Compare(CompareArgs),
    /// Every stored run of one experiment: its headline metrics by kernel and fslab version,
    /// change points (E-Divisive means over the experiments) marked
    #[command(
        after_help = "Examples:\n  fslab history seed001-crc-overhead\n  fslab history seed001-crc-overhead --alpha 0.01 --delta 5"
    )]
    History {
        /// The experiment's name [default: the latest experiment's]
        name: Option<String>,
        /// The least change worth marking, in percent; a significant shift smaller than
        /// this is named but not marked [default: any significant one]
        #[arg(long, value_name = "PCT", value_parser = delta_pct)]
        delta: Option<f64>,
        /// The false-alarm rate of each change point's permutation test
        #[arg(long, value_name = "P", default_value_t = 0.05, value_parser = alpha)]
        alpha: f64,
    },
    /// One self-contained HTML page: the comparison, and charts and tables of every cell
    #[command(after_help = "Example:\n  fslab report -o seed000.html")]
    Report {
        #[command(flatten)]
        select: SelectArgs,
        /// Where to write the page (`-` for stdout)
        #[arg(
            short = 'o',
            long = "output",
            value_name = "FILE.html",
            required = true
        )]
        output: PathBuf,
    },
    /// Per column of numbers on stdin (or fs_mark output): min-max(mean+/-sd)
    #[command(
        after_help = "Example (seed 000's stats script):\n  fslab fsmark -d /mnt/test -n 8000 -s 0 -S0 -L 10 | fslab stats --trim-outliers"
    )]
    Stats {
        /// Leave out values beyond Tukey's fences (1.5 IQR beyond the quartiles) first
        #[arg(long)]
        trim_outliers: bool,
    },
    /// Extents of files (FIEMAP records, exactly as the kernel reports them), like filefrag
    #[command(after_help = "Example:\n  fslab frag -v /mnt/test/big")]
    Frag {
        /// List every extent
        #[arg(short = 'v')]
        verbose: bool,
        /// Files to examine
        #[arg(required = true, value_name = "FILE")]
        files: Vec<PathBuf>,
    },
    /// Recorded block IO traces
    #[command(subcommand, after_help = "Example:\n  fslab trace show 12 --limit 50")]
    Trace(TraceCommand),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell)
    #[command(after_help = "Example: fslab completions bash > /etc/bash_completion.d/fslab")]
    Completions {
        /// The shell
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print a man page (roff): fslab's, or a command's; or write every command's page into a directory
    #[command(
        after_help = "Examples:\n  fslab man > /usr/local/share/man/man1/fslab.1\n  fslab man results show | man -l -\n  fslab man --dir /usr/local/share/man/man1   # fslab.1, fslab-run.1, fslab-results-show.1, ..."
    )]
    Man {
        /// The command whose page to print (`run`, `results show`)
        command: Vec<String>,
        /// Write every command's page (fslab.1, fslab-COMMAND.1, ...) into this directory
        #[arg(long, value_name = "DIR")]
        dir: Option<std::path::PathBuf>,
    },
    /// Merge and keep what the ranks of an MPI run kept after a signal (a spool
    /// `STORE.ranks-TOKEN` beside the results store), naming the ranks and hosts that
    /// kept nothing: `fslab run` does it once mpirun has ended; by hand after a run
    /// whose rank 0 was killed before it could
    #[command(
        after_help = "Example:\n  fslab rescue ./fslab.sqlite.ranks-1f2e3d4c5b6a7980\n\nExit status: 0 if \
                      every rank reported, 1 if the run failed (a host lost), 2 if DIR is no spool."
    )]
    Rescue {
        /// The spool directory (`STORE.ranks-TOKEN`)
        #[arg(value_name = "DIR")]
        dir: PathBuf,
    },
    /// Run one cell inside a guest fslab booted for it (what the guest's
    /// init runs; see docs/kernels.md)
    #[command(name = "guest-cell", hide = true)]
    GuestCell {
        /// The job file the host wrote (JSON: the experiment, the cell, the
        /// guest's disks)
        #[arg(value_name = "JOB")]
        job: PathBuf,
    },
    /// Run a workload from its serialized child spec (the child `fslab run` starts)
    #[command(
        hide = true,
        after_help = "Example:\n  fslab job '{\"job\": {\"workload\": \"createmany\", \"options\": {...}}, \"harness\": {\"command_line\": [\"createmany\", \"-o\", \"/mnt/test/f\", \"1000\"], \"json\": true, ...}}'"
    )]
    Job {
        /// {"job": {"workload": NAME, "options": {...}}, "harness": {...}}: the
        /// workload with its options, and what runs around it (the command
        /// line to record, JSON, probes, caches, cgroup, text file, progress)
        #[arg(value_name = "JSON")]
        json: String,
    },
    /// Make, undo or check one cluster host's lab (what `fslab run` starts on
    /// every host of a `[cluster]` experiment, one process per host)
    #[command(
        name = "host-lab",
        hide = true,
        after_help = "Prints one JSON line: {\"host\": NAME, \"ok\": true, ...}.\n\
                      Example:\n  fslab host-lab check '{\"marker\": \"/mnt/shared/.fslab-shared-123\"}'"
    )]
    HostLab {
        /// up (make the cell's filesystem here), down (undo it), check (a
        /// shared directory's marker is seen here)
        #[arg(value_parser = ["up", "down", "check"])]
        action: String,
        /// What to do, as `fslab run` serialized it
        #[arg(value_name = "JSON")]
        json: String,
    },
}

/// Which runs `compare` and `report` analyse, and how their verdicts are
/// reached: one group of arguments for both.
#[derive(Debug, Args)]
pub struct SelectArgs {
    /// Experiment id (from `fslab results experiments`); repeat to compare the cells of
    /// several experiments, say the same one on two kernels; default: the most recent
    #[arg(long, value_name = "ID")]
    pub experiment: Vec<i64>,
    /// A group of run ids, comma-separated; repeat for more groups (instead of an experiment)
    #[arg(long = "runs", value_name = "ID,ID,...")]
    pub runs: Vec<String>,
    /// The group others are compared with: its position (from 0) or its label [default: the first]
    #[arg(long, value_name = "N|LABEL")]
    pub baseline: Option<String>,
    /// The noise threshold in percent: differences smaller than this are "no difference"
    /// [default: a stored A/A calibration that fits, else A/A splits of each cell's runs]
    #[arg(long, value_name = "PCT", value_parser = delta_pct)]
    pub delta: Option<f64>,
    /// How p-values are corrected, every cell and metric together: bh (Benjamini-Hochberg, the
    /// false discovery rate) or holm (the family-wise error rate)
    #[arg(long, value_enum, default_value_t = Correction::Bh)]
    pub correction: Correction,
    /// The error rate the correction holds: a difference is called real when its corrected
    /// p-value is below it
    #[arg(long, value_name = "P", default_value_t = 0.05, value_parser = alpha)]
    pub alpha: f64,
    /// Take the noise threshold from this A/A calibration (the id of the experiment
    /// `fslab run EXPERIMENT --calibrate CELL` made); it must fit the runs compared
    /// [default: the newest that fits each metric, if any; else A/A splits of the runs]
    #[arg(long, value_name = "ID", conflicts_with = "delta")]
    pub calibration: Option<i64>,
}

impl SelectArgs {
    /// What to analyse, as the analysis takes it.
    pub fn choice(self) -> fslab_analysis::Choice<'static> {
        fslab_analysis::Choice {
            policy: self.correction.policy_at(self.delta, self.alpha),
            experiments: self.experiment,
            runs: self.runs,
            baseline: self.baseline,
            calibration: self.calibration,
            refuse_empty: false,
            explainers: fslab_explain::EXPLAINERS,
        }
    }
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    #[command(flatten)]
    pub select: SelectArgs,
    /// Output format (every registered exporter: text, markdown, csv, json, html, ...)
    #[arg(long, default_value = "text", value_parser = formats())]
    pub format: String,
}

/// `--format`'s values: the registered exporters' names.
fn formats() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(fslab_present::export::names())
}

/// `--alpha P`: a significance level above 0 and at most 0.5.
fn alpha(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(x) if x > 0.0 && x <= 0.5 => Ok(x),
        _ => Err(format!(
            "{s:?} is not a significance level above 0 and at most 0.5 (say 0.05)"
        )),
    }
}

/// `--delta PCT`: a percentage above 0 and below 100.
fn delta_pct(s: &str) -> Result<f64, String> {
    match s.trim_end_matches('%').parse::<f64>() {
        Ok(x) if x > 0.0 && x < 100.0 => Ok(x),
        _ => Err(format!("{s:?} is not a percentage between 0 and 100")),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Correction {
    Bh,
    Holm,
}

impl Correction {
    pub fn policy(self, delta_pct: Option<f64>) -> fslab_stats::verdict::Policy {
        fslab_stats::verdict::Policy {
            delta_pct,
            correction: match self {
                Correction::Bh => fslab_stats::verdict::Correction::BenjaminiHochberg,
                Correction::Holm => fslab_stats::verdict::Correction::Holm,
            },
            ..Default::default()
        }
    }

    /// [`Correction::policy`] at significance level `alpha`.
    pub fn policy_at(self, delta_pct: Option<f64>, alpha: f64) -> fslab_stats::verdict::Policy {
        fslab_stats::verdict::Policy {
            alpha,
            ..self.policy(delta_pct)
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum TraceCommand {
    /// Print a run's block IO completions in blkparse's format
    Show {
        /// Run id (from `fslab results list`)
        id: i64,
        /// Print at most this many lines
        #[arg(long, value_name = "N")]
        limit: Option<usize>,
        /// Only this device's completions, as blkparse names it: MAJOR,MINOR
        /// [default: the filesystem's own device]
        #[arg(long, value_name = "MAJ,MIN", value_parser = parse_dev, conflicts_with = "all_devices")]
        dev: Option<(u32, u32)>,
        /// Every traced device's completions (the filesystem's and the disk under its image)
        #[arg(long)]
        all_devices: bool,
    },
}

/// `MAJOR,MINOR` as blkparse prints a device.
fn parse_dev(s: &str) -> Result<(u32, u32), String> {
    let bad = || format!("{s:?} is not a device as MAJOR,MINOR (for example 7,3)");
    let (maj, min) = s.split_once(',').ok_or_else(bad)?;
    let maj: u32 = maj.trim().parse().map_err(|_| bad())?;
    let min: u32 = min.trim().parse().map_err(|_| bad())?;
    if maj >= 1 << 12 || min >= 1 << 20 {
        return Err(format!(
            "{s:?}: major must be below 4096 and minor below 1048576"
        ));
    }
    Ok((maj, min))
}

#[derive(Debug, Args)]
pub struct BisectArgs {
    /// Experiment file, or the name of a built-in experiment
    #[arg(value_name = "EXPERIMENT")]
    pub experiment: String,
    /// A kernel on which the metric is good (a kernel of the list, by name or label)
    #[arg(long, value_name = "KERNEL")]
    pub good: String,
    /// A kernel on which it is bad
    #[arg(long, value_name = "KERNEL")]
    pub bad: String,
    /// The metric, as `fslab run`'s summary and `fslab compare` name it (default: the
    /// workload's first headline metric)
    #[arg(long, value_name = "NAME")]
    pub metric: Option<String>,
    /// Repetitions of each kernel
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub repetitions: u32,
    /// Repetitions a kernel may get before it is called undecided
    #[arg(long, value_name = "N", default_value_t = 6)]
    pub max_repetitions: u32,
    /// Shrink (or grow) counts and sizes by this factor (as fslab run --scale)
    #[arg(long, value_name = "F", default_value_t = 1.0)]
    pub scale: f64,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Experiment file, or the name of a built-in experiment (see --list)
    #[arg(
        value_name = "EXPERIMENT",
        required_unless_present_any = ["list", "resume"],
        conflicts_with = "resume"
    )]
    pub experiment: Option<String>,
    /// Carry on experiment ID (interrupted, or with failed runs): its file and scale as
    /// recorded, only the repetitions that did not complete, recorded in the same experiment
    #[arg(long, value_name = "ID")]
    pub resume: Option<i64>,
    /// Shrink (or grow) counts and sizes by this factor: workload -n and -D, image size (at least 512 MiB)
    #[arg(long, value_name = "F", default_value_t = 1.0)]
    pub scale: f64,
    /// Print the expanded cells and their commands; touch nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Override the number of repetitions (with --resume: add repetitions up to N)
    #[arg(long, value_name = "N")]
    pub repetitions: Option<u32>,
    /// Keep adding repetitions (the first cell and every cell with an unresolved headline
    /// comparison with it, interleaved) until all are resolved or each cell has MAX
    #[arg(long, value_name = "MAX")]
    pub until_resolved: Option<u32>,
    /// Calibrate instead: run cell CELL (its index, from 0) against itself, two copies
    /// interleaved, and keep each metric's A/A noise for `fslab compare` (per metric,
    /// filesystem and machine). Example: fslab run my.toml --calibrate 0 --repetitions 5
    #[arg(long, value_name = "CELL", conflicts_with_all = ["resume", "until_resolved"])]
    pub calibrate: Option<u32>,
    /// Leave the image files in place after each run
    #[arg(long)]
    pub keep_images: bool,
    /// The block device a `kind = "block"` experiment may format (it must be named here too)
    #[arg(long, value_name = "DEVICE")]
    pub format_device: Option<PathBuf>,
    /// Format the named block device even if it holds a filesystem or data; use a
    /// directory device that holds files fslab did not make
    #[arg(long)]
    pub force: bool,
    /// Allow the experiment to set this sysctl although it is outside the vm.* and fs.*
    /// settings a filesystem experiment changes (repeatable; shown by --dry-run, recorded)
    #[arg(long, value_name = "NAME")]
    pub allow_sysctl: Vec<String>,
    /// Allow after_mkfs to run this program as root although it is not a filesystem tuning
    /// tool (tune2fs, xfs_admin, btrfstune, e2label); repeatable; shown by --dry-run, recorded
    #[arg(long, value_name = "PROGRAM")]
    pub allow_command: Vec<String>,
    /// List the built-in experiments
    #[arg(long)]
    pub list: bool,
    /// The instruments of every cell, as the workloads' --probes takes them
    /// (default, all, none, names, -NAME); overrides the experiment's `probes`
    #[arg(long, value_name = "LIST")]
    pub probes: Option<String>,
    /// Stop a cell's workload that runs longer than this ("90s", "20m", "2h"): the cell
    /// fails with "time limit", what it measured is kept, the next cell starts; overrides
    /// the experiment's `time_limit`
    #[arg(long, value_name = "DURATION")]
    pub cell_time_limit: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum ResultsCommand {
    /// One line per recorded run, starting with its id
    List {
        /// Only runs of this workload (fsmark, createmany, tiotest, alloctest, dbench, compilebench)
        #[arg(long, value_name = "KIND")]
        workload: Option<fslab_workload::Kind>,
        /// One JSON document (with fslab_schema) instead of text
        #[arg(long)]
        json: bool,
    },
    /// One line per experiment (`fslab run`), starting with its id, with runs completed
    Experiments,
    /// The findings' outcome table (as docs/findings.md shows it), from the store: each finding's id, claim, the author's number, fslab's and the rule's verdict, with the run's date, kernel, scale and repetitions
    #[command(
        after_help = "Examples:\n  fslab results outcomes              # the latest experiment of each name\n  fslab results outcomes 12 14        # these experiments"
    )]
    Outcomes {
        /// Experiment ids (from `fslab results experiments`); default: the latest of each name
        ids: Vec<i64>,
    },
    /// Everything recorded for one run
    Show {
        /// Run id (from `fslab results list`)
        id: i64,
    },
    /// What a program a run started printed (fslab exec, kind = "command"), byte for byte
    #[command(
        after_help = "Examples:\n  fslab results output 12             # its stdout\n  fslab results output 12 stderr\n  fslab results output 12 result.txt  # a result file its parser read"
    )]
    Output {
        /// Run id (from `fslab results list`)
        id: i64,
        /// stdout, stderr, or the name of a result file its parser read (`results show` lists them)
        #[arg(default_value = "stdout")]
        stream: String,
    },
    /// One run as JSON or long-format CSV
    Export {
        /// Run id (from `fslab results list`)
        id: i64,
        /// Output format
        #[arg(long, value_enum, default_value_t = ExportFormat::Json)]
        format: ExportFormat,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    Json,
    Csv,
}

/// Whether `name` is one of fslab's own commands (which no workload may
/// take).
pub fn is_own_command(name: &str) -> bool {
    <Cli as clap::CommandFactory>::command()
        .find_subcommand(name)
        .is_some()
}

/// The subcommands that use no results store: `--db` is hidden from
/// their help (and, given anyway, changes nothing).
pub const NO_STORE: [&str; 5] = ["crc32c", "stats", "frag", "completions", "man"];

/// The command line's definition: the derived commands, and one
/// subcommand per registered workload ([`fslab_workload::plugin::all`]),
/// listed first; `--db` is left out of the help of the subcommands that use
/// no store: each gets a hidden `--db` of its own before the global one is
/// propagated (clap propagates a global argument only to subcommands
/// without one of that name), so `--db` is still accepted there and changes
/// nothing. (Hiding the propagated argument after the command is built
/// broke `fslab stats --help`.)
pub fn command() -> clap::Command {
    let mut cmd = <Cli as clap::CommandFactory>::command();
    let workloads = fslab_workload::plugin::all();
    let derived: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_string())
        .collect();
    for (i, name) in derived.iter().enumerate() {
        cmd = cmd.mut_subcommand(name, |s| s.display_order(workloads.len() + i));
    }
    for (i, kind) in workloads.iter().enumerate() {
        cmd = cmd.subcommand(kind.workload().command().display_order(i));
    }
    for name in NO_STORE {
        cmd = cmd.mut_subcommand(name, |s| {
            s.arg(
                clap::Arg::new("db")
                    .long("db")
                    .value_name("PATH")
                    .value_parser(clap::value_parser!(PathBuf))
                    .hide(true),
            )
        });
    }
    cmd.build();
    cmd
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_registered_workload_is_a_subcommand_listed_first_and_no_own_command_is_one() {
        let cmd = command();
        let kinds = fslab_workload::plugin::all();
        assert!(kinds.len() >= 6);
        for (i, k) in kinds.iter().enumerate() {
            let sub = cmd.find_subcommand(k.name()).unwrap();
            assert_eq!(sub.get_display_order(), i, "{}", k.name());
            assert!(!is_own_command(k.name()), "{}", k.name());
        }
        // The command's about, not its options' doc comment.
        let fsmark = cmd.find_subcommand("fsmark").unwrap();
        let about = fsmark.get_about().map(ToString::to_string);
        assert!(about
            .unwrap_or_default()
            .starts_with("fs_mark 3.3: create files"));
        for own in ["run", "report", "compare", "job", "results"] {
            assert!(is_own_command(own), "{own}");
            let order = cmd.find_subcommand(own).unwrap().get_display_order();
            assert!(order >= kinds.len(), "{own} listed among the workloads");
        }
    }
}
