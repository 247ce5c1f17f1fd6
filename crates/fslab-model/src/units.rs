//! Byte counts as people write them in options and experiment files: one
//! grammar for every size option of every workload and every size in an
//! experiment file (`docs/sizes.md`).
//!
//! A size is a number (a decimal point allowed) with an optional unit,
//! case-insensitive: `K`, `M`, `G`, `T`, `P`, `E`, each alone or followed
//! by `B`, `i` or `iB` (`4k`, `4K`, `4KB`, `4kb`, `4Ki`, `4KiB`), or `B`
//! alone for bytes. Every unit is binary (powers of 1024: `1G` and `1GB`
//! are both 1073741824 bytes), as fs_mark, mdtest, IOR, fio and tiotest
//! read them.

/// Why a size does not parse, said after the value.
pub const SIZE_GRAMMAR: &str = "a size is a number with an optional unit K, M, G, T, P or E \
     (KB, KiB and Ki too, any case; all powers of 1024), say 4k or 1.5GiB";

/// Parses a byte count (see the module's grammar). `None` when it does not
/// parse or is larger than `u64::MAX`.
pub fn parse_bytes(s: &str) -> Option<u64> {
    let t = s.trim();
    let lower = t.to_ascii_lowercase();
    // The unit's letters: strip "ib", "b" or "i" after a multiplier letter.
    let body = ["ib", "b", "i"]
        .iter()
        .find_map(|suf| {
            let rest = lower.strip_suffix(suf)?;
            let last = rest.chars().last()?;
            (suf == &"b" || last.is_ascii_alphabetic()).then_some(rest)
        })
        .unwrap_or(&lower);
    let (num, mult) = match body.chars().last()? {
        c if c.is_ascii_alphabetic() => {
            let m: u64 = match c {
                'k' => 1 << 10,
                'm' => 1 << 20,
                'g' => 1 << 30,
                't' => 1 << 40,
                'p' => 1 << 50,
                'e' => 1 << 60,
                _ => return None,
            };
            (&body[..body.len() - 1], m)
        }
        _ => (body, 1),
    };
    if num.is_empty() || !num.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return None;
    }
    let v: f64 = num.parse().ok()?;
    let bytes = v * mult as f64;
    (bytes.is_finite() && bytes < u64::MAX as f64).then_some(bytes.round() as u64)
}

/// Why a size option's value is refused, naming the value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SizeError {
    /// Not a size in the module's grammar.
    #[error("{0:?} is not a size: {SIZE_GRAMMAR}")]
    NotASize(String),
    /// A bare count of MiB beyond `u64`.
    #[error("{0:?} is too large a number of MiB")]
    TooManyMib(String),
    /// A size with a unit that is not whole MiB.
    #[error("{0:?} is not a whole number of MiB (1M = 1048576 bytes)")]
    NotWholeMib(String),
    /// A size beyond what the option holds.
    #[error("{0:?} is too large")]
    TooLarge(String),
}

/// A clap value parser for a size in bytes (see [`parse_bytes`]).
pub fn bytes_arg(s: &str) -> Result<u64, SizeError> {
    parse_bytes(s).ok_or_else(|| SizeError::NotASize(s.to_string()))
}

/// A clap value parser for a size whose bare number counts MiB (tiotest's
/// `-f 10`); with a unit it is converted, and must be whole MiB (`-f 1G`
/// is 1024).
pub fn mib_arg(s: &str) -> Result<u64, SizeError> {
    let t = s.trim();
    if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
        return t.parse().map_err(|_| SizeError::TooManyMib(s.to_string()));
    }
    let b = bytes_arg(s)?;
    if b % (1 << 20) != 0 {
        return Err(SizeError::NotWholeMib(s.to_string()));
    }
    Ok(b >> 20)
}

/// Formats a byte count with binary units (`100 TiB`, `512 MiB`).
pub fn human_bytes(b: u64) -> String {
    const UNITS: [&str; 7] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if v.fract() == 0.0 {
        format!("{v:.0} {}", UNITS[u])
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn parse_bytes_takes_binary_suffixes() {
        assert_eq!(super::parse_bytes("100T"), Some(100 << 40));
        assert_eq!(super::parse_bytes("1.5G"), Some(3 << 29));
        assert_eq!(super::parse_bytes("512MiB"), Some(512 << 20));
        assert_eq!(super::parse_bytes("4096"), Some(4096));
        assert_eq!(super::parse_bytes("12Q"), None);
        assert_eq!(super::parse_bytes("-1G"), None);
    }

    #[test]
    fn every_spelling_of_a_unit_is_taken_in_any_case_and_is_binary() {
        for s in [
            "4k", "4K", "4kb", "4KB", "4Ki", "4ki", "4KiB", "4kib", " 4k ", "4096", "4096B",
            "4096b",
        ] {
            assert_eq!(super::parse_bytes(s), Some(4096), "{s}");
        }
        assert_eq!(super::parse_bytes("1GB"), Some(1 << 30));
        assert_eq!(super::parse_bytes("1g"), Some(1 << 30));
        assert_eq!(super::parse_bytes("0.5k"), Some(512));
        for bad in ["", "k", "4x", "4kk", "4bi", "4 kb b", "1e3"] {
            assert_eq!(super::parse_bytes(bad), None, "{bad}");
        }
        let e = super::bytes_arg("4x").unwrap_err().to_string();
        assert!(
            e.starts_with("\"4x\" is not a size:") && e.contains("1024"),
            "{e}"
        );
    }

    #[test]
    fn a_size_in_mib_takes_a_bare_count_or_a_unit() {
        assert_eq!(super::mib_arg("10"), Ok(10));
        assert_eq!(super::mib_arg("1G"), Ok(1024));
        assert_eq!(super::mib_arg("512MiB"), Ok(512));
        assert_eq!(
            super::mib_arg("1000k").unwrap_err().to_string(),
            "\"1000k\" is not a whole number of MiB (1M = 1048576 bytes)"
        );
        assert!(super::mib_arg("ten").is_err());
    }

    #[test]
    fn human_bytes_uses_binary_units() {
        assert_eq!(super::human_bytes(100 << 40), "100 TiB");
        assert_eq!(super::human_bytes(1536), "1.5 KiB");
        assert_eq!(super::human_bytes(0), "0 B");
    }
}
