//! The generic parser: named regular expressions with units, for a
//! program no other parser reads. Each pattern is `NAME (UNIT)=REGEX`
//! (`--metric 'copy rate (MB/s)=copied, [0-9.]+ s, ([0-9.]+) MB/s'`): the
//! number is the group named `value`, else the first group; a group named
//! `phase` makes one metric per phase it matches. Every pattern must match
//! (a pattern that matches nothing is output the parser cannot read), and
//! only once per phase (a second match names both lines).

use std::fmt;

use fslab_model::{Better, Metric, Unit};

use crate::{line_of, CheckError, Output, ParseError, Parsed, Parser};

/// One named pattern.
#[derive(Debug, Clone)]
pub struct Pattern {
    text: String,
    pub name: String,
    pub unit: Unit,
    pub regex: regex::Regex,
}

impl Pattern {
    /// How it was written (`NAME (UNIT)=REGEX`).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Which way is better: a rate higher, a time lower; other numbers
    /// describe.
    pub fn better(&self) -> Better {
        if self.unit.is_rate() {
            Better::Higher
        } else if self.unit.is_time() {
            Better::Lower
        } else {
            Better::Neither
        }
    }
}

/// Why a `--metric` pattern is refused: the pattern as written, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("--metric {text:?}: {why}")]
pub struct PatternError {
    pub text: String,
    pub why: PatternWhy,
}

/// What is wrong with a pattern.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PatternWhy {
    #[error("give NAME (UNIT)=REGEX")]
    NoEquals,
    #[error("the name before the unit is missing or has brackets")]
    BadName,
    #[error("unknown unit {0:?} (units: {units})", units = Unit::symbols())]
    UnknownUnit(String),
    /// The regex crate's error, on one line.
    #[error("not a regular expression: {0}")]
    NotARegex(String),
    #[error("the number needs a group: (...) or (?P<value>...)")]
    NoGroup,
    #[error("with a phase group, name the number's group (?P<value>...)")]
    UnnamedValue,
}

impl std::str::FromStr for Pattern {
    type Err = PatternError;

    /// `NAME (UNIT)=REGEX`, or `NAME=REGEX` for a count.
    fn from_str(text: &str) -> Result<Pattern, PatternError> {
        let bad = |why: PatternWhy| PatternError {
            text: text.to_string(),
            why,
        };
        let (head, re) = text
            .split_once('=')
            .ok_or_else(|| bad(PatternWhy::NoEquals))?;
        let head = head.trim();
        let (name, unit) = match head.strip_suffix(')').and_then(|h| h.rsplit_once(" (")) {
            Some((n, u)) => (n.trim(), u.trim()),
            None => (head, ""),
        };
        if name.is_empty() || name.contains(['(', ')']) {
            return Err(bad(PatternWhy::BadName));
        }
        let unit =
            Unit::of_symbol(unit).ok_or_else(|| bad(PatternWhy::UnknownUnit(unit.to_string())))?;
        let regex = regex::RegexBuilder::new(re)
            .multi_line(true)
            .build()
            .map_err(|e| bad(PatternWhy::NotARegex(one_line(&e))))?;
        let groups = regex.captures_len() - 1;
        let named = |n: &str| regex.capture_names().flatten().any(|g| g == n);
        if groups == 0 || (named("phase") && groups == 1) {
            return Err(bad(PatternWhy::NoGroup));
        }
        if named("phase") && !named("value") {
            return Err(bad(PatternWhy::UnnamedValue));
        }
        Ok(Pattern {
            text: text.to_string(),
            name: name.to_string(),
            unit,
            regex,
        })
    }
}

impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl serde::Serialize for Pattern {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text)
    }
}

