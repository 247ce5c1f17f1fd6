//! A run copied from another store (a guest's) into this one.

use fslab_model::*;
use fslab_store::Store;

fn info(kernel: &str) -> RunInfo {
    RunInfo {
        workload: "createmany".into(),
        command_line: vec!["fslab".into(), "createmany".into()],
        fslab_version: "0.1.0".into(),
        kernel: kernel.into(),
        hostname: "guest".into(),
        started_at: "2026-11-27T00:00:00Z".into(),
        target: TargetInfo {
            path: "/x".into(),
            fs_type: "ext4".into(),
            ..Default::default()
        },
        params: serde_json::json!({"count": 10}),
    }
}

#[test]
fn an_imported_run_keeps_its_phases_metrics_latency_and_probes_under_a_new_id() {
    let d = tempfile::tempdir().unwrap();
    let guest_path = d.path().join("guest.sqlite");
    let gid = {
        let mut g = Store::open(&guest_path).unwrap();
        // An earlier run, so the guest's id is not the host's next one.
        g.begin_run(&info("6.1.0-50-cloud-amd64")).unwrap();
        let id = g.begin_run(&info("6.1.0-50-cloud-amd64")).unwrap();
        g.record_phase(
            id,
            &PhaseResult {
                phase: "create".into(),
                ops: 10,
                elapsed_s: 2.0,
                ops_per_s: 5.0,
                ..Default::default()
            },
        )
        .unwrap();
        let mut h = LatencyHistogram::new();
        h.record(1500);
        g.record_latency(id, "create", "mknod", &h).unwrap();
        g.record_metrics(
            id,
            &[Metric::new(
                "createmany",
                Some("create"),
                "htree levels",
                2.0,
                Unit::Count,
                Better::Neither,
            )],
        )
        .unwrap();
        g.record_probe_points(
            id,
            &[ProbePoint {
                phase_index: 0,
                t_s: 1.0,
                probe: "journal".into(),
                metric: "commits".into(),
                value: 3.0,
            }],
        )
        .unwrap();
        g.finish_run(id, RunStatus::Complete, None).unwrap();
        id
    };
    let mut host = Store::open(&d.path().join("host.sqlite")).unwrap();
    for _ in 0..3 {
        host.begin_run(&info("6.18")).unwrap();
    }
    let hid = host.import_run(&guest_path, gid).unwrap();
    assert_ne!(hid, gid);
    let r = host.run(hid).unwrap();
    assert_eq!(r.run.kernel, "6.1.0-50-cloud-amd64");
    assert_eq!(r.run.status, RunStatus::Complete);
    assert_eq!(r.phases[0].ops, 10);
    assert_eq!(r.latency[0].op, "mknod");
    assert_eq!(r.metrics[0].name, "htree levels");
    assert_eq!(host.probe_points(hid).unwrap()[0].metric, "commits");
    // The host's other run is untouched.
    assert!(host.phases(1).unwrap().is_empty());
    let e = host.import_run(&guest_path, 99).unwrap_err().to_string();
    assert!(e.contains("no run 99"), "{e}");
}
