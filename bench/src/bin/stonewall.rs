//! mdtest's stonewall with wear-out (issue 25): after -W seconds every rank
//! stops at its next item, the ranks agree on the most items any rank made
//! and every rank creates up to that count. Goal: the catch-up ends within
//! one item per rank of the agreed count.
//!
//! Ranks are threads of this process (fslab_cluster::LocalCluster, the
//! collectives MPI gives fslab), more ranks than cores so that some are
//! descheduled and straggle; each writes 4 KiB files into its own tree
//! (-u) on tmpfs. For each run: every rank's items made (its phase's
//! count and the files in its tree) against the agreed count, the
//! straggler spread at the stonewall, both rates, and how long after the
//! stonewall the last rank reached its check.
//!
//! `cargo run --release -p fslab-bench --bin stonewall`

use std::process::ExitCode;
use std::sync::atomic::AtomicBool;

use clap::Parser;
use fslab_cluster::{Cluster, LocalCluster};
use fslab_model::MemRecorder;
use fslab_workload::mdtest::{self, MdtestArgs};
use fslab_workload::stonewall::WallSummary;
use fslab_workload::{Hooks, Start};

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    a: MdtestArgs,
}

const WALL_S: u64 = 2;

/// One rank's run: its file creation count and the stonewall it saw.
fn rank_run(args: &str, c: &dyn Cluster) -> (u64, Option<WallSummary>) {
    let argv = std::iter::once("mdtest").chain(args.split_whitespace());
    let o = Cli::parse_from(argv).a.validate().expect("options");
    let mut rec = MemRecorder::default();
    let mut hooks = Hooks::default();
    let stop = AtomicBool::new(false);
    let start = Start {
        argv: &[],
        cluster: c,
        stop: &stop,
        out: &mut std::io::sink(),
        rec: &mut rec,
        hooks: &mut hooks,
    };
    let r = mdtest::run(&o, start).expect("mdtest run");
    let made = rec
        .phases
        .iter()
        .find(|p| p.phase == "file creation")
        .map_or(0, |p| p.ops);
    (made, r.stonewall.first().cloned())
}

fn main() -> ExitCode {
    let scratch = fslab_bench::Scratch::new("stonewall");
    let mut worst = 0u64;
    println!(
        "{:>5} {:>5} {:>9} {:>8} {:>10} {:>10} {:>9} {:>12} {:>12}",
        "ranks",
        "run",
        "agreed",
        "spread",
        "|made-agr|",
        "on disk",
        "late ms",
        "wall ops/s",
        "wear ops/s"
    );
    for ranks in [2usize, 4, 8] {
        for run in 0..3 {
            let d = scratch.0.join(format!("r{ranks}-{run}"));
            let args = format!(
                "-n 100000000 -F -u -C -w 4096 -W {WALL_S} -x {} -d {}",
                scratch.0.join("sw").display(),
                d.display()
            );
            let out = LocalCluster::run(ranks, |c| rank_run(&args, c));
            let wall = out[0].1.clone().expect("rank 0's stonewall");
            let mut off = 0u64;
            let mut disk_off = 0u64;
            for (r, (made, _)) in out.iter().enumerate() {
                off = off.max(made.abs_diff(wall.agreed));
                let tree = d.join(format!("test-dir.0-0/mdtest_tree.{r}.0"));
                let files = std::fs::read_dir(&tree).map_or(0, |e| e.count() as u64);
                disk_off = disk_off.max(files.abs_diff(wall.agreed));
            }
            worst = worst.max(off).max(disk_off);
            let late_ms = (wall.stonewall_s - WALL_S as f64) * 1e3;
            println!(
                "{ranks:>5} {run:>5} {:>9} {:>8} {off:>10} {disk_off:>10} {late_ms:>9.1} {:>12.0} {:>12.0}",
                wall.agreed, wall.straggler_spread, wall.stonewall_rate, wall.wear_out_rate
            );
            scratch.clear();
        }
    }
    println!(
        "\nthe catch-up ends {worst} item(s) per rank from the agreed count at worst (goal: at most 1)"
    );
    if worst <= 1 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
