//! `cpu`: three figures, each labelled, as % of one CPU. The workload's
//! processes (usr and sys of its threads and reaped children, from
//! /proc/PID/stat; a program a command workload started, with its
//! descendants, counts as the workload's); the device's kernel threads ([`Ctx::kthreads`]);
//! and the machine as a whole (/proc/stat: other processes' load included).

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use crate::names;
use crate::notes::Note;
use crate::notes::{CpuShares, CpuSummary, ProcessCpu, ThreadCpu};
use crate::plugin::{Chart, Described, Evidence, Plugin, Series};
use crate::probe::{Ctx, PhaseOut, Probe, Reading};
use crate::procfs::{self, CpuTicks, ProcessTicks};

#[derive(Default)]
pub struct Cpu {
    machine_prev: Option<CpuTicks>,
    /// (column, percent × seconds) of the phase's samples.
    machine_phase: Vec<(&'static str, f64)>,
    kthread_prev: HashMap<u32, (String, u64)>,
    kthread_phase: BTreeMap<String, u64>,
    process_prev: Option<ProcessTicks>,
    process_phase: ProcessTicks,
}

fn pct(ticks: u64, dt: f64) -> f64 {
    ticks as f64 / procfs::user_hz() / dt * 100.0
}

impl Cpu {
    fn machine(ctx: &Ctx) -> Option<CpuTicks> {
        procfs::parse_cpu(&ctx.source.read(Path::new("/proc/stat"))?)
    }

    /// The workload's processes' ticks (each with its reaped children's:
    /// a program that ends moves its ticks into its parent's, so the sum
    /// over the processes alive now only grows); None when the workload's
    /// own process cannot be read.
    fn process(ctx: &Ctx) -> Option<ProcessTicks> {
        let read = |pid: u32| {
            procfs::parse_process_ticks(
                &ctx.source
                    .read(&Path::new("/proc").join(pid.to_string()).join("stat"))?,
            )
        };
        let mut total = read(ctx.pid)?;
        for t in ctx
            .processes
            .iter()
            .filter(|p| **p != ctx.pid)
            .filter_map(|p| read(*p))
        {
            total.usr += t.usr;
            total.sys += t.sys;
        }
        Some(total)
    }

    /// The device's kernel threads' ticks since the last reading, in total.
    fn kthreads(&mut self, ctx: &Ctx) -> u64 {
        let mut total = 0;
        let mut now = HashMap::new();
        for (pid, comm) in ctx.kthreads {
            let pid = *pid;
            let stat = ctx
                .source
                .read(&Path::new("/proc").join(pid.to_string()).join("stat"));
            let Some((_, _, ticks)) = stat.as_deref().and_then(procfs::parse_pid_stat) else {
                continue;
            };
            if let Some((_, before)) = self.kthread_prev.get(&pid) {
                let d = ticks.saturating_sub(*before);
                total += d;
                *self.kthread_phase.entry(comm.clone()).or_insert(0) += d;
            }
            now.insert(pid, (comm.clone(), ticks));
        }
        self.kthread_prev = now;
        total
    }
}

impl Probe for Cpu {
    fn phase_start(&mut self, ctx: &Ctx) -> Vec<Reading> {
        self.machine_prev = Cpu::machine(ctx);
        self.machine_phase.clear();
        self.kthread_prev.clear();
        self.kthread_phase.clear();
        self.kthreads(ctx);
        self.process_prev = Cpu::process(ctx);
        self.process_phase = ProcessTicks::default();
        Vec::new()
    }

    fn sample(&mut self, ctx: &Ctx, dt: f64) -> Vec<Reading> {
        let mut out = Vec::new();
        if let Some(cur) = Cpu::machine(ctx) {
            if let Some(prev) = self.machine_prev {
                for (m, v) in cur.percent_since(&prev, dt) {
                    self.machine_phase.push((m, v * dt));
                    out.push(Reading::now(m, v));
                }
            }
            self.machine_prev = Some(cur);
        }
        let k = self.kthreads(ctx);
        out.push(Reading::now(names::FS_KTHREADS_PCT, pct(k, dt)));
        if let Some(now) = Cpu::process(ctx) {
            if let Some(prev) = self.process_prev {
                let usr = now.usr.saturating_sub(prev.usr);
                let sys = now.sys.saturating_sub(prev.sys);
                self.process_phase.usr += usr;
                self.process_phase.sys += sys;
                out.push(Reading::now(names::WORKLOAD_USR_PCT, pct(usr, dt)));
                out.push(Reading::now(names::WORKLOAD_SYS_PCT, pct(sys, dt)));
            }
            self.process_prev = Some(now);
        }
        out
    }

