//! `blockio`: the block requests the trace reader saw on the filesystem's
//! device and on the host device under its image: per second IOPS, MB/s,
//! sizes, sequential share, latency, queue depth; per phase a summary and
//! the guest-against-backend metrics; at the end every completion, spooled
//! (see [`crate::trace`]).

use fslab_model::{Better, Metric, ProbeNote, Unit};

use crate::blockio::{self, DevAcc};
use crate::names;
use crate::notes::{BlockioEvents, BlockioPhase, BlockioSummary};
use crate::plugin::{Bars, Chart, Described, Filter, Needs, Plugin, Series, Tone, TraceEvent};
use crate::probe::{note, typed_note, Ctx, PhaseOut, Probe, Reading};

#[derive(Default)]
pub struct Blockio {
    split: Split,
}

/// The phase's guest IOs split at "memory full": the first second of the
/// phase in which the workload's memory cgroup hit its limit (its failcnt
/// rose above the phase's start). The seconds before it count as before,
/// that second and the rest of the phase as after.
#[derive(Default, Debug, Clone, PartialEq)]
pub struct Split {
    hits_at_start: Option<u64>,
    /// Seconds of the phase sampled so far.
    elapsed: f64,
    /// Seconds into the phase at which memory was full.
    full_at: Option<f64>,
    before: (u64, u64),
    after: (u64, u64),
}

impl Split {
    fn new(hits_at_start: Option<u64>) -> Split {
        Split {
            hits_at_start,
            ..Default::default()
        }
    }

    /// One second (`dt` s) of the guest's IOs, the cgroup's limit hits at its end.
    pub fn second(&mut self, guest: &DevAcc, hits: Option<u64>, dt: f64) {
        if self.full_at.is_none() {
            if let (Some(a), Some(b)) = (self.hits_at_start, hits) {
                if b > a {
                    self.full_at = Some(self.elapsed);
                }
            }
        }
        let side = if self.full_at.is_some() {
            &mut self.after
        } else {
            &mut self.before
        };
        side.0 += guest.reads + guest.writes;
        side.1 += guest.read_bytes + guest.write_bytes;
        self.elapsed += dt;
    }

    /// The before/after metrics of phase `phase` (none when memory was never full).
    pub fn metrics(&self, phase: Option<&str>) -> Vec<Metric> {
        let Some(full_at) = self.full_at else {
            return Vec::new();
        };
        let m = |name: &str, v: f64, unit: Unit| {
            Metric::new("blockio", phase, name, v, unit, Better::Neither)
        };
        let mut v = Vec::new();
        for ((ios, bytes), secs, [n_ios, n_size, n_iops]) in [
            (
                self.before,
                full_at,
                [
                    names::GUEST_IOS_BEFORE_FULL,
                    names::GUEST_IO_SIZE_BEFORE_FULL,
                    names::GUEST_IOPS_BEFORE_FULL,
                ],
            ),
            (
                self.after,
                self.elapsed - full_at,
                [
                    names::GUEST_IOS_AFTER_FULL,
                    names::GUEST_IO_SIZE_AFTER_FULL,
                    names::GUEST_IOPS_AFTER_FULL,
                ],
            ),
        ] {
            v.push(m(n_ios, ios as f64, Unit::Count));
            if ios > 0 {
                v.push(m(n_size, bytes as f64 / ios as f64 / 1024.0, Unit::Kib));
            }
            if secs > 0.0 {
                v.push(m(n_iops, ios as f64 / secs, Unit::OpsPerSec));
            }
        }
        v
    }
}

/// The workload's cgroup's limit hits now.
fn limit_hits(ctx: &Ctx) -> Option<u64> {
    let cg = ctx.memory_cgroup?;
    cg.limit_hits_in(|f| ctx.source.read(&cg.path.join(f)))
}

impl Probe for Blockio {
    fn phase_start(&mut self, ctx: &Ctx) -> Vec<Reading> {
        self.split = Split::new(limit_hits(ctx));
        if let Some(mut st) = ctx.trace_state() {
            for d in st.devs.values_mut() {
                d.phase = Default::default();
                d.second = Default::default();
            }
        }
        Vec::new()
    }

