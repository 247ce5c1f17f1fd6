//! elbencho's result file: `--jsonfile FILE` (one JSON object a phase,
//! appended, every value a string, as Boost's property tree writes them:
//! `phase_type`, `first_done` and `last_done` with `elapsed_time_ms`,
//! `entries/s`, `iops`, `bytes/s`, `entries`, `bytes`, `cpu%` and
//! `latency`) or `--csvfile FILE` (a header, then one row a phase: `time
//! ms [last]`, `IOPS [last]`, `MiB/s [last]`, `entries [last]`, `MiB
//! [last]`, `IO lat us [avg]`, ...; docs/csv-docs.md). Each phase
//! (`write`, `read`, `mkdirs`, ...) is a phase of the run, as elbencho's
//! last thread to finish saw it; the first thread's view is kept as
//! detail rows. Names: `write iops (ops/s)`, `write throughput (MiB/s)`,
//! `write entries rate (ops/s)`, `write IO lat avg (us)`.

use std::path::{Path, PathBuf};

use fslab_model::{Better, Metric, Unit};
use serde_json::Value;

use crate::{
    line_of, option_value, reported_phase, unique_names, Output, ParseError, Parsed, Parser,
    Pattern,
};

/// The elbencho parser.
pub struct Elbencho;

const NAME: &str = "elbencho";
const MIB: f64 = (1u64 << 20) as f64;

/// The file elbencho writes its results to, and whether it is CSV.
fn result_file(argv: &[String], given: Option<&Path>) -> Option<(PathBuf, bool)> {
    if let Some(f) = given {
        let csv = f.extension().is_some_and(|e| e == "csv");
        return Some((f.to_path_buf(), csv));
    }
    option_value(argv, "--jsonfile")
        .map(|f| (PathBuf::from(f), false))
        .or_else(|| option_value(argv, "--csvfile").map(|f| (PathBuf::from(f), true)))
}

/// One phase's numbers, whichever file gave them.
#[derive(Debug, Default)]
struct Phase {
    name: String,
    elapsed_ms: f64,
    iops: Option<f64>,
    entries_per_s: Option<f64>,
    bytes_per_s: Option<f64>,
    entries: Option<f64>,
    bytes: Option<f64>,
    first_iops: Option<f64>,
    first_bytes_per_s: Option<f64>,
    io_lat_avg_us: Option<f64>,
    entry_lat_avg_us: Option<f64>,
}

impl Parser for Elbencho {
    fn name(&self) -> &'static str {
        NAME
    }
    fn about(&self) -> &'static str {
        "elbencho's result file (--jsonfile or --csvfile): each phase's IOPS, throughput, entries and latency"
    }
    fn check(&self, argv: &[String], patterns: &[Pattern]) -> Result<(), crate::CheckError> {
        crate::no_patterns(NAME, patterns)?;
        if result_file(argv, None).is_none() {
            return Err(crate::CheckError::ElbenchoNoFile);
        }
        Ok(())
    }
    fn result_files(&self, argv: &[String]) -> Vec<PathBuf> {
        result_file(argv, None)
            .map(|(f, _)| f)
            .into_iter()
            .collect()
    }
    fn parse(&self, out: &Output) -> Result<Parsed, ParseError> {
        let (file, csv) = result_file(out.argv, out.file).ok_or_else(|| {
            ParseError::in_(NAME, "arguments", "no --jsonfile or --csvfile to read")
        })?;
        let bytes = out.read(NAME, &file)?;
        let what = file.display().to_string();
        let phases = if csv {
            of_csv(&bytes, &what)?
        } else {
            of_json(&bytes, &what)?
        };
        if phases.is_empty() {
            return Err(ParseError::in_(
                NAME,
                &what,
                "no phase: elbencho wrote no result",
            ));
        }
        let names = unique_names(phases.iter().map(|p| p.name.clone()));
        let mut p = Parsed::default();
        for (ph, name) in phases.iter().zip(&names) {
            of_phase(ph, name, &mut p);
        }
        p.files.push((what, bytes));
        Ok(p)
    }
}

