//! The experiment files shipped in `experiments/`, built into fslab so
//! `fslab run NAME` works from anywhere, and how `fslab run` finds the
//! experiment it is given (a file, else a built-in by name or prefix).

/// (name, file text)
pub const BUILTIN: &[(&str, &str)] = &[
    (
        "seed000-fsmark-sparse",
        include_str!("../../../experiments/seed000-fsmark-sparse.toml"),
    ),
    (
        "seed001-crc-overhead",
        include_str!("../../../experiments/seed001-crc-overhead.toml"),
    ),
    (
        "seed001-dbench",
        include_str!("../../../experiments/seed001-dbench.toml"),
    ),
    (
        "seed001-compilebench",
        include_str!("../../../experiments/seed001-compilebench.toml"),
    ),
    (
        "seed002-mmap-fragmentation",
        include_str!("../../../experiments/seed002-mmap-fragmentation.toml"),
    ),
    (
        "seed003-btrfs-random-write",
        include_str!("../../../experiments/seed003-btrfs-random-write.toml"),
    ),
    (
        "seed004-large-dir",
        include_str!("../../../experiments/seed004-large-dir.toml"),
    ),
    (
        "io500-md",
        include_str!("../../../experiments/io500-md.toml"),
    ),
];

/// The scale each built-in ran at for the outcome tables of
/// docs/findings.md (io500-md is not among them: the scale its file's
/// comments measured at), which `fslab run --list` shows.
pub const TABLE_SCALE: &[(&str, f64)] = &[
    ("seed000-fsmark-sparse", 0.01),
    ("seed001-crc-overhead", 0.01),
    ("seed001-dbench", 0.25),
    ("seed001-compilebench", 0.1),
    ("seed002-mmap-fragmentation", 1.0),
    ("seed003-btrfs-random-write", 0.1),
    ("seed004-large-dir", 0.05),
    ("io500-md", 0.01),
];

/// The scale built-in `name` ran at for the outcome tables.
pub fn table_scale(name: &str) -> Option<f64> {
    TABLE_SCALE
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, s)| *s)
}

/// A built-in by full name or by unique prefix (`seed004`); otherwise the
/// names that start with `name` (several, or none).
pub fn find(name: &str) -> Result<(&'static str, &'static str), Vec<&'static str>> {
    if let Some(b) = BUILTIN.iter().find(|(n, _)| *n == name) {
        return Ok(*b);
    }
    let m: Vec<&(&str, &str)> = BUILTIN
        .iter()
        .filter(|(n, _)| n.starts_with(name))
        .collect();
    match m[..] {
        [b] => Ok(*b),
        _ => Err(m.iter().map(|(n, _)| *n).collect()),
    }
}

/// Why `fslab run NAME` has no experiment (bad input, each).
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("{name}: {source}")]
    Read {
        name: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{name}: names more than one built-in experiment: {}", .several.join(", "))]
    Several {
        name: String,
        several: Vec<&'static str>,
    },
    #[error("{name}: no such file, and no built-in experiment of that name (built-in: {})", names().join(", "))]
    Unknown { name: String },
}

fn names() -> Vec<&'static str> {
    BUILTIN.iter().map(|(n, _)| *n).collect()
}

/// An experiment file's name and text, or a built-in's
/// (`builtin:NAME`).
pub fn load(name: &str) -> Result<(String, String), LoadError> {
    let p = std::path::Path::new(name);
    if p.exists() {
        let text = std::fs::read_to_string(p).map_err(|source| LoadError::Read {
            name: name.into(),
            source,
        })?;
        return Ok((name.to_string(), text));
    }
    match find(name) {
        Ok((n, text)) => Ok((format!("builtin:{n}"), text.to_string())),
        Err(several) if several.len() > 1 && !name.is_empty() => Err(LoadError::Several {
            name: name.into(),
            several,
        }),
        Err(_) => Err(LoadError::Unknown { name: name.into() }),
    }
}

