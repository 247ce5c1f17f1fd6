use fslab_model::Pressure;

use super::*;
use crate::evidence::ClassShare;

fn states(r: u64, d: u64, s: u64) -> std::collections::BTreeMap<String, u64> {
    [("R", r), ("D", d), ("S", s)]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
}

fn class(c: &str, n: u64, f: &str) -> ClassShare {
    ClassShare {
        class: c.into(),
        samples: n,
        function: f.into(),
    }
}

/// A create phase of 10 s, 4 workers sampled 100 rounds on 2 CPUs.
fn phase() -> PhaseEvidence {
    PhaseEvidence {
        phase: "create".into(),
        runs: 1,
        wall_s: 10.0,
        cpu_s: 2.0,
        cpus_online: Some(2),
        rounds: 100,
        ..Default::default()
    }
}

#[test]
fn journal_bound_names_the_journal_its_share_and_commit_times() {
    let e = PhaseEvidence {
        states: states(80, 280, 40),
        blocked: 280,
        classes: vec![
            class("journal", 180, "do_get_write_access"),
            class("lock", 100, "path_openat"),
        ],
        commits_ms: vec![200.0, 230.0, 260.0],
        ..phase()
    };
    assert_eq!(
        judge(&e).line(),
        "create: limited by the journal: workers blocked 70% of their time, 64% of blocked samples in journal waits (do_get_write_access), commits 230 ms median (3 commits, 0.3/s)"
    );
}

#[test]
fn cpu_bound_names_the_cpus_used_and_the_queue_for_them() {
    let e = PhaseEvidence {
        states: states(380, 10, 10),
        cpu_s: 19.0,
        pressure: Some(Pressure {
            cpu_some_pct: Some(75.0),
            ..Default::default()
        }),
        ..phase()
    };
    assert_eq!(
        judge(&e).line(),
        "create: limited by CPU: workers running or runnable 95% of their time, on a CPU 48% and waiting for one 48%, they used 1.90 of 2 CPUs, 4.0 workers on 2 CPUs, cpu pressure 75% (machine-wide)"
    );
}

#[test]
fn reclaim_under_the_limit_comes_before_what_the_threads_block_on() {
    let e = PhaseEvidence {
        states: states(150, 200, 50),
        blocked: 200,
        classes: vec![
            class("page writeback", 120, "folio_wait_writeback"),
            class("memory reclaim", 80, "try_to_free_mem_cgroup_pages"),
        ],
        limit_hits: Some(5120.0),
        pressure: Some(Pressure {
            memory_some_pct: Some(46.0),
            ..Default::default()
        }),
        ..phase()
    };
    let l = judge(&e);
    assert_eq!(l.limit, Limit::MemoryReclaim);
    assert_eq!(
        l.evidence,
        "the memory limit hit 5120 times (512/s: held at its limit, every page taken is reclaimed first), memory pressure 46% (machine-wide), 40% of blocked samples in memory reclaim waits (try_to_free_mem_cgroup_pages)"
    );
    // Hit seldom under that pressure: reclaim, named by the pressure, not
    // said to be held at the limit.
    let seldom_held = judge(&PhaseEvidence {
        limit_hits: Some(30.0),
        ..e.clone()
    });
    assert_eq!(seldom_held.limit, Limit::MemoryReclaim);
    assert!(
        seldom_held
            .evidence
            .starts_with("the memory limit hit 30 times (3/s), memory pressure 46%"),
        "{}",
        seldom_held.evidence
    );
    // The same pressure without the limit hit is not reclaim (on a shared
    // machine, another's).
    let other = PhaseEvidence {
        limit_hits: Some(0.0),
        ..e.clone()
    };
    assert_eq!(judge(&other).limit, Limit::PageWriteback);
    // A limit hit now and then, under little pressure, is not either...
    let seldom = PhaseEvidence {
        limit_hits: Some(50.0),
        pressure: Some(Pressure {
            memory_some_pct: Some(5.0),
            ..Default::default()
        }),
        ..e.clone()
    };
    assert_eq!(judge(&seldom).limit, Limit::PageWriteback);
    // ... but a cell held at its limit is, even where the CPUs are busy
    // with other work and the machine's pressure says little.
    let held = PhaseEvidence {
        limit_hits: Some(25_000.0),
        states: states(400, 0, 0),
        cpu_s: 1.2,
        blocked: 0,
        classes: Vec::new(),
        ..seldom
    };
    assert_eq!(
        judge(&held).line(),
        "create: limited by memory reclaim: the memory limit hit 25000 times (2500/s: held at its limit, every page taken is reclaimed first), memory pressure 5% (machine-wide), and waiting for a CPU 97% of their time"
    );
}

