//! The import drawing of the whole workspace (issue 33): no crate depends
//! on a crate of its own layer or above ([`LAYERS`]), and, within every
//! crate, no module imports one that imports it back (issue 24): among the
//! modules of one parent, the references (`crate::...`, `super::...`)
//! outside tests run one way. A module and its own children may name each
//! other (a parent re-exports its children, a child uses its parent's
//! types): that is nesting, not a circle.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type Module = Vec<String>;

/// Every `.rs` file under `dir`.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The module a file is by its place: lib.rs (and main.rs) is the root, `a/b.rs` and
/// `a/b/mod.rs` are `a::b`.
fn module_by_place(src: &Path, file: &Path) -> Module {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut m: Module = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if m.last().is_some_and(|l| l == "mod" || l == "lib") || m == ["main"] {
        m.pop();
    }
    m
}

/// The code of a file that is not a test and not a comment.
fn code(text: &str) -> String {
    let text = text.split("#[cfg(test)]").next().unwrap_or_default();
    text.lines()
        .map(|l| l.split("//").next().unwrap_or_default())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Each file's module, `#[path = "F"] mod N;` followed.
fn modules(src: &Path) -> BTreeMap<PathBuf, Module> {
    let mut files = Vec::new();
    sources(src, &mut files);
    let mut by_file: BTreeMap<PathBuf, Module> = files
        .iter()
        .map(|f| (f.clone(), module_by_place(src, f)))
        .collect();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let lines: Vec<&str> = text.lines().map(str::trim).collect();
        for (i, l) in lines.iter().enumerate() {
            let Some(target) = l
                .strip_prefix("#[path = \"")
                .and_then(|r| r.strip_suffix("\"]"))
            else {
                continue;
            };
            let name = lines[i + 1..]
                .iter()
                .find_map(|n| n.trim_start_matches("pub ").strip_prefix("mod "))
                .map(|n| n.trim_end_matches(';').to_string())
                .unwrap();
            let mut m = by_file[f].clone();
            m.push(name);
            by_file.insert(f.parent().unwrap().join(target), m);
        }
    }
    by_file
}

/// The paths a file's code names from the crate's root: `crate::a::b`,
/// `super::c` (from the file's module), one for each item of a `{...}`.
fn references(code: &str, module: &Module) -> Vec<Module> {
    let mut out = Vec::new();
    let bytes = code.as_bytes();
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    for start in ["crate::", "super::"] {
        for (at, _) in code.match_indices(start) {
            if at > 0 && (word(bytes[at - 1]) || bytes[at - 1] == b':') {
                continue;
            }
            let mut base: Module = if start == "crate::" {
                Vec::new()
            } else {
                // A file's `super` is its module's parent (lib.rs and
                // mod.rs are their module).
                let mut m = module.clone();
                m.pop();
                m
            };
            let mut rest = &code[at + start.len()..];
            while let Some(r) = rest.strip_prefix("super::") {
                base.pop();
                rest = r;
            }
            let path: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':' || *c == '{')
                .collect();
            let (head, group) = match path.split_once('{') {
                Some((h, _)) => {
                    let inner = &rest[path.len()..];
                    let end = inner.find('}').unwrap_or(inner.len());
                    (h.trim_end_matches("::"), Some(&inner[..end]))
                }
                None => (path.as_str(), None),
            };
            let mut m = base.clone();
            m.extend(head.split("::").filter(|s| !s.is_empty()).map(String::from));
            match group {
                Some(g) => {
                    for item in g.split(',') {
                        let mut mi = m.clone();
                        let item = item.trim().split(" as ").next().unwrap_or_default();
                        mi.extend(item.split("::").filter(|s| !s.is_empty()).map(String::from));
                        out.push(mi);
                    }
                }
                None => out.push(m),
            }
        }
    }
    out
}

/// The longest prefix of `path` that is a module.
fn resolve(path: &Module, known: &BTreeSet<Module>) -> Module {
    (0..=path.len())
        .rev()
        .map(|n| path[..n].to_vec())
        .find(|m| known.contains(m))
        .unwrap_or_default()
}

