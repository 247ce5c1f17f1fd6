//! `fslab bisect EXPERIMENT --good K1 --bad K2`: the first kernel of an
//! ordered list on which a metric is bad, found by binary search. Each
//! step runs the experiment's cell on one kernel (in a guest) with enough
//! repetitions for a verdict; the answer names the first bad kernel with
//! the evidence of both its neighbours.
//!
//! The rule: the good and the bad kernel must differ beyond their spread
//! (their repetitions do not overlap); the threshold is midway between
//! their means, and a kernel is good when every repetition falls on the
//! good kernel's side of it, bad when every one falls on the bad side.
//! A kernel whose repetitions straddle it gets more repetitions, up to the
//! limit, and then stops the search as undecided (a bisection that guesses
//! names the wrong kernel).

use crate::spec::{Cell, Experiment};

/// The ordered kernels of a bisection: the experiment's kernel axis, or
/// the Debian releases from good to bad.
#[derive(Debug, Clone, PartialEq)]
pub struct Kernels {
    /// One cell per kernel, in order, each with its kernel.
    pub cells: Vec<Cell>,
    pub good: usize,
    pub bad: usize,
}

/// Why a bisection cannot start (bad input: exit 2).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("bisect: {0}")]
pub struct BisectError(pub String);

impl Kernels {
    /// The list of `exp`: its cells when each runs on a kernel of its own
    /// (a target's `kernel` list), else, for Debian kernels of one version
    /// and flavour, every ABI number from good to bad on the experiment's
    /// one cell. `good` and `bad` name a kernel (`debian:...`, a path, or a
    /// `label`) or a cell.
    pub fn of(exp: &Experiment, good: &str, bad: &str) -> Result<Kernels, BisectError> {
        let find = |cells: &[Cell], k: &str| {
            cells.iter().position(|c| {
                c.label == k
                    || c.kernel
                        .as_ref()
                        .is_some_and(|g| g.name == k || g.label == k)
            })
        };
        let cells: Vec<Cell> = exp.cells.iter().filter(|c| c.in_guest()).cloned().collect();
        if let (Some(g), Some(b)) = (find(&cells, good), find(&cells, bad)) {
            return Kernels::checked(cells, g, b);
        }
        let [base] = exp.cells.as_slice() else {
            return Err(BisectError(format!(
                "{good} and {bad} are not both kernels of the experiment's cells ({}), and it has \
                 {} cells: give it one [[target]] with kernel = [K1, K2, ...] in order",
                exp.cells
                    .iter()
                    .map(|c| c.label.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
                exp.cells.len()
            )));
        };
        let releases = debian_range(good, bad)?;
        let cells = releases
            .iter()
            .map(|r| {
                let mut c = base.clone();
                let mut k = base
                    .kernel
                    .clone()
                    .unwrap_or(crate::spec::guest::GuestKernel {
                        name: String::new(),
                        label: String::new(),
                        append: String::new(),
                        memory_bytes: 1 << 30,
                        cpus: 2,
                    });
                k.name = format!("debian:{r}");
                k.label = r.clone();
                c.label = format!("{} on {r}", base.label);
                c.kernel = Some(k);
                c
            })
            .collect();
        Kernels::checked(cells, 0, releases.len() - 1)
    }

    fn checked(cells: Vec<Cell>, good: usize, bad: usize) -> Result<Kernels, BisectError> {
        if good == bad {
            return Err(BisectError("--good and --bad name the same kernel".into()));
        }
        Ok(Kernels { cells, good, bad })
    }

    /// A kernel's name as the bisection prints it.
    pub fn name(&self, i: usize) -> String {
        self.cells[i]
            .kernel
            .as_ref()
            .map(|k| {
                if k.label == k.name || k.name.ends_with(&k.label) {
                    k.name.clone()
                } else {
                    format!("{} ({})", k.label, k.name)
                }
            })
            .unwrap_or_else(|| self.cells[i].label.clone())
    }
}

/// `debian:V-A-F` to `debian:V-B-F`: every ABI number between.
fn debian_range(good: &str, bad: &str) -> Result<Vec<String>, BisectError> {
    let parse = |k: &str| -> Option<(String, u32, String)> {
        let r = fslab_guest::package::debian_release(k).ok()??;
        let (version, rest) = r.split_once('-')?;
        let (abi, flavour) = rest.split_once('-')?;
        Some((version.to_string(), abi.parse().ok()?, flavour.to_string()))
    };
    let (Some((v1, a, f1)), Some((v2, b, f2))) = (parse(good), parse(bad)) else {
        return Err(BisectError(format!(
            "{good} .. {bad}: name two kernels of the experiment's kernel list, or two Debian \
             kernels of one version and flavour (debian:6.1.0-47-cloud-amd64 .. debian:6.1.0-56-cloud-amd64)"
        )));
    };
    if v1 != v2 || f1 != f2 {
        return Err(BisectError(format!(
            "{good} and {bad} are not one Debian version and flavour: list the kernels in the \
             experiment (kernel = [...]) instead"
        )));
    }
    let range: Vec<u32> = if a <= b {
        (a..=b).collect()
    } else {
        (b..=a).rev().collect()
    };
    Ok(range
        .into_iter()
        .map(|n| format!("{v1}-{n}-{f1}"))
        .collect())
}

/// Which side of the threshold a kernel's repetitions fall on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Good,
    Bad,
    /// Its repetitions straddle the threshold.
    Undecided,
}

