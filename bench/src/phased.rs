//! Phase-by-phase comparisons for `originals`: mdtest against hpc/ior's
//! mdtest and io500md against the IO500 app, each also against a bare loop
//! making the same calls ([`crate::bare_md`]), on 1 or more MPI ranks.
//! Every side is its own process (under `mpirun` for more than one rank);
//! each side's phases are read from what it prints: the original's
//! SUMMARY table (mdtest) or `[RESULT]` lines (IO500), fslab's `--json`
//! metrics, the bare loop's `phase` lines. Rates compare as they are:
//! ops/s (mdtest) or kIOPS (IO500, and its MD score).

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use crate::bare_md::Timed;

/// Which program's output a side prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Mdtest,
    Io500,
}

/// The IO500 phases that make its MD score, in its order.
pub const IO500_MD: [&str; 8] = [
    "mdtest-easy-write",
    "mdtest-hard-write",
    "find",
    "mdtest-easy-stat",
    "mdtest-hard-stat",
    "mdtest-easy-delete",
    "mdtest-hard-read",
    "mdtest-hard-delete",
];

/// The MD score's name in the tables.
pub const SCORE: &str = "MD score";

/// Each phase's rate, by name (mdtest's operations in lower case).
pub type Rates = BTreeMap<String, f64>;

/// `argv` as a command: under `mpirun` for more than one rank.
pub fn command(argv: &[String], ranks: usize) -> Command {
    let mut c = if ranks > 1 {
        let mut c = Command::new("mpirun");
        c.args(["--allow-run-as-root", "--oversubscribe", "-np"])
            .arg(ranks.to_string())
            .args(argv);
        c
    } else {
        let mut c = Command::new(&argv[0]);
        c.args(&argv[1..]);
        c
    };
    c.env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
    c
}

/// Runs one side; its standard output, or why it failed.
pub fn run(argv: &[String], ranks: usize, cwd: &Path) -> Result<String, String> {
    let o = command(argv, ranks)
        .current_dir(cwd)
        .output()
        .map_err(|e| format!("{}: {e}", argv[0]))?;
    if !o.status.success() {
        return Err(format!(
            "{} exited {}: {}",
            argv.join(" "),
            o.status,
            String::from_utf8_lossy(&o.stderr)
                .lines()
                .rev()
                .take(6)
                .collect::<Vec<_>>()
                .join(" | ")
        ));
    }
    Ok(String::from_utf8_lossy(&o.stdout).into_owned())
}

/// hpc/ior mdtest's SUMMARY rate table: each operation's Mean (ops/s).
pub fn mdtest_rates(out: &str) -> Rates {
    let mut r = Rates::new();
    let mut inside = false;
    for l in out.lines() {
        if l.starts_with("SUMMARY rate") {
            inside = true;
            continue;
        }
        if inside && (l.starts_with("SUMMARY time") || l.starts_with("--")) {
            break;
        }
        if !inside {
            continue;
        }
        let words: Vec<&str> = l.split_whitespace().collect();
        if words.len() < 6 {
            continue;
        }
        let op = words[..words.len() - 4].join(" ");
        if let Ok(mean) = words[words.len() - 2].parse::<f64>() {
            r.insert(op.to_lowercase(), mean);
        }
    }
    r
}

/// The IO500 app's `[RESULT]` lines (kIOPS) and its `[SCORE ]` IOPS.
pub fn io500_rates(out: &str) -> Rates {
    let mut r = Rates::new();
    for l in out.lines() {
        let w: Vec<&str> = l.split_whitespace().collect();
        if l.starts_with("[RESULT]") && w.len() >= 4 && w[3] == "kIOPS" {
            if let Ok(v) = w[2].parse() {
                r.insert(w[1].to_string(), v);
            }
        }
        if l.starts_with("[SCORE ]") {
            if let Some(i) = w.iter().position(|x| *x == "IOPS") {
                if let Some(v) = w.get(i + 1).and_then(|x| x.parse().ok()) {
                    r.insert(SCORE.to_string(), v);
                }
            }
        }
    }
    r
}

