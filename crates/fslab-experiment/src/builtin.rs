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

/// `fslab run --list`: each built-in's name and description.
pub fn list() -> String {
    let w = BUILTIN.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
    let mut out = String::new();
    for (n, text) in BUILTIN {
        let desc = crate::spec::parse(n, text, &crate::spec::Defaults::from_env())
            .map(|e| e.description)
            .unwrap_or_default();
        out += &format!("{n:<w$}  {desc}\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{parse, Defaults};

    /// The claims the built-ins judge: `experiments/CLAIMS.md`, a copy of the
    /// project's list of what each seed's author claimed.
    const CLAIMS: &str = include_str!("../../../experiments/CLAIMS.md");

    /// Every claim of CLAIMS.md: (id, the author's numbers), from its tables'
    /// rows `| id | claim | author's numbers | ... |`.
    fn claims(text: &str) -> Vec<(String, String)> {
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
                (is_id && cols.len() >= 3).then(|| (id.to_string(), cols[2].to_string()))
            })
            .collect()
    }

    #[test]
    fn every_claim_of_claims_md_is_a_finding_of_its_seeds_builtins_with_the_authors_numbers() {
        let claims = claims(CLAIMS);
        // Seeds 000-004: 8 + 8 + 5 + 3 + 7 claims.
        assert_eq!(claims.len(), 31, "CLAIMS.md read: {claims:?}");
        let mut findings = Vec::new();
        for (name, text) in BUILTIN {
            let e = parse(name, text, &Defaults::default()).unwrap();
            for f in e.findings.into_iter().filter(|f| !f.is_mechanism()) {
                findings.push((name.to_string(), f));
            }
        }
        for (id, author) in &claims {
            let seed = format!("seed{}-", &id[..3]);
            // A claim may take several findings (000-d and 000-d.2).
            let of: Vec<_> = findings
                .iter()
                .filter(|(n, f)| {
                    n.starts_with(&seed) && (f.id == *id || f.id.starts_with(&format!("{id}.")))
                })
                .collect();
            assert!(!of.is_empty(), "claim {id} is in no {seed}* experiment");
            for (n, f) in of {
                assert_eq!(&f.author, author, "{n}: {}: the author's numbers", f.id);
            }
        }
        // And nothing is added that CLAIMS.md does not say.
        for (n, f) in &findings {
            let claim = f.id.split('.').next().unwrap_or_default();
            assert!(
                claims
                    .iter()
                    .any(|(id, _)| id == claim && n.starts_with(&format!("seed{}-", &id[..3]))),
                "{n}: finding {} is no claim of its seed in CLAIMS.md",
                f.id
            );
        }
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
