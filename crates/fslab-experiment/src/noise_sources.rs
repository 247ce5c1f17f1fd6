//! What went with an A/A experiment's noise: for each headline metric, the
//! share of its run-to-run variance (of the logs, both copies together:
//! they are one cell) that each thing the runs recorded beside it accounts
//! for (`fslab_stats::calibrate::variance_share`, r²): other processes'
//! CPU, the hypervisor's steal, the machine's IO wait (each from the run's
//! own `cpu` probe, over the metric's phase) and the repetition's place in
//! the order (a warm-up). It describes these runs; it does not prove a
//! cause. Measured on this machine (docs/noise.md): a niced compiler
//! beside fsmark accounted for 86% of its create rate's variance; with the
//! image on the host's disk, IO wait (journal checkpoints flushed through
//! the loop device) for 77%.

use fslab_model::table::{Align, Table};
use fslab_probe::notes::CpuSummary;
use fslab_stats::calibrate::variance_share;

use crate::outcome::{ExperimentOutcome, RepOutcome};
use crate::summary;

/// Other processes' CPU, in % of one CPU, above which a run's timings are
/// said to include their interference.
pub const OTHER_LOAD_PCT: f64 = 20.0;

/// IO wait (% of one CPU) a run must reach for IO wait to be named.
const IOWAIT_PCT: f64 = 5.0;

/// The share of the variance at which a reading is named.
const HALF: f64 = 0.5;

/// What one run recorded beside its numbers, over one phase.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Beside {
    /// CPU of every process but the workload and the filesystem's kernel
    /// threads (% of one CPU).
    pub other_pct: f64,
    pub steal_pct: f64,
    pub iowait_pct: f64,
    /// The repetition (1 first).
    pub order: f64,
}

impl Beside {
    const NAMES: [&'static str; 4] = [
        "other processes' CPU",
        "steal",
        "IO wait",
        "order (warm-up)",
    ];

    fn get(&self, i: usize) -> f64 {
        [self.other_pct, self.steal_pct, self.iowait_pct, self.order][i]
    }

    /// What run `r` recorded over `phase` (None without its cpu probe).
    pub fn of(r: &RepOutcome, phase: &str) -> Option<Beside> {
        let cpu: CpuSummary = r.evidence.note(phase)?;
        let w = cpu.workload.clone().unwrap_or_default();
        let secs = r
            .phases
            .iter()
            .find(|p| p.phase == phase)
            .map(|p| p.elapsed_s)
            .filter(|s| *s > 0.0)?;
        // Runs recorded before the probe kept `others_pct`: from the
        // busiest eight kernel threads it kept.
        let kthreads: f64 = cpu.fs_kthreads.iter().map(|t| t.cpu_s).sum::<f64>() / secs * 100.0;
        let m = &cpu.mean;
        let other = cpu
            .others_pct
            .unwrap_or((m.busy_pct() - w.usr_pct - w.sys_pct - kthreads).max(0.0));
        Some(Beside {
            other_pct: other,
            steal_pct: m.steal_pct,
            iowait_pct: m.iowait_pct,
            order: f64::from(r.repetition),
        })
    }
}

/// The phase a metric belongs to: the longest of the run's phase names
/// that starts it (`create rate (ops/s)`: `create`).
fn phase_of<'a>(metric: &str, r: &'a RepOutcome) -> Option<&'a str> {
    r.phases
        .iter()
        .map(|p| p.phase.as_str())
        .filter(|p| {
            metric
                .strip_prefix(p)
                .is_some_and(|rest| rest.starts_with(' '))
        })
        .max_by_key(|p| p.len())
}

/// One headline metric's runs: (log value, what was beside it).
fn pairs(
    outcome: &ExperimentOutcome,
    samples: &[summary::RepetitionValue],
    metric: &str,
) -> Vec<(f64, Beside)> {
    let mut v = Vec::new();
    for r in outcome.runs.iter().filter(|r| r.ok) {
        let Some(s) = samples
            .iter()
            .find(|s| s.cell == r.cell && s.repetition == r.repetition && s.metric == metric)
        else {
            continue;
        };
        let Some(b) = phase_of(metric, r).and_then(|p| Beside::of(r, p)) else {
            continue;
        };
        if s.value > 0.0 {
            v.push((s.value.ln(), b));
        }
    }
    v
}

