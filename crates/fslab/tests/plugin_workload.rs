//! Issue 24's test: a workload registered by the test suite alone runs
//! through `fslab run`, `compare` and the report without a line changed
//! elsewhere.
//!
//! This test binary is its own fslab: [`main`] registers `syncfiles` (a
//! small, real workload: it writes and fsyncs `-n` files of `-s` bytes in
//! its directory, recording a phase and a metric through `RunCtx`) and,
//! started with [`AS_FSLAB`] set, runs fslab's command line
//! (`fslab::main_with`). `fslab run` starts its children as its own
//! executable with its environment, so the workload's processes are this
//! binary too. Without [`AS_FSLAB`] it runs the test: an experiment of two
//! ext4 cells on loop devices, two repetitions each, run with `fslab run`,
//! then `compare` and `report`, each checked for the workload's metric.
//! (`harness = false`: libtest could not be told to become fslab.)

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Output};

#[path = "plugin/libtest.rs"]
mod libtest;
use libtest::Outcome;

use fslab_model::{Better, Metric, Unit};
use fslab_workload::common::phase_result;
use fslab_workload::plugin::{Example, Plugin, RankPlace, Refused, Start, Workload};
use fslab_workload::{CommonArgs, Report};

/// Set in the environment of every process that is to be fslab.
const AS_FSLAB: &str = "FSLAB_PLUGIN_TEST_AS_FSLAB";

/// The test's name, as libtest would print it.
const TEST: &str = "a_test_only_workload_runs_through_fslab_run_compare_and_the_report";

/// The workload's one metric (its name appears once in this file).
const METRIC: &str = "fsyncs/s";

/// Writes and fsyncs files.
struct SyncFiles;

/// `syncfiles -n FILES -s BYTES -d DIR`.
#[derive(Debug, Clone, clap::Args, serde::Serialize, serde::Deserialize)]
struct SyncArgs {
    /// Files to write and fsync
    #[arg(short = 'n', long = "files", default_value_t = 20)]
    files: u64,
    /// Bytes in each file
    #[arg(short = 's', long = "size", default_value_t = 4096)]
    size: u64,
    /// The directory to write them in
    #[arg(short = 'd', long = "dir", value_name = "DIR", required = true)]
    dirs: Vec<PathBuf>,
    #[command(flatten)]
    common: CommonArgs,
}

impl Workload for SyncFiles {
    type Options = SyncArgs;
    const NAME: &'static str = "syncfiles";