/// `fslab run --list`: each built-in's name, description and the scale its
/// outcome tables were measured at.
pub fn list() -> String {
    let w = BUILTIN.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
    let mut out = String::new();
    for (n, text) in BUILTIN {
        let desc = crate::spec::parse(n, text, &crate::spec::Defaults::from_env())
            .map(|e| e.description)
            .unwrap_or_default();
        let scale =
            table_scale(n).map_or(String::new(), |s| format!(" (outcome tables: --scale {s})"));
        out += &format!("{n:<w$}  {desc}{scale}\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{parse, Defaults};

    use crate::spec::author::{is_quoted, literals, quoted_numbers};

    #[test]
    fn every_builtin_says_the_scale_its_outcome_table_was_measured_at() {
        let findings = include_str!("../../../docs/findings.md");
        for (n, _) in BUILTIN {
            let s = table_scale(n).unwrap_or_else(|| panic!("{n}: no table scale"));
            // The table's heading names the scale it ran at.
            if let Some(h) = findings
                .lines()
                .find(|l| l.starts_with(&format!("#### {n} (")))
            {
                assert!(h.contains(&format!(", scale {s},")), "{n} at {s}: {h}");
            }
            assert!(
                list().contains(&format!("(outcome tables: --scale {s})")),
                "{n}"
            );
        }
    }
    use crate::spec::finding::Finding;

    /// The claims the built-ins judge: `experiments/CLAIMS.md`, a copy of the
    /// project's list of what each seed's author claimed (keep the two the
    /// same, byte for byte).
    const CLAIMS: &str = include_str!("../../../experiments/CLAIMS.md");

    /// A claim of CLAIMS.md: its id, the author's numbers as quoted, and its
    /// whole row (where the numbers a finding takes must be).
    struct Claim {
        id: String,
        author: String,
        row: String,
    }

    /// Every claim of CLAIMS.md, from its tables' rows `| id | claim |
    /// author's numbers | ... |`.
    fn claims(text: &str) -> Vec<Claim> {
        text.lines()
            .filter_map(|l| {
                let cols: Vec<&str> = l
                    .trim()
                    .strip_prefix('|')?
                    .split('|')
                    .map(str::trim)
                    .collect();
                let id = *cols.first()?;
                let is_id = id.len() == 5
                    && id.as_bytes()[3] == b'-'
                    && id[..3].bytes().all(|b| b.is_ascii_digit());
                (is_id && cols.len() >= 3).then(|| Claim {
                    id: id.to_string(),
                    author: cols[2].to_string(),
                    row: l.to_string(),
                })
            })
            .collect()
    }

    /// Every built-in's findings, with its name.
    fn findings() -> Vec<(String, Finding)> {
        let mut v = Vec::new();
        for (name, text) in BUILTIN {
            let e = parse(name, text, &Defaults::default()).unwrap();
            for f in e.findings {
                v.push((name.to_string(), f));
            }
        }
        v
    }

    /// What is wrong between the findings and the claims: a claim no
    /// finding states, a finding's quote that is not the claim's, a
    /// finding no claim makes, an author's number that no claim quotes.
    fn problems(claims: &[Claim], findings: &[(String, Finding)]) -> Vec<String> {
        let mut out = Vec::new();
        let seed = |id: &str| format!("seed{}-", &id[..3]);
        for c in claims {
            // A claim may take several findings (000-d and 000-d.2).
            let of: Vec<_> = findings
                .iter()
                .filter(|(n, f)| {
                    n.starts_with(&seed(&c.id)) && !f.is_mechanism() && f.claim_id() == c.id
                })
                .collect();
            if of.is_empty() {
                out.push(format!(
                    "claim {} is in no {}* experiment",
                    c.id,
                    seed(&c.id)
                ));
            }
            for (n, f) in of {
                if f.author != c.author {
                    out.push(format!(
                        "{n}: {}: the author's numbers are not CLAIMS.md's",
                        f.id
                    ));
                }
            }
        }
        for (n, f) in findings.iter().filter(|(_, f)| !f.is_mechanism()) {
            let Some(own) = claims
                .iter()
                .find(|c| c.id == f.claim_id() && n.starts_with(&seed(&c.id)))
            else {
                out.push(format!(
                    "{n}: finding {} is no claim of its seed in CLAIMS.md",
                    f.id
                ));
                continue;
            };
            for num in &f.author_numbers {
                for lit in literals(&num.text).unwrap_or_default() {
                    let row = match &lit.claim {
                        None => Some(own),
                        Some(id) => claims
                            .iter()
                            .find(|c| c.id == *id && c.id[..3] == own.id[..3]),
                    };
                    let quoted = row.is_some_and(|r| is_quoted(&lit, &quoted_numbers(&r.row)));
                    if !quoted {
                        out.push(format!(
                            "{n}: {}: the author's number {:?} has {} that claim {} does not quote",
                            f.id,
                            num.text,
                            lit.text,
                            lit.claim.as_deref().unwrap_or(&own.id)
                        ));
                    }
                }
            }
        }
        out
    }

    #[test]
    fn every_claim_of_claims_md_is_a_finding_of_its_seeds_builtins_with_the_authors_numbers() {
        let claims = claims(CLAIMS);
        // Seeds 000-004: 8 + 9 + 5 + 6 + 7 claims.
        assert_eq!(
            claims.len(),
            35,
            "CLAIMS.md read: {:?}",
            claims.iter().map(|c| &c.id).collect::<Vec<_>>()
        );
        let problems = problems(&claims, &findings());
        assert!(problems.is_empty(), "{}", problems.join("\n"));
    }

    #[test]
    fn an_authors_number_that_claims_md_does_not_quote_is_caught() {
        let claims = claims(CLAIMS);
        let mut all = findings();
        let i = all.iter().position(|(_, f)| f.id == "000-a").unwrap();
        // The author's "7,971,773 after ~5.6M files" typed as 1.43.
        all[i].1.author_numbers[0] = crate::spec::author::AuthorNumber {
            text: "1.43".into(),
            value: 1.43,
        };
        let p = problems(&claims, &all);
        assert!(
            p.iter().any(|x| x.contains(
                "000-a: the author's number \"1.43\" has 1.43 that claim 000-a does not quote"
            )),
            "{p:?}"
        );
        // A number of another seed's claim is not this claim's.
        all[i].1.author_numbers[0].text = "7971773 / 50435@002-a".into();
        let p = problems(&claims, &all);
        assert!(
            p.iter().any(|x| x.contains("claim 002-a does not quote")),
            "{p:?}"
        );
        // A claim without its finding.
        let p = problems(&claims, &all[..i]);
        assert!(
            p.iter()
                .any(|x| x.contains("claim 000-h is in no seed000-* experiment")),
            "{p:?}"
        );
    }

    #[test]
    fn the_readme_states_the_rule_the_code_applies() {
        let readme = include_str!("../../../docs/findings.md");
        assert!(
            readme.contains(crate::findings::rule::RULE),
            "docs/findings.md's rule is not findings::rule::RULE: copy it from `fslab run --help`"
        );
    }
}
