//! Checks over the source tree: every metric name is written once.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The library and binary sources, without their `#[cfg(test)]` modules
/// (a test may spell a name to check it).
fn sources() -> Vec<(PathBuf, String)> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    let mut files = Vec::new();
    for c in std::fs::read_dir(workspace().join("crates"))
        .unwrap()
        .flatten()
    {
        let src = c.path().join("src");
        if src.is_dir() {
            walk(&src, &mut files);
        }
    }
    files
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            let code = match text.find("#[cfg(test)]") {
                Some(i) => text[..i].to_string(),
                None => text,
            };
            (p, code)
        })
        .collect()
}

/// The string literals in `code` (escapes are rare in names; good enough).
fn literals(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in code.lines() {
        let line = line.trim_start();
        if line.starts_with("//") {
            continue;
        }
        let mut parts = line.split('"');
        parts.next();
        while let Some(lit) = parts.next() {
            out.push(lit.to_string());
            if parts.next().is_none() {
                break;
            }
        }
    }
    out
}

/// The metric names fslab stores: the probes' series (`fslab_probe::names`)
/// and the names workloads give `Metric::new` (as its third argument, or
/// as the first of the small `row`/`m` helpers around it).
fn metric_names(files: &[(PathBuf, String)]) -> (Vec<String>, Vec<String>) {
    let mut probes = Vec::new();
    let mut names = Vec::new();
    for (p, code) in files {
        if p.ends_with("fslab-probe/src/names.rs") {
            // JBD2_ and XFS_ are the kernel's field names, which the
            // functions there compose into stored names.
            for l in code.lines().filter(|l| {
                l.starts_with("pub const ")
                    && !l.starts_with("pub const JBD2_")
                    && !l.starts_with("pub const XFS_")
            }) {
                probes.extend(literals(l));
            }
        }
        if !code.contains("Metric::new(") {
            continue;
        }
        let flat: String = code
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .replace("( ", "(");
        for call in flat.split("Metric::new(").skip(1) {
            let args: Vec<&str> = call.splitn(4, ", ").collect();
            if let Some(a) = args.get(2) {
                if let Some(lit) = a.strip_prefix('"').and_then(|a| a.split('"').next()) {
                    names.push(lit.to_string());
                }
            }
        }
        // The helpers take the name first, or after the phase.
        for helper in [" row(", "(row(", " m(", "(m("] {
            for call in flat.split(helper).skip(1) {
                let lit = call
                    .splitn(3, ", ")
                    .take(2)
                    .find_map(|a| a.strip_prefix('"'))
                    .and_then(|a| a.split('"').next());
                names.extend(lit.map(String::from));
            }
        }
    }
    names.sort();
    names.dedup();
    (probes, names)
}

/// The crates that read metrics rather than make them.
const READERS: [&str; 7] = [
    "crates/fslab/",
    "crates/fslab-analysis/",
    "crates/fslab-present/",
    "crates/fslab-experiment/",
    "crates/fslab-store/",
    "crates/fslab-stats/",
    "crates/fslab-cluster/",
];

/// A metric is named where it is made and nowhere else: the probes' series
/// names are written once in the whole tree (`fslab_probe::names`, which
/// probes and readers both use), and no crate that reads metrics spells a
/// workload's metric name (it reads the typed `Metric` instead). Within a
/// workload, a name its output also prints is one constant (fs_mark's
/// `Files/sec`, compilebench's `avg`).
#[test]
fn no_metric_name_is_a_literal_in_two_places() {
    let files = sources();
    let (probes, workloads) = metric_names(&files);
    assert!(
        probes.len() > 30 && probes.iter().any(|n| n == "iops"),
        "the scan found the probes' names: {probes:?}"
    );
    assert!(
        workloads.len() > 25 && workloads.iter().any(|n| n == "Throughput"),
        "the scan found the workloads' names: {workloads:?}"
    );
    let mut places: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for (p, code) in &files {
        let rel = p
            .strip_prefix(workspace())
            .unwrap_or(p)
            .display()
            .to_string();
        let reader = READERS.iter().any(|r| rel.contains(r));
        // The parsers of other tools' output spell those tools' own words
        // (fio's JSON key `iops`), which a probe's series may share.
        if rel.contains("crates/fslab-parse/") {
            continue;
        }
        for lit in literals(code) {
            if let Some(n) = probes.iter().find(|n| **n == lit) {
                places.entry(n).or_default().push(rel.clone());
            } else if let Some(n) = workloads.iter().find(|n| **n == lit && reader) {
                // Twice: once where it is made, once here.
                let at = places.entry(n).or_default();
                at.push("its workload".into());
                at.push(rel.clone());
            }
        }
    }
    let twice: Vec<String> = places
        .iter()
        .filter(|(_, at)| at.len() > 1)
        .map(|(n, at)| format!("{n:?} in {}", at.join(", ")))
        .collect();
    assert!(
        twice.is_empty(),
        "metric names written more than once (use the constant or the typed Metric):\n{}",
        twice.join("\n")
    );
}
