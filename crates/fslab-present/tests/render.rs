//! Rendering from a store written through the `Recorder` trait, as the
//! workloads write it: the same number has one name and unit in `results
//! show`, `compare`'s JSON and the report, and the JSON has its version.

use fslab_analysis::{select, Choice};
use fslab_model::{Better, Metric, PhaseResult, Recorder, RunInfo, RunStatus, TargetInfo, Unit};
use fslab_present::export::json::json;
use fslab_present::export::text::text;
use fslab_present::report::page;
use fslab_present::show;
use fslab_store::Store;

fn run(store: &mut Store, throughput: f64, status: RunStatus) -> i64 {
    run_of(store, "dbench", serde_json::json!({}), throughput, status)
}

fn run_of(
    store: &mut Store,
    workload: &str,
    params: serde_json::Value,
    throughput: f64,
    status: RunStatus,
) -> i64 {
    let info = RunInfo {
        workload: workload.into(),
        command_line: vec!["fslab".into(), "dbench".into(), "2".into()],
        fslab_version: "0.1.0".into(),
        kernel: "6.1.0".into(),
        hostname: "here".into(),
        started_at: fslab_model::time::now(),
        target: TargetInfo {
            path: "/mnt".into(),
            fs_type: "ext4".into(),
            ..Default::default()
        },
        params,
    };
    let id = store.begin_run(&info).unwrap();
    store
        .record_phase(
            id,
            &PhaseResult {
                phase: "execute".into(),
                ops: 1000,
                elapsed_s: 2.0,
                ops_per_s: 500.0,
                complete: true,
                ..Default::default()
            },
        )
        .unwrap();
    let m = [
        Metric::new(
            "dbench",
            None,
            "Throughput",
            throughput,
            Unit::MbPerSec,
            Better::Higher,
        ),
        Metric::new(
            "dbench",
            Some("NTCreateX"),
            "AvgLat",
            0.25,
            Unit::Milliseconds,
            Better::Lower,
        )
        .detail(),
    ];
    store.record_metrics(id, &m).unwrap();
    store
        .finish_run(
            id,
            status,
            (status == RunStatus::Failed).then_some("disk full"),
        )
        .unwrap();
    id
}