    fn command() -> clap::Command {
        clap::Command::new(Self::NAME)
            .about("The test suite's own workload: write and fsync N files")
            .after_help("Example:\n  fslab syncfiles -n 100 -s 4096 -d /mnt/test")
    }
    fn common(o: &SyncArgs) -> &CommonArgs {
        &o.common
    }
    fn common_mut(o: &mut SyncArgs) -> &mut CommonArgs {
        &mut o.common
    }
    fn validate(o: &SyncArgs) -> fslab_workload::Result<()> {
        if o.files == 0 {
            return Err(fslab_workload::Error::Options(
                "-n 0: must be at least 1".into(),
            ));
        }
        Ok(())
    }
    fn takes_dirs() -> bool {
        true
    }
    fn dirs(o: &SyncArgs) -> Vec<PathBuf> {
        o.dirs.clone()
    }
    fn set_dirs(o: &mut SyncArgs, dirs: Vec<PathBuf>) {
        o.dirs = dirs;
    }
    fn outputs(o: &SyncArgs) -> Vec<(&'static str, PathBuf)> {
        o.dirs.iter().map(|d| ("-d", d.clone())).collect()
    }
    fn workdir(o: &SyncArgs) -> PathBuf {
        o.dirs[0].clone()
    }
    fn scale(o: &mut SyncArgs, factor: f64) {
        o.files = ((o.files as f64 * factor).round() as u64).max(1);
    }
    fn on_rank(o: &mut SyncArgs, place: &dyn RankPlace) -> fslab_workload::Result<()> {
        for d in &mut o.dirs {
            *d = place.dir(d)?;
        }
        Ok(())
    }
    fn example() -> Example {
        Example {
            args: "-n 500 -d {dir}",
            scale: 0.1,
            scaled: &[("files", "50")],
            refused: Refused {
                args: "-n 0 -d {dir}",
                option: "-n",
                value: "0",
            },
        }
    }
    fn run(o: &SyncArgs, start: Start<'_, '_>) -> fslab_workload::Result<Box<dyn Report>> {
        Self::validate(o)?;
        let dir = Self::workdir(o);
        // Nothing is made for a workload: it makes its own directory.
        std::fs::create_dir_all(&dir)
            .map_err(|e| fslab_workload::Error::Setup(format!("{}: {e}", dir.display())))?;
        let fslab_workload::Begun { mut ctx, out, .. } = start.begin(Self::NAME, &dir, o)?;
        let data = vec![0x5a_u8; o.size as usize];
        let p = ctx.phase("write", Some(o.files), 1, |t, progress| {
            let mut done = 0;
            for i in 0..o.files {
                let path = dir.join(format!("f{i:06}"));
                let wrote = std::fs::write(&path, &data)
                    .and_then(|()| std::fs::File::open(&path)?.sync_all());
                if wrote.is_err() {
                    return Err(path);
                }
                done += 1;
                progress.set(t, done);
            }
            Ok(())
        })?;
        let failed = p.results.iter().find_map(|r| match r {
            Some(Err(path)) => Some(format!("cannot write {}", path.display())),
            None => Some("the writer panicked".into()),
            Some(Ok(())) => None,
        });
        let phase = phase_result("write", o.files, o.files * o.size, &p, failed.is_none());
        let rate = phase.ops_per_s;
        ctx.record_phase(phase)?;
        ctx.record_metrics(vec![Metric::new(
            Self::NAME,
            None,
            METRIC,
            rate,
            Unit::OpsPerSec,
            Better::Higher,
        )])?;
        writeln!(out, "{METRIC}: {rate:.1}")
            .map_err(|e| fslab_workload::Error::Setup(format!("writing its output: {e}")))?;
        Ok(Box::new(ctx.finish(failed)?))
    }
}

static SYNCFILES: Plugin<SyncFiles> = Plugin::new();

fn main() -> ExitCode {
    if std::env::var_os(AS_FSLAB).is_some() {
        return fslab::main_with(&[&SYNCFILES]);
    }
    libtest::run(&[(TEST, the_test)])
}

/// This executable as fslab, with `dir` its working directory and state
/// directory's parent, and `db` its store.
fn fslab(dir: &Path, db: &Path) -> Command {
    let mut c = Command::new(std::env::current_exe().unwrap());
    c.current_dir(dir)
        .env(AS_FSLAB, "1")
        .env("FSLAB_STATE_DIR", dir.join("state"))
        .env_remove("FSLAB_DB")
        .arg("--db")
        .arg(db);
    c
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn the_test() -> Outcome {
    if !rustix::process::geteuid().is_root() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "{TEST} needs root (loop devices, mkfs), and CI=true: failing instead of skipping"
        );
        eprintln!("skipping {TEST}: needs root (loop devices, mkfs)");
        return Outcome::Skipped;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let db = dir.join("results.sqlite");
    the_subcommand(dir, &db);
    the_job_fslab_run_starts(dir, &db);
    fslab_run_compare_and_report(dir, &db);
    Outcome::Passed
}

/// The workload on its own, as its subcommand.
fn the_subcommand(dir: &Path, db: &Path) {
    // The workload on its own, as its subcommand: its help, bad input,
    // and a run that records its metric.
    let help = fslab(dir, db)
        .args(["syncfiles", "--help"])
        .output()
        .unwrap();
    let (out, _) = text(&help);
    assert!(help.status.success() && out.contains("Example:"), "{out}");
    let bad = fslab(dir, db)
        .args(["syncfiles", "-n", "0", "-d", "/tmp"])
        .output()
        .unwrap();
    let (_, err) = text(&bad);
    assert_eq!(bad.status.code(), Some(2), "{err}");
    assert_eq!(err.trim(), "fslab: syncfiles: -n 0: must be at least 1");
    let files = dir.join("files");
    let own = fslab(dir, db)
        .args(["syncfiles", "-n", "5", "-d"])
        .arg(&files)
        .output()
        .unwrap();
    let (out, err) = text(&own);
    assert!(own.status.success(), "{out}{err}");
    assert!(out.starts_with(METRIC), "{out}");
    assert_eq!(std::fs::read_dir(&files).unwrap().count(), 5);
}

