//! One metric catalogue (`fslab_model::catalogue`): `fslab run`'s summary
//! and `fslab compare` name the same numbers.

use crate::support::{stderr, stdout, Lab};

/// The metric names of `fslab run`'s summary table: the first column of
/// its rows, between the cells' header and the lines under the table
/// (after what is said before the verdicts, when anything is).
fn summary_names(out: &str) -> Vec<String> {
    let lines: Vec<&str> = out.lines().collect();
    let start = lines
        .iter()
        .position(|l| l.contains("runs completed"))
        .unwrap_or_else(|| panic!("no summary in {out}"));
    let mut head = start + 2;
    if lines.get(head) == Some(&"before the verdicts:") {
        head += lines[head..].iter().position(|l| l.is_empty()).unwrap() + 1;
    }
    lines
        .into_iter()
        .skip(head + 1)
        .take_while(|l| {
            !l.is_empty() && !l.starts_with("verdicts:") && !l.starts_with("unresolved:")
        })
        .map(|l| l.split("  ").next().unwrap_or_default().to_string())
        .collect()
}

/// The metric names of `fslab compare --format csv`, in first-seen order.
fn compare_names(csv: &str) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for l in csv.lines().skip(1) {
        let name = l.split(',').next().unwrap_or_default().to_string();
        if !names.contains(&name) {
            names.push(name);
        }
    }
    names
}

#[test]
fn the_run_summary_and_compare_show_the_same_metric_names_for_a_dbench_experiment() {
    let lab = Lab::new();
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let f = lab.experiment(
        "db.toml",
        &format!(
            "name = \"db\"\nrepetitions = 1\n[device]\nkind = \"directory\"\npath = \"{}\"\n[workload]\nkind = \"dbench\"\nargs = [\"-t\", \"1\", \"-D\", \"{{dir}}\", \"1\"]\nprobes = []\n[[variant]]\nname = \"plain\"\n[[variant]]\nname = \"warm\"\nworkload_args = [\"--warmup\", \"1\"]\n",
            dir.path().display()
        ),
    );
    let o = lab.run_cmd().arg("run").arg(&f).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let summary = summary_names(&stdout(&o));
    let o = lab.run(&["compare", "--format", "csv"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let compare = compare_names(&stdout(&o));
    assert_eq!(summary, compare);
    // Both have each phase's user CPU and dbench's own totals, neither its
    // per-operation breakdown rows.
    for name in [
        "execute usr cpu (s)",
        "warmup rate (ops/s)",
        "dbench Throughput (MB/s)",
        "dbench max_latency (ms)",
    ] {
        assert!(summary.iter().any(|n| n == name), "{name}: {summary:?}");
    }
    assert!(
        !summary.iter().any(|n| n.contains("NTCreateX")),
        "{summary:?}"
    );
}
