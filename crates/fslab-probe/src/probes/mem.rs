//! `mem`: /proc/meminfo (dirty, writeback, page cache, slab, available)
//! and the workload's memory cgroup (usage, limit hits), per second; per
//! phase the metrics that say whether the workload outgrew its memory:
//! the cgroup's limit hits and peak usage in the phase, and what was
//! written back meanwhile.

use std::path::Path;

use fslab_model::{Better, Metric, Unit};

use crate::names;
use crate::plugin::{Chart, Described, Plugin, Series};
use crate::probe::{Ctx, PhaseOut, Probe, Reading};
use crate::procfs;

/// Bytes per page of /proc/vmstat's page counts.
const PAGE: f64 = 4096.0;
const MIB: f64 = (1u64 << 20) as f64;

#[derive(Default)]
pub struct Mem {
    start: Start,
}

/// What the phase started from.
#[derive(Default)]
struct Start {
    limit_hits: Option<u64>,
    peak: Option<u64>,
    written_pages: Option<u64>,
    /// The kernel's dirty limit at the phase's start (pages).
    dirty_threshold: Option<u64>,
    /// The highest usage read during the phase.
    usage_seen: Option<u64>,
}

/// /proc/vmstat's `nr_written`: pages written back since boot.
pub fn written_pages(vmstat: &str) -> Option<u64> {
    vmstat_field(vmstat, "nr_written")
}

/// A field of /proc/vmstat.
fn vmstat_field(vmstat: &str, name: &str) -> Option<u64> {
    vmstat.lines().find_map(|l| {
        let (k, v) = l.split_once(' ')?;
        (k == name).then(|| v.trim().parse().ok())?
    })
}

fn cgroup_read(ctx: &Ctx, file: &str) -> Option<String> {
    ctx.memory_cgroup
        .and_then(|cg| ctx.source.read(&cg.path.join(file)))
}

fn written(ctx: &Ctx) -> Option<u64> {
    ctx.source
        .read(Path::new("/proc/vmstat"))
        .and_then(|v| written_pages(&v))
}

impl Probe for Mem {
    fn phase_start(&mut self, ctx: &Ctx) -> Vec<Reading> {
        self.start = Start {
            limit_hits: ctx
                .memory_cgroup
                .and_then(|cg| cg.limit_hits_in(|f| cgroup_read(ctx, f))),
            peak: ctx
                .memory_cgroup
                .and_then(|cg| cg.peak_in(|f| cgroup_read(ctx, f))),
            written_pages: written(ctx),
            dirty_threshold: ctx
                .source
                .read(Path::new("/proc/vmstat"))
                .and_then(|v| vmstat_field(&v, "nr_dirty_threshold")),
            usage_seen: None,
        };
        Vec::new()
    }

    fn sample(&mut self, ctx: &Ctx, _dt: f64) -> Vec<Reading> {
        let mut out: Vec<Reading> = ctx
            .source
            .read(Path::new("/proc/meminfo"))
            .map(|m| procfs::parse_meminfo(&m))
            .unwrap_or_default()
            .into_iter()
            .map(|(k, v)| Reading::now(k, v))
            .collect();
        if let Some(cg) = ctx.memory_cgroup {
            let read = |f: &str| ctx.source.read(&cg.path.join(f));
            if let Some(v) = cg.usage_in(read) {
                out.push(Reading::now(names::CGROUP_USAGE_BYTES, v as f64));
                self.start.usage_seen = Some(self.start.usage_seen.unwrap_or(0).max(v));
            }
            if let Some(v) = cg.limit_hits_in(read) {
                out.push(Reading::now(names::CGROUP_FAILCNT, v as f64));
            }
        }
        out
    }

    fn phase_end(&mut self, ctx: &Ctx, _secs: f64) -> PhaseOut {
        let phase = Some(ctx.phase.name.as_str());
        let m = |name: &str, v: f64, unit: Unit| {
            Metric::new("mem", phase, name, v, unit, Better::Neither)
        };
        let mut out = PhaseOut::default();
        if let Some(cg) = ctx.memory_cgroup {
            let read = |f: &str| ctx.source.read(&cg.path.join(f));
            if let (Some(a), Some(b)) = (self.start.limit_hits, cg.limit_hits_in(read)) {
                out.metrics.push(m(
                    names::LIMIT_HITS,
                    b.saturating_sub(a) as f64,
                    Unit::Count,
                ));
            }
            if let Some(p) = phase_peak(
                self.start.peak,
                cg.peak_in(read),
                self.start.usage_seen.max(cg.usage_in(read)),
            ) {
                out.metrics
                    .push(m(names::PEAK_USAGE, p as f64 / MIB, Unit::Mib));
            }
        }
        if let Some(t) = self.start.dirty_threshold {
            out.metrics
                .push(m(names::DIRTY_THRESHOLD, t as f64 * PAGE / MIB, Unit::Mib));
        }
        if let (Some(a), Some(b)) = (self.start.written_pages, written(ctx)) {
            out.metrics.push(m(
                names::DIRTY_WRITTEN,
                b.saturating_sub(a) as f64 * PAGE / MIB,
                Unit::Mib,
            ));
        }
        out
    }
}

