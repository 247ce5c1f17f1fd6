//! IOR's `Summary of all tests:` table (hpc/ior, src/ior-output.c): one row
//! per test and operation (`write`, `read`), its columns read by the
//! header's names (older IORs lack the stonewall columns). Each row is a
//! phase (`write`, or `write test 2` when a run has several tests): its
//! aggregate bytes and transfers over its mean time. The metrics keep
//! IOR's columns: `write bw mean (MiB/s)`, `bw max`, `bw min`, `ops mean
//! (ops/s)`, `time mean (s)`, `stonewall bw (MiB/s)`.

use fslab_model::{Better, Metric, Unit};

use crate::{reported_phase, Output, ParseError, Parsed, Parser};

/// The IOR parser.
pub struct Ior;

const NAME: &str = "ior";
const SUMMARY: &str = "Summary of all tests:";

/// One row's columns by the header's names.
struct Row<'a> {
    cols: &'a [&'a str],
    vals: Vec<&'a str>,
    line: usize,
}

impl Row<'_> {
    /// Column `name`'s `nth` occurrence (IOR has two `StdDev`s).
    fn get(&self, name: &str, nth: usize) -> Option<&str> {
        let i = self
            .cols
            .iter()
            .enumerate()
            .filter(|(_, c)| **c == name)
            .nth(nth)?
            .0;
        self.vals.get(i).copied()
    }

    fn num(&self, name: &str, nth: usize) -> Result<Option<f64>, ParseError> {
        match self.get(name, nth) {
            None | Some("NA") => Ok(None),
            Some(v) => v.parse().map(Some).map_err(|_| {
                ParseError::at(
                    NAME,
                    "stdout",
                    self.line,
                    format!("{name} {v:?} is not a number"),
                )
            }),
        }
    }

    fn need(&self, name: &str) -> Result<f64, ParseError> {
        self.num(name, 0)?
            .ok_or_else(|| ParseError::at(NAME, "stdout", self.line, format!("no {name} column")))
    }
}

impl Parser for Ior {
    fn name(&self) -> &'static str {
        NAME
    }
    fn about(&self) -> &'static str {
        "IOR's 'Summary of all tests' table: per operation bandwidth, operations per second and time"
    }
    fn parse(&self, out: &Output) -> Result<Parsed, ParseError> {
        let text = String::from_utf8_lossy(out.stdout);
        let lines: Vec<&str> = text.lines().collect();
        let at = lines
            .iter()
            .rposition(|l| l.trim_start().starts_with(SUMMARY))
            .ok_or_else(|| {
                ParseError::in_(
                    NAME,
                    "stdout",
                    format!("no {SUMMARY:?} table (IOR prints it when a run ends)"),
                )
            })?;
        let (h, header) = lines
            .iter()
            .enumerate()
            .skip(at + 1)
            .find(|(_, l)| l.trim_start().starts_with("Operation"))
            .ok_or_else(|| {
                ParseError::at(NAME, "stdout", at + 1, "the summary has no header line")
            })?;
        let cols: Vec<&str> = header.split_whitespace().collect();
        let mut rows = Vec::new();
        for (i, l) in lines.iter().enumerate().skip(h + 1) {
            let vals: Vec<&str> = l.split_whitespace().collect();
            match vals.first() {
                Some(&("write" | "read")) => {}
                _ => break,
            }
            if vals.len() != cols.len() {
                return Err(ParseError::at(
                    NAME,
                    "stdout",
                    i + 1,
                    format!("{} columns where the header has {}", vals.len(), cols.len()),
                ));
            }
            rows.push(Row {
                cols: &cols,
                vals,
                line: i + 1,
            });
        }
        if rows.is_empty() {
            return Err(ParseError::at(
                NAME,
                "stdout",
                h + 1,
                "the summary has no write or read row",
            ));
        }
        let tests: std::collections::BTreeSet<&str> =
            rows.iter().filter_map(|r| r.get("Test#", 0)).collect();
        let mut p = Parsed::default();
        for r in &rows {
            let op = r.vals[0];
            let phase = match r.get("Test#", 0) {
                Some(t) if tests.len() > 1 => format!("{op} test {t}"),
                _ => op.to_string(),
            };
            of_row(r, &phase, &mut p)?;
        }
        Ok(p)
    }
}