#[test]
fn one_number_one_name_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("r.sqlite")).unwrap();
    for (i, t) in [101.5, 98.5, 100.0, 120.0, 121.0, 119.0].iter().enumerate() {
        assert_eq!(run(&mut store, *t, RunStatus::Complete), i as i64 + 1);
    }
    let failed = run(&mut store, 0.0, RunStatus::Failed);

    // results show: the tool's numbers, breakdown rows included.
    let text = show::run_text(&store, 1).unwrap();
    assert!(
        text.lines()
            .any(|l| l.trim_start().starts_with("Throughput (MB/s) ") && l.ends_with(" 101.5")),
        "{text}"
    );
    assert!(text.contains("NTCreateX AvgLat (ms)"), "{text}");
    let text = show::run_text(&store, failed).unwrap();
    assert!(text.contains("error:     disk full"), "{text}");
    // results list: the headline is the tool's own.
    let (list, hidden) = show::list(&store, show::Listing::default()).unwrap();
    assert_eq!(hidden, 0);
    let mut lines = list.lines();
    assert!(lines.next().unwrap().starts_with("id  started  "), "{list}");
    assert!(lines.next().unwrap().ends_with(" 101.5 MB/s"), "{list}");
    assert_eq!(lines.count(), 6);
    // Filtered by workload, and as JSON with the headline typed.
    let fsmark = show::Listing {
        workload: Some("fsmark"),
        ..Default::default()
    };
    let none = show::list(&store, fsmark).unwrap();
    assert_eq!(none.0, "", "no fsmark runs: not even a header");
    let as_json = show::Listing {
        format: fslab_present::format::Format::Json,
        ..Default::default()
    };
    let j: serde_json::Value =
        serde_json::from_str(&show::list(&store, as_json).unwrap().0).unwrap();
    assert_eq!(j["fslab_schema"], fslab_model::json::SCHEMA_VERSION);
    assert_eq!(j["runs"].as_array().unwrap().len(), 7);
    assert_eq!(j["runs"][0]["id"], 1);
    assert_eq!(j["runs"][0]["headline"]["name"], "Throughput");
    assert_eq!(j["runs"][0]["headline"]["unit"], "mb_per_sec");
    // export: versioned, with the metric's unit typed.
    let j: serde_json::Value = serde_json::from_str(
        &fslab_present::run_export::run(&store, 1, fslab_present::format::Format::Json, &[])
            .unwrap(),
    )
    .unwrap();
    assert_eq!(j["fslab_schema"], fslab_model::json::SCHEMA_VERSION);
    assert_eq!(j["metrics"][0]["unit"], "mb_per_sec");

    // compare: the same label, breakdown rows left out.
    let runs = ["1,2,3".to_string(), "4,5,6".to_string()];
    let a = fslab_analysis::from_store(
        &store,
        &Choice {
            runs: runs.to_vec(),
            ..Default::default()
        },
    )
    .unwrap();
    let names: Vec<&str> = a.metrics.iter().map(|m| m.name.as_str()).collect();
    assert!(names.contains(&"dbench Throughput (MB/s)"), "{names:?}");
    assert!(!names.iter().any(|n| n.contains("AvgLat")), "{names:?}");
    let doc: serde_json::Value = serde_json::from_str(&json(&a)).unwrap();
    assert_eq!(doc["fslab_schema"], fslab_model::json::SCHEMA_VERSION);
    assert_eq!(doc["baseline"], "runs 1,2,3");
    let row = doc["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["metric"] == "dbench Throughput (MB/s)" && r["group"] == "runs 4,5,6")
        .unwrap();
    assert!((row["mean"].as_f64().unwrap() - 120.0).abs() < 1e-9);
    assert!((row["diff_pct"].as_f64().unwrap() - 20.0).abs() < 1e-9);

    // The report: the same row, under the same name.
    let p = page::build(&store, &a).unwrap();
    assert_eq!(p.cells, 2);
    assert!(p.html.contains("dbench Throughput (MB/s)"));
    assert!(p.html.contains("+20.0%"), "the difference is in the page");
    // The overview: the header, the verdict table, every cell on one axis.
    assert!(
        p.html.contains("<dt>kernel</dt><dd>6.1.0</dd>"),
        "the header names the kernel"
    );
    assert!(p
        .html
        .contains("<dt>commands</dt><dd>runs 1,2,3: fslab dbench 2"));
    let overview = &p.html[p.html.find("<h2 id=\"overview\">overview</h2>").unwrap()..];
    assert!(overview.contains("<th>headline metric</th><th>runs 1,2,3</th><th>runs 4,5,6</th>"));
    assert!(
        overview.contains("+20.0% faster"),
        "a clear shift has its verdict"
    );
    let axis = overview
        .split("<svg class=\"chart wide\"")
        .nth(1)
        .unwrap()
        .split("</svg>")
        .next()
        .unwrap();
    assert!(axis.contains(">runs 1,2,3</text>") && axis.contains(">runs 4,5,6</text>"));
    assert_eq!(axis.matches("<circle").count(), 2, "one mean per cell");

    // Bad selections are bad input; a missing run is too.
    let e = select::select(&store, &[], &["1,x".to_string()]).unwrap_err();
    assert!(
        e.is_usage() && e.to_string().contains("\"x\" is not a run id"),
        "{e}"
    );
    let e = show::run_text(&store, 99).unwrap_err();
    assert!(
        e.is_usage() && e.to_string() == "no run with id 99 in the results store",
        "{e}"
    );
    let e = select::baseline(&a.labels, Some("nope")).unwrap_err();
    assert!(e.is_usage(), "{e}");
}

#[test]
fn a_selection_with_no_completed_run_is_said_not_printed_empty() {
    let g = select::Groups {
        experiments: vec![],
        labels: vec!["a".into(), "b".into()],
        runs: vec![vec![], vec![select::GroupRun::of(1)]],
    };
    let w = select::complete_runs(&g);
    assert_eq!(w, ["a: no completed run, left out of the comparison"]);
    select::something_to_compare(&g).unwrap();
    let e = select::baseline_of(&g, Some("a")).unwrap_err();
    assert!(
        e.is_usage() && e.to_string().contains("no completed run"),
        "{e}"
    );
    assert_eq!(
        select::baseline_of(&g, None).unwrap(),
        1,
        "the first group with runs"
    );
    let g = select::Groups {
        experiments: vec![],
        labels: vec!["a".into()],
        runs: vec![vec![]],
    };
    let e = select::something_to_compare(&g).unwrap_err();
    assert!(
        !e.is_usage() && e.to_string().starts_with("nothing to compare"),
        "{e}"
    );
}