    fn phase_end(&mut self, ctx: &Ctx, secs: f64) -> PhaseOut {
        let mut threads: Vec<(&String, &u64)> =
            self.kthread_phase.iter().filter(|(_, t)| **t > 0).collect();
        threads.sort_by(|a, b| b.1.cmp(a.1));
        let s = |t: u64| t as f64 / procfs::user_hz();
        let mean = CpuShares::from_samples(self.machine_phase.iter().copied(), secs);
        let workload = self.process_prev.map(|_| ProcessCpu {
            usr_s: s(self.process_phase.usr),
            sys_s: s(self.process_phase.sys),
            usr_pct: s(self.process_phase.usr) / secs * 100.0,
            sys_pct: s(self.process_phase.sys) / secs * 100.0,
        });
        let kthreads_pct = s(self.kthread_phase.values().sum()) / secs * 100.0;
        let others_pct = workload
            .as_ref()
            .filter(|_| secs > 0.0)
            .map(|w| (mean.busy_pct() - w.usr_pct - w.sys_pct - kthreads_pct).max(0.0));
        let summary = CpuSummary {
            mean,
            workload,
            others_pct,
            fs_kthreads: threads
                .iter()
                .take(8)
                .map(|(c, t)| ThreadCpu {
                    thread: (*c).clone(),
                    cpu_s: s(**t),
                })
                .collect(),
        };
        PhaseOut {
            notes: vec![ctx.phase_note(&summary)],
            metrics: Vec::new(),
        }
    }
}

/// The CPU chart: the workload's, the machine's and the device's threads'.
const CPU_CHART: Chart = Chart {
    title: "CPU",
    y_label: "% of one CPU",
};

/// The `cpu` probe.
pub struct CpuPlugin;

impl Plugin for CpuPlugin {
    fn name(&self) -> &'static str {
        "cpu"
    }

    fn make(&self) -> Box<dyn Probe> {
        Box::<Cpu>::default()
    }

    fn series(&self) -> Vec<Series> {
        let pct = |m: &str, label: &str| Series::new(m, "% of one CPU", label);
        vec![
            pct(names::WORKLOAD_USR_PCT, "workload usr").on(CPU_CHART),
            pct(names::WORKLOAD_SYS_PCT, "workload sys").on(CPU_CHART),
            pct(names::USR_PCT, "machine usr").on(CPU_CHART),
            pct(names::SYS_PCT, "machine sys").on(CPU_CHART),
            pct(names::IOWAIT_PCT, "machine iowait").on(CPU_CHART),
            pct(names::FS_KTHREADS_PCT, "fs threads").on(CPU_CHART),
            pct(names::IRQ_PCT, "machine irq"),
            pct(names::SOFTIRQ_PCT, "machine softirq"),
            pct(names::STEAL_PCT, "machine steal"),
            pct(names::IDLE_PCT, "machine idle"),
        ]
    }

    /// The workload's CPU, the machine's, and the device's busiest threads.
    fn describe_phase(&self, phase: &Described) -> Vec<String> {
        let Some(c) = phase.note::<CpuSummary>() else {
            return Vec::new();
        };
        let mut lines = Vec::new();
        if let Some(w) = &c.workload {
            lines.push(format!(
                "cpu, workload: usr {:.0}%, sys {:.0}% of one CPU ({:.2} s usr, {:.2} s sys)",
                w.usr_pct, w.sys_pct, w.usr_s, w.sys_s
            ));
        }
        let m = &c.mean;
        let mut line = format!(
            "cpu, machine: {:.0}% busy (usr {:.0}%, sys {:.0}%, iowait {:.0}%, steal {:.0}%) of one CPU",
            m.busy_pct(),
            m.usr_pct,
            m.sys_pct,
            m.iowait_pct,
            m.steal_pct
        );
        let top: Vec<String> = c
            .fs_kthreads
            .iter()
            .take(3)
            .map(|t| format!("{} {:.2}s", t.thread, t.cpu_s))
            .collect();
        if !top.is_empty() {
            line.push_str(&format!("; fs threads: {}", top.join(", ")));
        }
        if let Some(o) = c.others_pct {
            line.push_str(&format!("; other processes {o:.0}%"));
        }
        lines.push(line);
        lines
    }