/// fslab's `--json`: mdtest's `rate` metrics (ops/s) or io500md's `score`
/// metrics (kIOPS) and its MD score.
pub fn fslab_rates(kind: Kind, out: &str) -> Rates {
    let mut r = Rates::new();
    let Ok(doc) = serde_json::from_str::<serde_json::Value>(out) else {
        return r;
    };
    for m in doc["metrics"].as_array().into_iter().flatten() {
        let (name, phase, v) = (m["name"].as_str(), m["phase"].as_str(), m["value"].as_f64());
        match (kind, name, phase, v) {
            (Kind::Mdtest, Some("rate"), Some(p), Some(v))
            | (Kind::Io500, Some("score"), Some(p), Some(v)) => {
                r.insert(p.to_string(), v);
            }
            (Kind::Io500, Some("MD score"), None, Some(v)) => {
                r.insert(SCORE.to_string(), v);
            }
            _ => {}
        }
    }
    r
}

/// The bare loop's `phase` lines: items over seconds (ops/s for mdtest,
/// kIOPS and the MD score, their geometric mean, for IO500).
pub fn bare_rates(kind: Kind, out: &str) -> Rates {
    let mut r = Rates::new();
    for t in out.lines().filter_map(Timed::parse) {
        let rate = t.items as f64 / t.seconds.max(1e-9);
        let v = match kind {
            Kind::Mdtest => rate,
            Kind::Io500 => rate / 1000.0,
        };
        let name = match kind {
            Kind::Mdtest => t.phase.to_lowercase(),
            Kind::Io500 => t.phase.clone(),
        };
        r.insert(name, v);
    }
    if kind == Kind::Io500 {
        let logs: Vec<f64> = IO500_MD
            .iter()
            .filter_map(|p| r.get(*p))
            .map(|v| v.ln())
            .collect();
        if logs.len() == IO500_MD.len() {
            r.insert(
                SCORE.to_string(),
                (logs.iter().sum::<f64>() / logs.len() as f64).exp(),
            );
        }
    }
    r
}

/// Each phase's median over the runs (phases every run has).
pub fn medians(runs: &[Rates]) -> Rates {
    let mut out = Rates::new();
    let Some(first) = runs.first() else {
        return out;
    };
    for k in first.keys() {
        let v: Vec<f64> = runs.iter().filter_map(|r| r.get(k).copied()).collect();
        if v.len() == runs.len() {
            out.insert(k.clone(), crate::median(&v));
        }
    }
    out
}

/// One comparison: a workload on some ranks, its three sides' argv
/// (`{dir}` for the run's fresh directory, `{ini}` for the IO500 app's
/// configuration file, made from [`Case::ini`] for each run).
#[derive(Debug, Clone)]
pub struct Case {
    pub name: String,
    pub kind: Kind,
    pub ranks: usize,
    pub original: Option<Vec<String>>,
    pub fslab: Vec<String>,
    pub bare: Vec<String>,
    /// The IO500 app's ini, `{dir}` in it.
    pub ini: Option<String>,
}

/// The medians of one case's sides, and each side's runs in round order
/// (original, fslab, bare: round i of each side ran one after another).
#[derive(Debug, Clone, Default)]
pub struct Compared {
    pub original: Rates,
    pub fslab: Rates,
    pub bare: Rates,
    pub runs: [Vec<Rates>; 3],
}

/// fslab's rate over another side's for `phase`, round by round: the 95%
/// interval of the geometric mean of the runs' ratios (paired t on logs,
/// `fslab_stats::interval::paired_ratio`). None with fewer than 2 rounds.
pub fn round_ratio(
    fslab: &[Rates],
    other: &[Rates],
    phase: &str,
) -> Option<fslab_stats::interval::RatioInterval> {
    let pairs: Vec<(f64, f64)> = other
        .iter()
        .zip(fslab)
        .filter_map(|(o, f)| Some((*o.get(phase)?, *f.get(phase)?)))
        .collect();
    fslab_stats::interval::paired_ratio(&pairs, 0.95)
}

/// How a phase stands against a target: met (the median ratio reaches
/// it), missed (the median ratio and the whole interval below it), or not
/// resolved by these runs (the median below it, the interval reaching it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Against {
    Met,
    Missed,
    Unresolved,
}

pub fn against(
    median_ratio: f64,
    interval: Option<&fslab_stats::interval::RatioInterval>,
    target: f64,
) -> Against {
    if median_ratio >= target {
        Against::Met
    } else if interval.is_some_and(|i| !i.below(target)) {
        Against::Unresolved
    } else {
        Against::Missed
    }
}

