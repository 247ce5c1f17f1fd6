//! Every registered workload, through its own example job
//! ([`fslab_workload::Workload::example`]): parsed, scaled, validated, sent
//! through JSON and back (alone and in a child spec), its command line
//! rendered and parsed back, and a bad value refused in one line naming the
//! option and the value. A new workload is checked here by its registry
//! line alone.

use fslab_workload::{ChildSpec, Job, WorkloadRef};

fn argv(args: &str, dir: &std::path::Path) -> Vec<String> {
    args.replace("{dir}", &dir.display().to_string())
        .split_whitespace()
        .map(String::from)
        .collect()
}

/// The options' field `name`, among the flattened ones too.
fn field(options: &serde_json::Value, name: &str) -> Option<serde_json::Value> {
    let m = options.as_object()?;
    m.get(name).cloned().or_else(|| {
        m.values()
            .find_map(|v| v.is_object().then(|| field(v, name))?)
    })
}

fn check(kind: WorkloadRef, dir: &std::path::Path) {
    let name = kind.name();
    let ex = kind.workload().example();
    let job = kind
        .parse(&argv(ex.args, dir))
        .unwrap_or_else(|e| panic!("{name} {}: {e}", ex.args));
    job.validate()
        .unwrap_or_else(|e| panic!("{name} {}: {e}", ex.args));
    let mut scaled = job.clone();
    scaled.scale(ex.scale);
    let options = scaled.to_json()["options"].clone();
    for (k, v) in ex.scaled {
        let want: serde_json::Value = serde_json::from_str(v).unwrap();
        assert_eq!(
            field(&options, k),
            Some(want),
            "{name} {k} at scale {}",
            ex.scale
        );
    }
    scaled
        .validate()
        .unwrap_or_else(|e| panic!("{name} scaled by {}: {e}", ex.scale));
    // Through JSON and back, alone and as a child spec.
    let back = Job::from_json(&scaled.to_json()).unwrap();
    assert_eq!(back.to_json(), scaled.to_json(), "{name}");
    assert_eq!(back.kind(), kind);
    assert_eq!(back.workdir(), scaled.workdir(), "{name}");
    assert!(
        back.workdir().starts_with(dir),
        "{name}: {:?}",
        back.workdir()
    );
    assert_eq!(back.outputs(), scaled.outputs(), "{name}");
    assert_eq!(back.dirs(), scaled.dirs(), "{name}");
    assert_eq!(back.filled_dir(), scaled.filled_dir(), "{name}");
    let spec = ChildSpec {
        job: scaled.clone(),
        harness: scaled.common().harness(vec![name.into()]),
    };
    let text = serde_json::to_string(&spec).unwrap();
    let again: ChildSpec = serde_json::from_str(&text).unwrap();
    assert_eq!(again.job.to_json(), scaled.to_json(), "{name}");
    assert_eq!(again.harness, spec.harness, "{name}");
    // The command line shown for it parses back to it.
    let shown = fslab_workload::command_line::render(&scaled);
    assert_eq!(shown[0], name);
    let parsed = kind
        .parse(&shown[1..])
        .unwrap_or_else(|e| panic!("{name}: {shown:?}: {e}"));
    assert_eq!(parsed.to_json(), scaled.to_json(), "{name}: {shown:?}");
    // A bad value: refused by the parser or the validation, in one line
    // naming the option and the value.
    let bad = &ex.refused;
    let e = kind
        .parse(&argv(bad.args, dir))
        .and_then(|j| j.validate())
        .expect_err(&format!("{name} {}", bad.args));
    let line = e.to_string();
    assert!(e.is_usage(), "{name} {}: {line}", bad.args);
    assert!(
        line.contains(bad.option) && line.contains(bad.value),
        "{name} {}: {line} (should name {} and {})",
        bad.args,
        bad.option,
        bad.value
    );
    assert_eq!(line.lines().count(), 1, "{name}: {line}");
}

#[test]
fn every_registered_workload_parses_scales_validates_travels_and_refuses_its_example() {
    let dir = tempfile::tempdir().unwrap();
    let all = fslab_workload::plugin::all();
    assert!(all.len() >= 8, "{all:?}");
    for kind in all {
        check(kind, dir.path());
    }
}

/// What the dry run's estimate reads of a job: its work as operations
/// (seconds at the assumed rate).
fn cost(w: fslab_workload::work::Work) -> f64 {
    w.ops as f64 + w.seconds as f64 * fslab_workload::work::ASSUMED_OPS_PER_S
}

#[test]
fn every_workload_but_a_program_says_its_work_and_scaling_shrinks_it() {
    let dir = tempfile::tempdir().unwrap();
    for kind in fslab_workload::plugin::all() {
        let name = kind.name();
        let ex = kind.workload().example();
        let job = kind.parse(&argv(ex.args, dir.path())).unwrap();
        if name == "command" {
            // A program's work is its own: unknown from its options.
            assert_eq!(job.work(), None, "{name}");
            continue;
        }
        let full = job.work().unwrap_or_else(|| panic!("{name}: no work"));
        assert!(cost(full) > 0.0, "{name}: {full:?}");
        let mut scaled = job.clone();
        scaled.scale(ex.scale);
        let less = scaled.work().unwrap();
        assert!(
            ex.scale < 1.0 && cost(less) < cost(full),
            "{name} at {}: {less:?} from {full:?}",
            ex.scale
        );
        assert!(
            less.bytes <= full.bytes && less.entries <= full.entries,
            "{name}"
        );
    }
}