    fn sample(&mut self, ctx: &Ctx, dt: f64) -> Vec<Reading> {
        let mut out = Vec::new();
        let hits = limit_hits(ctx);
        let Some(mut st) = ctx.trace_state() else {
            return out;
        };
        for (host, dev) in [(false, &ctx.targets.device), (true, &ctx.targets.host)] {
            let Some(dev) = dev else { continue };
            let tr = st.devs.entry(dev.trace_dev()).or_default();
            let acc = tr.take_second_acc(ctx.now_mono_ns);
            if !host {
                self.split.second(&acc, hits, dt);
            }
            for (m, v) in blockio::metrics(&acc, dt) {
                out.push(Reading::now(if host { names::host(&m) } else { m }, v));
            }
        }
        out.push(Reading::now(
            names::DROPPED_EVENTS,
            ctx.trace_dropped as f64,
        ));
        out
    }

    fn phase_end(&mut self, ctx: &Ctx, secs: f64) -> PhaseOut {
        let mut out = PhaseOut::default();
        let Some(st) = ctx.trace_state() else {
            return out;
        };
        let mut summary = BlockioSummary {
            dropped_events: ctx.trace_dropped,
            ..Default::default()
        };
        for dev in [&ctx.targets.device, &ctx.targets.host]
            .into_iter()
            .flatten()
        {
            if let Some(tr) = st.devs.get(&dev.trace_dev()) {
                summary
                    .devices
                    .insert(dev.name.clone(), BlockioPhase::new(&tr.phase, secs));
            }
        }
        out.notes.push(ctx.phase_note(&summary));
        let of = |d: &Option<crate::devices::Device>| {
            d.as_ref().and_then(|d| st.devs.get(&d.trace_dev()))
        };
        if let (Some(g), Some(b)) = (of(&ctx.targets.device), of(&ctx.targets.host)) {
            out.metrics = guest_and_backend(Some(&ctx.phase.name), &g.phase, &b.phase, secs);
        }
        if let Some(g) = of(&ctx.targets.device) {
            let mib = |name: &str, bytes: u64| {
                Metric::new(
                    "blockio",
                    Some(&ctx.phase.name),
                    name,
                    bytes as f64 / (1u64 << 20) as f64,
                    Unit::Mib,
                    Better::Neither,
                )
            };
            out.metrics.push(mib(names::GUEST_READ, g.phase.read_bytes));
            out.metrics
                .push(mib(names::GUEST_WRITTEN, g.phase.write_bytes));
            out.metrics
                .extend(self.split.metrics(Some(&ctx.phase.name)));
        }
        out
    }

    fn finish(&mut self, ctx: &Ctx) -> Vec<ProbeNote> {
        let Some(mut st) = ctx.trace_state() else {
            return Vec::new();
        };
        let mut notes = Vec::new();
        let mut n = typed_note(
            None,
            &BlockioEvents {
                kept: st.kept,
                not_kept: st.not_kept,
                dropped: ctx.trace_dropped,
                t0_mono_ns: ctx.first_mono_ns,
                record_bytes: blockio::RECORD as u64,
            },
        );
        match st.spool.take().map(|s| s.finish()) {
            Some(Ok(b)) => n.blob = Some(b),
            Some(Err(e)) => {
                notes.push(note(
                    None,
                    "blockio",
                    "error",
                    serde_json::Value::String(e.to_string()),
                ));
            }
            None => {}
        }
        notes.push(n);
        notes
    }
}

/// A phase's IOs on the filesystem's loop device (the guest) against those
/// on the device under its image (the backend): counts, per second, and
/// backend IOs per guest IO (seed 000: "btrfs does a couple of hundred
/// IOPS, the back end 25,000").
pub fn guest_and_backend(
    phase: Option<&str>,
    guest: &DevAcc,
    backend: &DevAcc,
    secs: f64,
) -> Vec<Metric> {
    let g = (guest.reads + guest.writes) as f64;
    let b = (backend.reads + backend.writes) as f64;
    let m = |name: &str, v: f64, unit: Unit| {
        Metric::new("blockio", phase, name, v, unit, Better::Neither)
    };
    let mut v = vec![
        m(names::GUEST_IOS, g, Unit::Count),
        m(names::BACKEND_IOS, b, Unit::Count),
        m(names::GUEST_IOPS, g / secs, Unit::OpsPerSec),
        m(names::BACKEND_IOPS, b / secs, Unit::OpsPerSec),
    ];
    if g > 0.0 {
        v.push(m(names::BACKEND_PER_GUEST, b / g, Unit::Count));
    }
    v
}

/// The `blockio` probe.
pub struct BlockioPlugin;

