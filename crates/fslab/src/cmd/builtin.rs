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
    (
        "seed001-dbench",
        include_str!("../../../../experiments/seed001-dbench.toml"),
    ),
    (
        "seed001-compilebench",
        include_str!("../../../../experiments/seed001-compilebench.toml"),
    ),
];

/// A built-in by full name or by unique prefix (`seed001`).
pub fn find(name: &str) -> Option<(&'static str, &'static str)> {
    if let Some(b) = BUILTIN.iter().find(|(n, _)| *n == name) {
        return Some(*b);
    }
    let mut m = BUILTIN.iter().filter(|(n, _)| n.starts_with(name));
    match (m.next(), m.next()) {
        (Some(b), None) => Some(*b),
        _ => None,
    }
}
