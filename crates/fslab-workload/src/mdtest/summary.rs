//! mdtest's text: its SUMMARY tables (rate and time), computed from every
//! rank's numbers as mdtest's summarize_results does, and IO500's per-rank
//! CSV (--saveRankPerformanceDetails).

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use super::options::Options;

/// mdtest's operations, in its table's order (its MDTEST_*_NUM).
pub const ROWS: [&str; 11] = [
    "Directory creation",
    "Directory stat",
    "Directory read",
    "Directory rename",
    "Directory removal",
    "File creation",
    "File stat",
    "File read",
    "File removal",
    "Tree creation",
    "Tree removal",
];
pub const DIR_CREATE: usize = 0;
pub const DIR_READ: usize = 2;
pub const FILE_CREATE: usize = 5;
pub const TREE_CREATE: usize = 9;
pub const TREE_REMOVE: usize = 10;

/// One operation of one iteration on one rank.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Cell {
    pub items: u64,
    /// Seconds, past the phase's closing barrier (mdtest's time).
    pub time_s: f64,
    /// Seconds, when this rank finished its items (time_before_barrier).
    pub before_s: f64,
}

impl Cell {
    /// mdtest's rate: items over the time past the barrier (0 for none).
    pub fn rate(&self) -> f64 {
        if self.items == 0 || self.time_s <= 0.0 {
            0.0
        } else {
            self.items as f64 / self.time_s
        }
    }

    fn rate_before(&self) -> f64 {
        if self.items == 0 || self.before_s <= 0.0 {
            0.0
        } else {
            self.items as f64 / self.before_s
        }
    }
}

/// One rank's iteration: a cell per row.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RankIteration {
    pub cells: [Cell; 11],
    pub wall: Option<super::stonewall::Wall>,
}

/// One row of a SUMMARY table: mdtest's Max, Min, Mean and Std Dev over
/// the iterations of the aggregate rate (or time).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    pub operation: &'static str,
    pub max: f64,
    pub min: f64,
    pub mean: f64,
    pub std_dev: f64,
}

/// Which rows the table shows: mdtest skips the directory rows with -F,
/// the file rows with -D, and never shows "Directory read".
fn shown(o: &Options) -> Vec<usize> {
    let (start, stop) = match (o.files, o.dirs) {
        (true, false) => (FILE_CREATE, TREE_CREATE),
        (false, true) => (DIR_CREATE, FILE_CREATE),
        _ => (DIR_CREATE, TREE_CREATE),
    };
    (start..stop).filter(|&i| i != DIR_READ).collect()
}

fn spread(values: &[f64]) -> (f64, f64, f64, f64) {
    let n = values.len() as f64;
    let max = values.iter().copied().fold(0.0, f64::max);
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let mean = values.iter().sum::<f64>() / n;
    let sd = if values.len() > 1 {
        (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt()
    } else {
        0.0
    };
    (max, min, mean, sd)
}

/// The table's rows from `all[rank][iteration]`: per iteration the slowest
/// rank's rate times the ranks (mdtest's aggregate), or the slowest rank's
/// time; tree rows from rank 0 alone, as mdtest's.
pub fn rows(o: &Options, all: &[Vec<RankIteration>], time: bool) -> Vec<Row> {
    let size = all.len() as f64;
    let iterations = all.first().map_or(0, Vec::len);
    let mut out = Vec::new();
    let row = |operation, v: &[f64]| {
        let (max, min, mean, std_dev) = spread(v);
        Row {
            operation,
            max,
            min,
            mean,
            std_dev,
        }
    };
    for i in shown(o) {
        let per_iter: Vec<f64> = (0..iterations)
            .map(|j| {
                let cells = all.iter().map(|r| r[j].cells[i]);
                if time {
                    cells.map(|c| c.time_s).fold(0.0, f64::max)
                } else {
                    cells.map(|c| c.rate()).fold(f64::INFINITY, f64::min) * size
                }
            })
            .collect();
        out.push(row(ROWS[i], &per_iter));
    }
    for i in [TREE_CREATE, TREE_REMOVE] {
        let per_iter: Vec<f64> = all
            .first()
            .map(|r0| {
                r0.iter()
                    .map(|it| {
                        if time {
                            it.cells[i].time_s
                        } else {
                            it.cells[i].rate()
                        }
                    })
                    .collect()
            })
            .unwrap_or_default();
        out.push(row(ROWS[i], &per_iter));
    }
    out
}

/// A SUMMARY table as mdtest prints it.
pub fn table(rows: &[Row], iterations: usize, time: bool) -> String {
    let mut s = String::new();
    let what = if time {
        "time (in ms/op)"
    } else {
        "rate (in ops/sec)"
    };
    let _ = writeln!(s, "\nSUMMARY {what}: (of {iterations} iterations)");
    s.push_str(
        "   Operation                     Max            Min           Mean        Std Dev\n",
    );
    s.push_str(
        "   ---------                     ---            ---           ----        -------\n",
    );
    for r in rows {
        let name = if r.operation.starts_with("Tree") {
            format!("   {:<22} ", r.operation)
        } else {
            format!("   {:<18}     ", r.operation)
        };
        let _ = writeln!(
            s,
            "{name}{:14.3} {:14.3} {:14.3} {:14.3}",
            r.max, r.min, r.mean, r.std_dev
        );
    }
    s
}

/// A number as C's `%.10e` prints it (`1.2345678901e+04`).
pub fn c_exp(v: f64) -> String {
    let s = format!("{v:.10e}");
    match s.split_once('e') {
        Some((m, e)) => {
            let (sign, digits) = match e.strip_prefix('-') {
                Some(d) => ('-', d),
                None => ('+', e),
            };
            format!("{m}e{sign}{digits:0>2}")
        }
        None => s,
    }
}

/// One operation of the first iteration over every rank: mdtest's
/// aggregate as its `summarize_results` makes it, which IO500 scores (its
/// `res->rate`): the items of every rank over the slowest rank's time,
/// past the phase's closing barrier (the stonewall's wear-out included).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Total {
    pub operation: &'static str,
    /// Items of every rank.
    pub items: u64,
    /// The slowest rank's time, seconds.
    pub time_s: f64,
}