/// The circles among the children of each module: "a -> b -> a".
fn circles(src: &Path) -> Vec<String> {
    let by_file = modules(src);
    let known: BTreeSet<Module> = by_file.values().cloned().collect();
    // parent -> (child -> children it names)
    let mut graph: BTreeMap<Module, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for (file, module) in &by_file {
        let text = code(&std::fs::read_to_string(file).unwrap());
        for r in references(&text, module) {
            let target = resolve(&r, &known);
            let common = module
                .iter()
                .zip(&target)
                .take_while(|(a, b)| a == b)
                .count();
            // A module naming its ancestor or its descendant: nesting.
            if common == module.len() || common == target.len() {
                continue;
            }
            graph
                .entry(module[..common].to_vec())
                .or_default()
                .entry(module[common].clone())
                .or_default()
                .insert(target[common].clone());
        }
    }
    let mut found = Vec::new();
    for (parent, edges) in &graph {
        for start in edges.keys() {
            // Depth first from `start`, back to it.
            let mut stack = vec![(start.clone(), vec![start.clone()])];
            let mut seen = BTreeSet::new();
            while let Some((at, trail)) = stack.pop() {
                for next in edges.get(&at).into_iter().flatten() {
                    if next == start && next == trail.iter().min().unwrap() {
                        let mut t = trail.clone();
                        t.push(next.clone());
                        let at = if parent.is_empty() {
                            "crate".to_string()
                        } else {
                            parent.join("::")
                        };
                        found.push(format!("in {at}: {}", t.join(" -> ")));
                    } else if seen.insert(next.clone()) {
                        let mut t = trail.clone();
                        t.push(next.clone());
                        stack.push((next.clone(), t));
                    }
                }
            }
        }
    }
    found
}

/// The workspace's layers, lowest first: a crate may depend on crates of
/// lower layers only. Workloads and probes share a layer: what runs on the
/// filesystem and what watches it never import each other.
const LAYERS: &[(&str, &[&str])] = &[
    ("the kernel's interfaces", &["fslab-sys"]),
    (
        "the model: metrics, units, catalogue, protocol",
        &["fslab-model"],
    ),
    (
        "statistics, the results store, readers of other tools' output and of on-disk layout",
        &["fslab-stats", "fslab-store", "fslab-parse", "fslab-layout"],
    ),
    (
        "the lab, guests, cluster, analysis",
        &[
            "fslab-lab",
            "fslab-guest",
            "fslab-cluster",
            "fslab-analysis",
        ],
    ),
    ("workloads and probes", &["fslab-workload", "fslab-probe"]),
    (
        "explanations: facts, confounders, limiters, profiles",
        &["fslab-explain"],
    ),
    (
        "the runtime and the experiment",
        &["fslab-runtime", "fslab-experiment"],
    ),
    ("presentation", &["fslab-present"]),
    ("the front door and the benches", &["fslab", "fslab-bench"]),
];

/// The workspace's root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every crate of the workspace: its name and directory (the members of
/// the root Cargo.toml).
fn members() -> Vec<(String, PathBuf)> {
    let text = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
    let list = text.split("members = [").nth(1).unwrap();
    let list = &list[..list.find(']').unwrap()];
    list.split(',')
        .map(|m| m.trim().trim_matches('"'))
        .filter(|m| !m.is_empty())
        .map(|m| {
            let dir = root().join(m);
            let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
            (package_name(&manifest), dir)
        })
        .collect()
}

fn package_name(manifest: &str) -> String {
    manifest
        .lines()
        .find_map(|l| l.strip_prefix("name = "))
        .map(|n| n.trim_matches('"').to_string())
        .unwrap()
}

/// The workspace crates a manifest depends on to build (its
/// `[dependencies]` and `[build-dependencies]`; tests may reach up).
fn dependencies(manifest: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut on = false;
    for l in manifest.lines().map(str::trim) {
        if l.starts_with('[') {
            on = l == "[dependencies]" || l == "[build-dependencies]";
        } else if on && l.starts_with("fslab") {
            let end = l.find(['.', ' ', '=']).unwrap_or(l.len());
            out.push(l[..end].to_string());
        }
    }
    out
}

