//! The command line: global options and one subcommand per tool.

use std::path::PathBuf;

use clap::{Parser, Subcommand};
use fslab_present::select_args::OutputArgs;

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
    Run(fslab_experiment::run_args::RunArgs),
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
    Bisect(fslab_experiment::bisect_args::BisectArgs),
    /// Undo what a killed `fslab run` left behind (mounts, loop devices, images, sysctls, cgroups)
    #[command(after_help = "Example (after a kill -9 of fslab run):\n  fslab cleanup")]
    Cleanup,
    /// Read back recorded runs
    #[command(
        subcommand,
        after_help = "Examples:\n  fslab results list --workload fsmark\n  fslab results show latest\n  fslab results export 12 --format csv --output run12.csv\n  fslab results list --limit 10 --format json"
    )]
    Results(fslab_present::results_args::ResultsCommand),
    /// Compare the cells of an experiment (default: the latest) or groups of runs, with statistics
    #[command(
        after_help = "Examples:\n  fslab compare\n  fslab compare --experiment 3 --experiment 5 --format markdown --output cmp.md\n  fslab compare --runs ext4=1,2,3 --runs xfs=4-6 --delta 2\n  fslab compare --runs latest~1 --runs latest\n  fslab compare --calibration 7 --correction holm --alpha 0.01"
    )]
    Compare(fslab_present::select_args::CompareArgs),
    /// Every stored run of one experiment: its headline metrics by kernel and fslab version,
    /// change points (E-Divisive means over the experiments) marked
    #[command(
        after_help = "Examples:\n  fslab history seed001-crc-overhead\n  fslab history seed001-crc-overhead --alpha 0.01 --delta 5"
    )]
    History {
        /// The experiment's name [default: the latest experiment's]
        name: Option<String>,
        #[command(flatten)]
        out: OutputArgs,
        /// The least change worth marking, in percent; a significant shift smaller than
        /// this is named but not marked [default: any significant one]
        #[arg(long, value_name = "PCT", value_parser = fslab_present::select_args::delta_pct)]
        delta: Option<f64>,
        /// The false-alarm rate of each change point's permutation test
        #[arg(long, value_name = "P", default_value_t = 0.05, value_parser = fslab_present::select_args::alpha)]
        alpha: f64,
    },
    /// One self-contained HTML page: the comparison, and charts and tables of every cell
    #[command(after_help = "Example:\n  fslab report -o seed000.html")]
    Report {
        #[command(flatten)]
        select: fslab_present::select_args::SelectArgs,
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
    Trace(fslab_present::results_args::TraceCommand),
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
