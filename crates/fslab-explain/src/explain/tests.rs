use fslab_model::facts::{names, Machine, PhaseMachine};
use fslab_model::{Fact, MachineFacts, PhaseFacts, PhaseResult, ProbeNote};
use fslab_probe::notes::{BlockedStack, Jbd2Commits, Note, PerfSymbol, PerfTop, StacksTop};

use super::*;
use crate::evidence::OpTime;
use crate::limiter::Limit;

fn note<T: Note>(phase: u32, v: &T) -> ProbeNote {
    fslab_probe::probe::typed_note(Some(phase), v)
}

fn commit(logging: u32) -> String {
    format!("1.0: jbd2_run_stats: dev 7,3 tid 2 wait 0 request_delay 0 running 5000 locked 10 flushing 0 logging {logging} handle_count 10 blocks 5 blocks_logged 6")
}

/// A run of one `create` phase blocked in the journal, on a machine whose
/// scheduler is `sched`, at `mhz`, with `crc` share of `__crc32c_le`.
fn run(sched: &str, mhz: f64, crc: f64) -> RunEvidence {
    let stacks = StacksTop {
        rounds: 100,
        stacks: vec![
            BlockedStack {
                thread: "workload".into(),
                samples: 160,
                frames: vec!["jbd2_log_wait_commit".into(), "ext4_sync_file".into()],
                ..Default::default()
            },
            BlockedStack {
                thread: "workload".into(),
                samples: 40,
                frames: vec!["path_openat".into(), "do_filp_open".into()],
                ..Default::default()
            },
            BlockedStack {
                thread: "kthread jbd2/loop3-8".into(),
                samples: 90,
                frames: vec!["jbd2_journal_commit_transaction".into()],
                ..Default::default()
            },
        ],
        workload_blocked: 250,
        worker_states: [
            ("R".to_string(), 50),
            ("D".to_string(), 250),
            ("S".to_string(), 100),
        ]
        .into_iter()
        .collect(),
    };
    let perf = PerfTop(vec![
        PerfSymbol {
            percent: crc,
            samples: (crc * 20.0) as u64,
            dso: "[kernel.kallsyms]".into(),
            kernel: true,
            symbol: "__crc32c_le".into(),
        },
        // Of 2,000 samples a run.
        PerfSymbol {
            percent: 10.0,
            samples: 200,
            dso: "[kernel.kallsyms]".into(),
            kernel: true,
            symbol: "memcpy".into(),
        },
    ]);
    RunEvidence {
        machine: Machine {
            hosts: vec![MachineFacts {
                host: "h".into(),
                facts: vec![
                    Fact::known(names::CPUS_ONLINE, "0-1", "t"),
                    Fact::known(names::SCHEDULER, sched, "t"),
                    Fact::known(names::DEVICE, "loop3", "t"),
                ],
            }],
            phases: vec![PhaseMachine {
                phase_index: 0,
                facts: PhaseFacts {
                    clock_mhz: Some(mhz),
                    clock_source: "sampled /proc/cpuinfo cpu MHz".into(),
                    ..Default::default()
                },
            }],
        },
        phases: vec![PhaseResult::timed("create", 1000, 10.0)],
        notes: vec![
            note(0, &stacks),
            note(0, &Jbd2Commits(vec![commit(190), commit(220), commit(400)])),
            note(0, &perf),
        ],
        metrics: Vec::new(),
        ops: vec![
            OpTime {
                phase: "create".into(),
                op: "creat".into(),
                count: 1000,
                total_s: 3.0,
            },
            OpTime {
                phase: "create".into(),
                op: "fsync".into(),
                count: 1000,
                total_s: 9.0,
            },
        ],
    }
}

fn groups() -> Vec<Group> {
    vec![
        Group {
            label: "ext4".into(),
            runs: vec![run("none", 2000.0, 1.25), run("none", 2000.0, 1.25)],
        },
        Group {
            label: "ext4 deadline".into(),
            runs: vec![run("mq-deadline", 1880.0, 1.65)],
        },
    ]
}

