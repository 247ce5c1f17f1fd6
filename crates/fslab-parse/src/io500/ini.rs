//! IO500's INI grammar (github.com/IO500/io500, src/ini-parse.c), which its
//! configuration files and its `result.txt` share: `[section]` lines,
//! `key = value` lines, blank lines and `#` or `;` comments. A value stops
//! at the first `#` or `;` and is trimmed; a key with no value is left out,
//! as IO500 leaves it. Section and key names are compared without case, as
//! IO500 compares them. A line that is none of these is refused with its
//! number, as IO500 refuses it.

/// One `[section]` and what follows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    pub name: String,
    /// The line of its `[name]` (0 for what comes before any section).
    pub line: usize,
    /// (key, value, line), in order.
    pub pairs: Vec<(String, String, usize)>,
    /// Comment lines (`; ERROR INVALID ...`) without their `#` or `;`,
    /// with their line.
    pub comments: Vec<(String, usize)>,
}

impl Section {
    /// The last value of `key` (compared without case).
    pub fn get(&self, key: &str) -> Option<&str> {
        self.pairs
            .iter()
            .rev()
            .find(|(k, _, _)| k.eq_ignore_ascii_case(key))
            .map(|(_, v, _)| v.as_str())
    }
}

/// A parsed file: what precedes the first section (its name empty), then
/// each section in order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Ini {
    pub sections: Vec<Section>,
}

impl Ini {
    /// The first section named `name` (compared without case).
    pub fn section(&self, name: &str) -> Option<&Section> {
        self.sections
            .iter()
            .find(|s| s.name.eq_ignore_ascii_case(name))
    }
}

struct Grammar {
    section: regex::Regex,
    pair: regex::Regex,
    empty: regex::Regex,
}

/// IO500's three expressions, as src/ini-parse.c writes them.
fn grammar() -> &'static Grammar {
    static G: std::sync::OnceLock<Grammar> = std::sync::OnceLock::new();
    G.get_or_init(|| {
        // Rust's `[[:space:]]` is POSIX's: ASCII white space.
        let re = |s: &str| regex::Regex::new(s).expect("IO500's grammar");
        Grammar {
            section: re(r"^[[:space:]]*\[[[:space:]]*([0-9a-zA-Z_-]+)[[:space:]]*\][[:space:]]*([[:space:]][#;].*)?$"),
            pair: re(r"^[[:space:]]*([0-9a-zA-Z_.-]+)[[:space:]]*=[[:space:]]*([^#;]*)[[:space:]]*([[:space:]][#;].*)?$"),
            empty: re(r"^[[:space:]]*([#;].*)?$"),
        }
    })
}

/// Parses `text`; an error is (line, what is wrong), in IO500's words.
pub fn parse(text: &str) -> Result<Ini, (usize, String)> {
    let g = grammar();
    let mut ini = Ini {
        sections: vec![Section {
            name: String::new(),
            line: 0,
            pairs: Vec::new(),
            comments: Vec::new(),
        }],
    };
    for (i, line) in text.split('\n').enumerate() {
        let n = i + 1;
        // IO500 reads the file with strtok: a line of nothing is skipped.
        if line.is_empty() {
            continue;
        }
        if let Some(c) = g.section.captures(line) {
            ini.sections.push(Section {
                name: c[1].to_string(),
                line: n,
                pairs: Vec::new(),
                comments: Vec::new(),
            });
            continue;
        }
        let current = ini.sections.last_mut().expect("one section at least");
        if let Some(c) = g.pair.captures(line) {
            let value = c[2].trim_end_matches([' ', '\t', '\r']).to_string();
            if value.is_empty() {
                continue;
            }
            if current.line == 0 {
                return Err((n, "variable assigned outside section".into()));
            }
            current.pairs.push((c[1].to_string(), value, n));
            continue;
        }
        if g.empty.is_match(line) {
            let t = line.trim_start();
            if let Some(comment) = t.strip_prefix([';', '#']) {
                current.comments.push((comment.trim().to_string(), n));
            }
            continue;
        }
        let within = if current.name.is_empty() {
            "no_section"
        } else {
            &current.name
        };
        return Err((
            n,
            format!("unexpected content in section {within}: {line:?}"),
        ));
    }
    Ok(ini)
}

/// A boolean as IO500 takes it: `true`/`false` in any case, `1`/`0`.
pub fn boolean(v: &str) -> Option<bool> {
    if v.eq_ignore_ascii_case("true") || v == "1" {
        Some(true)
    } else if v.eq_ignore_ascii_case("false") || v == "0" {
        Some(false)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_pairs_and_comments_are_read_as_io500_reads_them() {
        let text = "# IO500\n[global]\ndatadir = /mnt/io500 # where\n\n[Debug]\n stonewall-time = 3\npause-dir =\n; ERROR INVALID x\n";
        let ini = parse(text).unwrap();
        assert_eq!(
            ini.section("global").unwrap().get("DATADIR"),
            Some("/mnt/io500")
        );
        let dbg = ini.section("debug").unwrap();
        assert_eq!(dbg.line, 5);
        assert_eq!(dbg.get("stonewall-time"), Some("3"));
        assert_eq!(
            dbg.get("pause-dir"),
            None,
            "a key with no value is left out"
        );
        assert_eq!(dbg.comments, [("ERROR INVALID x".to_string(), 8)]);
        assert_eq!(boolean("TRUE"), Some(true));
        assert_eq!(boolean("0"), Some(false));
        assert_eq!(boolean("yes"), None);
    }

    #[test]
    fn what_io500_refuses_is_refused_with_its_line() {
        assert_eq!(parse("[global]\nthis is not ini\n").unwrap_err().0, 2);
        assert_eq!(
            parse("datadir = x\n").unwrap_err(),
            (1, "variable assigned outside section".into())
        );
        assert!(parse("[bad name]\n").is_err());
        // result.txt's own lines are all read.
        let r = "[run]\nprocs           = 1\nversion         = io500-sc23\n; START 2023-01-01 00:00:00\n\n\n[mdtest-easy-write]\nt_start         = 2023-01-01 00:00:00\nscore           = 1.5\n";
        assert_eq!(
            parse(r)
                .unwrap()
                .section("mdtest-easy-write")
                .unwrap()
                .get("score"),
            Some("1.5")
        );
    }
}
