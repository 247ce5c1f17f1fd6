//! fio's JSON (`--output-format=json`, `json+`, or either beside `normal`):
//! each job is a phase (its IOs over its own runtime), and each of its
//! directions (read, write, trim) gives bandwidth, IOPS and latency:
//! completion latency's mean, percentiles and maximum, total latency's
//! mean. With `json+` fio adds its latency histogram's bins, which become
//! fslab latency histograms (`write clat` of the job's phase), so the
//! report draws fio's distribution as it draws fslab's own.
//!
//! Names keep fio's words: `rw write bw (MiB/s)`, `rw write iops (ops/s)`,
//! `rw write clat p99 (us)` (fio's `bw` is KiB/s; fslab records MiB/s).

use std::path::{Path, PathBuf};

use fslab_model::{Better, LatencyHistogram, Metric, Unit};
use serde_json::Value;

use crate::{
    line_of, option_value, reported_phase, unique_names, Output, ParseError, Parsed, Parser,
    Pattern,
};

/// The fio parser.
pub struct Fio;

const NAME: &str = "fio";
/// fio's IO directions, in its order.
const DIRECTIONS: [&str; 3] = ["read", "write", "trim"];
/// The completion-latency percentiles kept (fio's keys, fslab's names).
const PERCENTILES: [(&str, &str); 4] = [
    ("50.000000", "p50"),
    ("90.000000", "p90"),
    ("99.000000", "p99"),
    ("99.900000", "p99.9"),
];

/// Where fio's JSON is: `--output=FILE`'s file, else its stdout.
fn output_file(argv: &[String]) -> Option<PathBuf> {
    option_value(argv, "--output").map(PathBuf::from)
}

impl Parser for Fio {
    fn name(&self) -> &'static str {
        NAME
    }
    fn about(&self) -> &'static str {
        "fio's JSON (--output-format=json or json+): per job and direction bandwidth, IOPS, latency percentiles; json+'s latency histogram"
    }
    fn check(&self, argv: &[String], patterns: &[Pattern]) -> Result<(), crate::CheckError> {
        crate::no_patterns(NAME, patterns)?;
        let formats = option_value(argv, "--output-format").unwrap_or("normal");
        if !formats
            .split(',')
            .any(|f| matches!(f.trim(), "json" | "json+"))
        {
            return Err(crate::CheckError::FioNotJson(formats.to_string()));
        }
        Ok(())
    }
    fn parse(&self, out: &Output) -> Result<Parsed, ParseError> {
        let file = out
            .file
            .map(Path::to_path_buf)
            .or_else(|| output_file(out.argv));
        let (what, bytes) = match &file {
            Some(f) => (f.display().to_string(), out.read(NAME, f)?),
            None => ("stdout".to_string(), out.stdout.to_vec()),
        };
        let doc = json_document(&bytes, &what)?;
        let mut parsed = of_document(&doc, &what)?;
        if let Some(f) = file {
            parsed.files.push((f.display().to_string(), bytes));
        }
        Ok(parsed)
    }
}

/// The JSON document in fio's output: from the first line that starts
/// with `{` (fio's normal text, when asked for too, may come first) to the
/// end of that value.
fn json_document(bytes: &[u8], what: &str) -> Result<Value, ParseError> {
    let mut start = None;
    let mut at = 0;
    for line in bytes.split(|&b| b == b'\n') {
        if line.iter().find(|b| !matches!(b, b' ' | b'\t' | b'\r')) == Some(&b'{') {
            start = Some(at);
            break;
        }
        at += line.len() + 1;
    }
    let start = start.ok_or_else(|| {
        ParseError::in_(NAME, what, "no JSON document (a line starting with '{')")
    })?;
    let mut stream = serde_json::Deserializer::from_slice(&bytes[start..]).into_iter::<Value>();
    match stream.next() {
        Some(Ok(v)) => Ok(v),
        Some(Err(e)) => Err(ParseError::at(
            NAME,
            what,
            line_of(bytes, start) + e.line().saturating_sub(1),
            format!("fio's JSON does not parse: {e}"),
        )),
        None => Err(ParseError::in_(NAME, what, "no JSON document")),
    }
}

fn num(v: &Value, key: &str) -> f64 {
    v.get(key).and_then(Value::as_f64).unwrap_or(0.0)
}