#[test]
fn a_comparison_explained_side_by_side() {
    let e = explain(&groups(), 0, &WaitTable::builtin());
    assert_eq!(e.baseline, "ext4");
    let base = e.side("ext4").unwrap();
    assert!(base.confounders.is_empty() && base.profiles.is_empty());
    // Pooled over its two runs: the journal, its share, the commits.
    assert_eq!(base.limiters[0].limit, Limit::Journal);
    assert_eq!(
        base.limiters[0].line(),
        "create: limited by the journal: workers blocked 62% of their time, 64% of blocked samples in journal waits (jbd2_log_wait_commit), commits 230 ms median (6 commits, 0.3/s)"
    );
    let other = e.side("ext4 deadline").unwrap();
    assert_eq!(other.confounders.len(), 1);
    assert_eq!(other.confounders[0].name, names::SCHEDULER);
    let run_clock = other
        .clocks
        .iter()
        .find(|c| c.clock.phase.is_none())
        .unwrap();
    assert!((run_clock.moved_pct.unwrap() + 6.0).abs() < 1e-9);
    assert_eq!(other.profiles[0].symbols[0].symbol, "__crc32c_le");
    // The samples each side's shares are of: the baseline's two runs'.
    assert_eq!(
        (other.profiles[0].base_samples, other.profiles[0].samples),
        (Some(4000), Some(2000))
    );
    assert_eq!(other.shares[0].ops[0].op, "fsync");
    assert_eq!(other.shares[0].ops[0].share_pct, 75.0);
}

#[test]
fn a_clock_that_moved_as_much_confounds_else_the_differing_facts_come_first() {
    let e = explain(&groups(), 0, &WaitTable::builtin());
    // The clock moved -6%: a -5% rate is the clock's.
    assert_eq!(
        e.caveat("ext4 deadline", "create rate (ops/s)", Some(-5.0)),
        Some(("confounded: the CPU clock moved -6.0%".to_string(), true))
    );
    // A -30% rate is more than the clock: the scheduler is named first.
    assert_eq!(
        e.caveat("ext4 deadline", "create rate (ops/s)", Some(-30.0)),
        Some(("machines differ: device scheduler".to_string(), false))
    );
    // A tool's metric of no phase: the clock over the run.
    assert_eq!(
        e.caveat("ext4 deadline", "fsmark Files/sec (files/s)", Some(4.0))
            .map(|c| c.1),
        Some(true)
    );
    assert_eq!(e.caveat("ext4", "create rate (ops/s)", Some(-5.0)), None);
}

#[test]
fn runs_without_facts_or_probes_are_said_to_be_so() {
    let bare = |label: &str| Group {
        label: label.into(),
        runs: vec![RunEvidence {
            phases: vec![PhaseResult::timed("create", 10, 1.0)],
            ..Default::default()
        }],
    };
    let e = explain(&[bare("a"), bare("b")], 0, &WaitTable::builtin());
    assert!(e.sides.iter().all(|s| !s.has_facts && s.clocks.is_empty()));
    assert_eq!(e.sides[1].limiters[0].limit, Limit::Unknown);
    assert_eq!(e.caveat("b", "create rate (ops/s)", Some(-50.0)), None);
}

#[test]
fn a_phase_a_program_reported_gets_no_limiter_of_its_own() {
    let mut g = groups();
    for r in &mut g[0].runs {
        r.phases.push(PhaseResult {
            reported: true,
            ..PhaseResult::timed("job1", 500, 9.0)
        });
    }
    let e = explain(&g, 0, &WaitTable::builtin());
    let base = e.side("ext4").unwrap();
    // The timed phase, whose probes ran, is explained; fio's job is not
    // said to lack wait stacks it could never have had.
    let phases: Vec<&str> = base.limiters.iter().map(|l| l.phase.as_str()).collect();
    assert_eq!(phases, ["create"]);
}