fn fill(argv: &[String], dir: &Path, ini: &Path) -> Vec<String> {
    argv.iter()
        .map(|a| {
            a.replace("{dir}", &dir.to_string_lossy())
                .replace("{ini}", &ini.to_string_lossy())
        })
        .collect()
}

/// Runs `case` `runs` times a side in `base` (sides taking turns as
/// `turn(i, k, n)` orders them); the medians, or the first failure.
pub fn compare(
    case: &Case,
    base: &Path,
    runs: usize,
    turn: impl Fn(usize, usize, usize) -> usize,
) -> Result<Compared, String> {
    let mut sides: Vec<(usize, &Vec<String>)> = vec![(1, &case.fslab), (2, &case.bare)];
    if let Some(o) = &case.original {
        sides.insert(0, (0, o));
    }
    let mut got: [Vec<Rates>; 3] = Default::default();
    let ini = base.join("io500.ini");
    for i in 0..runs {
        for k in 0..sides.len() {
            let (side, argv) = sides[turn(i, k, sides.len())];
            let dir = base.join("run");
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            if let Some(t) = &case.ini {
                std::fs::write(&ini, t.replace("{dir}", &dir.to_string_lossy()))
                    .map_err(|e| format!("{}: {e}", ini.display()))?;
            }
            rustix::fs::sync();
            let out = run(&fill(argv, &dir, &ini), case.ranks, base)?;
            let rates = match (side, case.kind) {
                (0, Kind::Mdtest) => mdtest_rates(&out),
                (0, Kind::Io500) => io500_rates(&out),
                (1, k) => fslab_rates(k, &out),
                (_, k) => bare_rates(k, &out),
            };
            if rates.is_empty() {
                return Err(format!(
                    "{}: no phases in its output: {}",
                    argv.join(" "),
                    out.lines().take(5).collect::<Vec<_>>().join(" | ")
                ));
            }
            got[side].push(rates);
        }
    }
    let _ = std::fs::remove_dir_all(base.join("run"));
    let _ = std::fs::remove_file(&ini);
    Ok(Compared {
        original: medians(&got[0]),
        fslab: medians(&got[1]),
        bare: medians(&got[2]),
        runs: got,
    })
}

