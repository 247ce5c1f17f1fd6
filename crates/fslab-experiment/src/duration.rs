//! Durations as people write them (`time_limit = "20m"`,
//! `--cell-time-limit 90s`) and read them ("1 h 30 min").

use std::time::Duration;

/// Why a written duration is not one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DurationError {
    #[error("{text:?}: unknown unit {unit:?} (use s, m or h: \"90s\", \"20m\", \"2h\")")]
    Unit { text: String, unit: String },
    #[error("{0:?} is not a duration (\"90s\", \"20m\", \"2h\")")]
    NotADuration(String),
    #[error("{0:?} is not from 1 s to 30 days")]
    OutOfRange(String),
}

/// "90 s", "20 min", "1 h 30 min".
pub fn human_duration(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0..=599 if d.subsec_millis() != 0 && s < 10 => format!("{:.1} s", d.as_secs_f64()),
        0..=599 => format!("{s} s"),
        _ if s.is_multiple_of(3600) => format!("{} h", s / 3600),
        _ if s >= 3600 => format!("{} h {} min", s / 3600, (s % 3600) / 60),
        _ if s.is_multiple_of(60) => format!("{} min", s / 60),
        _ => format!("{} min {} s", s / 60, s % 60),
    }
}

/// The longest time limit: 30 days.
pub const MAX_LIMIT: Duration = Duration::from_secs(30 * 24 * 3600);

/// A time limit as written: a number with `s`, `m`/`min` or `h` ("90s",
/// "20m", "1.5h"); a bare number is seconds. From 1 s to 30 days.
pub fn parse_duration(text: &str) -> Result<Duration, DurationError> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let per = match unit.trim() {
        "" | "s" | "sec" => 1.0,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        u => {
            return Err(DurationError::Unit {
                text: text.into(),
                unit: u.into(),
            })
        }
    };
    let n: f64 = num
        .parse()
        .map_err(|_| DurationError::NotADuration(text.into()))?;
    let secs = n * per;
    if !(1.0..=MAX_LIMIT.as_secs_f64()).contains(&secs) {
        return Err(DurationError::OutOfRange(text.into()));
    }
    Ok(Duration::from_secs_f64(secs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_limits_are_read_with_their_unit_and_bounded() {
        let d = Duration::from_secs;
        assert_eq!(parse_duration("90s"), Ok(d(90)));
        assert_eq!(parse_duration("90"), Ok(d(90)));
        assert_eq!(parse_duration("20m"), Ok(d(1200)));
        assert_eq!(parse_duration("20 min"), Ok(d(1200)));
        assert_eq!(parse_duration("1.5h"), Ok(d(5400)));
        for bad in ["", "0s", "0.5", "1d", "-5m", "m", "1e9h", "40000h", "nan"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn an_experiment_file_gives_its_time_limit_and_a_bad_one_is_named_with_its_line() {
        let text = |t: &str| {
            format!(
                "name = \"t\"\ntime_limit = {t}\n[device]\nkind = \"directory\"\npath = \"/tmp\"\n\
                 [workload]\nkind = \"createmany\"\nargs = [\"-o\", \"{{dir}}/f\", \"10\"]\n"
            )
        };
        let parse = |t: &str| crate::spec::parse("t.toml", &text(t), &Default::default());
        assert_eq!(
            parse("\"90s\"").unwrap().time_limit,
            Some(Duration::from_secs(90))
        );
        let e = parse("\"1d\"").unwrap_err().to_string();
        assert!(
            e.starts_with("t.toml:2: time_limit: \"1d\": unknown unit \"d\""),
            "{e}"
        );
        assert!(parse("90").is_err(), "a string, as sizes are");
    }

    #[test]
    fn durations_read_as_people_write_them() {
        let d = Duration::from_secs;
        assert_eq!(human_duration(d(90)), "90 s");
        assert_eq!(human_duration(d(1200)), "20 min");
        assert_eq!(human_duration(d(5400)), "1 h 30 min");
        assert_eq!(human_duration(d(7200)), "2 h");
        assert_eq!(human_duration(d(650)), "10 min 50 s");
        assert_eq!(human_duration(Duration::from_millis(1500)), "1.5 s");
    }
}