/// The block `fslab run --calibrate` prints under its table: each headline
/// metric's variance shares, and a line when other processes were busy
/// (empty when no run has its cpu probe).
pub fn render(outcome: &ExperimentOutcome) -> String {
    let samples = summary::family(outcome);
    let headlines: Vec<String> = {
        let mut h: Vec<String> = Vec::new();
        for s in samples.iter().filter(|s| s.headline) {
            if !h.contains(&s.metric) {
                h.push(s.metric.clone());
            }
        }
        h
    };
    let mut cols = vec![("metric", Align::Left), ("runs", Align::Right)];
    cols.extend(Beside::NAMES.iter().map(|n| (*n, Align::Right)));
    let mut t = Table::new(&cols);
    let mut busiest: Option<f64> = None;
    // The largest share IO wait and the order took in any row.
    let (mut io, mut order) = (0.0f64, 0.0f64);
    let mut rows = 0;
    for m in &headlines {
        let p = pairs(outcome, &samples, m);
        if p.len() < 3 {
            continue;
        }
        let y: Vec<f64> = p.iter().map(|(l, _)| *l).collect();
        let mut row = vec![m.clone(), p.len().to_string()];
        for i in 0..Beside::NAMES.len() {
            let x: Vec<f64> = p.iter().map(|(_, b)| b.get(i)).collect();
            let (lo, hi) = x
                .iter()
                .fold((f64::MAX, f64::MIN), |(a, b), v| (a.min(*v), b.max(*v)));
            let s = variance_share(&x, &y);
            match (i, s) {
                (2, Some(v)) if hi >= IOWAIT_PCT => io = io.max(v),
                (3, Some(v)) => order = order.max(v),
                _ => {}
            }
            let share = s
                .map(|s| format!("{:.0}%", 100.0 * s))
                .unwrap_or_else(|| "-".into());
            row.push(if i == 3 {
                share
            } else {
                format!("{share} ({lo:.1}-{hi:.1}%)")
            });
            if i == 0 {
                busiest = Some(busiest.map_or(hi, |b: f64| b.max(hi)));
            }
        }
        t.row(row);
        rows += 1;
    }
    if rows == 0 {
        return String::new();
    }
    let mut out = format!(
        "what went with the noise: the share of each headline's run-to-run variance (logs, \
         both copies) that each reading of the runs' own cpu probe accounts for (r\u{b2}; its \
         range over the runs, % of one CPU):\n{}",
        t.render()
    );
    if let Some(b) = busiest.filter(|b| *b > OTHER_LOAD_PCT) {
        out.push_str(&format!(
            "other processes used up to {b:.0}% of a CPU during these runs: their load is part of \
             this noise (measure on a quiet machine, or keep it as the machine's)\n"
        ));
    }
    if io >= HALF {
        out.push_str(
            "IO wait went with the noise: on an image, the filesystem's flushes reach the host's \
             disk through the loop device; an image that fits in memory is steadier on /dev/shm \
             (image_dir, docs/noise.md)\n",
        );
    }
    if order >= HALF {
        out.push_str(
            "the order went with the noise: the first repetitions differ from the rest (a \
             warm-up); copy A runs first in each pair, so a warm-up widens \u{3b4}\n",
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::Evidence;
    use fslab_model::PhaseResult;
    use fslab_probe::notes::{CpuShares, Note, ProcessCpu};

    /// A run of fsmark's create phase at `rate` files/s, with `other` % of
    /// a CPU used by other processes.
    fn run(cell: u32, repetition: u32, rate: f64, other: f64) -> RepOutcome {
        waiting(cell, repetition, rate, other, 2.0)
    }

    fn waiting(cell: u32, repetition: u32, rate: f64, other: f64, iowait: f64) -> RepOutcome {
        let cpu = CpuSummary {
            mean: CpuShares {
                usr_pct: 10.0,
                sys_pct: 150.0 + other,
                steal_pct: 0.5,
                iowait_pct: iowait,
                ..CpuShares::default()
            },
            workload: Some(ProcessCpu {
                usr_pct: 10.0,
                sys_pct: 150.0,
                ..ProcessCpu::default()
            }),
            fs_kthreads: Vec::new(),
            others_pct: None,
        };
        RepOutcome {
            cell,
            repetition,
            ok: true,
            run_id: Some(i64::from(repetition * 2 + cell)),
            phases: vec![PhaseResult::timed("create", (rate * 3.0) as u64, 3.0)],
            error: None,
            metrics: Vec::new(),
            unmount_s: None,
            remount_s: None,
            image_extents: None,
            output: String::new(),
            evidence: Evidence {
                notes: vec![(
                    "create".into(),
                    CpuSummary::PROBE.into(),
                    CpuSummary::KEY.into(),
                    cpu.to_value(),
                )],
                series: Vec::new(),
            },
            guest_accel: None,
        }
    }

    fn outcome(runs: Vec<RepOutcome>) -> ExperimentOutcome {
        ExperimentOutcome {
            experiment_id: 1,
            runs,
            interrupted: false,
            teardown_problems: Vec::new(),
            resolution: None,
            findings: Vec::new(),
        }
    }

    #[test]
    fn a_busy_neighbour_takes_the_noise_and_is_named() {
        // Slower by 0.3% for each % of a CPU others used, nothing else.
        let others = [0.0, 4.0, 2.0, 100.0, 3.0, 95.0, 1.0, 105.0];
        let runs = others
            .iter()
            .enumerate()
            .map(|(i, o)| {
                run(
                    (i % 2) as u32,
                    (i / 2 + 1) as u32,
                    70_000.0 * (1.0 - 0.003 * o),
                    *o,
                )
            })
            .collect();
        let text = render(&outcome(runs));
        let row = text
            .lines()
            .find(|l| l.starts_with("create rate"))
            .unwrap_or_else(|| panic!("no create rate row:\n{text}"));
        let cells: Vec<&str> = row.split_whitespace().collect();
        assert!(row.contains("100% (0.0-105.0%)"), "{row}");
        assert!(cells.contains(&"8"), "{row}");
        assert!(
            text.contains("other processes used up to 105% of a CPU"),
            "{text}"
        );
        assert!(!text.contains("IO wait went"), "{text}");
    }

    #[test]
    fn io_wait_and_a_warm_up_are_named_when_they_take_the_noise() {
        // Slow runs waited on IO (a checkpoint's flush); the rest did not.
        let waits = [1.0, 1.0, 29.0, 1.0, 1.0, 12.0, 1.0, 1.0];
        let runs = waits
            .iter()
            .enumerate()
            .map(|(i, w)| {
                waiting(
                    (i % 2) as u32,
                    (i / 2 + 1) as u32,
                    70_000.0 / (1.0 + w / 100.0),
                    3.0,
                    *w,
                )
            })
            .collect();
        let text = render(&outcome(runs));
        assert!(text.contains("IO wait went with the noise"), "{text}");
        assert!(!text.contains("the order went"), "{text}");
        // The first pair slow, the rest alike.
        let runs = (0..8)
            .map(|i| {
                run(
                    i % 2,
                    i / 2 + 1,
                    if i < 2 {
                        62_000.0
                    } else {
                        72_000.0 + f64::from(i % 3) * 100.0
                    },
                    3.0,
                )
            })
            .collect();
        let text = render(&outcome(runs));
        assert!(text.contains("the order went with the noise"), "{text}");
        assert!(!text.contains("IO wait went"), "{text}");
    }

    #[test]
    fn a_quiet_machine_names_no_neighbour_and_no_run_without_a_probe_prints_nothing() {
        let runs: Vec<RepOutcome> = (0..6)
            .map(|i| {
                run(
                    i % 2,
                    i / 2 + 1,
                    70_000.0 + f64::from(i * 37 % 5) * 300.0,
                    3.0,
                )
            })
            .collect();
        let text = render(&outcome(runs.clone()));
        assert!(text.contains("create rate"), "{text}");
        assert!(!text.contains("other processes used"), "{text}");
        let bare: Vec<RepOutcome> = runs
            .into_iter()
            .map(|mut r| {
                r.evidence = Evidence::default();
                r
            })
            .collect();
        assert_eq!(render(&outcome(bare)), "");
    }
}