/// Prints `c`'s phases (fslab's, in its order: mdtest's rows, IO500's
/// phases then the score), each ratio with its 95% interval over the
/// rounds, and adds the targets missed (the whole interval below) to
/// `missed` and those these runs cannot settle to `open`: at least the
/// original's rate, at least 0.98 of the bare loop's.
pub fn print(
    place: &str,
    case: &Case,
    c: &Compared,
    missed: &mut Vec<String>,
    open: &mut Vec<String>,
) {
    let unit = match case.kind {
        Kind::Mdtest => "ops/s",
        Kind::Io500 => "kIOPS",
    };
    let order: Vec<String> = match case.kind {
        Kind::Io500 => IO500_MD
            .iter()
            .map(|s| s.to_string())
            .chain([SCORE.to_string()])
            .collect(),
        Kind::Mdtest => c.fslab.keys().cloned().collect(),
    };
    for phase in order {
        let Some(&ours) = c.fslab.get(&phase) else {
            continue;
        };
        if ours == 0.0 {
            continue;
        }
        let orig = c.original.get(&phase).copied();
        let bare = c.bare.get(&phase).copied();
        let col = |v: Option<f64>| v.map_or("       n/a".to_string(), |v| format!("{v:10.1}"));
        let orig_i = round_ratio(&c.runs[1], &c.runs[0], &phase);
        let bare_i = round_ratio(&c.runs[1], &c.runs[2], &phase);
        let ratio = |v: Option<f64>, i: &Option<fslab_stats::interval::RatioInterval>| {
            v.map_or("  n/a".to_string(), |v| match i {
                Some(i) => format!("{:5.2} [{:.2}, {:.2}]", ours / v, i.low, i.high),
                None => format!("{:5.2}", ours / v),
            })
        };
        println!(
            "{place:5} {:>2} rank(s)  {:24} {:18} {unit:5}  original {}  fslab {ours:10.1}  bare {}  \
             vs orig {}  vs bare {}",
            case.ranks,
            case.name,
            phase,
            col(orig),
            col(bare),
            ratio(orig, &orig_i),
            ratio(bare, &bare_i),
        );
        let tag = format!("{place} {} rank(s) {} {phase}", case.ranks, case.name);
        for (side, v, i, target) in [
            ("the original", orig, &orig_i, 1.0),
            ("the bare loop", bare, &bare_i, 0.98),
        ] {
            let Some(v) = v else { continue };
            let r = ours / v;
            let said = match i {
                Some(i) => format!(
                    "{tag}: {r:.3} of {side} (rounds' 95% interval {:.3}-{:.3})",
                    i.low, i.high
                ),
                None => format!("{tag}: {r:.3} of {side}"),
            };
            match against(r, i.as_ref(), target) {
                Against::Met => {}
                Against::Missed => missed.push(said),
                Against::Unresolved => open.push(said),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mdtests_summary_and_io500s_results_are_read() {
        let md = "\
SUMMARY rate (in ops/sec): (of 1 iterations)
   Operation                     Max            Min           Mean        Std Dev
   ---------                     ---            ---           ----        -------
   File creation               40489.429      40489.429      40489.429          0.000
   File stat                  167029.879     167029.879     167029.879          0.000
   Tree creation               43690.667      43690.667      43690.667          0.000
-- finished at 11/27/2026 11:02:02 --
";
        let r = mdtest_rates(md);
        assert_eq!(r.len(), 3);
        assert_eq!(r["file stat"], 167029.879);
        let io = "\
[RESULT]    mdtest-easy-write       11.971209 kIOPS : time 2.671 seconds [INVALID]
[RESULT]                 find      718.226495 kIOPS : time 0.056 seconds
[RESULT]       ior-easy-write        0.000000 GiB/s : time 0.000 seconds [INVALID]
[SCORE ] Bandwidth 0.000000 GiB/s : IOPS 58.629551 kiops : TOTAL 0.000000 [INVALID]
";
        let r = io500_rates(io);
        assert_eq!(r.len(), 3);
        assert_eq!(r["find"], 718.226495);
        assert_eq!(r[SCORE], 58.629551);
    }

    #[test]
    fn a_ratio_below_its_target_is_missed_only_when_its_whole_interval_is() {
        let rounds = |v: &[f64]| -> Vec<Rates> {
            v.iter()
                .map(|x| Rates::from([("p".to_string(), *x)]))
                .collect()
        };
        // fslab steadily 10% under: missed.
        let (f, o) = (
            rounds(&[90.0, 91.0, 89.0, 90.5, 90.0]),
            rounds(&[100.0, 101.0, 99.0, 100.0, 100.5]),
        );
        let i = round_ratio(&f, &o, "p").unwrap();
        assert!(i.high < 1.0, "{i:?}");
        assert_eq!(against(0.9, Some(&i), 1.0), Against::Missed);
        // Under at the median but all over the place: not resolved.
        let (f, o) = (
            rounds(&[70.0, 130.0, 95.0, 120.0, 80.0]),
            rounds(&[100.0; 5]),
        );
        let i = round_ratio(&f, &o, "p").unwrap();
        assert_eq!(against(0.95, Some(&i), 1.0), Against::Unresolved);
        // At or over: met, whatever the interval.
        assert_eq!(against(1.0, Some(&i), 1.0), Against::Met);
        // One round: no interval, a miss is a miss.
        assert!(round_ratio(&f[..1], &o[..1], "p").is_none());
        assert_eq!(against(0.95, None, 1.0), Against::Missed);
    }

    #[test]
    fn the_bare_md_score_is_the_geometric_mean_of_the_eight_phases() {
        let mut out = String::new();
        for (i, p) in IO500_MD.iter().enumerate() {
            let items = if i % 2 == 0 { 1000 } else { 4000 };
            out.push_str(
                &Timed {
                    phase: p.to_string(),
                    seconds: 1.0,
                    items,
                }
                .line(),
            );
            out.push('\n');
        }
        let r = bare_rates(Kind::Io500, &out);
        assert!((r[SCORE] - 2.0).abs() < 1e-9, "{r:?}");
        assert_eq!(r["find"], 1.0);
    }
}