    /// Its summary: what an A/A calibration sets beside each run's noise
    /// (other processes' CPU, steal, IO wait).
    fn evidence(&self) -> Evidence {
        Evidence {
            notes: vec![CpuSummary::KEY],
            series: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::bed::*;
    use super::*;
    use crate::notes::Note;

    #[test]
    fn the_workload_the_devices_threads_and_the_machine_apart() {
        let hz = procfs::user_hz();
        let b = Bed::new();
        let t = |x: f64| (x * hz) as u64;
        b.source.set(
            "/proc/stat",
            format!("cpu  {} 0 {} {} 0 0 0 0 0 0\n", t(10.0), t(5.0), t(100.0)),
        );
        b.source.set(
            "/proc/4242/stat",
            pid_stat(4242, "fslab", 'S', 1, t(1.0), t(2.0)),
        );
        b.source.set(
            "/proc/10/stat",
            pid_stat(10, "jbd2/loop3-8", 'S', 2, 0, t(1.0)),
        );
        b.source.set(
            "/proc/12/stat",
            pid_stat(12, "jbd2/sda1-8", 'S', 2, 0, t(1.0)),
        );
        let mut p = Cpu::default();
        let ctx = b.ctx();
        assert!(p.phase_start(&ctx).is_empty());
        // Two seconds: the machine is busy (a burner: 1.5 CPUs of usr), the
        // workload used 0.2 s usr and 0.4 s sys, jbd2 0.1 s; sda1's jbd2 0.5 s.
        b.source.set(
            "/proc/stat",
            format!("cpu  {} 0 {} {} 0 0 0 0 0 0\n", t(13.0), t(5.6), t(100.4)),
        );
        b.source.set(
            "/proc/4242/stat",
            pid_stat(4242, "fslab", 'S', 1, t(1.2), t(2.4)),
        );
        b.source.set(
            "/proc/10/stat",
            pid_stat(10, "jbd2/loop3-8", 'S', 2, 0, t(1.1)),
        );
        b.source.set(
            "/proc/12/stat",
            pid_stat(12, "jbd2/sda1-8", 'S', 2, 0, t(1.5)),
        );
        let s = p.sample(&ctx, 2.0);
        let close = |a: f64, b: f64| (a - b).abs() < 1e-6;
        assert!(close(value(&s, names::USR_PCT), 150.0));
        assert!(close(value(&s, names::SYS_PCT), 30.0));
        assert!(close(value(&s, names::WORKLOAD_USR_PCT), 10.0));
        assert!(close(value(&s, names::WORKLOAD_SYS_PCT), 20.0));
        assert!(close(value(&s, names::FS_KTHREADS_PCT), 5.0));
        let out = p.phase_end(&ctx, 2.0);
        let c = CpuSummary::from_value(&out.notes[0].value);
        assert_eq!(out.notes[0].phase_index, Some(2));
        let w = c.workload.unwrap();
        assert!(close(w.usr_s, 0.2) && close(w.sys_s, 0.4) && close(w.sys_pct, 20.0));
        assert!(close(c.mean.usr_pct, 150.0));
        assert_eq!(c.fs_kthreads.len(), 1);
        assert_eq!(c.fs_kthreads[0].thread, "jbd2/loop3-8");
        // The burner: 180% busy less the workload's 30% and jbd2's 5%.
        assert!(close(c.others_pct.unwrap(), 145.0), "{:?}", c.others_pct);
    }

    #[test]
    fn a_program_the_workload_started_counts_as_the_workloads_cpu() {
        let hz = procfs::user_hz();
        let t = |x: f64| (x * hz) as u64;
        let mut b = Bed::new();
        b.processes = vec![4242, 5000];
        b.source.set("/proc/stat", "cpu  1 0 1 1 0 0 0 0 0 0\n");
        b.source.set(
            "/proc/4242/stat",
            pid_stat(4242, "fslab", 'S', 1, t(1.0), t(1.0)),
        );
        b.source.set(
            "/proc/5000/stat",
            pid_stat(5000, "dd", 'R', 4242, t(1.0), t(2.0)),
        );
        let mut p = Cpu::default();
        p.phase_start(&b.ctx());
        // One second: the program used 0.5 s usr and 0.25 s sys.
        b.source.set(
            "/proc/5000/stat",
            pid_stat(5000, "dd", 'R', 4242, t(1.5), t(2.25)),
        );
        let s = p.sample(&b.ctx(), 1.0);
        assert!(
            (value(&s, names::WORKLOAD_USR_PCT) - 50.0).abs() < 1.0,
            "{s:?}"
        );
        assert!(
            (value(&s, names::WORKLOAD_SYS_PCT) - 25.0).abs() < 1.0,
            "{s:?}"
        );
        // It ends and fslab reaps it: its ticks move into fslab's children's
        // (cutime, cstime), nothing is counted twice; 0.1 s more of each.
        b.processes = vec![4242];
        b.source.remove("/proc/5000/stat");
        b.source.set(
            "/proc/4242/stat",
            format!(
                "4242 (fslab) S 1 4242 4242 0 -1 4194304 300 0 0 0 {} {} {} {} 20 0 1 0 100 0 0",
                t(1.0),
                t(1.0),
                t(1.6),
                t(2.35)
            ),
        );
        let s = p.sample(&b.ctx(), 1.0);
        assert!(
            (value(&s, names::WORKLOAD_USR_PCT) - 10.0).abs() < 1.0,
            "{s:?}"
        );
        assert!(
            (value(&s, names::WORKLOAD_SYS_PCT) - 10.0).abs() < 1.0,
            "{s:?}"
        );
    }

    #[test]
    fn a_workload_that_is_gone_leaves_its_figure_out() {
        let b = Bed::new();
        b.source.set("/proc/stat", "cpu  1 0 1 1 0 0 0 0 0 0\n");
        let mut p = Cpu::default();
        p.phase_start(&b.ctx());
        let s = p.sample(&b.ctx(), 1.0);
        assert!(s.iter().all(|x| x.metric != names::WORKLOAD_USR_PCT));
        let out = p.phase_end(&b.ctx(), 1.0);
        assert_eq!(CpuSummary::from_value(&out.notes[0].value).workload, None);
    }
}