/// One kernel measured: its repetitions' values and its side.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub kernel: usize,
    pub values: Vec<f64>,
    pub side: Side,
}

/// Why a bisection stopped without an answer; `E`: why a kernel could not
/// be measured.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Stopped<E> {
    /// The good or the bad kernel could not be measured.
    #[error("{0}")]
    Ends(E),
    /// The good and the bad kernel's repetitions overlap (`n` each).
    #[error(
        "the good and the bad kernel do not differ beyond their spread in {0} repetitions \
         each: nothing to bisect"
    )]
    NoDifference(u32),
    /// A kernel between them could not be measured.
    #[error("{kernel}: {error}")]
    Step { kernel: String, error: E },
    /// A kernel's `n` repetitions fall on both sides of the threshold.
    #[error("{kernel}: its {n} repetitions straddle the threshold {threshold:.4}: undecided")]
    Undecided {
        kernel: String,
        n: u32,
        threshold: f64,
    },
}

/// A bisection's course and answer; `E`: why a kernel could not be
/// measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Bisection<E> {
    /// The kernels measured, in the order they were.
    pub steps: Vec<Step>,
    /// Midway between the good and the bad kernel's means.
    pub threshold: Option<f64>,
    /// The first bad kernel, and its last good neighbour.
    pub first_bad: Option<usize>,
    pub last_good: Option<usize>,
    /// Why the search stopped without an answer.
    pub stopped: Option<Stopped<E>>,
}

/// How many repetitions a kernel gets, and at most.
#[derive(Debug, Clone, Copy)]
pub struct Repetitions {
    pub each: u32,
    pub max: u32,
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

fn range(v: &[f64]) -> (f64, f64) {
    v.iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &x| {
            (lo.min(x), hi.max(x))
        })
}

/// Whether two kernels' repetitions do not overlap.
fn separated(a: &[f64], b: &[f64]) -> bool {
    let ((alo, ahi), (blo, bhi)) = (range(a), range(b));
    ahi < blo || bhi < alo
}