impl<'de> serde::Deserialize<'de> for Pattern {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Pattern, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

fn one_line(e: &regex::Error) -> String {
    e.to_string()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The generic parser.
pub struct Regex;

impl Parser for Regex {
    fn name(&self) -> &'static str {
        "regex"
    }
    fn about(&self) -> &'static str {
        "named regular expressions with units over the program's output (--metric 'NAME (UNIT)=REGEX')"
    }
    fn check(&self, _argv: &[String], patterns: &[Pattern]) -> Result<(), CheckError> {
        if patterns.is_empty() {
            return Err(CheckError::NoPattern);
        }
        let mut seen = std::collections::BTreeSet::new();
        for p in patterns {
            if !seen.insert(&p.name) {
                return Err(CheckError::NameTwice {
                    pattern: p.text().to_string(),
                    name: p.name.clone(),
                });
            }
        }
        Ok(())
    }
    /// Each pattern over the result file, else over stdout and, where it
    /// matches nothing there, stderr (dd and time print there).
    fn parse(&self, out: &Output) -> Result<Parsed, ParseError> {
        let texts: Vec<(String, Vec<u8>)> = match out.file {
            Some(f) => vec![(f.display().to_string(), out.read("regex", f)?)],
            None => vec![
                ("stdout".to_string(), out.stdout.to_vec()),
                ("stderr".to_string(), out.stderr.to_vec()),
            ],
        };
        let texts: Vec<(String, String)> = texts
            .into_iter()
            .map(|(w, b)| (w, String::from_utf8_lossy(&b).into_owned()))
            .collect();
        let mut parsed = Parsed::default();
        for p in out.patterns {
            let found = texts
                .iter()
                .find(|(_, t)| p.regex.is_match(t))
                .unwrap_or(&texts[0]);
            parsed
                .metrics
                .extend(matches(p, &found.1, &found.0, out.program())?);
        }
        Ok(parsed)
    }
}