fn of_row(r: &Row, phase: &str, p: &mut Parsed) -> Result<(), ParseError> {
    let m = |name: &str, v: f64, unit: Unit, better: Better| {
        Metric::new(NAME, Some(phase), name, v, unit, better)
    };
    let mean_s = r.need("Mean(s)")?;
    p.metrics.push(m(
        "bw mean",
        r.need("Mean(MiB)")?,
        Unit::MibPerSec,
        Better::Higher,
    ));
    p.metrics.push(
        m(
            "bw max",
            r.need("Max(MiB)")?,
            Unit::MibPerSec,
            Better::Higher,
        )
        .detail(),
    );
    p.metrics.push(
        m(
            "bw min",
            r.need("Min(MiB)")?,
            Unit::MibPerSec,
            Better::Higher,
        )
        .detail(),
    );
    if let Some(ops) = r.num("Mean(OPs)", 0)? {
        p.metrics
            .push(m("ops mean", ops, Unit::OpsPerSec, Better::Higher));
    }
    p.metrics
        .push(m("time mean", mean_s, Unit::Seconds, Better::Lower));
    if let Some(sw) = r.num("Stonewall(MiB)", 0)? {
        p.metrics
            .push(m("stonewall bw", sw, Unit::MibPerSec, Better::Higher));
    }
    if let Some(t) = r.num("Stonewall(s)", 0)? {
        p.metrics
            .push(m("stonewall time", t, Unit::Seconds, Better::Lower).detail());
    }
    let agg_mib = r.num("aggs(MiB)", 0)?.unwrap_or(0.0);
    let bytes = (agg_mib * (1u64 << 20) as f64).round() as u64;
    let xfer = r.num("xsize", 0)?.unwrap_or(0.0);
    let ops = if xfer > 0.0 {
        (bytes as f64 / xfer).round() as u64
    } else {
        0
    };
    p.phases.push(reported_phase(phase, ops, bytes, mean_s));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const OUT: &str = "IOR-4.1.0+dev: MPI Coordinated Test of Parallel I/O\n...\nSummary of all tests:\nOperation   Max(MiB)   Min(MiB)  Mean(MiB)     StdDev   Max(OPs)   Min(OPs)  Mean(OPs)     StdDev    Mean(s) Stonewall(s) Stonewall(MiB) Test# #Tasks tPN reps fPP reord reordoff reordrand seed segcnt   blksiz    xsize aggs(MiB)   API RefNum\nwrite        1024.50     900.25     962.38      62.12     256.12     225.06     240.59      15.53    0.26601         NA            NA     0      4   4    2   1     0        1         0    0      1 16777216  4194304      64.0 POSIX      0\nread         2048.00    2000.00    2024.00      24.00     512.00     500.00     506.00       6.00    0.12650       0.10        1900.00     0      4   4    2   1     0        1         0    0      1 16777216  4194304      64.0 POSIX      0\nFinished            : Thu Nov 27 10:00:00 2026\n";

    fn parse(stdout: &[u8]) -> Result<Parsed, ParseError> {
        crate::parse_stdout(&Ior, &["ior"], stdout)
    }

    #[test]
    fn each_operation_of_the_summary_is_a_phase_with_iors_columns() {
        let p = parse(OUT.as_bytes()).unwrap();
        let names: Vec<&str> = p.phases.iter().map(|p| p.phase.as_str()).collect();
        assert_eq!(names, ["write", "read"]);
        assert_eq!(p.phases[0].bytes, 64 << 20);
        assert_eq!(p.phases[0].ops, 16, "64 MiB in 4 MiB transfers");
        let w = crate::headline_labels(&p, "write");
        assert_eq!(
            w,
            [
                "write bw mean (MiB/s)",
                "write ops mean (ops/s)",
                "write time mean (s)"
            ]
        );
        let sw = p.metrics.iter().find(|m| m.name == "stonewall bw").unwrap();
        assert_eq!((sw.phase.as_deref(), sw.value), (Some("read"), 1900.0));
    }

    #[test]
    fn a_row_that_does_not_fit_its_header_is_named() {
        let bad = OUT.replace("0.12650       0.10", "0.12650");
        let e = parse(bad.as_bytes()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "ior parser: stdout line 6: 26 columns where the header has 27"
        );
        let e = parse(b"IOR-4.1.0: aborting\n").unwrap_err();
        assert!(
            e.to_string().contains("no \"Summary of all tests:\" table"),
            "{e}"
        );
    }
}
