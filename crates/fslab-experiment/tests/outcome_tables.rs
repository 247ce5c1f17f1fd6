//! docs/findings.md's outcome tables (printed by `fslab results outcomes`
//! from stored runs) are of the built-ins as they now are: a table headed
//! "the current built-in file" has one row per finding of that built-in, in
//! its order, with the claim and the author's numbers as the file states
//! them now; every built-in with findings has a table or says it has no
//! stored run. A finding changed, added or dropped without the tables made
//! again fails here. (The numbers fslab measured come from the store, which
//! a clone does not have: they are not checked here.)

use fslab_experiment::builtin::BUILTIN;
use fslab_experiment::spec::{parse, Defaults};

const DOC: &str = include_str!("../../../docs/findings.md");

/// Where the tables begin.
const SECTION: &str = "## Outcomes on this machine";

/// A table cell as `fslab results outcomes` writes it.
fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// A Markdown row's cells, split at bars that are not escaped.
fn cells(row: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = row.trim().trim_start_matches('|').chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                cur.push_str("\\|");
                chars.next();
            }
            '|' => out.push(std::mem::take(&mut cur).trim().to_string()),
            _ => cur.push(c),
        }
    }
    out
}

/// One table of the section: the experiment's name, its heading, and its
/// rows' (id, claim, author, verdict).
struct Table {
    name: String,
    heading: String,
    rows: Vec<[String; 4]>,
}

/// The tables of the section, and the names said to have no stored run.
fn tables(doc: &str) -> Result<(Vec<Table>, Vec<String>), String> {
    let start = doc
        .find(SECTION)
        .ok_or(format!("docs/findings.md has no {SECTION:?}"))?;
    let rest = &doc[start + SECTION.len()..];
    let body = &rest[..rest.find("\n## ").unwrap_or(rest.len())];
    let (mut out, mut none) = (Vec::<Table>::new(), Vec::new());
    for l in body.lines() {
        if let Some(h) = l.strip_prefix("#### ") {
            if let Some(n) = h.strip_suffix(')').and_then(|h| {
                h.contains(": no stored run of the current built-in file")
                    .then(|| h.split(':').next().unwrap_or("").to_string())
            }) {
                none.push(n);
                continue;
            }
            out.push(Table {
                name: h.split(' ').next().unwrap_or("").to_string(),
                heading: h.to_string(),
                rows: Vec::new(),
            });
        } else if l.starts_with("| ") && !l.starts_with("| id |") {
            let c = cells(l);
            let t = out
                .last_mut()
                .ok_or(format!("a row before any table: {l}"))?;
            if c.len() != 6 {
                return Err(format!("{}: a row of {} cells: {l}", t.name, c.len()));
            }
            t.rows
                .push([c[0].clone(), c[1].clone(), c[2].clone(), c[4].clone()]);
        }
    }
    Ok((out, none))
}

/// What the section says that the built-ins (`builtins`: name, text) do not.
fn problems(doc: &str, builtins: &[(&str, &str)]) -> Vec<String> {
    let (tables, none) = match tables(doc) {
        Ok(t) => t,
        Err(e) => return vec![e],
    };
    let mut out = Vec::new();
    for (name, text) in builtins {
        let findings = parse(name, text, &Defaults::default()).unwrap().findings;
        if findings.is_empty() {
            continue;
        }
        let Some(t) = tables.iter().find(|t| t.name == *name) else {
            if !none.iter().any(|n| n == name) {
                out.push(format!(
                    "{name}: no table, and not said to have no stored run"
                ));
            }
            continue;
        };
        for want in ["kernel ", "scale ", "the current built-in file"] {
            if !t.heading.contains(want) {
                out.push(format!(
                    "{name}: its heading does not say {want:?}: {}",
                    t.heading
                ));
            }
        }
        let ids: Vec<&str> = t.rows.iter().map(|r| r[0].as_str()).collect();
        let want: Vec<&str> = findings.iter().map(|f| f.id.as_str()).collect();
        if ids != want {
            out.push(format!("{name}: rows {ids:?}, findings {want:?}"));
            continue;
        }
        for (f, r) in findings.iter().zip(&t.rows) {
            if r[1] != cell(&f.says).trim() {
                out.push(format!("{name}: {}: the claim is now {:?}", f.id, f.says));
            }
            if r[2] != cell(&f.author).trim() {
                out.push(format!(
                    "{name}: {}: the author's numbers are now {:?}",
                    f.id, f.author
                ));
            }
            if !r[3].starts_with("**") {
                out.push(format!("{name}: {}: no verdict: {:?}", f.id, r[3]));
            }
        }
    }
    out
}

#[test]
fn the_docs_outcome_tables_are_of_the_current_built_in_files() {
    let p = problems(DOC, BUILTIN);
    assert!(
        p.is_empty(),
        "docs/findings.md's outcome tables are not the built-ins' (print them again: fslab results outcomes):\n{}",
        p.join("\n")
    );
}

#[test]
fn a_table_of_a_changed_finding_or_a_missing_one_is_caught() {
    let (name, text) = BUILTIN
        .iter()
        .find(|(n, _)| *n == "seed002-mmap-fragmentation")
        .unwrap();
    let findings = parse(name, text, &Defaults::default()).unwrap().findings;
    let f = &findings[4];
    // The author's number changed in the file, not in the table.
    let changed = text.replacen(&f.author, &format!("{} (changed)", f.author), 1);
    let p = problems(DOC, &[(name, &changed)]);
    assert!(
        p.iter()
            .any(|x| x.contains(&format!("{}: the author's numbers are now", f.id))),
        "{p:?}"
    );
    // A row dropped from the table.
    let row = DOC
        .lines()
        .find(|l| l.starts_with(&format!("| {} |", f.id)))
        .unwrap();
    let p = problems(&DOC.replacen(&format!("{row}\n"), "", 1), &[(name, text)]);
    assert!(p.iter().any(|x| x.contains("rows [")), "{p:?}");
    // A built-in the section does not mention.
    let p = problems(
        &DOC.replace("#### seed002-mmap-fragmentation", "#### elsewhere"),
        &[(name, text)],
    );
    assert!(
        p.iter()
            .any(|x| x.contains("no table, and not said to have no stored run")),
        "{p:?}"
    );
}
