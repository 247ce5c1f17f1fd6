//! `fslab stats [--trim-outliers]`: the `stats --trim-outliers | tail -1` of
//! seed 000. Reads whitespace-separated numbers on stdin (lines that are not
//! all numbers, like fs_mark's `#` header and column names, are skipped) and
//! prints one line: per column `min-max(mean+/-sd)`, or the value when the
//! column is constant, each right-aligned to the column's width in the input.
//! min and max print as integers when the column holds integers, else with
//! `%f`; the mean with `%g` and the sample standard deviation (n - 1) with `%.2g`.
//! `--trim-outliers` first drops, per column, the values beyond Tukey's fences
//! (1.5 times the interquartile range below the first or above the third quartile).

use std::io::BufRead;

use fslab_stats::{fmt_g, summarize, trim_outliers};

use crate::Failure;

pub fn run(trim: bool) -> Result<(), Failure> {
    let stdin = std::io::stdin();
    let mut cols: Vec<Vec<f64>> = Vec::new();
    let mut ints: Vec<bool> = Vec::new();
    let mut widths: Vec<usize> = Vec::new();
    for line in stdin.lock().lines() {
        let line = line.map_err(|e| Failure::Failed(format!("stats: reading stdin: {e}")))?;
        let toks: Vec<&str> = line.split_whitespace().collect();
        if toks.is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        let Ok(vals) = toks
            .iter()
            .map(|t| t.parse::<f64>())
            .collect::<Result<Vec<f64>, _>>()
        else {
            continue;
        };
        if cols.len() < vals.len() {
            cols.resize(vals.len(), Vec::new());
            ints.resize(vals.len(), true);
        }
        for (i, v) in vals.iter().enumerate() {
            cols[i].push(*v);
            ints[i] &= !toks[i].contains(['.', 'e', 'E']);
        }
        // Widths from this line's layout: each token with the blanks before it.
        widths.clear();
        let mut end = 0;
        let mut rest = line.as_str();
        for t in &toks {
            let at = rest.find(t).unwrap_or(0);
            let start = end + at;
            widths.push(start + t.len() - end);
            end = start + t.len();
            rest = &line[end..];
        }
    }
    if cols.is_empty() {
        return Err(Failure::Usage("stats: no lines of numbers on stdin".into()));
    }
    let mut out = String::new();
    for (i, col) in cols.iter().enumerate() {
        let v = if trim {
            trim_outliers(col)
        } else {
            col.clone()
        };
        let s = summarize(&v);
        let show = |x: f64| {
            if ints[i] {
                format!("{}", x as i64)
            } else {
                format!("{x:.6}")
            }
        };
        let field = if s.min == s.max {
            show(s.min)
        } else {
            format!(
                "{}-{}({}+/-{})",
                show(s.min),
                show(s.max),
                fmt_g(s.mean, 6),
                fmt_g(s.sd, 2)
            )
        };
        // Right-aligned in the input column's width, and never run together.
        let w = widths.get(i).copied().unwrap_or(0);
        if i > 0 && field.len() >= w {
            out.push(' ');
        }
        out.push_str(&format!("{field:>w$}"));
    }
    println!("{out}");
    Ok(())
}