impl Total {
    /// Items over the slowest rank's time (0 for none).
    pub fn rate(&self) -> f64 {
        if self.items == 0 || self.time_s <= 0.0 {
            0.0
        } else {
            self.items as f64 / self.time_s
        }
    }
}

/// Each operation's [`Total`] of the first iteration of `all[rank]`.
pub fn totals(all: &[Vec<RankIteration>]) -> Vec<Total> {
    (0..ROWS.len())
        .map(|i| Total {
            operation: ROWS[i],
            items: all
                .iter()
                .filter_map(|r| r.first())
                .map(|it| it.cells[i].items)
                .sum(),
            time_s: all
                .iter()
                .filter_map(|r| r.first())
                .map(|it| it.cells[i].time_s)
                .fold(0.0, f64::max),
        })
        .collect()
}

/// IO500's per-rank CSV (mdtest's --saveRankPerformanceDetails): the
/// header, the `all` row (the first iteration's [`Total`]s), then a row
/// per iteration and rank with its rates and times before the closing
/// barrier.
pub fn rank_csv(items: u64, all: &[Vec<RankIteration>]) -> String {
    let mut s = String::from("rank,items");
    for n in ROWS {
        let _ = write!(s, ",rate-{n},time-{n}");
    }
    let _ = write!(s, "\nall,{items}");
    for t in totals(all) {
        let (sum, slowest) = (t.items, t.time_s);
        if sum == 0 {
            s.push_str(",,");
        } else {
            let _ = write!(s, ",{},{}", c_exp(sum as f64 / slowest), c_exp(slowest));
        }
    }
    s.push('\n');
    let iterations = all.first().map_or(0, Vec::len);
    for j in 0..iterations {
        for (rank, r) in all.iter().enumerate() {
            let _ = write!(s, "{rank},");
            for c in &r[j].cells[..TREE_CREATE] {
                if c.items == 0 {
                    s.push_str(",,");
                } else {
                    let _ = write!(s, ",{},{}", c_exp(c.rate_before()), c_exp(c.before_s));
                }
            }
            s.push('\n');
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(items: u64, time_s: f64) -> Cell {
        Cell {
            items,
            time_s,
            before_s: time_s / 2.0,
        }
    }

    #[test]
    fn the_aggregate_is_the_slowest_ranks_rate_times_the_ranks() {
        let o = crate::mdtest::tests::opts("-n 10 -F");
        // Two ranks, two iterations: file creation 10 items each.
        let it = |a: f64, b: f64| {
            let mut x = RankIteration::default();
            let mut y = RankIteration::default();
            x.cells[FILE_CREATE] = cell(10, a);
            y.cells[FILE_CREATE] = cell(10, b);
            x.cells[TREE_CREATE] = cell(1, 0.5);
            (x, y)
        };
        let (a0, b0) = it(1.0, 2.0);
        let (a1, b1) = it(4.0, 1.0);
        let all = vec![vec![a0, a1], vec![b0, b1]];
        let rows = rows(&o, &all, false);
        let create = &rows[0];
        assert_eq!(create.operation, "File creation");
        // Iteration 1: min(10, 5) x 2 = 10; iteration 2: min(2.5, 10) x 2 = 5.
        assert_eq!((create.max, create.min, create.mean), (10.0, 5.0, 7.5));
        assert!((create.std_dev - 12.5f64.sqrt()).abs() < 1e-9);
        assert_eq!(rows.len(), 6, "four file rows and two tree rows");
        assert_eq!(rows[4].max, 2.0, "tree creation: rank 0's 1 dir in 0.5 s");
        let times = super::rows(&o, &all, true);
        assert_eq!((times[0].max, times[0].min), (4.0, 2.0));
    }

    #[test]
    fn the_table_lines_up_as_mdtests() {
        let rows = vec![
            Row {
                operation: "File creation",
                max: 75709.458,
                min: 75709.458,
                mean: 75709.458,
                std_dev: 0.0,
            },
            Row {
                operation: "Tree creation",
                max: 5745.622,
                min: 5745.622,
                mean: 5745.622,
                std_dev: 0.0,
            },
        ];
        let t = table(&rows, 1, false);
        // Lines copied from mdtest's output.
        assert!(
            t.contains("\nSUMMARY rate (in ops/sec): (of 1 iterations)\n"),
            "{t}"
        );
        assert!(t.contains("   File creation               75709.458      75709.458      75709.458          0.000\n"), "{t}");
        assert!(t.contains("   Tree creation                5745.622       5745.622       5745.622          0.000\n"), "{t}");
    }

    #[test]
    fn numbers_print_as_cs_exponent_format() {
        assert_eq!(c_exp(12345.678901234), "1.2345678901e+04");
        assert_eq!(c_exp(0.00123), "1.2300000000e-03");
        assert_eq!(c_exp(5.0), "5.0000000000e+00");
    }
}