/// The edges that do not go down: "a -> b (layer ...)", and the crates no
/// layer places.
fn upward(edges: &[(String, Vec<String>)]) -> Vec<String> {
    let layer = |c: &str| LAYERS.iter().position(|(_, cs)| cs.contains(&c));
    let mut bad = Vec::new();
    for (from, deps) in edges {
        let Some(at) = layer(from) else {
            bad.push(format!("{from} is in no layer: place it in LAYERS"));
            continue;
        };
        for to in deps {
            match layer(to) {
                Some(l) if l < at => {}
                Some(l) => bad.push(format!(
                    "{from} -> {to}: {to} is in layer {l} ({}), not below {from}'s ({})",
                    LAYERS[l].0, LAYERS[at].0
                )),
                None => bad.push(format!("{from} -> {to}: {to} is in no layer")),
            }
        }
    }
    bad
}

#[test]
fn no_crate_depends_on_one_of_its_own_layer_or_above() {
    let edges: Vec<(String, Vec<String>)> = members()
        .into_iter()
        .map(|(name, dir)| {
            let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
            (name, dependencies(&manifest))
        })
        .collect();
    assert!(edges.len() >= 14, "{edges:?}");
    let bad = upward(&edges);
    assert!(
        bad.is_empty(),
        "edges against the layering:\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_layering_check_finds_an_upward_and_a_sideways_edge_and_an_unplaced_crate() {
    let deps = dependencies(
        "[package]\nname = \"fslab-model\"\n[dependencies]\nfslab-stats.workspace = true\n\
         serde = \"1\"\n[dev-dependencies]\nfslab-present = { path = \"x\" }\n",
    );
    assert_eq!(deps, ["fslab-stats"]);
    let edges = vec![
        ("fslab-model".to_string(), deps),
        (
            "fslab-workload".to_string(),
            vec!["fslab-probe".to_string()],
        ),
        ("fslab-probe".to_string(), vec!["fslab-sys".to_string()]),
        ("fslab-new".to_string(), vec![]),
    ];
    let bad = upward(&edges);
    assert_eq!(bad.len(), 3, "{bad:?}");
    assert!(bad[0].starts_with("fslab-model -> fslab-stats"), "{bad:?}");
    assert!(
        bad[1].starts_with("fslab-workload -> fslab-probe"),
        "{bad:?}"
    );
    assert!(bad[2].starts_with("fslab-new is in no layer"), "{bad:?}");
}

#[test]
fn no_module_of_any_crate_imports_one_that_imports_it_back() {
    let mut all = Vec::new();
    for (name, dir) in members() {
        all.extend(
            circles(&dir.join("src"))
                .into_iter()
                .map(|c| format!("{name}: {c}")),
        );
    }
    assert!(all.is_empty(), "module circles:\n{}", all.join("\n"));
}

#[test]
fn the_circle_check_finds_a_circle_through_three_modules() {
    let d = tempfile::tempdir().unwrap();
    let w = |f: &str, t: &str| {
        let p = d.path().join(f);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, t).unwrap();
    };
    w("lib.rs", "pub mod a;\npub mod b;\npub mod c;\n");
    w("a.rs", "use crate::b::X;\n");
    w("b/mod.rs", "pub struct X;\nmod inner;\n");
    w("b/inner.rs", "use crate::c::{Y, Z as W};\nuse super::X;\n");
    w("c.rs", "// crate::b is named in a comment only\nfn f() { crate::a::g() }\n#[cfg(test)]\nmod tests { use crate::b::X; }\n");
    assert_eq!(circles(d.path()), ["in crate: a -> b -> c -> a"]);
    // One way round: no circle.
    w("c.rs", "pub struct Y;\n");
    assert!(circles(d.path()).is_empty());
}