fn metric(phase: &str, name: String, value: f64, unit: Unit, better: Better) -> Metric {
    Metric::new(NAME, Some(phase), &name, value, unit, better)
}

/// A parsed document: every job.
fn of_document(doc: &Value, what: &str) -> Result<Parsed, ParseError> {
    let jobs = doc
        .get("jobs")
        .and_then(Value::as_array)
        .ok_or_else(|| ParseError::in_(NAME, what, "fio's JSON has no \"jobs\" list"))?;
    if jobs.is_empty() {
        return Err(ParseError::in_(NAME, what, "fio's JSON lists no job"));
    }
    let names = unique_names(jobs.iter().map(|j| {
        j.get("jobname")
            .and_then(Value::as_str)
            .unwrap_or("job")
            .to_string()
    }));
    let mut parsed = Parsed::default();
    for (job, name) in jobs.iter().zip(&names) {
        let error = num(job, "error");
        if error != 0.0 {
            return Err(ParseError::in_(
                NAME,
                what,
                format!("job {name} ended with error {error} (fio's errno)"),
            ));
        }
        of_job(job, name, &mut parsed);
    }
    Ok(parsed)
}

/// One job: its phase, each direction's numbers and histograms, its CPU.
fn of_job(job: &Value, name: &str, parsed: &mut Parsed) {
    let (mut ops, mut bytes) = (0u64, 0u64);
    let mut bins = false;
    for dir in DIRECTIONS {
        let Some(d) = job.get(dir) else { continue };
        let ios = num(d, "total_ios") as u64;
        let io_bytes = num(d, "io_bytes") as u64;
        if ios == 0 && io_bytes == 0 {
            continue;
        }
        ops += ios;
        bytes += io_bytes;
        let bw = match d.get("bw_bytes").and_then(Value::as_f64) {
            Some(b) => b / (1u64 << 20) as f64,
            None => num(d, "bw") / 1024.0,
        };
        let m = &mut parsed.metrics;
        m.push(metric(
            name,
            format!("{dir} bw"),
            bw,
            Unit::MibPerSec,
            Better::Higher,
        ));
        m.push(metric(
            name,
            format!("{dir} iops"),
            num(d, "iops"),
            Unit::OpsPerSec,
            Better::Higher,
        ));
        if let Some(c) = d.get("clat_ns") {
            m.push(metric(
                name,
                format!("{dir} clat mean"),
                num(c, "mean") / 1e3,
                Unit::Microseconds,
                Better::Lower,
            ));
            for (key, p) in PERCENTILES {
                if let Some(v) = c
                    .get("percentile")
                    .and_then(|ps| ps.get(key))
                    .and_then(Value::as_f64)
                {
                    m.push(metric(
                        name,
                        format!("{dir} clat {p}"),
                        v / 1e3,
                        Unit::Microseconds,
                        Better::Lower,
                    ));
                }
            }
            m.push(
                metric(
                    name,
                    format!("{dir} clat max"),
                    num(c, "max") / 1e3,
                    Unit::Microseconds,
                    Better::Lower,
                )
                .detail(),
            );
        }
        if let Some(l) = d.get("lat_ns") {
            m.push(metric(
                name,
                format!("{dir} lat mean"),
                num(l, "mean") / 1e3,
                Unit::Microseconds,
                Better::Lower,
            ));
        }
        for kind in ["slat", "clat", "lat"] {
            if let Some(h) = d.get(format!("{kind}_ns")).and_then(histogram) {
                parsed
                    .latency
                    .push((name.to_string(), format!("{dir} {kind}"), h));
                bins = true;
            }
        }
    }
    let m = &mut parsed.metrics;
    m.push(
        metric(
            name,
            "usr_cpu".into(),
            num(job, "usr_cpu"),
            Unit::Percent,
            Better::Neither,
        )
        .detail(),
    );
    m.push(
        metric(
            name,
            "sys_cpu".into(),
            num(job, "sys_cpu"),
            Unit::Percent,
            Better::Neither,
        )
        .detail(),
    );
    let runtime_s = num(job, "job_runtime") / 1e3;
    parsed
        .phases
        .push(reported_phase(name, ops, bytes, runtime_s));
    if !bins {
        parsed.notes.push(format!(
            "job {name}: no latency histogram (fio writes its bins with --output-format=json+)"
        ));
    }
}

