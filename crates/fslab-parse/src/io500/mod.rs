//! The IO500 app's `result.txt` (github.com/IO500/io500, src/main.c): the
//! INI it writes as it goes, one section a phase (`t_start`, `exe`, the
//! phase's own pairs, `score`, `t_delta`, `t_end`, and `; ERROR INVALID`
//! comments), then `[SCORE]` (`MD`, `BW`, `SCORE`). The app says where it
//! left its files on its last line (`The result files are stored in the
//! directory: DIR`); `--parse-file` names `result.txt` otherwise.
//!
//! Each phase that scores is a phase of the run (mdtest's and find's items
//! are the score in kIOPS times the phase's time; ior's bytes, its GiB/s
//! times the time); the metrics keep IO500's words and `fslab io500md`'s
//! names, so that the two compare: `io500 mdtest-easy-write score
//! (kIOPS)`, `io500 ior-easy-write score (GiB/s)`, `io500 mdtest-easy-write
//! time (s)`, `io500 MD score (kIOPS)`, `io500 BW score (GiB/s)`, `io500
//! SCORE`, `io500 valid`.

pub mod ini;

use std::path::{Path, PathBuf};

use fslab_model::{Better, Metric, Unit};

use crate::{reported_phase, Output, ParseError, Parsed, Parser};

/// The IO500 parser.
pub struct Io500;

const NAME: &str = "io500";
/// What the app prints last (src/main.c).
pub const RESULT_DIR_LINE: &str = "The result files are stored in the directory: ";

/// A phase as `result.txt` gives it.
#[derive(Debug, Clone, PartialEq)]
pub struct PhaseRecord {
    pub name: String,
    pub score: Option<f64>,
    pub time_s: Option<f64>,
    /// mdtest's `rate-stonewall` (kIOPS) or ior's `throughput-stonewall`
    /// (GiB/s).
    pub stonewall: Option<f64>,
    /// Its `; ERROR INVALID ...` comments.
    pub invalid: Vec<String>,
}

impl PhaseRecord {
    /// IO500's unit for the phase's score: GiB/s for its ior phases (the
    /// names that start with `i`, as src/main.c decides), else kIOPS.
    pub fn unit(&self) -> Unit {
        if self.name.starts_with('i') {
            Unit::GibPerSec
        } else {
            Unit::KiloOpsPerSec
        }
    }
}

/// A whole `result.txt`: its phases in order and its `[SCORE]`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ResultFile {
    pub version: Option<String>,
    pub procs: Option<u64>,
    pub phases: Vec<PhaseRecord>,
    pub md: Option<f64>,
    pub bw: Option<f64>,
    pub score: Option<f64>,
    /// Whether `[SCORE]`'s `SCORE` line says `[INVALID]`.
    pub score_invalid: bool,
    /// The run's own `; ERROR INVALID` lines before any phase.
    pub invalid: Vec<String>,
}

fn number(v: Option<&str>, what: &str, line: usize) -> Result<Option<f64>, ParseError> {
    match v {
        None => Ok(None),
        Some(s) => {
            let first = s.split_whitespace().next().unwrap_or(s);
            first
                .parse()
                .map(Some)
                .map_err(|_| ParseError::at(NAME, what, line, format!("{s:?} is not a number")))
        }
    }
}

/// Reads `result.txt`'s text (`what` names it in errors).
pub fn read_result(text: &str, what: &str) -> Result<ResultFile, ParseError> {
    let ini = ini::parse(text).map_err(|(line, m)| ParseError::at(NAME, what, line, m))?;
    let run = ini
        .section("run")
        .ok_or_else(|| ParseError::in_(NAME, what, "no [run] section: not IO500's result.txt"))?;
    let mut r = ResultFile {
        version: run.get("version").map(String::from),
        procs: run.get("procs").and_then(|p| p.parse().ok()),
        invalid: invalid_of(&run.comments),
        ..ResultFile::default()
    };
    for s in &ini.sections {
        let line_of = |key: &str| {
            s.pairs
                .iter()
                .rev()
                .find(|(k, _, _)| k.eq_ignore_ascii_case(key))
                .map_or(s.line, |p| p.2)
        };
        let get = |key: &str| number(s.get(key), what, line_of(key));
        match s.name.as_str() {
            "" | "run" | "SCOREX" => {}
            "SCORE" => {
                r.md = get("MD")?;
                r.bw = get("BW")?;
                r.score = get("SCORE")?;
                r.score_invalid = s.get("SCORE").is_some_and(|v| v.contains("[INVALID]"));
            }
            name => r.phases.push(PhaseRecord {
                name: name.to_string(),
                score: get("score")?,
                time_s: get("t_delta")?,
                stonewall: match get("rate-stonewall")? {
                    Some(v) => Some(v),
                    None => get("throughput-stonewall")?,
                },
                invalid: invalid_of(&s.comments),
            }),
        }
    }
    Ok(r)
}