#[test]
fn a_selection_that_mixes_things_is_refused_or_noted() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("r.sqlite")).unwrap();
    let p = |n: u64| serde_json::json!({"clients": n, "dir": "/mnt/a", "opts": {"sync": false}});
    let ok = RunStatus::Complete;
    run_of(&mut store, "dbench", p(2), 100.0, ok);
    run_of(&mut store, "dbench", p(2), 101.0, ok);
    run_of(&mut store, "dbench", p(4), 150.0, ok);
    run_of(&mut store, "fsmark", p(2), 1.0, ok);
    let mix = |lists: &[&str]| {
        let runs: Vec<String> = lists.iter().map(|s| s.to_string()).collect();
        let g = select::select(&store, &[], &runs).unwrap();
        let rows: Vec<Vec<fslab_store::RunRow>> = g
            .runs
            .iter()
            .map(|rs| rs.iter().map(|r| store.run_row(r.id).unwrap()).collect())
            .collect();
        select::check_mix(&store, &g, &rows)
    };
    // Different workloads: refused, naming them.
    let e = mix(&["1,2", "4"]).unwrap_err();
    assert!(e.is_usage(), "{e}");
    assert!(
        e.to_string()
            .contains("mixes workloads: dbench (runs 1,2), fsmark (runs 4)"),
        "{e}"
    );
    // Groups that differ: said (paths are not a difference).
    let n = mix(&["1,2", "3"]).unwrap();
    assert_eq!(n, ["runs 3 differs from runs 1,2 in clients 2 vs 4"]);
    // A group that is not repetitions of one thing: said.
    let n = mix(&["1,3"]).unwrap();
    assert_eq!(n.len(), 1);
    assert!(
        n[0].starts_with("runs 1,3: run 3 differs from run 1 in clients 2 vs 4"),
        "{n:?}"
    );
    assert!(mix(&["1,2"]).unwrap().is_empty());
}

/// `compare` and the report are one analysis: a stored A/A calibration that
/// fits the runs gives both their δ, named the same way; `--calibration`
/// of one that does not fit is refused for both.
#[test]
fn the_report_takes_delta_from_a_calibration_as_compare_does() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("r.sqlite")).unwrap();
    for t in [101.5, 98.5, 100.0, 120.0, 121.0, 119.0] {
        run(&mut store, t, RunStatus::Complete);
    }
    let calibration = |experiment_id: i64, workload: &str| fslab_store::Calibration {
        experiment_id,
        created_at: fslab_model::time::now(),
        hostname: "here".into(),
        fs_type: "ext4".into(),
        workload: workload.into(),
        options: select::option_key(&serde_json::json!({})),
        metric: "dbench Throughput (MB/s)".into(),
        n: 5,
        sd_log: 0.01,
        ratio: 1.0,
        delta_pct: 7.5,
    };
    // Two A/A experiments (their ids name the calibrations).
    let mut aa = || {
        use fslab_model::ExperimentRecorder;
        store
            .begin_experiment(&fslab_model::ExperimentInfo {
                name: "aa".into(),
                file: "aa.toml".into(),
                text: String::new(),
                scale: 1.0,
                repetitions: 5,
                command_line: Vec::new(),
                fslab_version: "0.1.0".into(),
                kernel: "6.1.0".into(),
                hostname: "here".into(),
                started_at: fslab_model::time::now(),
            })
            .unwrap()
    };
    let (fits, other) = (aa(), aa());
    store
        .record_calibrations(&[calibration(fits, "dbench"), calibration(other, "fsmark")])
        .unwrap();
    let choice = |calibration: Option<i64>| Choice {
        runs: vec!["1,2,3".into(), "4,5,6".into()],
        calibration,
        ..Default::default()
    };
    for chosen in [None, Some(fits)] {
        let a = fslab_analysis::from_store(&store, &choice(chosen)).unwrap();
        let said = format!("from calibration {fits} (here, ext4, 5 runs a copy)");
        let row = a
            .rows
            .iter()
            .find(|r| r.metric == "dbench Throughput (MB/s)" && r.group == "runs 4,5,6")
            .unwrap();
        assert_eq!(row.delta_pct, Some(7.5), "{chosen:?}");
        assert!(text(&a.rows).contains(&said), "{chosen:?}");
        let page = page::build(&store, &a).unwrap();
        assert!(page.html.contains(&said), "{chosen:?}: the report's δ");
    }
    let e = fslab_analysis::from_store(&store, &choice(Some(other))).unwrap_err();
    assert!(
        e.is_usage() && e.to_string().contains("made for fsmark on ext4"),
        "{e}"
    );
}

/// Explains each group's difference in the tool's throughput (a stand-in
/// for issue 34's confounder check).
struct SameMachine;

