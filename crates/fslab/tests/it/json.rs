//! One JSON shape for a run: each workload's `--json` and `results export
//! --format json` print the same document, which `schema/run.schema.json`
//! validates.

use crate::support::{run_schema_errors, stderr, Lab};

/// A small run of each workload on tmpfs (`{d}`: its directory).
fn small_runs(model: &str) -> Vec<(&'static str, Vec<String>)> {
    let v = |args: &[&str]| args.iter().map(|a| a.to_string()).collect::<Vec<_>>();
    vec![
        (
            "fsmark",
            v(&[
                "fsmark", "-n", "50", "-s", "4096", "-L", "2", "-S0", "-d", "{d}",
            ]),
        ),
        ("createmany", v(&["createmany", "-o", "{d}/f", "200"])),
        (
            "tiotest",
            v(&["tiotest", "-t", "1", "-f", "1", "-r", "16", "-d", "{d}"]),
        ),
        ("alloctest", v(&["alloctest", "{d}/f", "1M"])),
        ("dbench", v(&["dbench", "-t", "1", "-D", "{d}", "1"])),
        (
            "mdtest",
            v(&[
                "mdtest", "-n", "20", "-u", "-w", "100", "-e", "100", "-d", "{d}",
            ]),
        ),
        (
            "io500md",
            v(&[
                "io500md",
                "-d",
                "{d}/io500",
                "--easy-n",
                "20",
                "--hard-n",
                "20",
                "--stonewall-time",
                "1",
                "--minwrite",
                "1",
            ]),
        ),
        (
            "command",
            v(&[
                "exec",
                "-C",
                "{d}",
                "--parser",
                "regex",
                "--metric",
                "rate (ops/s)=rate ([0-9]+)",
                "--",
                "echo",
                "rate",
                "5",
            ]),
        ),
        (
            "compilebench",
            v(&[
                "compilebench",
                "-D",
                "{d}",
                "-i",
                "1",
                "-r",
                "0",
                "-n",
                "--tree-from",
                model,
            ]),
        ),
    ]
}

#[test]
fn every_workloads_json_and_its_export_are_one_document_the_schema_validates() {
    let lab = Lab::new();
    let model = lab.path("model");
    std::fs::create_dir_all(model.join("a")).unwrap();
    std::fs::write(model.join("a/x.c"), vec![b'c'; 20_000]).unwrap();
    let mut seen = Vec::new();
    for (name, args) in small_runs(model.to_str().unwrap()) {
        let d = tempfile::tempdir_in("/dev/shm").unwrap();
        let dir = d.path().to_str().unwrap();
        let mut args: Vec<String> = args.iter().map(|a| a.replace("{d}", dir)).collect();
        // fslab's options right after the command: a program's arguments
        // follow its name.
        args.splice(1..1, ["--json", "--probes", "none"].map(String::from));
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = lab.run(&argv);
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        let printed: serde_json::Value = serde_json::from_slice(&o.stdout)
            .unwrap_or_else(|e| panic!("{name}: stdout is not one JSON document: {e}"));
        let errors = run_schema_errors(&printed);
        assert!(errors.is_empty(), "{name} --json: {errors:?}\n{printed}");
        let id = printed["run"]["id"].as_i64().unwrap().to_string();
        let o = lab.run(&["results", "export", &id, "--format", "json"]);
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        let exported: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert!(run_schema_errors(&exported).is_empty(), "{name} export");
        // Not only the same shape: the same document.
        assert_eq!(printed, exported, "{name}");
        assert_eq!(printed["run"]["workload"], name);
        assert!(
            !printed["metrics"].as_array().unwrap().is_empty(),
            "{name}: its numbers are in it"
        );
        seen.push(name);
    }
    assert_eq!(seen.len(), fslab_workload::plugin::all().len(), "{seen:?}");
}