fn invalid_of(comments: &[(String, usize)]) -> Vec<String> {
    comments
        .iter()
        .filter_map(|(c, _)| {
            c.strip_prefix("ERROR INVALID")
                .map(|w| w.trim().to_string())
        })
        .collect()
}

/// Where the app left `result.txt`: `--parse-file`'s, else the directory
/// its last line names.
fn result_path(out: &Output) -> Result<PathBuf, ParseError> {
    if let Some(f) = out.file {
        return Ok(f.to_path_buf());
    }
    let text = String::from_utf8_lossy(out.stdout);
    text.lines()
        .rev()
        .find_map(|l| l.trim().strip_prefix(RESULT_DIR_LINE.trim()))
        .map(|d| Path::new(d.trim()).join("result.txt"))
        .ok_or_else(|| {
            ParseError::in_(
                NAME,
                "stdout",
                format!(
                    "no line {:?}: the app did not finish (or give --parse-file RESULTDIR/result.txt)",
                    RESULT_DIR_LINE.trim()
                ),
            )
        })
}

fn io500_metric(phase: Option<&str>, name: &str, v: f64, unit: Unit, better: Better) -> Metric {
    Metric::new(NAME, phase, name, v, unit, better)
}

/// The run's numbers, phases and notes from a read `result.txt`.
pub fn parsed_of(r: &ResultFile) -> Parsed {
    let mut p = Parsed::default();
    let mut all_valid = r.invalid.is_empty() && !r.score_invalid;
    for why in &r.invalid {
        p.notes.push(format!("INVALID (run): {why}"));
    }
    for ph in &r.phases {
        let name = Some(ph.name.as_str());
        all_valid &= ph.invalid.is_empty();
        for why in &ph.invalid {
            p.notes.push(format!("INVALID ({}): {why}", ph.name));
        }
        let time = ph.time_s.unwrap_or(0.0);
        let Some(score) = ph.score else {
            // A dummy phase (the timestamp): its time only.
            if ph.time_s.is_some() {
                p.metrics
                    .push(io500_metric(name, "time", time, Unit::Seconds, Better::Lower).detail());
            }
            continue;
        };
        let unit = ph.unit();
        p.metrics
            .push(io500_metric(name, "score", score, unit, Better::Higher));
        p.metrics.push(io500_metric(
            name,
            "time",
            time,
            Unit::Seconds,
            Better::Lower,
        ));
        if let Some(sw) = ph.stonewall {
            let (what, u) = if unit == Unit::GibPerSec {
                ("throughput-stonewall", Unit::GibPerSec)
            } else {
                ("rate-stonewall", Unit::KiloOpsPerSec)
            };
            p.metrics
                .push(io500_metric(name, what, sw, u, Better::Higher));
        }
        let (ops, bytes) = if unit == Unit::GibPerSec {
            (0, (score * time * (1u64 << 30) as f64).round() as u64)
        } else {
            ((score * 1e3 * time).round() as u64, 0)
        };
        let counted = unit != Unit::GibPerSec;
        p.phases.push(fslab_model::PhaseResult {
            counted,
            ..reported_phase(&ph.name, ops, bytes, time)
        });
    }
    for (name, v, unit) in [
        ("MD score", r.md, Unit::KiloOpsPerSec),
        ("BW score", r.bw, Unit::GibPerSec),
        ("SCORE", r.score, Unit::Count),
    ] {
        if let Some(v) = v {
            let better = Better::Higher;
            p.metrics.push(io500_metric(None, name, v, unit, better));
        }
    }
    p.metrics.push(io500_metric(
        None,
        "valid",
        f64::from(u8::from(all_valid)),
        Unit::Count,
        Better::Neither,
    ));
    if let Some(v) = &r.version {
        p.notes.push(format!("IO500 version {v}"));
    }
    p
}

