//! The `stats --trim-outliers | tail -1` line of seed 000: whitespace-
//! separated numbers in, one line out. Lines that are not all numbers
//! (fs_mark's `#` header and column names) are skipped. Per column it gives
//! `min-max(mean+/-sd)`, or the value when the column is constant, each
//! right-aligned to the column's width in the input. min and max print as
//! integers when the column holds integers, else with `%f`; the mean with
//! `%g` and the sample standard deviation (n - 1) with `%.2g`. Trimming
//! first drops, per column, the values beyond Tukey's fences (1.5 times the
//! interquartile range below the first or above the third quartile).

use crate::{fmt_g, summarize, trim_outliers};

/// The line for `text`; None when it holds no line of numbers.
pub fn stats_line(text: &str, trim: bool) -> Option<String> {
    let mut cols: Vec<Vec<f64>> = Vec::new();
    let mut ints: Vec<bool> = Vec::new();
    let mut widths: Vec<usize> = Vec::new();
    for line in text.lines() {
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
        let mut rest = line;
        for t in &toks {
            let at = rest.find(t).unwrap_or(0);
            let start = end + at;
            widths.push(start + t.len() - end);
            end = start + t.len();
            rest = &line[end..];
        }
    }
    if cols.is_empty() {
        return None;
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
    Some(out)
}

#[cfg(test)]
mod tests {
    #[test]
    fn fs_marks_table_in_seed_000s_form() {
        let table = "\
#  ./fs_mark  -D  10000  -S0
FSUse%        Count         Size    Files/sec     App Overhead
     0       800000            0      53498.9          7898900
     0      1600000            0      11186.5          9409278
     0      2400000            0      17026.1          7907599
";
        assert_eq!(
            super::stats_line(table, false).unwrap(),
            "     0 800000-2400000(1.6e+06+/-8e+05)            0 11186.500000-53498.900000(27237.2+/-2.3e+04) 7898900-9409278(8.40526e+06+/-8.7e+05)"
        );
        assert_eq!(
            super::stats_line("10\n11\n12\n11\n10\n1000\n", true).unwrap(),
            "10-12(10.8+/-0.84)"
        );
        assert_eq!(super::stats_line("no numbers\n", false), None);
    }
}