/// The block trace it reads: every request issued and completed on the
/// filesystem's device and on the device under its image.
const EVENTS: [TraceEvent; 2] = [
    TraceEvent {
        event: "block/block_rq_issue",
        filter: Filter::DeviceAndHost,
        optional: false,
        fs_prefix: None,
    },
    TraceEvent {
        event: "block/block_rq_complete",
        filter: Filter::DeviceAndHost,
        optional: false,
        fs_prefix: None,
    },
];

impl Plugin for BlockioPlugin {
    fn name(&self) -> &'static str {
        "blockio"
    }

    fn needs(&self) -> Needs {
        Needs {
            trace: &EVENTS,
            spool: true,
            ..Needs::default()
        }
    }

    fn make(&self) -> Box<dyn Probe> {
        Box::<Blockio>::default()
    }

    fn series(&self) -> Vec<Series> {
        let iops = Chart {
            title: "IOPS",
            y_label: "requests/s",
        };
        let mb_s = Chart {
            title: "MB/s",
            y_label: "MB/s",
        };
        vec![
            Series::new(names::IOPS, "requests/s", "IOPS").on(iops),
            Series::new(names::host(names::IOPS), "requests/s", "host IOPS").on(iops),
            Series::new(names::WRITE_MB_S, "MB/s", "written")
                .on(mb_s)
                .tone(Tone::Write),
            Series::new(names::READ_MB_S, "MB/s", "read")
                .on(mb_s)
                .tone(Tone::Read),
            Series::new(names::READ_IOPS, "requests/s", "read IOPS"),
            Series::new(names::WRITE_IOPS, "requests/s", "write IOPS"),
            Series::new(names::AVG_IO_KB, "KiB", "average IO size"),
            Series::new(names::SEQUENTIAL_PCT, "%", "sequential"),
            Series::new(names::LATENCY_AVG_US, "us", "latency average"),
            Series::new(names::LATENCY_MAX_US, "us", "latency max"),
            Series::new(names::QUEUE_DEPTH, "requests", "queue depth"),
            Series::new(names::DROPPED_EVENTS, "events", "dropped events"),
        ]
    }

    /// The completions kept for `fslab trace show`.
    fn describe_run(&self, run: &Described) -> Vec<String> {
        run.note::<BlockioEvents>()
            .map(|e| {
                format!(
                    "blockio: {} completions kept (see `fslab trace show {}`), {} not kept, {} dropped by the kernel",
                    e.kept, run.run_id, e.not_kept, e.dropped
                )
            })
            .into_iter()
            .collect()
    }

    /// Each traced device's IO in the phase.
    fn describe_phase(&self, phase: &Described) -> Vec<String> {
        phase
            .note::<BlockioSummary>()
            .unwrap_or_default()
            .devices
            .into_iter()
            .map(|(dev, d)| {
                format!(
                    "blockio {dev}: {:.0} IOPS, {:.1} MB/s written, {:.1} KiB average, {:.0}% sequential, latency {:.0} us average / {:.0} us max, queue depth {:.2}",
                    d.iops, d.write_mb_s, d.avg_io_kb, d.sequential_pct, d.latency_avg_us, d.latency_max_us, d.queue_depth
                )
            })
            .collect()
    }

    /// Requests by size over the run.
    fn bars(&self) -> Vec<Bars> {
        vec![Bars {
            title: "IO sizes",
            y_label: "requests",
            bars: blockio::SIZE_BUCKETS
                .iter()
                .map(|(_, m)| {
                    (
                        m.trim_start_matches("size_")
                            .replace("le_", "<=")
                            .replace("gt_", ">"),
                        m.to_string(),
                    )
                })
                .collect(),
        }]
    }
}

#[cfg(test)]
mod tests {
    use super::super::bed::*;
    use super::*;
    use crate::notes::Note;
    use crate::trace::{Spool, TraceState};

    /// An issue and its completion on `dev` (e.g. "7,3"), `at_us` into the trace.
    fn io(dev: &str, rw: &str, sector: u64, at_us: u64) -> [String; 2] {
        io_of(dev, rw, sector, 8, at_us)
    }