impl fslab_analysis::Explainer for SameMachine {
    fn explain(
        &self,
        a: &mut fslab_analysis::Analysis,
        store: &Store,
    ) -> fslab_analysis::Result<()> {
        for (i, group) in a.labels.iter().enumerate() {
            if i == a.baseline {
                continue;
            }
            let host = store.run_row(a.runs[i][0].id)?.hostname;
            a.explanations.push(fslab_analysis::Explanation {
                about: fslab_analysis::About::Comparison {
                    metric: "dbench Throughput (MB/s)".into(),
                    group: group.clone(),
                },
                kind: fslab_analysis::ExplanationKind::Confounder,
                says: format!("both sides ran on {host}"),
                evidence: vec!["hostname of every run".into()],
            });
        }
        Ok(())
    }
}

/// What an explainer says is kept in the analysis and shown by every
/// exporter beside the numbers; without one, the output is as before.
#[test]
fn explanations_attach_to_the_analysis_and_every_format_shows_them() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("r.sqlite")).unwrap();
    for t in [101.5, 98.5, 100.0, 120.0, 121.0, 119.0] {
        run(&mut store, t, RunStatus::Complete);
    }
    let explainers: [&dyn fslab_analysis::Explainer; 1] = [&SameMachine];
    let choice = |explainers| Choice {
        runs: vec!["1,2,3".into(), "4,5,6".into()],
        explainers,
        ..Default::default()
    };
    let plain = fslab_analysis::from_store(&store, &choice(&[])).unwrap();
    assert!(plain.explanations.is_empty());
    let a = fslab_analysis::from_store(&store, &choice(&explainers)).unwrap();
    assert_eq!(a.explanations.len(), 1);
    let said = "both sides ran on here";
    let export = |name: &str, a: &fslab_analysis::Analysis| {
        fslab_present::export::of(name)
            .unwrap()
            .export(a, &store)
            .unwrap()
    };
    // A confounder is said before the verdicts it qualifies.
    let t = export("text", &a);
    assert!(
        t.starts_with(&format!(
            "before the verdicts:\n  runs 4,5,6, dbench Throughput (MB/s): confounder: {said}\n    hostname of every run\n\n"
        )),
        "{t}"
    );
    assert!(export("markdown", &a).contains(said));
    let j: serde_json::Value = serde_json::from_str(&export("json", &a)).unwrap();
    assert_eq!(j["explanations"][0]["about"], "comparison");
    assert_eq!(j["explanations"][0]["group"], "runs 4,5,6");
    assert_eq!(j["explanations"][0]["kind"], "confounder");
    assert!(export("html", &a).contains(said));
    // Without explanations: no section, no key.
    assert!(!export("text", &plain).contains("explanations"));
    let j: serde_json::Value = serde_json::from_str(&export("json", &plain)).unwrap();
    assert!(j.get("explanations").is_none(), "{j}");
}

/// Regression (issue 39): runs shorter than a second drew charts with one
/// point each, empty frames. Each is left out with a line saying why.
#[test]
fn charts_of_a_run_too_short_are_left_out_and_said_why() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("r.sqlite")).unwrap();
    for id in [1, 2] {
        assert_eq!(run(&mut store, 100.0 + id as f64, RunStatus::Complete), id);
        let p = fslab_model::SeriesPoint {
            phase_index: 0,
            t_s: 0.3,
            ops: 300,
            total_ops: 300,
        };
        store.record_series(id, &p).unwrap();
        let cpu = |metric: &str| fslab_model::ProbePoint {
            phase_index: 0,
            t_s: 0.3,
            probe: "cpu".into(),
            metric: metric.into(),
            value: 40.0,
        };
        let points = [cpu("workload_usr_pct"), cpu("workload_sys_pct")];
        store.record_probe_points(id, &points).unwrap();
    }
    let a = fslab_analysis::from_store(
        &store,
        &Choice {
            runs: vec!["1".into(), "2".into()],
            ..Default::default()
        },
    )
    .unwrap();
    let html = page::build(&store, &a).unwrap().html;
    for svg in html.split("<svg class=\"chart").skip(1) {
        let svg = &svg[..svg.find("</svg>").unwrap()];
        let line = svg
            .split(" d=\"M")
            .skip(1)
            .any(|d| d[..d.find('"').unwrap()].contains('L'));
        assert!(line || svg.contains("<circle"), "an empty chart: {svg}");
    }
    for note in [
        "operations per second over the run, every cell (its run of median time): left out",
        "execute: operations per second, every cell: left out, run too short for a per-second \
         chart in every cell (the phase lasted at most 2.000 s)",
        "workload CPU (user + system), every cell: runs 1 left out, run too short for a chart \
         over time (one sample)",
        "execute: operations per second, each run: left out, run too short",
        "CPU: left out, run too short for a chart over time (one sample) in every cell",
    ] {
        assert!(
            html.contains(&format!("<p class=\"note\">{note}")),
            "no note {note:?}"
        );
    }
}
