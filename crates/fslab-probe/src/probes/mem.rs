//! `mem`: /proc/meminfo (dirty, writeback, page cache, slab, available)
//! and the workload's memory cgroup (usage, limit hits), per second.

use std::path::Path;

use crate::names;
use crate::probe::{Ctx, PhaseOut, Probe, Sample};
use crate::procfs;
use crate::Kind;

#[derive(Default)]
pub struct Mem;

impl Probe for Mem {
    fn kind(&self) -> Kind {
        Kind::Mem
    }

    fn sample(&mut self, ctx: &Ctx, _dt: f64) -> Vec<Sample> {
        let mut out: Vec<Sample> = ctx
            .source
            .read(Path::new("/proc/meminfo"))
            .map(|m| procfs::parse_meminfo(&m))
            .unwrap_or_default()
            .into_iter()
            .map(|(k, v)| Sample::now(k, v))
            .collect();
        if let Some(cg) = ctx.memory_cgroup {
            let read = |f: &str| ctx.source.read(&cg.path.join(f));
            if let Some(v) = cg.usage_in(read) {
                out.push(Sample::now(names::CGROUP_USAGE_BYTES, v as f64));
            }
            if let Some(v) = cg.limit_hits_in(read) {
                out.push(Sample::now(names::CGROUP_FAILCNT, v as f64));
            }
        }
        out
    }

    fn phase_end(&mut self, _ctx: &Ctx, _secs: f64) -> PhaseOut {
        PhaseOut::default()
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
        let s = Mem.sample(&b.ctx(), 1.0);
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
        let s = Mem.sample(&b.ctx(), 1.0);
        assert_eq!(value(&s, names::CGROUP_USAGE_BYTES), 8192.0);
        assert_eq!(value(&s, names::CGROUP_FAILCNT), 5.0);
        // No cgroup: meminfo alone.
        b.cgroup = None;
        assert!(Mem
            .sample(&b.ctx(), 1.0)
            .iter()
            .all(|x| x.metric != names::CGROUP_USAGE_BYTES));
    }
}