/// Bisects between `k.good` and `k.bad`; `measure(kernel, n)` runs `n`
/// more repetitions on a kernel and gives their values (Err: the kernel
/// could not be measured, which stops the search).
pub fn bisect<E>(
    k: &Kernels,
    reps: Repetitions,
    measure: &mut dyn FnMut(usize, u32) -> Result<Vec<f64>, E>,
) -> Bisection<E> {
    let mut b = Bisection {
        steps: Vec::new(),
        threshold: None,
        first_bad: None,
        last_good: None,
        stopped: None,
    };
    let mut run = |i: usize, n: u32, into: &mut Vec<f64>| -> Result<(), E> {
        into.extend(measure(i, n)?);
        Ok(())
    };
    let (mut good, mut bad) = (Vec::new(), Vec::new());
    let ends = run(k.good, reps.each, &mut good).and_then(|()| run(k.bad, reps.each, &mut bad));
    let mut n = reps.each;
    while ends.is_ok() && !separated(&good, &bad) && n < reps.max {
        let more = run(k.good, 1, &mut good).and_then(|()| run(k.bad, 1, &mut bad));
        if let Err(e) = more {
            b.stopped = Some(Stopped::Ends(e));
            return b;
        }
        n += 1;
    }
    b.steps.push(Step {
        kernel: k.good,
        values: good.clone(),
        side: Side::Good,
    });
    b.steps.push(Step {
        kernel: k.bad,
        values: bad.clone(),
        side: Side::Bad,
    });
    if let Err(e) = ends {
        b.stopped = Some(Stopped::Ends(e));
        return b;
    }
    if !separated(&good, &bad) {
        b.stopped = Some(Stopped::NoDifference(n));
        return b;
    }
    let t = (mean(&good) + mean(&bad)) / 2.0;
    b.threshold = Some(t);
    let good_below = mean(&good) < t;
    let side_of = |v: &[f64]| {
        let on_good = v.iter().filter(|&&x| (x < t) == good_below).count();
        if on_good == v.len() {
            Side::Good
        } else if on_good == 0 {
            Side::Bad
        } else {
            Side::Undecided
        }
    };
    let (mut lo, mut hi) = (k.good, k.bad);
    let dir: isize = if k.bad > k.good { 1 } else { -1 };
    while lo.abs_diff(hi) > 1 {
        let mid = (lo as isize + dir * (lo.abs_diff(hi) / 2) as isize) as usize;
        let mut v = Vec::new();
        let mut r = run(mid, reps.each, &mut v);
        let mut n = reps.each;
        while r.is_ok() && side_of(&v) == Side::Undecided && n < reps.max {
            r = run(mid, 1, &mut v);
            n += 1;
        }
        let side = if r.is_ok() {
            side_of(&v)
        } else {
            Side::Undecided
        };
        b.steps.push(Step {
            kernel: mid,
            values: v,
            side,
        });
        match (side, r) {
            (_, Err(error)) => {
                let kernel = k.name(mid);
                b.stopped = Some(Stopped::Step { kernel, error });
                return b;
            }
            (Side::Good, _) => lo = mid,
            (Side::Bad, _) => hi = mid,
            (Side::Undecided, _) => {
                let kernel = k.name(mid);
                b.stopped = Some(Stopped::Undecided {
                    kernel,
                    n,
                    threshold: t,
                });
                return b;
            }
        }
    }
    b.first_bad = Some(hi);
    b.last_good = Some(lo);
    b
}