impl Parser for Io500 {
    fn name(&self) -> &'static str {
        NAME
    }
    fn about(&self) -> &'static str {
        "the IO500 app's result.txt: each phase's score and time, the MD and BW scores, validity"
    }
    fn programs(&self) -> &'static [&'static str] {
        &["io500.sh"]
    }
    fn parse(&self, out: &Output) -> Result<Parsed, ParseError> {
        let path = result_path(out)?;
        let bytes = out.read(NAME, &path)?;
        let what = path.display().to_string();
        let r = read_result(&String::from_utf8_lossy(&bytes), &what)?;
        if r.phases.is_empty() {
            return Err(ParseError::in_(NAME, &what, "no phase: the app ran none"));
        }
        let mut p = parsed_of(&r);
        p.files.push(("result.txt".into(), bytes));
        let summary = path.with_file_name("result_summary.txt");
        if let Ok(s) = std::fs::read(out.path(&summary)) {
            p.files.push(("result_summary.txt".into(), s));
        }
        Ok(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RESULT: &str = "[run]\nprocs           = 2\nversion         = io500-sc24\nconfig-hash     = 1\nresult-dir      = ./results\nmode            = standard\n; START 2026-11-27 10:00:00\n\n\n[mdtest-easy-write]\nt_start         = 2026-11-27 10:00:00\nexe             = ./mdtest -n 10 -C\nrate-stonewall  = 2.500000\nscore           = 2.000000\nt_delta         = 3.5000\nt_end           = 2026-11-27 10:00:04\n\n[timestamp]\nt_start         = 2026-11-27 10:00:04\nt_delta         = 0.0001\nt_end           = 2026-11-27 10:00:04\n\n[ior-easy-write]\n; ERROR INVALID Runtime is smaller than expected minimum runtime\nscore           = 0.500000\nt_delta         = 2.0000\n\n[SCORE]\nMD              = 2.000000\nBW              = 0.500000\nSCORE           = 1.000000 [INVALID]\nhash            = 1\n";

    #[test]
    fn each_phase_scores_in_its_unit_and_validity_follows_the_invalid_lines() {
        let r = read_result(RESULT, "result.txt").unwrap();
        assert_eq!(r.procs, Some(2));
        assert_eq!(r.phases.len(), 3);
        assert!(r.score_invalid);
        let p = parsed_of(&r);
        let names: Vec<&str> = p.phases.iter().map(|p| p.phase.as_str()).collect();
        assert_eq!(names, ["mdtest-easy-write", "ior-easy-write"]);
        assert_eq!(p.phases[0].ops, 7000, "2 kIOPS for 3.5 s");
        assert_eq!(p.phases[1].bytes, 1 << 30, "0.5 GiB/s for 2 s");
        let get = |phase: Option<&str>, n: &str| {
            p.metrics
                .iter()
                .find(|m| m.phase.as_deref() == phase && m.name == n)
                .unwrap_or_else(|| panic!("{phase:?} {n}"))
        };
        assert_eq!(
            get(Some("mdtest-easy-write"), "score").label(),
            "mdtest-easy-write score (kIOPS)"
        );
        assert_eq!(get(Some("ior-easy-write"), "score").unit, Unit::GibPerSec);
        assert_eq!(get(Some("mdtest-easy-write"), "rate-stonewall").value, 2.5);
        assert_eq!(get(None, "valid").value, 0.0);
        assert_eq!(get(None, "MD score").value, 2.0);
        assert!(p
            .notes
            .iter()
            .any(|n| n.starts_with("INVALID (ior-easy-write): Runtime")));
    }

    #[test]
    fn the_result_file_is_found_from_the_apps_last_line() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("results/2026.11.27-10.00.00")).unwrap();
        std::fs::write(
            dir.path().join("results/2026.11.27-10.00.00/result.txt"),
            RESULT,
        )
        .unwrap();
        let argv = vec!["io500".to_string(), "config.ini".to_string()];
        let stdout = b"IO500 version io500-sc24 (standard)\n[RESULT] ...\n\nThe result files are stored in the directory: ./results/2026.11.27-10.00.00\n";
        let out = Output {
            argv: &argv,
            stdout,
            stderr: b"",
            dir: dir.path(),
            file: None,
            patterns: &[],
        };
        let p = Io500.parse(&out).unwrap();
        assert_eq!(p.files[0].0, "result.txt");
        let e = Io500
            .parse(&Output {
                stdout: b"FATAL: no config\n",
                ..out
            })
            .unwrap_err();
        assert!(
            e.to_string()
                .starts_with("io500 parser: stdout: no line \"The result files"),
            "{e}"
        );
        std::fs::write(
            dir.path().join("bad.txt"),
            "[run]\n[mdtest-easy-write]\nscore = fast\n",
        )
        .unwrap();
        let bad = Path::new("bad.txt");
        let e = Io500
            .parse(&Output {
                file: Some(bad),
                ..out
            })
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "io500 parser: bad.txt line 3: \"fast\" is not a number"
        );
    }
}
