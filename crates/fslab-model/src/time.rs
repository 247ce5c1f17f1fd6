//! The one timestamp format of fslab's records and JSON: RFC 3339 in UTC
//! with milliseconds, `2026-11-23T08:12:37.123Z` (the form the store's own
//! `strftime('%Y-%m-%dT%H:%M:%fZ')` writes, so every timestamp sorts and
//! reads alike).

/// Now, as fslab writes timestamps.
pub fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

#[cfg(test)]
mod tests {
    #[test]
    fn timestamps_are_rfc3339_utc_with_milliseconds() {
        let t = super::now();
        assert_eq!(t.len(), 24, "{t}");
        assert!(
            t.ends_with('Z') && t.as_bytes()[10] == b'T' && t.as_bytes()[19] == b'.',
            "{t}"
        );
        assert!(chrono::DateTime::parse_from_rfc3339(&t).is_ok(), "{t}");
    }
}
