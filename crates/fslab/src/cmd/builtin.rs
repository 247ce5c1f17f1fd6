//! The experiment files shipped in `experiments/`, built into the binary so
//! `fslab run NAME` works from anywhere.

/// (name, file text)
pub const BUILTIN: &[(&str, &str)] = &[
    (
        "seed000-fsmark-sparse",
        include_str!("../../../../experiments/seed000-fsmark-sparse.toml"),
    ),
    (
        "seed001-crc-overhead",
        include_str!("../../../../experiments/seed001-crc-overhead.toml"),
    ),
    (
        "seed001-dbench",
        include_str!("../../../../experiments/seed001-dbench.toml"),
    ),
    (
        "seed001-compilebench",
        include_str!("../../../../experiments/seed001-compilebench.toml"),
    ),
    (
        "seed002-mmap-fragmentation",
        include_str!("../../../../experiments/seed002-mmap-fragmentation.toml"),
    ),
    (
        "seed003-btrfs-random-write",
        include_str!("../../../../experiments/seed003-btrfs-random-write.toml"),
    ),
    (
        "seed004-large-dir",
        include_str!("../../../../experiments/seed004-large-dir.toml"),
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
