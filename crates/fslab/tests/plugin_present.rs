//! Issue 33's tests of the probe and exporter seams: a probe registered by
//! the test suite alone is run by `--probes`, described by `results show`,
//! kept in the run's JSON and drawn by the report; a format registered by
//! it is one `fslab compare --format` writes; without a line changed
//! elsewhere.
//!
//! This test binary is its own fslab (as `plugin_workload.rs` is): [`main`]
//! registers `test-fds` (a small, real probe: the workload's open file
//! descriptors, from /proc/PID/fd, once a second) and `tsv` (each metric's
//! mean per group, tab-separated) and, started with [`AS_FSLAB`] set, runs
//! fslab's command line (`fslab::main_with`). Without it, it runs the
//! tests, each a sequence of fslab commands.

use std::path::Path;
use std::process::{Command, ExitCode, Output};

use fslab_analysis::Analysis;
use fslab_model::{Better, Metric, Unit};
use fslab_present::export::Exporter;
use fslab_probe::plugin::{Chart, Plugin, Series};
use fslab_probe::probe::{Ctx, PhaseOut, Probe, Reading};
use fslab_store::Store;

#[path = "plugin/libtest.rs"]
mod libtest;
use libtest::Outcome;

/// Set in the environment of every process that is to be fslab.
const AS_FSLAB: &str = "FSLAB_PLUGIN_TEST_AS_FSLAB";

/// The probe's name.
const PROBE: &str = "test-fds";
/// Its series, as stored.
const SERIES: &str = "open_fds";
/// The chart the report draws it on.
const CHART: &str = "open file descriptors (test probe)";
/// Its metric of a phase.
const METRIC: &str = "open fds at end";

/// The workload's open file descriptors.
struct Fds;

impl Plugin for Fds {
    fn name(&self) -> &'static str {
        PROBE
    }
    fn default_on(&self) -> bool {
        false
    }
    fn make(&self) -> Box<dyn Probe> {
        Box::new(FdsProbe)
    }
    fn series(&self) -> Vec<Series> {
        vec![Series::new(SERIES, "fds", "open").on(Chart {
            title: CHART,
            y_label: "fds",
        })]
    }
}

/// Counts /proc/PID/fd of the workload's process.
struct FdsProbe;

impl FdsProbe {
    fn count(ctx: &Ctx) -> f64 {
        let dir = Path::new("/proc").join(ctx.pid.to_string()).join("fd");
        ctx.source.list(&dir).len() as f64
    }
}

impl Probe for FdsProbe {
    fn phase_start(&mut self, ctx: &Ctx) -> Vec<Reading> {
        vec![Reading::at(SERIES, FdsProbe::count(ctx), 0.0)]
    }
    fn sample(&mut self, ctx: &Ctx, _dt: f64) -> Vec<Reading> {
        vec![Reading::now(SERIES, FdsProbe::count(ctx))]
    }
    fn phase_end(&mut self, ctx: &Ctx, _secs: f64) -> PhaseOut {
        PhaseOut {
            notes: Vec::new(),
            metrics: vec![Metric::new(
                PROBE,
                Some(&ctx.phase.name),
                METRIC,
                FdsProbe::count(ctx),
                Unit::Count,
                Better::Neither,
            )],
        }
    }
}

static FDS: Fds = Fds;

/// Each metric's mean in each group, tab-separated, a line each.
struct Tsv;

impl Exporter for Tsv {
    fn name(&self) -> &'static str {
        "tsv"
    }
    fn export(&self, a: &Analysis, _store: &Store) -> fslab_present::Result<String> {
        let mut s = String::from("metric\tgroup\tn\tmean\n");
        for r in &a.rows {
            s.push_str(&format!(
                "{}\t{}\t{}\t{}\n",
                r.metric, r.group, r.summary.n, r.summary.mean
            ));
        }
        Ok(s)
    }
}

static TSV: Tsv = Tsv;

fn main() -> ExitCode {
    fslab_probe::register(&FDS).expect("test-fds registered once");
    fslab_present::export::register(&TSV).expect("tsv registered once");
    if std::env::var_os(AS_FSLAB).is_some() {
        return fslab::main_with(&[]);
    }
    libtest::run(&[
        (
            "a_test_only_probe_is_run_shown_kept_and_drawn",
            a_test_only_probe_is_run_shown_kept_and_drawn,
        ),
        (
            "a_test_only_format_is_one_compare_writes",
            a_test_only_format_is_one_compare_writes,
        ),
    ])
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

/// Runs fslab with `args`; its stdout, after checking it succeeded.
fn ok(dir: &Path, db: &Path, args: &[&str]) -> String {
    let o: Output = fslab(dir, db).args(args).output().unwrap();
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "fslab {args:?}:\n{out}\n{err}");
    out
}

