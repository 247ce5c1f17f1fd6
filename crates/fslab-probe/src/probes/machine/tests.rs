use super::super::bed::*;
use super::*;
use crate::notes::Note;

fn psi(some: u64, full: u64) -> String {
    format!(
        "some avg10=0.00 avg60=0.00 avg300=0.00 total={some}\nfull avg10=0.00 avg60=0.00 avg300=0.00 total={full}\n"
    )
}

fn set_psi(b: &Bed, dir: &str, suffix: &str, cpu: u64, io: (u64, u64), mem: (u64, u64)) {
    b.source.set(format!("{dir}/cpu{suffix}"), psi(cpu, 0));
    b.source.set(format!("{dir}/io{suffix}"), psi(io.0, io.1));
    b.source
        .set(format!("{dir}/memory{suffix}"), psi(mem.0, mem.1));
}

#[test]
fn pressure_page_cache_and_sampled_clock_of_a_phase() {
    let b = Bed::new();
    b.source.set(
        "/proc/meminfo",
        "MemTotal: 100 kB\nCached:  2097152 kB\nDirty:   1024 kB\nWriteback: 0 kB\n",
    );
    b.source.set(
        "/proc/cpuinfo",
        "processor : 0\ncpu MHz : 2000.0\nprocessor : 1\ncpu MHz : 3000.0\n",
    );
    set_psi(
        &b,
        "/proc/pressure",
        "",
        1_000_000,
        (0, 0),
        (5_000_000, 1_000_000),
    );
    let mut p = Machine::default();
    p.phase_start(&b.ctx());
    b.source.set(
        "/proc/cpuinfo",
        "processor : 0\ncpu MHz : 1000.0\nprocessor : 1\ncpu MHz : 1000.0\n",
    );
    p.sample(&b.ctx(), 1.0);
    // Over 2 s: cpu stalled 0.5 s (25%), io some 1.6 s (80%) and full 1 s,
    // memory not at all more.
    set_psi(
        &b,
        "/proc/pressure",
        "",
        1_500_000,
        (1_600_000, 1_000_000),
        (5_000_000, 1_000_000),
    );
    let out = p.phase_end(&b.ctx(), 2.0);
    let f = PhaseFacts::from_value(&out.notes[0].value);
    assert_eq!(out.notes[0].phase_index, Some(2));
    assert_eq!(f.page_cache_mib, Some(2048.0));
    assert_eq!(f.dirty_mib, Some(1.0));
    let pr = f.pressure.unwrap();
    assert_eq!(pr.cpu_some_pct, Some(25.0));
    assert_eq!(pr.io_some_pct, Some(80.0));
    assert_eq!(pr.io_full_pct, Some(50.0));
    assert_eq!(pr.memory_some_pct, Some(0.0));
    // Samples: 2500 at the start, 1000 during and at the end.
    assert!((f.clock_mhz.unwrap() - 1500.0).abs() < 1e-9, "{f:?}");
    assert!(
        f.clock_source
            .starts_with("sampled /proc/cpuinfo cpu MHz (3 samples; no cycle counters"),
        "{}",
        f.clock_source
    );
    // Not in a cgroup of its own: said why, no numbers.
    assert_eq!(f.cgroup_pressure, None);
    assert!(
        f.cgroup_pressure_source.contains("no cgroup v2"),
        "{}",
        f.cgroup_pressure_source
    );
}

#[test]
fn cycles_over_busy_time_make_the_clock_where_counters_exist() {
    let b = Bed::new();
    let hz = procfs::user_hz() as u64;
    b.source.set("/proc/stat", "cpu  0 0 0 0 0 0 0 0\n");
    // 1e9 cycles at the start, 4e9 at the end: 3e9 cycles in 1.5 s of busy
    // CPU time (user 1 s, system 0.5 s) is 2000 MHz.
    b.source.set_cycles(vec![1_000_000_000, 4_000_000_000]);
    let mut p = Machine::default();
    p.phase_start(&b.ctx());
    b.source.set(
        "/proc/stat",
        format!("cpu  {} 0 {} 999 0 0 0 0\n", hz, hz / 2),
    );
    let f = PhaseFacts::from_value(&p.phase_end(&b.ctx(), 3.0).notes[0].value);
    assert!((f.clock_mhz.unwrap() - 2000.0).abs() < 1e-6, "{f:?}");
    assert!(
        f.clock_source.starts_with("perf cycles"),
        "{}",
        f.clock_source
    );
}

#[test]
fn no_counter_and_no_frequency_is_an_unknown_clock_that_says_why() {
    let b = Bed::new();
    let mut p = Machine::default();
    p.phase_start(&b.ctx());
    let f = PhaseFacts::from_value(&p.phase_end(&b.ctx(), 1.0).notes[0].value);
    assert_eq!(f.clock_mhz, None);
    assert!(f.clock_source.contains("no cycle counters") && f.clock_source.contains("no cpufreq"));
    assert_eq!(f.pressure, None);
    assert_eq!(f.page_cache_mib, None);
}

#[test]
fn a_workload_in_a_v2_cgroup_gets_its_cgroups_pressure() {
    let b = Bed::new();
    b.source.set(
        "/proc/4242/cgroup",
        "4:memory:/fslab/cell\n0::/fslab.slice/cell\n",
    );
    b.source.set(
        "/proc/self/mountinfo",
        "40 22 0:30 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n",
    );
    let dir = "/sys/fs/cgroup/unified/fslab.slice/cell";
    set_psi(&b, dir, ".pressure", 0, (0, 0), (0, 0));
    let mut p = Machine::default();
    p.phase_start(&b.ctx());
    set_psi(&b, dir, ".pressure", 0, (0, 0), (400_000, 100_000));
    let f = PhaseFacts::from_value(&p.phase_end(&b.ctx(), 1.0).notes[0].value);
    let cg = f.cgroup_pressure.unwrap();
    assert_eq!(
        (cg.memory_some_pct, cg.memory_full_pct),
        (Some(40.0), Some(10.0))
    );
    assert_eq!(f.cgroup_pressure_source, dir);
}

#[test]
fn the_cpufreq_frequency_is_preferred_to_cpuinfos() {
    let b = Bed::new();
    b.source.set(
        "/sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq",
        "1800000\n",
    );
    b.source.set(
        "/sys/devices/system/cpu/cpu1/cpufreq/scaling_cur_freq",
        "2200000\n",
    );
    b.source.set("/sys/devices/system/cpu/cpufreq/policy0", "");
    b.source.set("/proc/cpuinfo", "cpu MHz : 9999\n");
    assert_eq!(
        sampled_mhz(&b.source),
        Some((2000.0, "cpufreq scaling_cur_freq"))
    );
}