    /// [`io`] of `n` sectors.
    fn io_of(dev: &str, rw: &str, sector: u64, n: u64, at_us: u64) -> [String; 2] {
        let ts = |us: u64| format!("{}.{:06}", us / 1_000_000, us % 1_000_000);
        [
            format!("  fslab-1 [000] ..... {}: block_rq_issue: {dev} {rw} {} () {sector} + {n} none,0,0 [fslab]", ts(at_us), n * 512),
            format!("  <idle>-0 [000] ..s.. {}: block_rq_complete: {dev} {rw} () {sector} + {n} none,0,0 [0]", ts(at_us + 100)),
        ]
    }

    /// A run of the guest's writes of `n` sectors each, in the second starting at `at_s`.
    fn writes(b: &Bed, count: u64, n: u64, at_s: u64) {
        let mut lines = Vec::new();
        for i in 0..count {
            lines.extend(io_of(
                "7,3",
                "W",
                1_000_000 * at_s + n * i,
                n,
                at_s * 1_000_000 + i * 10,
            ));
        }
        b.trace_lines(&lines);
    }

    fn metric(out: &PhaseOut, name: &str) -> Option<f64> {
        out.metrics.iter().find(|m| m.name == name).map(|m| m.value)
    }

    #[test]
    fn the_phase_is_split_at_the_first_second_its_memory_cgroup_hit_the_limit() {
        let mut b = Bed::new();
        b.cgroup = Some(crate::cgroup::MemoryCgroup {
            path: "/cg".into(),
            v2: false,
        });
        // Hits left by an earlier phase do not make this one full.
        b.source.set("/cg/memory.failcnt", "4\n");
        let mut p = Blockio::default();
        p.phase_start(&b.ctx());
        // Seconds 1 and 2: 10 then 30 writes of 512 KiB, under the limit.
        writes(&b, 10, 1024, 1);
        b.now_mono_ns = 2_000_000_000;
        p.sample(&b.ctx(), 1.0);
        writes(&b, 30, 1024, 2);
        b.now_mono_ns = 3_000_000_000;
        p.sample(&b.ctx(), 1.0);
        // Second 3: the limit is hit; 400 writes of 8 KiB, then 200 of 4 KiB in second 4.
        writes(&b, 400, 16, 3);
        b.source.set("/cg/memory.failcnt", "9\n");
        b.now_mono_ns = 4_000_000_000;
        p.sample(&b.ctx(), 1.0);
        writes(&b, 200, 8, 4);
        b.now_mono_ns = 5_000_000_000;
        p.sample(&b.ctx(), 1.0);
        let out = p.phase_end(&b.ctx(), 4.0);
        assert_eq!(metric(&out, names::GUEST_IOS_BEFORE_FULL), Some(40.0));
        assert_eq!(metric(&out, names::GUEST_IO_SIZE_BEFORE_FULL), Some(512.0));
        assert_eq!(metric(&out, names::GUEST_IOPS_BEFORE_FULL), Some(20.0));
        assert_eq!(metric(&out, names::GUEST_IOS_AFTER_FULL), Some(600.0));
        let after = (400.0 * 8.0 + 200.0 * 4.0) / 600.0;
        assert_eq!(metric(&out, names::GUEST_IO_SIZE_AFTER_FULL), Some(after));
        assert_eq!(metric(&out, names::GUEST_IOPS_AFTER_FULL), Some(300.0));
        let size = out
            .metrics
            .iter()
            .find(|m| m.name == names::GUEST_IO_SIZE_AFTER_FULL)
            .unwrap();
        assert_eq!(size.label(), "create guest IO size after memory full (KiB)");
    }

    #[test]
    fn a_phase_whose_memory_never_filled_has_no_before_and_after() {
        let mut b = Bed::new();
        b.cgroup = Some(crate::cgroup::MemoryCgroup {
            path: "/cg".into(),
            v2: false,
        });
        b.source.set("/cg/memory.failcnt", "0\n");
        let mut p = Blockio::default();
        p.phase_start(&b.ctx());
        writes(&b, 10, 8, 1);
        b.now_mono_ns = 2_000_000_000;
        p.sample(&b.ctx(), 1.0);
        let out = p.phase_end(&b.ctx(), 1.0);
        assert_eq!(metric(&out, names::GUEST_IOS_BEFORE_FULL), None);
        assert_eq!(metric(&out, names::GUEST_IOS_AFTER_FULL), None);
        // Nor without a cgroup at all.
        b.cgroup = None;
        p.phase_start(&b.ctx());
        writes(&b, 10, 8, 2);
        b.now_mono_ns = 3_000_000_000;
        p.sample(&b.ctx(), 1.0);
        assert_eq!(
            metric(&p.phase_end(&b.ctx(), 1.0), names::GUEST_IOS_AFTER_FULL),
            None
        );
    }