fn of_phase(ph: &Phase, name: &str, p: &mut Parsed) {
    let m = |n: &str, v: f64, unit: Unit, better: Better| {
        Metric::new(NAME, Some(name), n, v, unit, better)
    };
    let rate = |n: &str, v: Option<f64>, unit| v.map(|v| m(n, v, unit, Better::Higher));
    let lat = |n: &str, v: Option<f64>| v.map(|v| m(n, v, Unit::Microseconds, Better::Lower));
    p.metrics.extend(
        [
            rate("iops", ph.iops, Unit::OpsPerSec),
            rate(
                "throughput",
                ph.bytes_per_s.map(|b| b / MIB),
                Unit::MibPerSec,
            ),
            rate("entries rate", ph.entries_per_s, Unit::OpsPerSec),
            lat("IO lat avg", ph.io_lat_avg_us),
            lat("entry lat avg", ph.entry_lat_avg_us),
            rate("first done iops", ph.first_iops, Unit::OpsPerSec).map(Metric::detail),
            rate(
                "first done throughput",
                ph.first_bytes_per_s.map(|b| b / MIB),
                Unit::MibPerSec,
            )
            .map(Metric::detail),
        ]
        .into_iter()
        .flatten(),
    );
    let secs = ph.elapsed_ms / 1e3;
    let ops = match (ph.iops, ph.entries) {
        (Some(i), _) if i > 0.0 => (i * secs).round() as u64,
        (_, Some(e)) => e.round() as u64,
        _ => 0,
    };
    let bytes = ph.bytes.unwrap_or(0.0).round() as u64;
    p.phases.push(reported_phase(name, ops, bytes, secs));
}

/// A value of Boost's JSON (a string holding a number).
fn field(v: &Value, path: &[&str]) -> Option<f64> {
    let mut at = v;
    for k in path {
        at = at.get(k)?;
    }
    match at {
        Value::String(s) => s.trim().parse().ok(),
        other => other.as_f64(),
    }
}

fn of_json(bytes: &[u8], what: &str) -> Result<Vec<Phase>, ParseError> {
    let mut out = Vec::new();
    let mut stream = serde_json::Deserializer::from_slice(bytes).into_iter::<Value>();
    loop {
        let at = stream.byte_offset();
        let v = match stream.next() {
            None => break,
            Some(Ok(v)) => v,
            Some(Err(e)) => {
                return Err(ParseError::at(
                    NAME,
                    what,
                    line_of(bytes, at) + e.line().saturating_sub(1),
                    format!("elbencho's JSON does not parse: {e}"),
                ))
            }
        };
        let name = v.get("phase_type").and_then(Value::as_str).ok_or_else(|| {
            ParseError::at(
                NAME,
                what,
                line_of(bytes, at),
                "a result without \"phase_type\"",
            )
        })?;
        let last = |k: &str| field(&v, &["last_done", k]);
        out.push(Phase {
            name: name.to_lowercase(),
            elapsed_ms: last("elapsed_time_ms").unwrap_or(0.0),
            iops: last("iops"),
            entries_per_s: last("entries/s"),
            bytes_per_s: last("bytes/s"),
            entries: last("entries"),
            bytes: last("bytes"),
            first_iops: field(&v, &["first_done", "iops"]),
            first_bytes_per_s: field(&v, &["first_done", "bytes/s"]),
            io_lat_avg_us: field(&v, &["last_done", "latency", "IO", "avg_us"]),
            entry_lat_avg_us: field(&v, &["last_done", "latency", "entries", "avg_us"]),
        });
    }
    Ok(out)
}

