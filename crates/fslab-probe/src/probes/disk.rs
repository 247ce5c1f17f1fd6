//! `disk`: /proc/diskstats of the filesystem's device and of the host
//! device under its image, per second, and the phase's totals.

use std::collections::HashMap;
use std::path::Path;

use crate::devices::Device;
use crate::names;
use crate::notes::{DiskPhase, DiskSummary};
use crate::plugin::{Described, Plugin, Series};
use crate::probe::{Ctx, PhaseOut, Probe, Reading};
use crate::procfs::{self, DiskStats};

#[derive(Default)]
pub struct Disk {
    prev: HashMap<String, DiskStats>,
    first: HashMap<String, DiskStats>,
}

/// (is the host, device) of what the probe watches.
fn devices(ctx: &Ctx) -> Vec<(bool, Device)> {
    [
        (false, ctx.targets.device.clone()),
        (true, ctx.targets.host.clone()),
    ]
    .into_iter()
    .filter_map(|(h, d)| d.map(|d| (h, d)))
    .collect()
}

fn read(ctx: &Ctx) -> String {
    ctx.source
        .read(Path::new("/proc/diskstats"))
        .unwrap_or_default()
}

impl Probe for Disk {
    fn phase_start(&mut self, ctx: &Ctx) -> Vec<Reading> {
        let text = read(ctx);
        self.prev.clear();
        for (_, d) in devices(ctx) {
            if let Some(s) = procfs::parse_diskstats(&text, &d.name) {
                self.prev.insert(d.name.clone(), s);
            }
        }
        self.first = self.prev.clone();
        Vec::new()
    }

    fn sample(&mut self, ctx: &Ctx, dt: f64) -> Vec<Reading> {
        let text = read(ctx);
        let mut out = Vec::new();
        for (host, d) in devices(ctx) {
            let Some(now) = procfs::parse_diskstats(&text, &d.name) else {
                continue;
            };
            if let Some(prev) = self.prev.get(&d.name) {
                for (m, v) in now.rates_since(prev, dt) {
                    out.push(Reading::now(
                        if host { names::host(m) } else { m.to_string() },
                        v,
                    ));
                }
            }
            self.prev.insert(d.name.clone(), now);
        }
        out
    }

    fn phase_end(&mut self, ctx: &Ctx, secs: f64) -> PhaseOut {
        let text = read(ctx);
        let mut summary = DiskSummary::default();
        for (_, d) in devices(ctx) {
            if let (Some(a), Some(b)) = (
                self.first.get(&d.name),
                procfs::parse_diskstats(&text, &d.name),
            ) {
                summary.0.insert(
                    d.name.clone(),
                    DiskPhase {
                        read_bytes: b.sectors_read.saturating_sub(a.sectors_read) * 512,
                        write_bytes: b.sectors_written.saturating_sub(a.sectors_written) * 512,
                        reads: b.reads.saturating_sub(a.reads),
                        writes: b.writes.saturating_sub(a.writes),
                        util_pct: b.ms_io.saturating_sub(a.ms_io) as f64 / 10.0 / secs,
                    },
                );
            }
        }
        PhaseOut {
            notes: vec![ctx.phase_note(&summary)],
            metrics: Vec::new(),
        }
    }
}

/// The `disk` probe.
pub struct DiskPlugin;

impl Plugin for DiskPlugin {
    fn name(&self) -> &'static str {
        "disk"
    }

    fn make(&self) -> Box<dyn Probe> {
        Box::<Disk>::default()
    }

    fn series(&self) -> Vec<Series> {
        vec![
            Series::new(names::READS_PER_S, "requests/s", "reads"),
            Series::new(names::WRITES_PER_S, "requests/s", "writes"),
            Series::new(names::READ_MB_S, "MB/s", "read"),
            Series::new(names::WRITE_MB_S, "MB/s", "written"),
            Series::new(names::READ_MERGES_PER_S, "merges/s", "read merges"),
            Series::new(names::WRITE_MERGES_PER_S, "merges/s", "write merges"),
            Series::new(names::UTIL_PCT, "%", "utilised"),
            Series::new(names::AVG_QUEUE, "requests", "queue"),
            Series::new(names::IN_FLIGHT, "requests", "in flight"),
        ]
    }

    /// Each device's IO in the phase, from /proc/diskstats.
    fn describe_phase(&self, phase: &Described) -> Vec<String> {
        phase
            .note::<DiskSummary>()
            .unwrap_or_default()
            .0
            .into_iter()
            .map(|(dev, d)| {
                format!(
                    "disk {dev}: {:.1} MB written in {} writes, {:.1} MB read, {:.0}% utilised",
                    d.write_bytes as f64 / 1e6,
                    d.writes,
                    d.read_bytes as f64 / 1e6,
                    d.util_pct
                )
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::super::bed::*;
    use super::*;
    use crate::notes::Note;

    fn line(name: &str, reads: u64, sectors_w: u64, writes: u64, ms_io: u64) -> String {
        format!(
            "   7       3 {name} {reads} 0 {} 0 {writes} 0 {sectors_w} 0 0 {ms_io} 0 0 0 0 0\n",
            reads * 8
        )
    }

    #[test]
    fn rates_for_the_device_and_the_host_and_the_phases_totals() {
        let b = Bed::new();
        b.source.set(
            "/proc/diskstats",
            line("loop3", 0, 0, 0, 0) + &line("vda", 0, 0, 0, 0) + &line("sda", 9, 9, 9, 9),
        );
        let mut p = Disk::default();
        p.phase_start(&b.ctx());
        // 2 s: loop3 wrote 4000 sectors in 100 writes, busy 1 s; vda 8000 in 10.
        b.source.set(
            "/proc/diskstats",
            line("loop3", 0, 4000, 100, 1000) + &line("vda", 0, 8000, 10, 500),
        );
        let s = p.sample(&b.ctx(), 2.0);
        assert_eq!(value(&s, names::WRITES_PER_S), 50.0);
        assert_eq!(value(&s, names::WRITE_MB_S), 4000.0 * 512.0 / 2.0 / 1e6);
        assert_eq!(value(&s, names::UTIL_PCT), 50.0);
        assert_eq!(value(&s, &names::host(names::WRITES_PER_S)), 5.0);
        let out = p.phase_end(&b.ctx(), 2.0);
        let d = DiskSummary::from_value(&out.notes[0].value);
        assert_eq!(d.0["loop3"].write_bytes, 4000 * 512);
        assert_eq!(d.0["vda"].writes, 10);
        assert!(!d.0.contains_key("sda"));
    }
}
