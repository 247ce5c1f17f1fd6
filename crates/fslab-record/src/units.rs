//! Byte counts as people write them in options and experiment files.

/// Parses a byte count: digits (a decimal point allowed) with an optional
/// K, M, G, T, P or E suffix (powers of 1024; a trailing `B` or `iB` is
/// accepted). `None` when it does not parse.
pub fn parse_bytes(s: &str) -> Option<u64> {
    let t = s.trim();
    let t = t
        .strip_suffix("iB")
        .or_else(|| t.strip_suffix('B'))
        .unwrap_or(t);
    let (num, mult) = match t.chars().last()? {
        c if c.is_ascii_alphabetic() => {
            let m: u64 = match c.to_ascii_uppercase() {
                'K' => 1 << 10,
                'M' => 1 << 20,
                'G' => 1 << 30,
                'T' => 1 << 40,
                'P' => 1 << 50,
                'E' => 1 << 60,
                _ => return None,
            };
            (&t[..t.len() - 1], m)
        }
        _ => (t, 1),
    };
    if num.is_empty() || !num.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return None;
    }
    let v: f64 = num.parse().ok()?;
    let bytes = v * mult as f64;
    (bytes.is_finite() && bytes < u64::MAX as f64).then_some(bytes as u64)
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
    fn human_bytes_uses_binary_units() {
        assert_eq!(super::human_bytes(100 << 40), "100 TiB");
        assert_eq!(super::human_bytes(1536), "1.5 KiB");
        assert_eq!(super::human_bytes(0), "0 B");
    }
}