#[test]
fn lock_and_device_bound_phases() {
    let lock = PhaseEvidence {
        states: states(90, 260, 50),
        blocked: 260,
        classes: vec![class("lock", 240, "path_openat")],
        ..phase()
    };
    assert_eq!(
        judge(&lock).evidence,
        "workers blocked 65% of their time, 92% of blocked samples in lock waits (path_openat), 4.0 workers"
    );
    let dev = PhaseEvidence {
        states: states(20, 360, 20),
        blocked: 360,
        classes: vec![class("device queue", 300, "submit_bio_wait")],
        util_pct: Some(97.0),
        queue_depth: Some(1.2),
        io_kib: Some(4.0),
        cgroup_pressure: Some(Pressure {
            io_some_pct: Some(88.0),
            ..Default::default()
        }),
        ..phase()
    };
    assert_eq!(
        judge(&dev).line(),
        "create: limited by the device: workers blocked 90% of their time, 83% of blocked samples in device queue waits (submit_bio_wait), device busy 97%, queue depth 1.2, 4 KiB IOs, the cell's io pressure 88%"
    );
}

#[test]
fn asleep_unclassified_too_few_and_no_stacks() {
    let asleep = PhaseEvidence {
        states: states(10, 10, 380),
        ..phase()
    };
    assert_eq!(judge(&asleep).limit, Limit::Sleeping);
    let odd = PhaseEvidence {
        states: states(10, 380, 10),
        blocked: 380,
        classes: vec![class(UNCLASSIFIED, 380, "new_wait_fn")],
        ..phase()
    };
    assert_eq!(
        judge(&odd).line(),
        "create: blocked in unclassified waits: workers blocked 95% of their time, 100% of blocked samples in no known class (innermost new_wait_fn)"
    );
    let short = PhaseEvidence {
        rounds: 3,
        states: states(3, 0, 0),
        ..phase()
    };
    assert_eq!(judge(&short).limit, Limit::Unknown);
    assert!(judge(&short).evidence.contains("too few"));
    // No wait stacks: the CPUs' or the device's saturation, or nothing.
    let busy = PhaseEvidence {
        rounds: 0,
        cpu_s: 18.0,
        ..phase()
    };
    assert_eq!(
        judge(&busy).line(),
        "create: limited by CPU: the workers kept 90% of 2 CPUs busy; no wait-stack samples (the stacks probe did not run)"
    );
    let dev = PhaseEvidence {
        rounds: 0,
        util_pct: Some(99.0),
        ..phase()
    };
    assert_eq!(judge(&dev).limit, Limit::Device);
    let none = PhaseEvidence {
        rounds: 0,
        util_pct: Some(10.0),
        ..phase()
    };
    assert_eq!(
        judge(&none).line(),
        "create: limiter not identified: no wait-stack samples (the stacks probe did not run); the workers: used 0.20 of 2 CPUs; device busy 10%"
    );
}

#[test]
fn waiting_for_cpus_other_work_holds_is_said_beside_not_named() {
    // Two workers on two CPUs, on a CPU 3% of their time, waiting for one
    // 62% (the machine's other work), blocked on the device 35%.
    let e = PhaseEvidence {
        states: states(130, 70, 0),
        cpu_s: 0.6,
        blocked: 70,
        classes: vec![class("device queue", 70, "__iomap_dio_rw")],
        pressure: Some(Pressure {
            cpu_some_pct: Some(78.0),
            ..Default::default()
        }),
        ..phase()
    };
    assert_eq!(
        judge(&e).line(),
        "create: limited by the device: workers blocked 35% of their time, 100% of blocked samples in device queue waits (__iomap_dio_rw), besides, waiting 62% of their time for a CPU other work held (cpu pressure 78% (machine-wide))"
    );
    // Their own queue (more workers than CPUs, holding them) is theirs:
    // the CPU.
    let crowded = PhaseEvidence {
        states: states(520, 280, 0),
        cpu_s: 16.0,
        ..e.clone()
    };
    assert_eq!(judge(&crowded).limit, Limit::Cpu);
    // More workers than CPUs that used 0.13 of them: the CPUs they waited
    // for were held by other work (seen in the suite, a test beside it).
    let beside = PhaseEvidence {
        states: states(244, 140, 16),
        cpu_s: 1.3,
        blocked: 140,
        classes: vec![class("journal", 140, "jbd2_log_wait_commit")],
        ..e
    };
    let j = judge(&beside);
    assert_eq!(j.limit, Limit::Journal, "{}", j.line());
    assert!(
        j.line()
            .contains("besides, waiting 58% of their time for a CPU other work held"),
        "{}",
        j.line()
    );
}