/// The metrics pattern `p` finds in `text` (`what`'s), with `source` as
/// their source: one, or one per phase.
fn matches(p: &Pattern, text: &str, what: &str, source: &str) -> Result<Vec<Metric>, ParseError> {
    let mut found: Vec<(Option<String>, usize, Metric)> = Vec::new();
    for c in p.regex.captures_iter(text) {
        let whole = c.get(0).expect("group 0 always matches");
        let line = line_of(text.as_bytes(), whole.start());
        let value = c.name("value").or_else(|| c.get(1));
        let Some(value) = value else {
            return Err(ParseError::at(
                "regex",
                what,
                line,
                format!("{:?} matched without its number", p.name),
            ));
        };
        let v: f64 = value.as_str().trim().parse().map_err(|_| {
            ParseError::at(
                "regex",
                what,
                line,
                format!("{:?} is not a number ({})", value.as_str(), p.name),
            )
        })?;
        let phase = c.name("phase").map(|m| m.as_str().trim().to_string());
        if let Some((_, first, _)) = found.iter().find(|(ph, _, _)| *ph == phase) {
            return Err(ParseError::at(
                "regex",
                what,
                line,
                format!(
                    "{:?} matches again (first at line {first}){}: make the pattern match once, or give it a phase group",
                    p.name,
                    phase.as_deref().map(|ph| format!(" for phase {ph:?}")).unwrap_or_default()
                ),
            ));
        }
        let m = Metric::new(source, phase.as_deref(), &p.name, v, p.unit, p.better());
        found.push((phase, line, m));
    }
    if found.is_empty() {
        return Err(ParseError::in_(
            "regex",
            what,
            format!(
                "no line matches {:?}: {}{}",
                p.name,
                p.regex.as_str(),
                if what == "stdout" {
                    " (nor on stderr)"
                } else {
                    ""
                }
            ),
        ));
    }
    Ok(found.into_iter().map(|(_, _, m)| m).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn out<'a>(argv: &'a [String], stdout: &'a [u8], patterns: &'a [Pattern]) -> Output<'a> {
        Output {
            argv,
            stdout,
            stderr: b"dd: 1048576 bytes copied, 0.5 s, 2.0 MB/s\n",
            dir: std::path::Path::new("/"),
            file: None,
            patterns,
        }
    }

    #[test]
    fn a_pattern_is_a_name_a_unit_and_a_regex() {
        let p: Pattern = "copy rate (MB/s)=([0-9.]+) MB/s".parse().unwrap();
        assert_eq!((p.name.as_str(), p.unit), ("copy rate", Unit::MbPerSec));
        assert_eq!(p.better(), Better::Higher);
        let c: Pattern = "records=(\\d+) records in".parse().unwrap();
        assert_eq!((c.unit, c.better()), (Unit::Count, Better::Neither));
        let t: Pattern = "wall (s)=real\\s+([0-9.]+)".parse().unwrap();
        assert_eq!(t.better(), Better::Lower);
        let e = "x (furlongs)=(1)"
            .parse::<Pattern>()
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown unit \"furlongs\""), "{e}");
        assert!("x (s)=no group"
            .parse::<Pattern>()
            .unwrap_err()
            .to_string()
            .contains("needs a group"));
        assert!("x (s)=("
            .parse::<Pattern>()
            .unwrap_err()
            .to_string()
            .contains("not a regular expression"));
        assert!("no equals"
            .parse::<Pattern>()
            .unwrap_err()
            .to_string()
            .contains("NAME (UNIT)=REGEX"));
        assert!("x=(?P<phase>\\w+) (\\d+)"
            .parse::<Pattern>()
            .unwrap_err()
            .to_string()
            .contains("(?P<value>"));
        let back: Pattern = serde_json::from_value(serde_json::to_value(&p).unwrap()).unwrap();
        assert_eq!(back.text(), p.text());
    }

    #[test]
    fn each_pattern_gives_its_metric_named_after_the_program() {
        let argv = vec!["/bin/dd".to_string()];
        let text = b"1+0 records in\n1+0 records out\n1048576 bytes copied, 0.00107 s, 980 MB/s\n";
        let pats: Vec<Pattern> = vec![
            "copy rate (MB/s)=copied, [0-9.]+ s, ([0-9.]+) MB/s"
                .parse()
                .unwrap(),
            "copy time (s)=copied, (?P<value>[0-9.]+) s"
                .parse()
                .unwrap(),
        ];
        let p = Regex.parse(&out(&argv, text, &pats)).unwrap();
        let labels: Vec<String> = p
            .metrics
            .iter()
            .map(|m| format!("{} {}", m.source, m.label()))
            .collect();
        assert_eq!(labels, ["dd copy rate (MB/s)", "dd copy time (s)"]);
        assert_eq!(p.metrics[0].value, 980.0);
        assert_eq!(p.metrics[1].value, 0.00107);
        // Where stdout has nothing, stderr is read (dd prints there).
        let p = Regex.parse(&out(&argv, b"", &pats)).unwrap();
        assert_eq!(p.metrics[0].value, 2.0);
    }

    #[test]
    fn output_it_cannot_read_is_named_by_line() {
        let argv = vec!["prog".to_string()];
        let pats: Vec<Pattern> = vec!["rate (ops/s)=rate: (\\S+)".parse().unwrap()];
        let e = Regex
            .parse(&out(&argv, b"start\nrate: fast\n", &pats))
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "regex parser: stdout line 2: \"fast\" is not a number (rate)"
        );
        let e = Regex
            .parse(&out(&argv, b"nothing here\n", &pats))
            .unwrap_err();
        assert!(
            e.to_string()
                .starts_with("regex parser: stdout: no line matches \"rate\""),
            "{e}"
        );
        let e = Regex
            .parse(&out(&argv, b"rate: 1\nrate: 2\n", &pats))
            .unwrap_err();
        assert!(
            e.to_string()
                .contains("line 2: \"rate\" matches again (first at line 1)"),
            "{e}"
        );
        // With a phase group, one metric a phase.
        let per: Vec<Pattern> = vec!["rate (ops/s)=(?P<phase>\\w+) rate: (?P<value>\\S+)"
            .parse()
            .unwrap()];
        let p = Regex
            .parse(&out(&argv, b"read rate: 1\nwrite rate: 2\n", &per))
            .unwrap();
        assert_eq!(p.metrics[1].phase.as_deref(), Some("write"));
        assert!(Regex
            .check(&argv, &[])
            .unwrap_err()
            .to_string()
            .contains("needs a pattern"));
        let twice = [pats[0].clone(), pats[0].clone()];
        assert!(Regex
            .check(&argv, &twice)
            .unwrap_err()
            .to_string()
            .contains("given twice"));
    }
}
