//! The one JSON shape of a run (`Store::run_json`, what a workload's
//! `--json` and `results export` print) against `schema/run.schema.json`.

use fslab_model::*;
use fslab_store::Store;

fn schema() -> serde_json::Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../schema/run.schema.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Every unit a metric can have; the match fails to compile when a unit is
/// added, so that the schema's list is looked at too.
fn every_unit() -> Vec<Unit> {
    let all = Unit::ALL.to_vec();
    for u in &all {
        match u {
            Unit::FilesPerSec
            | Unit::OpsPerSec
            | Unit::KiloOpsPerSec
            | Unit::MibPerSec
            | Unit::MbPerSec
            | Unit::GibPerSec
            | Unit::Seconds
            | Unit::Milliseconds
            | Unit::Microseconds
            | Unit::Percent
            | Unit::Count
            | Unit::Mib
            | Unit::Kib
            | Unit::Bytes => {}
        }
    }
    all
}

/// A run with one of everything: a phase, a latency, a second, a loop row
/// and a metric of every unit.
fn a_full_run(s: &mut Store) -> i64 {
    let id = s
        .begin_run(&RunInfo {
            workload: "fsmark".into(),
            command_line: vec!["fslab".into(), "fsmark".into()],
            fslab_version: "0.1.0".into(),
            kernel: "6.18".into(),
            hostname: "h".into(),
            started_at: "2026-11-21T00:00:00Z".into(),
            target: TargetInfo::default(),
            params: serde_json::json!({"files": 10, "dirs": ["/x"]}),
        })
        .unwrap();
    s.record_phase(id, &PhaseResult::timed("create", 10, 0.5))
        .unwrap();
    let mut h = LatencyHistogram::new();
    h.record(1500);
    s.record_latency(id, "create", "creat", &h).unwrap();
    s.record_series(
        id,
        &SeriesPoint {
            phase_index: 0,
            t_s: 1.0,
            ops: 10,
            total_ops: 10,
        },
    )
    .unwrap();
    let row = LoopRow {
        count: 10,
        files: 10,
        calls: vec![("creat".into(), CallStats::default())],
        complete: true,
        ..Default::default()
    };
    s.record_metrics(id, &row.metrics("fsmark")).unwrap();
    let each: Vec<Metric> = every_unit()
        .into_iter()
        .map(|u| Metric::new("fsmark", None, "n", 1.5, u, Better::Neither))
        .collect();
    s.record_metrics(id, &each).unwrap();
    s.record_facts(
        id,
        &MachineFacts {
            host: "h".into(),
            facts: vec![
                Fact::known(facts::names::CPUS, "2", "/proc/cpuinfo"),
                Fact::unknown(facts::names::GOVERNOR, "no cpufreq"),
            ],
        },
    )
    .unwrap();
    let measured = PhaseFacts {
        clock_mhz: Some(2596.0),
        clock_source: "/proc/cpuinfo cpu MHz, 3 samples".into(),
        page_cache_mib: Some(812.5),
        pressure: Some(Pressure {
            io_some_pct: Some(12.0),
            ..Default::default()
        }),
        ..Default::default()
    };
    s.record_probe_note(
        id,
        &ProbeNote {
            phase_index: Some(0),
            probe: facts::PHASE_PROBE.into(),
            key: facts::PHASE_KEY.into(),
            value: serde_json::to_value(&measured).unwrap(),
            blob: None,
        },
    )
    .unwrap();
    s.finish_run(id, RunStatus::Complete, None).unwrap();
    id
}

#[test]
fn a_runs_json_validates_against_the_schema_file_and_the_schema_is_strict() {
    let schema = schema();
    jsonschema::meta::validate(&schema).expect("a valid JSON Schema");
    let v = jsonschema::validator_for(&schema).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut s = Store::open(&dir.path().join("r.sqlite")).unwrap();
    let id = a_full_run(&mut s);
    let doc: serde_json::Value = serde_json::from_str(&s.run_json(id).unwrap()).unwrap();
    let errors: Vec<String> = v.iter_errors(&doc).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}\n{doc}");
    assert_eq!(doc["fslab_schema"], json::SCHEMA_VERSION);
    assert_eq!(
        schema["properties"]["fslab_schema"]["const"],
        json::SCHEMA_VERSION
    );
    // What the schema refuses: a field gone, a field it does not know, a
    // unit it does not know, a number turned text.
    let mut gone = doc.clone();
    gone.as_object_mut().unwrap().remove("metrics");
    let mut unknown = doc.clone();
    unknown["loops"] = serde_json::json!([]);
    let mut unit = doc.clone();
    unit["metrics"][0]["unit"] = "furlongs".into();
    let mut text = doc.clone();
    text["phases"][0]["ops"] = "10".into();
    // A fact's unknown value is null, never a guess; a clock is a number.
    assert_eq!(
        doc["machine"]["hosts"][0]["facts"][1]["value"],
        serde_json::Value::Null
    );
    assert_eq!(doc["machine"]["phases"][0]["clock_mhz"], 2596.0);
    let mut no_source = doc.clone();
    no_source["machine"]["hosts"][0]["facts"][0]
        .as_object_mut()
        .unwrap()
        .remove("source");
    let mut clock_text = doc.clone();
    clock_text["machine"]["phases"][0]["clock_mhz"] = "fast".into();
    for bad in [gone, unknown, unit, text, no_source, clock_text] {
        assert!(!v.is_valid(&bad), "{bad}");
    }
}