/// `fslab job JSON`: what `fslab run` starts.
fn the_job_fslab_run_starts(dir: &Path, db: &Path) {
    // The child spec `fslab run` hands its child, serialized: the job run
    // the same way, with its harness (a JSON report, the command line to
    // record); and refused in one line when it is not a spec.
    fslab_workload::plugin::register(&SYNCFILES).unwrap();
    let kind = fslab_workload::WorkloadRef::of(SyncFiles::NAME).unwrap();
    let served = dir.join("served");
    let job = kind
        .parse(&[
            "-n".into(),
            "3".into(),
            "-d".into(),
            served.display().to_string(),
        ])
        .unwrap();
    let spec = fslab_workload::ChildSpec {
        job,
        harness: fslab_model::protocol::Harness {
            json: true,
            ..fslab_model::protocol::Harness::typed(vec!["syncfiles".into(), "as-recorded".into()])
        },
    };
    let json = serde_json::to_string(&spec).unwrap();
    let served_run = fslab(dir, db).args(["job", &json]).output().unwrap();
    let (out, err) = text(&served_run);
    assert!(served_run.status.success(), "fslab job:\n{out}\n{err}");
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["run"]["status"], "complete", "{out}");
    assert_eq!(std::fs::read_dir(&served).unwrap().count(), 3);
    let export = fslab(dir, db)
        .args(["results", "export", &report["run"]["id"].to_string()])
        .output()
        .unwrap();
    let (out, _) = text(&export);
    let stored: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        stored["run"]["command_line"],
        serde_json::json!(["syncfiles", "as-recorded"]),
        "the recorded command line"
    );
    let nope = json.replace("\"workload\":\"syncfiles\"", "\"workload\":\"nope\"");
    for (bad, says) in [
        ("{\"job\": 1", "fslab: job: "),
        (nope.as_str(), "fslab: job: unknown workload \"nope\""),
    ] {
        let o = fslab(dir, db).args(["job", bad]).output().unwrap();
        let (_, err) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{bad}: {err}");
        assert!(
            err.starts_with(says) && err.lines().count() == 1,
            "{bad}: {err}"
        );
    }
}

/// The workload in an experiment: `fslab run`, then `compare` and `report`.
fn fslab_run_compare_and_report(dir: &Path, db: &Path) {
    let images = dir.join("images");
    std::fs::create_dir(&images).unwrap();
    // Two ext4 cells on loop devices (4 KiB and 64 KiB files), two
    // repetitions each.
    let exp = dir.join("syncfiles.toml");
    std::fs::write(
        &exp,
        format!(
            "name = \"syncfiles-test\"\nrepetitions = 2\ntime_limit = \"5m\"\n\
             [device]\nkind = \"image\"\nsize = \"600M\"\nimage_dir = \"{}\"\n\
             [workload]\nkind = \"syncfiles\"\nargs = [\"-n\", \"40\"]\nprobes = []\n\
             [[target]]\nfs = \"ext4\"\n\
             [[variant]]\nname = \"4k\"\n\
             [[variant]]\nname = \"64k\"\nworkload_args = [\"-s\", \"65536\"]\n",
            images.display()
        ),
    )
    .unwrap();
    let run = fslab(dir, db).arg("run").arg(&exp).output().unwrap();
    let (out, err) = text(&run);
    assert!(run.status.success(), "fslab run:\n{out}\n{err}");
    assert!(out.contains("4 of 4 runs completed"), "{out}");
    assert!(out.contains(METRIC), "the run's summary:\n{out}");

    let compare = fslab(dir, db).arg("compare").output().unwrap();
    let (out, err) = text(&compare);
    assert!(compare.status.success(), "fslab compare:\n{out}\n{err}");
    assert!(out.contains(METRIC), "compare:\n{out}");
    assert!(out.contains("64k"), "compare's cells:\n{out}");

    let page = dir.join("report.html");
    let report = fslab(dir, db)
        .arg("report")
        .arg("-o")
        .arg(&page)
        .output()
        .unwrap();
    let (out, err) = text(&report);
    assert!(report.status.success(), "fslab report:\n{out}\n{err}");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains(METRIC), "the report names no {METRIC}");
    assert_eq!(
        std::fs::read_dir(&images).unwrap().count(),
        0,
        "images left behind"
    );
}
