//! mdtest's `SUMMARY` tables (hpc/ior, src/mdtest.c): `SUMMARY rate` (Max,
//! Min, Mean, Std Dev of each operation's rate over the iterations; with
//! `--show-perrank-statistics` three per-rank columns come first) and,
//! with `-P`, `SUMMARY time`. Operations that did not run (all zeros) are
//! left out. The names are `fslab mdtest`'s, so the original and fslab's
//! compare: `mdtest file creation rate (ops/s)`, `rate max`, `rate min`,
//! `time (s)`. With the time table each operation is a phase too: its rate
//! times its time in items.

use fslab_model::{Better, Metric, Unit};

use crate::{reported_phase, Output, ParseError, Parsed, Parser};

/// The mdtest parser.
pub struct Mdtest;

const NAME: &str = "mdtest";

/// One operation's row: (operation, max, min, mean).
type Row = (String, f64, f64, f64);

/// The table after the `SUMMARY {what}` line at `at`: its rows up to the
/// first blank or foreign line.
fn table(lines: &[&str], at: usize) -> Result<Vec<Row>, ParseError> {
    let mut rows = Vec::new();
    for (i, l) in lines.iter().enumerate().skip(at + 1) {
        let t = l.trim();
        if t.starts_with("Operation") || t.starts_with("---") {
            continue;
        }
        let words: Vec<&str> = t.split_whitespace().collect();
        let numbers = words
            .iter()
            .rev()
            .take_while(|w| w.parse::<f64>().is_ok())
            .count();
        if t.is_empty() || numbers == 0 {
            break;
        }
        if numbers != 4 && numbers != 7 || numbers == words.len() {
            return Err(ParseError::at(
                NAME,
                "stdout",
                i + 1,
                format!("{numbers} numbers after the operation: mdtest prints 4 (7 with per-rank statistics)"),
            ));
        }
        let n = |k: usize| words[words.len() - 4 + k].parse::<f64>().unwrap_or(0.0);
        let op = words[..words.len() - numbers].join(" ");
        rows.push((op, n(0), n(1), n(2)));
    }
    Ok(rows)
}

impl Parser for Mdtest {
    fn name(&self) -> &'static str {
        NAME
    }
    fn about(&self) -> &'static str {
        "mdtest's SUMMARY tables: each operation's rate (max, min, mean) and, with -P, its time"
    }
    fn parse(&self, out: &Output) -> Result<Parsed, ParseError> {
        let text = String::from_utf8_lossy(out.stdout);
        let lines: Vec<&str> = text.lines().collect();
        // mdtest's own header (`SUMMARY rate (in ops/sec): (of N
        // iterations)`, older `SUMMARY rate: ...`), not another table
        // after it (fslab's per-rank `SUMMARY rate (ops/s)` under MPI).
        let find = |what: &str| {
            lines.iter().rposition(|l| {
                let t = l.trim_start();
                t.starts_with(&format!("SUMMARY {what} (in "))
                    || t.starts_with(&format!("SUMMARY {what}:"))
            })
        };
        let rate_at = find("rate").ok_or_else(|| {
            ParseError::in_(
                NAME,
                "stdout",
                "no \"SUMMARY rate\" table (mdtest prints it when a run ends)",
            )
        })?;
        let rates = table(&lines, rate_at)?;
        let times = match find("time") {
            Some(at) => table(&lines, at)?,
            None => Vec::new(),
        };
        let mut p = Parsed::default();
        for (op, max, min, mean) in rates.iter().filter(|r| r.1 != 0.0 || r.3 != 0.0) {
            let phase = op.to_lowercase();
            let m = |name: &str, v: f64, unit: Unit, better: Better| {
                Metric::new(NAME, Some(&phase), name, v, unit, better)
            };
            p.metrics
                .push(m("rate", *mean, Unit::OpsPerSec, Better::Higher));
            p.metrics
                .push(m("rate max", *max, Unit::OpsPerSec, Better::Higher).detail());
            p.metrics
                .push(m("rate min", *min, Unit::OpsPerSec, Better::Higher).detail());
            if let Some((_, _, _, t)) = times.iter().find(|t| t.0 == *op) {
                p.metrics.push(m("time", *t, Unit::Seconds, Better::Lower));
                p.phases
                    .push(reported_phase(&phase, (mean * t).round() as u64, 0, *t));
            }
        }
        if p.metrics.is_empty() {
            return Err(ParseError::at(
                NAME,
                "stdout",
                rate_at + 1,
                "the SUMMARY table has no operation that ran",
            ));
        }
        Ok(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const OUT: &str = "mdtest-4.1.0+dev was launched with 2 total task(s) on 1 node(s)\n\nSUMMARY rate (in ops/sec): (of 1 iterations)\n   Operation                     Max            Min           Mean        Std Dev\n   ---------                     ---            ---           ----        -------\n   File creation              119113.150     119113.150     119113.150          0.000\n   File stat                       0.000          0.000          0.000          0.000\n   Tree creation                   4.279          4.279          4.279          0.000\n\nSUMMARY time (in ops/sec): (of 1 iterations)\n   Operation                     Max            Min           Mean        Std Dev\n   ---------                     ---            ---           ----        -------\n   File creation                 372.432        372.432        372.432          0.000\n   File stat                       0.000          0.000          0.000          0.000\n   Tree creation                   0.234          0.234          0.234          0.000\n-- finished at 05/03/2024 09:38:29 --\n";

    fn parse(stdout: &[u8]) -> Result<Parsed, ParseError> {
        crate::parse_stdout(&Mdtest, &["mdtest"], stdout)
    }

    #[test]
    fn operations_that_ran_are_phases_named_as_fslab_mdtest_names_them() {
        let p = parse(OUT.as_bytes()).unwrap();
        let names: Vec<&str> = p.phases.iter().map(|p| p.phase.as_str()).collect();
        assert_eq!(names, ["file creation", "tree creation"]);
        assert_eq!(p.phases[0].ops, (119113.150f64 * 372.432).round() as u64);
        let labels: Vec<String> = p
            .metrics
            .iter()
            .filter(|m| !m.detail)
            .map(|m| m.label())
            .collect();
        assert_eq!(
            labels,
            [
                "file creation rate (ops/s)",
                "file creation time (s)",
                "tree creation rate (ops/s)",
                "tree creation time (s)"
            ]
        );
    }

    #[test]
    fn mdtests_table_is_read_not_one_that_follows_it() {
        let fslab_mpi = format!("{OUT}fslab mdtest: 2 MPI ranks on 1 host\nSUMMARY rate (ops/s)        aggregate            max\n   file creation      :        2436.37        1291.75          -\n");
        let p = parse(fslab_mpi.as_bytes()).unwrap();
        assert_eq!(p.phases[0].phase, "file creation");
        assert_eq!(p.metrics[0].value, 119113.150);
    }

    #[test]
    fn a_row_mdtest_would_not_print_is_named() {
        let bad = OUT.replace("119113.150          0.000", "119113.150");
        let e = parse(bad.as_bytes()).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("mdtest parser: stdout line 6: 3 numbers"),
            "{e}"
        );
        assert!(parse(b"mdtest: aborted\n").is_err());
    }
}