    #[test]
    fn memory_full_from_the_first_second_leaves_no_time_before() {
        let mut s = Split::new(Some(0));
        let acc = DevAcc {
            writes: 10,
            write_bytes: 10 * 16384,
            ..Default::default()
        };
        s.second(&acc, Some(3), 1.0);
        let v = s.metrics(None);
        let get = |n: &str| v.iter().find(|m| m.name == n).map(|m| m.value);
        assert_eq!(get(names::GUEST_IOS_BEFORE_FULL), Some(0.0));
        assert_eq!(get(names::GUEST_IO_SIZE_BEFORE_FULL), None);
        assert_eq!(get(names::GUEST_IOPS_BEFORE_FULL), None);
        assert_eq!(get(names::GUEST_IO_SIZE_AFTER_FULL), Some(16.0));
        assert_eq!(get(names::GUEST_IOPS_AFTER_FULL), Some(10.0));
    }

    #[test]
    fn a_phase_of_guest_and_backend_io() {
        let mut b = Bed::new();
        let dir = tempfile::tempdir().unwrap();
        b.trace = std::sync::Mutex::new(TraceState::new(Some(Spool::new(dir.path()).unwrap())));
        let mut p = Blockio::default();
        p.phase_start(&b.ctx());
        // 1 s into the trace: 4 sequential guest writes, 8 backend writes, 1 read.
        let mut lines = Vec::new();
        for i in 0..4 {
            lines.extend(io("7,3", "WS", 8 * i, 1_000_000 + i * 1000));
        }
        for i in 0..8 {
            lines.extend(io("253,0", "W", 1000 + 8 * i, 1_000_500 + i * 500));
        }
        lines.extend(io("7,3", "R", 9999, 1_900_000));
        b.trace_lines(&lines);
        b.now_mono_ns = 2_000_000_000;
        let s = p.sample(&b.ctx(), 1.0);
        assert_eq!(value(&s, names::IOPS), 5.0);
        assert_eq!(value(&s, names::WRITE_IOPS), 4.0);
        assert_eq!(value(&s, &names::host(names::IOPS)), 8.0);
        assert_eq!(value(&s, names::LATENCY_AVG_US), 100.0);
        assert_eq!(value(&s, names::DROPPED_EVENTS), 0.0);
        let out = p.phase_end(&b.ctx(), 2.0);
        let sum = BlockioSummary::from_value(&out.notes[0].value);
        assert_eq!(sum.devices["loop3"].write_bytes, 4 * 4096);
        assert_eq!(sum.devices["vda"].iops, 4.0);
        let m = |n: &str| out.metrics.iter().find(|x| x.name == n).unwrap().value;
        assert_eq!(m(names::GUEST_IOS), 5.0);
        assert_eq!(m(names::BACKEND_IOPS), 4.0);
        assert_eq!(m(names::BACKEND_PER_GUEST), 1.6);
        // The guest device's own writes: 4 of 4 KiB.
        assert_eq!(m(names::GUEST_WRITTEN), 4.0 * 4096.0 / (1u64 << 20) as f64);
        assert_eq!(m(names::GUEST_READ), 4096.0 / (1u64 << 20) as f64);
        assert!(out
            .metrics
            .iter()
            .all(|x| x.phase.as_deref() == Some("create")));
        // The run's end: every completion, spooled.
        let notes = p.finish(&b.ctx());
        let ev = BlockioEvents::from_value(&notes[0].value);
        assert_eq!((ev.kept, ev.not_kept), (13, 0));
        let raw = blockio::decompress(&notes[0].blob.as_ref().unwrap().to_vec().unwrap()).unwrap();
        let back = blockio::decode(&raw);
        assert_eq!(back.len(), 13);
        assert_eq!(back[0].latency_ns, Some(100_000));
    }

    #[test]
    fn no_guest_io_no_ratio() {
        let backend = DevAcc {
            writes: 25_000,
            ..Default::default()
        };
        let v = guest_and_backend(None, &DevAcc::default(), &backend, 1.0);
        assert!(v.iter().all(|m| m.name != names::BACKEND_PER_GUEST));
        assert_eq!(
            v.iter()
                .find(|m| m.name == names::BACKEND_IOPS)
                .unwrap()
                .value,
            25_000.0
        );
    }
}