/// The cgroup's peak usage in a phase, bytes: the kernel's running peak
/// when it rose during the phase (then it was set in the phase, exactly);
/// else the highest usage read during the phase (once a second, and at
/// its end).
fn phase_peak(at_start: Option<u64>, at_end: Option<u64>, seen: Option<u64>) -> Option<u64> {
    match (at_start, at_end) {
        (Some(a), Some(b)) if b > a => Some(b),
        (None, Some(b)) => Some(b),
        _ => seen,
    }
}

/// The `mem` probe.
pub struct MemPlugin;

impl Plugin for MemPlugin {
    fn name(&self) -> &'static str {
        "mem"
    }

    fn make(&self) -> Box<dyn Probe> {
        Box::<Mem>::default()
    }

    fn series(&self) -> Vec<Series> {
        let memory = Chart {
            title: "memory",
            y_label: "MB",
        };
        let bytes = |m: &str, label: &str| Series::new(m, "bytes", label);
        vec![
            bytes(names::DIRTY_BYTES, "dirty").on(memory).scaled(1e-6),
            bytes(names::WRITEBACK_BYTES, "writeback")
                .on(memory)
                .scaled(1e-6),
            bytes(names::CACHED_BYTES, "cached"),
            bytes(names::SLAB_BYTES, "slab"),
            bytes(names::AVAILABLE_BYTES, "available"),
            bytes(names::CGROUP_USAGE_BYTES, "cgroup usage"),
            Series::new(names::CGROUP_FAILCNT, "times", "cgroup limit hits"),
        ]
    }

    /// Dirty and writeback memory in the phase, and the cgroup's limit hits.
    fn describe_phase(&self, phase: &Described) -> Vec<String> {
        let pt = |m: &str| phase.summary(self.name(), m);
        let Some((mean, max)) = pt(names::DIRTY_BYTES) else {
            return Vec::new();
        };
        let wb = pt(names::WRITEBACK_BYTES).unwrap_or((0.0, 0.0));
        let mut line = format!(
            "mem: dirty {:.0} MB average / {:.0} MB max, writeback {:.0} MB max",
            mean / 1e6,
            max / 1e6,
            wb.1 / 1e6
        );
        if let Some((_, fails)) = pt(names::CGROUP_FAILCNT) {
            line.push_str(&format!("; cgroup limit hit {fails:.0} times"));
        }
        vec![line]
    }
}

#[cfg(test)]
mod tests {
    use super::super::bed::*;
    use super::*;
    use crate::cgroup::MemoryCgroup;

    #[test]
    fn meminfo_and_the_cgroup_in_either_hierarchy() {
        let mut b = Bed::new();
        b.source.set("/proc/meminfo", "MemTotal: 100 kB\nMemAvailable:   2048 kB\nCached: 10 kB\nDirty:  4 kB\nWriteback: 0 kB\nSlab: 1 kB\n");
        b.cgroup = Some(MemoryCgroup {
            path: "/cg/v1".into(),
            v2: false,
        });
        b.source.set("/cg/v1/memory.usage_in_bytes", "4096\n");
        b.source.set("/cg/v1/memory.failcnt", "3\n");
        let s = Mem::default().sample(&b.ctx(), 1.0);
        assert_eq!(value(&s, names::DIRTY_BYTES), 4096.0);
        assert_eq!(value(&s, names::AVAILABLE_BYTES), 2048.0 * 1024.0);
        assert_eq!(value(&s, names::CGROUP_USAGE_BYTES), 4096.0);
        assert_eq!(value(&s, names::CGROUP_FAILCNT), 3.0);
        b.cgroup = Some(MemoryCgroup {
            path: "/cg/v2".into(),
            v2: true,
        });
        b.source.set("/cg/v2/memory.current", "8192\n");
        b.source
            .set("/cg/v2/memory.events", "low 0\nhigh 0\nmax 5\noom 0\n");
        let s = Mem::default().sample(&b.ctx(), 1.0);
        assert_eq!(value(&s, names::CGROUP_USAGE_BYTES), 8192.0);
        assert_eq!(value(&s, names::CGROUP_FAILCNT), 5.0);
        // No cgroup: meminfo alone.
        b.cgroup = None;
        assert!(Mem::default()
            .sample(&b.ctx(), 1.0)
            .iter()
            .all(|x| x.metric != names::CGROUP_USAGE_BYTES));
    }