fn of_csv(bytes: &[u8], what: &str) -> Result<Vec<Phase>, ParseError> {
    let mut r = csv::ReaderBuilder::new().flexible(true).from_reader(bytes);
    let header = r
        .headers()
        .map_err(|e| ParseError::at(NAME, what, 1, format!("elbencho's CSV does not parse: {e}")))?
        .clone();
    let col = |name: &str| header.iter().position(|h| h.trim() == name);
    let op = col("operation").ok_or_else(|| {
        ParseError::at(NAME, what, 1, "no \"operation\" column: not elbencho's CSV")
    })?;
    let mut out = Vec::new();
    for (i, rec) in r.records().enumerate() {
        let line = i + 2;
        let rec = rec.map_err(|e| {
            ParseError::at(
                NAME,
                what,
                line,
                format!("elbencho's CSV does not parse: {e}"),
            )
        })?;
        let get = |name: &str| -> Result<Option<f64>, ParseError> {
            let Some(v) = col(name).and_then(|c| rec.get(c)).map(str::trim) else {
                return Ok(None);
            };
            if v.is_empty() {
                return Ok(None);
            }
            v.parse().map(Some).map_err(|_| {
                ParseError::at(NAME, what, line, format!("{name} {v:?} is not a number"))
            })
        };
        let mib = |name: &str| get(name).map(|v| v.map(|m| m * MIB));
        out.push(Phase {
            name: rec.get(op).unwrap_or("").trim().to_lowercase(),
            elapsed_ms: get("time ms [last]")?.unwrap_or(0.0),
            iops: get("IOPS [last]")?,
            entries_per_s: get("entries/s [last]")?,
            bytes_per_s: mib("MiB/s [last]")?,
            entries: get("entries [last]")?,
            bytes: mib("MiB [last]")?,
            first_iops: get("IOPS [first]")?,
            first_bytes_per_s: mib("MiB/s [first]")?,
            io_lat_avg_us: get("IO lat us [avg]")?,
            entry_lat_avg_us: get("Ent lat us [avg]")?,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const JSON: &str = "{\"phase_type\":\"WRITE\",\"phase_id\":\"1\",\"config\":{\"threads\":\"2\"},\"first_done\":{\"elapsed_time_ms\":\"900\",\"iops\":\"1000\",\"bytes/s\":\"4096000\",\"cpu%\":\"10\"},\"last_done\":{\"elapsed_time_ms\":\"1000\",\"iops\":\"2048\",\"bytes/s\":\"8388608\",\"bytes\":\"8388608\",\"cpu%\":\"12\",\"latency\":{\"IO\":{\"min_us\":\"3\",\"avg_us\":\"9\",\"max_us\":\"400\"}}}}\n{\"phase_type\":\"READ\",\"phase_id\":\"2\",\"last_done\":{\"elapsed_time_ms\":\"500\",\"iops\":\"4096\",\"bytes/s\":\"16777216\",\"bytes\":\"8388608\"}}\n";
    const CSV: &str = "ISO date,label,operation,time ms [first],time ms [last],IOPS [first],IOPS [last],MiB/s [first],MiB/s [last],entries [last],MiB [last],IO lat us [avg]\n2026-11-27T10:00:00,,WRITE,900,1000,1000,2048,3.9,8,,8,9\n2026-11-27T10:00:01,,READ,400,500,4000,4096,15,16,,8,\n";

    fn parse(file: &str, text: &str) -> Result<Parsed, ParseError> {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(file), text).unwrap();
        let flag = if file.ends_with(".csv") {
            "--csvfile"
        } else {
            "--jsonfile"
        };
        let argv: Vec<String> = ["elbencho", flag, file, "-w", "/mnt/x"]
            .map(String::from)
            .to_vec();
        Elbencho.parse(&Output {
            argv: &argv,
            stdout: b"",
            stderr: b"",
            dir: dir.path(),
            file: None,
            patterns: &[],
        })
    }

    #[test]
    fn json_and_csv_give_the_same_phases_and_names() {
        for (file, text) in [("r.json", JSON), ("r.csv", CSV)] {
            let p = parse(file, text).unwrap();
            let names: Vec<&str> = p.phases.iter().map(|p| p.phase.as_str()).collect();
            assert_eq!(names, ["write", "read"], "{file}");
            assert_eq!(p.phases[0].ops, 2048, "{file}: 2048 IOPS for 1 s");
            assert_eq!(p.phases[0].bytes, 8 << 20, "{file}");
            let w = crate::headline_labels(&p, "write");
            assert_eq!(
                w,
                [
                    "write iops (ops/s)",
                    "write throughput (MiB/s)",
                    "write IO lat avg (us)"
                ],
                "{file}"
            );
            let t = p.metrics.iter().find(|m| m.name == "throughput").unwrap();
            assert!((t.value - 8.0).abs() < 1e-9, "{file}: {}", t.value);
        }
    }

    #[test]
    fn a_result_it_cannot_read_is_named_by_line_and_the_file_must_be_named() {
        let e = parse("r.json", &JSON.replace("\"READ\",", "\"READ\"")).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("elbencho parser: r.json line 2: elbencho's JSON does not parse"),
            "{e}"
        );
        let e = parse("r.csv", &CSV.replace(",16,", ",sixteen,")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "elbencho parser: r.csv line 3: MiB/s [last] \"sixteen\" is not a number"
        );
        let argv: Vec<String> = ["elbencho", "-w", "/x"].map(String::from).to_vec();
        assert_eq!(
            Elbencho.check(&argv, &[]).unwrap_err().to_string(),
            "elbencho writes its results to a file: give --jsonfile {dir}/elbencho.json (or --csvfile), or --parse-file"
        );
        let with: Vec<String> = ["elbencho", "--jsonfile=/x/r.json"]
            .map(String::from)
            .to_vec();
        assert_eq!(Elbencho.result_files(&with), [PathBuf::from("/x/r.json")]);
    }
}