fn a_test_only_probe_is_run_shown_kept_and_drawn() -> Outcome {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let db = dir.join("results.sqlite");
    let files = dir.join("files");
    std::fs::create_dir(&files).unwrap();
    let target = format!("{}/f", files.display());
    // Named, it runs beside the workload; `--probes` lists it among the
    // probes it knows.
    let out = ok(
        dir,
        &db,
        &[
            "createmany",
            "--json",
            "--probes",
            "cpu,test-fds",
            "-o",
            &target,
            "300",
        ],
    );
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    let id = report["run"]["id"].to_string();
    let bad = fslab(dir, &db)
        .args(["createmany", "--probes", "cpu,nope", "-o", &target, "10"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&bad.stderr);
    assert_eq!(bad.status.code(), Some(2), "{err}");
    assert!(
        err.contains("unknown probe \"nope\"") && err.contains("perf, test-fds, default"),
        "{err}"
    );

    // results show: the watching line names it; its phase line is its
    // series' default line.
    let show = ok(dir, &db, &["results", "show", &id]);
    assert!(show.contains("(cpu,test-fds)"), "{show}");
    let line = show
        .lines()
        .find(|l| l.trim_start().starts_with("test-fds: open "))
        .unwrap_or_else(|| panic!("no test-fds line in:\n{show}"));
    assert!(
        line.contains(" fds average / ") && line.ends_with(" max"),
        "{line}"
    );

    // The run's JSON: its metric of the phase, with its unit.
    let json: serde_json::Value =
        serde_json::from_str(&ok(dir, &db, &["results", "export", &id])).unwrap();
    let metric = json["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["source"] == PROBE && m["name"] == METRIC)
        .unwrap_or_else(|| panic!("no {METRIC} in {json}"));
    assert_eq!(metric["phase"], "create");
    assert!(metric["value"].as_f64().unwrap() >= 3.0, "{metric}");

    // The report draws its series on its chart.
    let html = ok(dir, &db, &["report", "--runs", &id, "-o", "-"]);
    assert!(
        html.contains(&format!("<figcaption>{CHART}</figcaption>")),
        "no {CHART} chart"
    );

    // Off by default: `default` runs the built-in ones only.
    let out = ok(
        dir,
        &db,
        &[
            "createmany",
            "--json",
            "--probes",
            "default,-blockio,-journal,-writeback,-stacks,-disk,-frag",
            "-o",
            &format!("{target}b"),
            "10",
        ],
    );
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    let show = ok(
        dir,
        &db,
        &["results", "show", &report["run"]["id"].to_string()],
    );
    assert!(show.contains("(cpu,mem)"), "{show}");
    Outcome::Passed
}

fn a_test_only_format_is_one_compare_writes() -> Outcome {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let db = dir.join("results.sqlite");
    // Two groups of two runs of createmany: 50 and 400 files.
    let mut ids = Vec::new();
    for (i, n) in ["50", "50", "400", "400"].iter().enumerate() {
        let target = format!("{}/d{i}/f", dir.display());
        std::fs::create_dir(dir.join(format!("d{i}"))).unwrap();
        let out = ok(
            dir,
            &db,
            &["createmany", "--json", "--probes", "none", "-o", &target, n],
        );
        let report: serde_json::Value = serde_json::from_str(&out).unwrap();
        ids.push(report["run"]["id"].to_string());
    }
    let (a, b) = (
        format!("{},{}", ids[0], ids[1]),
        format!("{},{}", ids[2], ids[3]),
    );
    let tsv = ok(
        dir,
        &db,
        &["compare", "--runs", &a, "--runs", &b, "--format", "tsv"],
    );
    let mut lines = tsv.lines();
    assert_eq!(lines.next(), Some("metric\tgroup\tn\tmean"), "{tsv}");
    let rates: Vec<&str> = lines
        .filter(|l| l.starts_with("create rate (ops/s)\t"))
        .collect();
    assert_eq!(rates.len(), 2, "{tsv}");
    assert!(
        rates[0].starts_with(&format!("create rate (ops/s)\truns {a}\t2\t")),
        "{tsv}"
    );
    assert!(
        rates[1].starts_with(&format!("create rate (ops/s)\truns {b}\t2\t")),
        "{tsv}"
    );
    // `--format` offers it, and names it when refusing another.
    let help = ok(dir, &db, &["compare", "--help"]);
    assert!(help.contains("html, tsv]"), "{help}");
    let bad = fslab(dir, &db)
        .args(["compare", "--format", "nope"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&bad.stderr);
    assert_eq!(bad.status.code(), Some(2), "{err}");
    assert!(err.contains("nope") && err.contains("tsv"), "{err}");
    Outcome::Passed
}