/// A latency's json+ bins (`{"2448": 24, ...}`, nanoseconds) as a
/// histogram, with fio's exact minimum, maximum and mean; None without
/// bins.
fn histogram(lat: &Value) -> Option<LatencyHistogram> {
    let bins: Vec<(u64, u64)> = lat
        .get("bins")?
        .as_object()?
        .iter()
        .filter_map(|(k, v)| Some((k.parse().ok()?, v.as_u64()?)))
        .collect();
    if bins.is_empty() {
        return None;
    }
    let exact = Some((
        num(lat, "min") as u64,
        num(lat, "max") as u64,
        num(lat, "mean"),
    ));
    Some(LatencyHistogram::of_bins(&bins, exact))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(name: &str) -> Vec<u8> {
        std::fs::read(format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
    }

    fn parse(argv: &[&str], stdout: &[u8]) -> Result<Parsed, ParseError> {
        crate::parse_stdout(&Fio, argv, stdout)
    }

    #[test]
    fn a_json_plus_job_gives_its_phase_numbers_and_histogram() {
        let p = parse(
            &["fio", "--output-format=json+"],
            &data("fio-randwrite.json+"),
        )
        .unwrap();
        assert_eq!(p.phases.len(), 1);
        let ph = &p.phases[0];
        assert_eq!((ph.phase.as_str(), ph.ops, ph.bytes), ("rw", 1024, 4 << 20));
        assert!(ph.reported && ph.elapsed_s > 0.0 && ph.ops_per_s > 0.0);
        let get = |n: &str| {
            p.metrics
                .iter()
                .find(|m| m.name == n)
                .unwrap_or_else(|| panic!("{n}: {:?}", p.metrics))
        };
        assert_eq!(get("write bw").unit, Unit::MibPerSec);
        assert_eq!(get("write bw").label(), "rw write bw (MiB/s)");
        assert!(get("write iops").value > 0.0);
        assert!(get("write clat p99").value >= get("write clat p50").value);
        assert!(
            p.metrics.iter().all(|m| !m.name.starts_with("read")),
            "read did nothing"
        );
        let (phase, op, h) = &p.latency[0];
        assert_eq!((phase.as_str(), op.as_str()), ("rw", "write clat"));
        assert_eq!(h.count(), 1024, "every IO in a bin");
        // The histogram's median is fio's own, within a bin.
        let fio_p50 = get("write clat p50").value * 1e3;
        let ours = h.quantile_ns(0.5) as f64;
        assert!(
            (ours - fio_p50).abs() / fio_p50 < 0.05,
            "{ours} vs {fio_p50}"
        );
    }

    #[test]
    fn json_beside_normal_text_and_cloned_jobs_are_read() {
        let p = parse(
            &["fio", "--output-format=normal,json"],
            &data("fio-randrw-normal-json.txt"),
        )
        .unwrap();
        let phases: Vec<&str> = p.phases.iter().map(|p| p.phase.as_str()).collect();
        assert_eq!(phases, ["mix", "mix.1"]);
        assert!(p.latency.is_empty(), "json has no bins");
        assert!(p.notes.iter().any(|n| n.contains("json+")), "{:?}", p.notes);
        let reads = p.metrics.iter().filter(|m| m.name == "read bw").count();
        assert_eq!(reads, 2);
    }

    #[test]
    fn what_it_cannot_read_is_named() {
        let argv = ["fio".to_string(), "--output-format=normal".to_string()];
        assert!(Fio
            .check(&argv, &[])
            .unwrap_err()
            .to_string()
            .contains("--output-format=json+"));
        assert!(Fio
            .check(&["fio".into(), "--output-format=json+".into()], &[])
            .is_ok());
        let e = parse(&["fio"], b"fio-3.33\nno json here\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "fio parser: stdout: no JSON document (a line starting with '{')"
        );
        let e = parse(&["fio"], b"note: x\n{\n  \"jobs\": [\n  oops\n").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("fio parser: stdout line 4: fio's JSON does not parse"),
            "{e}"
        );
        let e = parse(&["fio"], br#"{"jobs": [{"jobname": "a", "error": 5}]}"#).unwrap_err();
        assert!(e.to_string().contains("job a ended with error 5"), "{e}");
    }
}