    fn cg(b: &mut Bed) {
        b.cgroup = Some(MemoryCgroup {
            path: "/cg/v1".into(),
            v2: false,
        });
    }

    fn set(b: &Bed, usage_mib: u64, peak_mib: u64, hits: u64, written: u64) {
        b.source.set(
            "/cg/v1/memory.usage_in_bytes",
            format!("{}\n", usage_mib << 20),
        );
        b.source.set(
            "/cg/v1/memory.max_usage_in_bytes",
            format!("{}\n", peak_mib << 20),
        );
        b.source.set("/cg/v1/memory.failcnt", format!("{hits}\n"));
        b.source.set(
            "/proc/vmstat",
            format!("nr_dirty 12\nnr_written {written}\nnr_dirtied 99\n"),
        );
    }

    fn metric(out: &PhaseOut, name: &str) -> Option<f64> {
        out.metrics.iter().find(|m| m.name == name).map(|m| {
            assert_eq!(m.source, "mem");
            assert_eq!(m.phase.as_deref(), Some("create"));
            m.value
        })
    }

    #[test]
    fn a_phase_that_outgrew_its_memory_counts_its_limit_hits_peak_and_writeback() {
        let mut b = Bed::new();
        cg(&mut b);
        // An earlier phase hit the limit 5 times; 100 pages written since boot.
        set(&b, 40, 300, 5, 100);
        let mut p = Mem::default();
        p.phase_start(&b.ctx());
        set(&b, 200, 300, 5, 100);
        p.sample(&b.ctx(), 1.0);
        // The limit (512 MiB) is reached: 3 more hits, 2560 pages written back.
        set(&b, 480, 512, 8, 2660);
        p.sample(&b.ctx(), 1.0);
        let out = p.phase_end(&b.ctx(), 2.0);
        assert_eq!(metric(&out, names::LIMIT_HITS), Some(3.0));
        assert_eq!(metric(&out, names::PEAK_USAGE), Some(512.0));
        assert_eq!(metric(&out, names::DIRTY_WRITTEN), Some(10.0));
        let unit = |n: &str| out.metrics.iter().find(|m| m.name == n).unwrap().unit;
        assert_eq!(unit(names::PEAK_USAGE), Unit::Mib);
        assert_eq!(out.metrics[0].label(), "create limit hits");
        assert_eq!(
            out.metrics
                .iter()
                .find(|m| m.name == names::PEAK_USAGE)
                .unwrap()
                .label(),
            "create peak usage (MiB)"
        );
    }

    #[test]
    fn a_phase_under_its_limit_has_no_hits_and_its_own_peak_not_an_earlier_one() {
        let mut b = Bed::new();
        cg(&mut b);
        // The run's peak (900 MiB) was in an earlier phase.
        set(&b, 100, 900, 7, 50);
        let mut p = Mem::default();
        p.phase_start(&b.ctx());
        set(&b, 250, 900, 7, 50);
        p.sample(&b.ctx(), 1.0);
        set(&b, 120, 900, 7, 50);
        let out = p.phase_end(&b.ctx(), 2.0);
        assert_eq!(metric(&out, names::LIMIT_HITS), Some(0.0));
        assert_eq!(metric(&out, names::PEAK_USAGE), Some(250.0));
        assert_eq!(metric(&out, names::DIRTY_WRITTEN), Some(0.0));
    }

    #[test]
    fn without_a_cgroup_only_the_writeback_is_measured() {
        let b = Bed::new();
        b.source
            .set("/proc/vmstat", "nr_written 10\nnr_dirty_threshold 2560\n");
        let mut p = Mem::default();
        p.phase_start(&b.ctx());
        b.source.set("/proc/vmstat", "nr_written 266\n");
        let out = p.phase_end(&b.ctx(), 1.0);
        assert_eq!(metric(&out, names::LIMIT_HITS), None);
        assert_eq!(metric(&out, names::PEAK_USAGE), None);
        assert_eq!(metric(&out, names::DIRTY_WRITTEN), Some(1.0));
        // The dirty limit as the phase began: 2560 pages.
        assert_eq!(metric(&out, names::DIRTY_THRESHOLD), Some(10.0));
    }
}