/// The bisection's account: every step, then the answer with both
/// neighbours' evidence.
pub fn text<E: std::fmt::Display>(k: &Kernels, metric: &str, b: &Bisection<E>) -> String {
    let fmt = |v: &[f64]| -> String {
        let (lo, hi) = range(v);
        format!(
            "mean {:.4} [{lo:.4}, {hi:.4}] (n={}): {}",
            mean(v),
            v.len(),
            v.iter()
                .map(|x| format!("{x:.4}"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    let mut s = format!(
        "bisect: {metric:?} over {} kernels, {} good, {} bad\n",
        k.cells.len(),
        k.name(k.good),
        k.name(k.bad)
    );
    for (i, st) in b.steps.iter().enumerate() {
        let side = match st.side {
            Side::Good => "good",
            Side::Bad => "bad",
            Side::Undecided => "undecided",
        };
        s.push_str(&format!(
            "  step {}: {} is {side}: {}\n",
            i + 1,
            k.name(st.kernel),
            fmt(&st.values)
        ));
    }
    if let Some(t) = b.threshold {
        s.push_str(&format!(
            "  threshold {t:.4}: midway between the good and the bad kernel's means\n"
        ));
    }
    let values = |i: usize| {
        b.steps
            .iter()
            .rev()
            .find(|st| st.kernel == i)
            .map(|st| fmt(&st.values))
            .unwrap_or_default()
    };
    match (b.first_bad, b.last_good, &b.stopped) {
        (Some(bad), Some(good), _) => s.push_str(&format!(
            "first bad kernel: {}\n  it:              {}\n  its good neighbour {}: {}\n",
            k.name(bad),
            values(bad),
            k.name(good),
            values(good)
        )),
        (_, _, Some(why)) => s.push_str(&format!("no answer: {why}\n")),
        _ => {}
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kernels(n: usize, good: usize, bad: usize) -> Kernels {
        let cells = (0..n)
            .map(|i| Cell {
                index: i as u32,
                label: format!("ext4 on k{i}"),
                fs: None,
                mkfs_options: vec![],
                mount_options: String::new(),
                sysctl: Default::default(),
                workload_args: vec![],
                after_mkfs: vec![],
                kernel: Some(crate::spec::guest::GuestKernel {
                    name: format!("/k/vmlinuz-{i}"),
                    label: format!("k{i}"),
                    append: String::new(),
                    memory_bytes: 1 << 30,
                    cpus: 1,
                }),
                path: None,
            })
            .collect();
        Kernels { cells, good, bad }
    }

    /// What a test's measurement gives.
    type Values = Result<Vec<f64>, &'static str>;

    /// Kernels from `from` on are bad (value 15 against 0), with a little
    /// spread; the kernels measured are counted.
    fn planted(from: usize, seen: &mut Vec<usize>) -> impl FnMut(usize, u32) -> Values + '_ {
        move |k, n| {
            seen.push(k);
            let base = if k >= from { 15.0 } else { 0.0 };
            Ok((0..n).map(|i| base + 0.1 * f64::from(i)).collect())
        }
    }

    #[test]
    fn the_first_bad_kernel_is_found_with_both_neighbours() {
        for planted_at in 1..10 {
            let k = kernels(10, 0, 9);
            let mut seen = Vec::new();
            let b = bisect(
                &k,
                Repetitions { each: 2, max: 4 },
                &mut planted(planted_at, &mut seen),
            );
            assert_eq!(b.first_bad, Some(planted_at), "{b:?}");
            assert_eq!(b.last_good, Some(planted_at - 1));
            assert!(seen.len() <= 2 + 4, "binary, not linear: {seen:?}");
            let t = text(&k, "m", &b);
            assert!(
                t.contains(&format!(
                    "first bad kernel: k{planted_at} (/k/vmlinuz-{planted_at})"
                )),
                "{t}"
            );
            assert!(t.contains("its good neighbour"), "{t}");
        }
    }

    #[test]
    fn a_list_in_reverse_order_is_searched_from_good_towards_bad() {
        // Good is the last kernel: kernels 0..=3 are bad.
        let k = kernels(8, 7, 0);
        let mut seen = Vec::new();
        let mut m = |i: usize, n: u32| -> Values {
            seen.push(i);
            Ok(vec![if i <= 3 { 15.0 } else { 0.0 }; n as usize])
        };
        let b = bisect(&k, Repetitions { each: 2, max: 2 }, &mut m);
        assert_eq!((b.first_bad, b.last_good), (Some(3), Some(4)), "{b:?}");
    }

    #[test]
    fn ends_that_overlap_or_a_straddling_kernel_stop_without_an_answer() {
        let k = kernels(5, 0, 4);
        let mut noise =
            |_: usize, n: u32| -> Values { Ok((0..n).map(|i| f64::from(i % 2)).collect()) };
        let b = bisect(&k, Repetitions { each: 2, max: 3 }, &mut noise);
        assert_eq!(b.first_bad, None);
        assert!(b.stopped.unwrap().to_string().contains("nothing to bisect"));
        let mut straddle = |i: usize, n: u32| -> Values {
            Ok(match i {
                0 => vec![0.0; n as usize],
                4 => vec![10.0; n as usize],
                _ => (0..n).map(|j| if j % 2 == 0 { 1.0 } else { 9.0 }).collect(),
            })
        };
        let b = bisect(&k, Repetitions { each: 2, max: 3 }, &mut straddle);
        assert_eq!(b.first_bad, None);
        assert!(b.stopped.unwrap().to_string().contains("undecided"));
        let mut fails = |i: usize, _: u32| {
            if i == 2 {
                Err("the guest died")
            } else {
                Ok(vec![f64::from(i as u32); 2])
            }
        };
        let b = bisect(&k, Repetitions { each: 2, max: 2 }, &mut fails);
        assert_eq!(
            b.stopped.unwrap().to_string(),
            "k2 (/k/vmlinuz-2): the guest died"
        );
    }

    #[test]
    fn debian_kernels_of_one_flavour_make_a_range() {
        let r = debian_range("debian:6.1.0-47-cloud-amd64", "debian:6.1.0-50-cloud-amd64").unwrap();
        assert_eq!(r.len(), 4);
        assert_eq!(r[1], "6.1.0-48-cloud-amd64");
        assert!(debian_range("debian:6.1.0-47-cloud-amd64", "debian:6.1.0-50-amd64").is_err());
        assert!(debian_range("/k/a", "/k/b").is_err());
    }
}
