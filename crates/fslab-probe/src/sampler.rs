//! The probes' own thread: samples once a second (wait stacks ten times a
//! second) while a phase runs, and a reader thread for the trace events.

use crate::names;
use std::collections::{BTreeMap, HashMap};
use std::io::Read;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use fslab_record::{Better, Metric, ProbeNote, ProbePoint, Unit};

use crate::blockio;
use crate::cgroup::{own_memory_cgroup, MemoryCgroup};
use crate::devices::Targets;
use crate::mono_ns;
use crate::notes::{
    BlockioEvents, BlockioPhase, BlockioSummary, CpuShares, CpuSummary, DiskPhase, DiskSummary,
    FragFinalMap, Jbd2Commits, Note, ProcessCpu, StacksTop, ThreadCpu, WritebackReasons,
};
use crate::procfs::{self, CpuTicks, DiskStats, ProcessTicks};
use crate::stacks::StackCounts;
use crate::trace::{Spool, TraceState};
use crate::{frag, journal, perf, tracefs, Cmd, Kind};

struct Tracer {
    instance: tracefs::Instance,
    state: Arc<Mutex<TraceState>>,
    stop: Arc<AtomicBool>,
    reader: Option<std::thread::JoinHandle<()>>,
}

fn start_tracer(kinds: &[Kind], t: &Targets, scratch: &std::path::Path) -> Result<Tracer, String> {
    let dev = t
        .device
        .as_ref()
        .ok_or("the workload's filesystem has no block device")?;
    let name = format!("fslab-{}-{}", std::process::id(), dev.name);
    let inst = tracefs::Instance::create(&name, scratch, 4096)?;
    let mut devs = vec![dev.trace_dev()];
    if let Some(h) = &t.host {
        devs.push(h.trace_dev());
    }
    let filter = devs
        .iter()
        .map(|d| format!("dev == {d}"))
        .collect::<Vec<_>>()
        .join(" || ");
    if kinds.contains(&Kind::Blockio) {
        inst.enable("block/block_rq_issue", Some(&filter))?;
        inst.enable("block/block_rq_complete", Some(&filter))?;
    }
    if kinds.contains(&Kind::Journal) && inst.has_event("jbd2/jbd2_run_stats") {
        inst.enable(
            "jbd2/jbd2_run_stats",
            Some(&format!("dev == {}", dev.trace_dev())),
        )?;
    }
    if kinds.contains(&Kind::Writeback) && inst.has_event("writeback/writeback_start") {
        inst.enable(
            "writeback/writeback_start",
            Some(&format!("name == \"{}:{}\"", dev.major, dev.minor)),
        )?;
    }
    let spool = if kinds.contains(&Kind::Blockio) {
        Some(Spool::new(scratch)?)
    } else {
        None
    };
    let state = Arc::new(Mutex::new(TraceState::new(spool)));
    let stop = Arc::new(AtomicBool::new(false));
    let pipe = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
        .open(inst.pipe_path())
        .map_err(|e| format!("cannot open {}: {e}", inst.pipe_path().display()))?;
    inst.set_on(true)?;
    let (st, sp) = (Arc::clone(&state), Arc::clone(&stop));
    let keep_dev = dev.trace_dev();
    let reader = std::thread::Builder::new()
        .name(crate::stacks::PROBE_THREADS[1].into())
        .spawn(move || read_pipe(pipe, st, sp, keep_dev))
        .map_err(|e| format!("cannot start the trace reader: {e}"))?;
    Ok(Tracer {
        instance: inst,
        state,
        stop,
        reader: Some(reader),
    })
}

use std::os::unix::fs::OpenOptionsExt;

fn read_pipe(
    mut pipe: std::fs::File,
    state: Arc<Mutex<TraceState>>,
    stop: Arc<AtomicBool>,
    _dev: u32,
) {
    let mut buf = vec![0u8; 1 << 20];
    let mut carry = String::new();
    loop {
        // Once told to stop (tracing is already off), drain what is left without waiting.
        let stopping = stop.load(Ordering::Relaxed);
        if !stopping {
            let mut fds = [rustix::event::PollFd::new(
                &pipe,
                rustix::event::PollFlags::IN,
            )];
            let _ = rustix::event::poll(
                &mut fds,
                Some(&rustix::time::Timespec {
                    tv_sec: 0,
                    tv_nsec: 50_000_000,
                }),
            );
        }
        match pipe.read(&mut buf) {
            Ok(n) if n > 0 => {
                carry.push_str(&String::from_utf8_lossy(&buf[..n]));
                let mut st = state.lock().unwrap_or_else(|e| e.into_inner());
                let last_nl = carry.rfind('\n').map(|i| i + 1).unwrap_or(0);
                for line in carry[..last_nl].lines() {
                    st.line(line);
                }
                carry.drain(..last_nl);
            }
            _ if stopping => return,
            _ => {}
        }
    }
}

/// The kernel threads (children of kthreadd) working for the filesystem's
/// device now: (pid, comm, CPU ticks). A kernel worker counts while its
/// name says it works for this device.
fn fs_kthreads(t: &Targets) -> Vec<(u32, String, u64)> {
    let mut v = Vec::new();
    let Some(dev) = t.device.as_ref() else {
        return v;
    };
    let majmin = format!("{}:{}", dev.major, dev.minor);
    let Ok(rd) = std::fs::read_dir("/proc") else {
        return v;
    };
    for e in rd.flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        let ppid = stat
            .rsplit(')')
            .next()
            .and_then(|r| r.split_whitespace().nth(1))
            .unwrap_or("");
        if ppid != "2" {
            continue;
        }
        if let Some((comm, _, ticks)) = procfs::parse_pid_stat(&stat) {
            if procfs::kthread_works_for(&comm, &dev.name, &majmin) {
                v.push((pid, comm, ticks));
            }
        }
    }
    v
}

/// What the sampler hands over to [`crate::ProbeSet`] as it goes.
pub(crate) type Shared<T> = Arc<Mutex<Vec<T>>>;

struct Phase {
    index: u32,
    name: String,
    start: Instant,
    start_mono: u64,
    last: Instant,
}

pub(crate) struct Sampler {
    kinds: Vec<Kind>,
    targets: Targets,
    scratch: PathBuf,
    points: Shared<ProbePoint>,
    metrics: Shared<Metric>,
    phase: Option<Phase>,
    cpu_prev: Option<CpuTicks>,
    disk_prev: HashMap<String, DiskStats>,
    disk_first: HashMap<String, DiskStats>,
    watch_kthreads: bool,
    kthread_prev: HashMap<u32, (String, u64)>,
    kthread_phase: BTreeMap<String, u64>,
    cpu_phase: Vec<(String, f64)>,
    /// The workload process's CPU at the last sample, and over the phase.
    proc_prev: Option<ProcessTicks>,
    proc_phase: ProcessTicks,
    frag_next: Instant,
    frag_every: Duration,
    stacks: StackCounts,
    next_stack: Instant,
    tracer: Option<Tracer>,
    xfs_prev: Option<Vec<(&'static str, f64)>>,
    btrfs_dir: Option<PathBuf>,
    btrfs_prev: Option<Vec<(String, f64)>>,
    perf: Option<perf::Profile>,
    run_notes: Vec<ProbeNote>,
    first_mono: Option<u64>,
    /// The workload's process and memory cgroup (this process's by default).
    pid: u32,
    mem_cgroup: Option<MemoryCgroup>,
}

/// The note of a typed value.
fn typed<T: Note>(phase: Option<u32>, value: &T) -> ProbeNote {
    note(phase, T::PROBE, T::KEY, value.to_value())
}

fn note(phase: Option<u32>, probe: &str, key: &str, value: serde_json::Value) -> ProbeNote {
    ProbeNote {
        phase_index: phase,
        probe: probe.into(),
        key: key.into(),
        value,
        blob: None,
    }
}

impl Sampler {
    /// `explicit`: the user named the probes, so a probe that does not
    /// apply here (no block device, no image) is worth a word on stderr
    /// too; real failures (tracefs, perf) always are.
    pub(crate) fn new(
        kinds: &[Kind],
        targets: Targets,
        scratch: PathBuf,
        (points, metrics): (Shared<ProbePoint>, Shared<Metric>),
        explicit: bool,
    ) -> (Sampler, Vec<String>) {
        let mut problems = Vec::new();
        let mut run_notes = Vec::new();
        let no_device = targets.device.is_none();
        let mut unavailable = |k: Kind, why: String, applies: bool, notes: &mut Vec<ProbeNote>| {
            if applies || explicit {
                problems.push(format!("probe {}: {why}", k.name()));
            }
            notes.push(note(
                None,
                k.name(),
                "unavailable",
                serde_json::Value::String(why),
            ));
        };
        let mut kinds = kinds.to_vec();
        let traced: Vec<Kind> = kinds
            .iter()
            .copied()
            .filter(|k| matches!(k, Kind::Blockio | Kind::Journal | Kind::Writeback))
            .collect();
        let mut tracer = None;
        if !traced.is_empty() {
            match start_tracer(&kinds, &targets, &scratch) {
                Ok(t) => tracer = Some(t),
                Err(e) => {
                    for k in &traced {
                        if *k != Kind::Journal || targets.fs_type.starts_with("ext") {
                            unavailable(*k, e.clone(), !no_device, &mut run_notes);
                        }
                    }
                    kinds.retain(|k| {
                        !matches!(k, Kind::Blockio | Kind::Writeback)
                            && (*k != Kind::Journal || !targets.fs_type.starts_with("ext"))
                    });
                }
            }
        }
        if kinds.contains(&Kind::Frag) && targets.image.is_none() {
            unavailable(
                Kind::Frag,
                "the filesystem is not on a loop device, so there is no image to watch".into(),
                false,
                &mut run_notes,
            );
            kinds.retain(|k| *k != Kind::Frag);
        }
        if kinds.contains(&Kind::Perf) && !perf::available() {
            unavailable(
                Kind::Perf,
                "perf is not installed (apt-get install linux-perf): no kernel profile".into(),
                true,
                &mut run_notes,
            );
            kinds.retain(|k| *k != Kind::Perf);
        }
        let btrfs_dir = targets
            .device
            .as_ref()
            .and_then(|d| journal::btrfs_dir(&d.name));
        let watch_kthreads = kinds.contains(&Kind::Cpu) || kinds.contains(&Kind::Stacks);
        let now = Instant::now();
        run_notes.push(typed(
            None,
            &crate::TargetsNote {
                device: targets.device.as_ref().map(|d| d.name.clone()),
                device_dev: targets
                    .device
                    .as_ref()
                    .map(|d| format!("{},{}", d.major, d.minor)),
                device_sectors: targets.device.as_ref().and_then(|d| d.sectors()),
                image: targets.image.as_ref().map(|p| p.display().to_string()),
                host: targets.host.as_ref().map(|d| d.name.clone()),
                host_dev: targets
                    .host
                    .as_ref()
                    .map(|d| format!("{},{}", d.major, d.minor)),
                fs_type: targets.fs_type.clone(),
                probes: kinds.iter().map(|k| k.name().to_string()).collect(),
            },
        ));
        (
            Sampler {
                kinds,
                targets,
                scratch,
                points,
                metrics,
                phase: None,
                cpu_prev: None,
                disk_prev: HashMap::new(),
                disk_first: HashMap::new(),
                watch_kthreads,
                kthread_prev: HashMap::new(),
                proc_prev: None,
                proc_phase: ProcessTicks::default(),
                kthread_phase: BTreeMap::new(),
                cpu_phase: Vec::new(),
                frag_next: now,
                frag_every: Duration::from_secs(1),
                stacks: StackCounts::default(),
                next_stack: now,
                tracer,
                xfs_prev: None,
                btrfs_dir,
                btrfs_prev: None,
                perf: None,
                run_notes,
                first_mono: None,
                pid: std::process::id(),
                mem_cgroup: own_memory_cgroup().ok(),
            },
            problems,
        )
    }

    fn on(&self, k: Kind) -> bool {
        self.kinds.contains(&k)
    }

    pub(crate) fn run(mut self, rx: mpsc::Receiver<Cmd>) {
        loop {
            let wait = match &self.phase {
                None => Duration::from_secs(3600),
                Some(p) => {
                    let next_sec = p.last + Duration::from_secs(1);
                    let next = if self.on(Kind::Stacks) {
                        next_sec.min(self.next_stack)
                    } else {
                        next_sec
                    };
                    next.saturating_duration_since(Instant::now())
                }
            };
            match rx.recv_timeout(wait) {
                Ok(Cmd::Watch(w)) => {
                    self.pid = w.pid;
                    self.mem_cgroup = w.memory_cgroup;
                }
                Ok(Cmd::PhaseStart(index, name, start)) => self.phase_start(index, name, start),
                Ok(Cmd::PhaseEnd(index, reply)) => {
                    let notes = self.phase_end(index);
                    let _ = reply.send(notes);
                }
                Ok(Cmd::Finish(reply)) => {
                    let _ = reply.send(self.finish());
                    return;
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    self.finish();
                    return;
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    let now = Instant::now();
                    if self.on(Kind::Stacks) && now >= self.next_stack {
                        self.sample_stacks();
                        self.next_stack = now + Duration::from_millis(100);
                    }
                    if self
                        .phase
                        .as_ref()
                        .is_some_and(|p| now >= p.last + Duration::from_secs(1))
                    {
                        self.sample(now);
                    }
                }
            }
        }
    }

    fn phase_start(&mut self, index: u32, name: String, start: Instant) {
        let start_mono = mono_ns().saturating_sub(start.elapsed().as_nanos() as u64);
        self.first_mono.get_or_insert(start_mono);
        self.phase = Some(Phase {
            index,
            name,
            start,
            start_mono,
            last: start,
        });
        self.cpu_prev = std::fs::read_to_string("/proc/stat")
            .ok()
            .and_then(|s| procfs::parse_cpu(&s));
        self.disk_prev.clear();
        self.read_disks(None, 0.0, 0.0);
        self.disk_first = self.disk_prev.clone();
        self.kthread_prev.clear();
        self.kthread_phase.clear();
        self.read_kthreads(None, 0.0);
        self.proc_prev = None;
        self.proc_phase = ProcessTicks::default();
        self.read_process(None, 0.0);
        self.cpu_phase.clear();
        self.stacks.clear();
        self.xfs_prev = self
            .targets
            .device
            .as_ref()
            .and_then(|d| journal::xfs_log_counters(&d.name));
        self.btrfs_prev = self
            .btrfs_dir
            .as_ref()
            .and_then(|d| journal::btrfs_commit_stats(d));
        if let Some(t) = &self.tracer {
            let mut st = t.state.lock().unwrap_or_else(|e| e.into_inner());
            for d in st.devs.values_mut() {
                d.phase = Default::default();
                d.second = Default::default();
            }
            st.commits.clear();
            st.commit_lines.clear();
            st.wb_phase.clear();
            st.wb_second.clear();
        }
        // A baseline extent count at t = 0, so growth during the phase shows.
        if let (true, Some(img)) = (self.on(Kind::Frag), self.targets.image.clone()) {
            if let Ok(n) = frag::count(&img) {
                let mut out = Vec::new();
                self.push(&mut out, "frag", names::IMAGE_EXTENTS, n as f64);
                self.points
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .extend(out);
            }
        }
        if self.on(Kind::Perf) {
            match perf::Profile::start(&self.scratch, &index.to_string()) {
                Ok(p) => self.perf = Some(p),
                Err(e) => self.run_notes.push(note(
                    Some(index),
                    "perf",
                    "error",
                    serde_json::Value::String(e),
                )),
            }
        }
    }

    fn push(&self, out: &mut Vec<ProbePoint>, probe: &str, metric: impl Into<String>, value: f64) {
        if let Some(p) = &self.phase {
            out.push(ProbePoint {
                phase_index: p.index,
                t_s: p.last.duration_since(p.start).as_secs_f64(),
                probe: probe.into(),
                metric: metric.into(),
                value,
            });
        }
    }

    fn read_disks(&mut self, out: Option<&mut Vec<ProbePoint>>, dt: f64, _t: f64) {
        let Ok(text) = std::fs::read_to_string("/proc/diskstats") else {
            return;
        };
        let mut pts = Vec::new();
        for (host, dev) in [
            (false, self.targets.device.clone()),
            (true, self.targets.host.clone()),
        ] {
            let Some(dev) = dev else { continue };
            let Some(now) = procfs::parse_diskstats(&text, &dev.name) else {
                continue;
            };
            if let (Some(prev), true) = (self.disk_prev.get(&dev.name), dt > 0.0) {
                for (m, v) in now.rates_since(prev, dt) {
                    pts.push((if host { names::host(m) } else { m.to_string() }, v));
                }
            }
            self.disk_prev.insert(dev.name.clone(), now);
        }
        if let Some(out) = out {
            for (m, v) in pts {
                self.push(out, "disk", m, v);
            }
        }
    }

    fn read_kthreads(&mut self, out: Option<&mut Vec<ProbePoint>>, dt: f64) {
        if !self.watch_kthreads {
            return;
        }
        let mut total = 0u64;
        let mut now = HashMap::new();
        for (pid, comm, ticks) in fs_kthreads(&self.targets) {
            if let Some((_, before)) = self.kthread_prev.get(&pid) {
                let d = ticks.saturating_sub(*before);
                total += d;
                *self.kthread_phase.entry(comm.clone()).or_insert(0) += d;
            }
            now.insert(pid, (comm, ticks));
        }
        self.kthread_prev = now;
        if let (Some(out), true) = (out, dt > 0.0) {
            self.push(
                out,
                "cpu",
                names::FS_KTHREADS_PCT,
                total as f64 / procfs::user_hz() / dt * 100.0,
            );
        }
    }

    /// The workload process's CPU since the last reading (its usr and sys
    /// as % of one CPU into `out`, and added to the phase's).
    fn read_process(&mut self, out: Option<&mut Vec<ProbePoint>>, dt: f64) {
        let Some(now) = std::fs::read_to_string(format!("/proc/{}/stat", self.pid))
            .ok()
            .and_then(|s| procfs::parse_process_ticks(&s))
        else {
            return;
        };
        if let (Some(prev), Some(out), true) = (self.proc_prev, out, dt > 0.0) {
            let (usr, sys) = (
                now.usr.saturating_sub(prev.usr),
                now.sys.saturating_sub(prev.sys),
            );
            self.proc_phase.usr += usr;
            self.proc_phase.sys += sys;
            let pct = |t: u64| t as f64 / procfs::user_hz() / dt * 100.0;
            self.push(out, "cpu", names::WORKLOAD_USR_PCT, pct(usr));
            self.push(out, "cpu", names::WORKLOAD_SYS_PCT, pct(sys));
        }
        self.proc_prev = Some(now);
    }

    fn sample_stacks(&mut self) {
        if self.phase.is_none() {
            return;
        }
        self.stacks.sample_process(self.pid, "workload");
        for (pid, (comm, _)) in &self.kthread_prev {
            self.stacks.sample_task(
                std::path::Path::new(&format!("/proc/{pid}")),
                &format!("kthread {comm}"),
            );
        }
        self.stacks.round();
    }

    fn sample(&mut self, now: Instant) {
        let Some(p) = &mut self.phase else { return };
        let dt = now.duration_since(p.last).as_secs_f64();
        if dt <= 0.0 {
            return;
        }
        p.last = now;
        let mut out = Vec::new();
        if self.on(Kind::Cpu) {
            if let Some(cur) = std::fs::read_to_string("/proc/stat")
                .ok()
                .and_then(|s| procfs::parse_cpu(&s))
            {
                if let Some(prev) = self.cpu_prev {
                    for (m, v) in cur.percent_since(&prev, dt) {
                        self.cpu_phase.push((m.to_string(), v * dt));
                        self.push(&mut out, "cpu", m, v);
                    }
                }
                self.cpu_prev = Some(cur);
            }
            self.read_kthreads(Some(&mut out), dt);
            self.read_process(Some(&mut out), dt);
        }
        if self.on(Kind::Disk) {
            self.read_disks(Some(&mut out), dt, 0.0);
        }
        if self.on(Kind::Mem) {
            if let Ok(m) = std::fs::read_to_string("/proc/meminfo") {
                for (k, v) in procfs::parse_meminfo(&m) {
                    self.push(&mut out, "mem", k, v);
                }
            }
            if let Some(cg) = &self.mem_cgroup {
                let usage = cg.usage();
                let hits = cg.limit_hits();
                if let Some(v) = usage {
                    self.push(&mut out, "mem", names::CGROUP_USAGE_BYTES, v as f64);
                }
                if let Some(v) = hits {
                    self.push(&mut out, "mem", names::CGROUP_FAILCNT, v as f64);
                }
            }
        }
        if let Some(t) = &self.tracer {
            let mut st = t.state.lock().unwrap_or_else(|e| e.into_inner());
            let mono = mono_ns();
            let mut pts = Vec::new();
            if self.kinds.contains(&Kind::Blockio) {
                for (host, dev) in [
                    (false, self.targets.device.clone()),
                    (true, self.targets.host.clone()),
                ] {
                    let Some(dev) = dev else { continue };
                    let tr = st.devs.entry(dev.trace_dev()).or_default();
                    for (m, v) in tr.take_second(mono, dt) {
                        let m = if host { names::host(&m) } else { m };
                        pts.push(("blockio", m, v, None));
                    }
                }
                pts.push((
                    "blockio",
                    names::DROPPED_EVENTS.into(),
                    t.instance.dropped() as f64,
                    None,
                ));
            }
            let start_mono = self.phase.as_ref().map(|p| p.start_mono).unwrap_or(0);
            for (at, fields) in st.commits.drain(..) {
                let ts = at.saturating_sub(start_mono) as f64 / 1e9;
                for (k, v) in fields {
                    if k != "tid" {
                        pts.push(("journal", names::jbd2_commit(k), v, Some(ts)));
                    }
                }
            }
            for (reason, n) in std::mem::take(&mut st.wb_second) {
                pts.push(("writeback", names::writeback_start(&reason), n as f64, None));
            }
            drop(st);
            for (probe, m, v, at) in pts {
                match at {
                    Some(ts) => {
                        let idx = self.phase.as_ref().map(|p| p.index).unwrap_or(0);
                        out.push(ProbePoint {
                            phase_index: idx,
                            t_s: ts,
                            probe: probe.into(),
                            metric: m,
                            value: v,
                        });
                    }
                    None => self.push(&mut out, probe, m, v),
                }
            }
        }
        if self.on(Kind::Journal) {
            if let Some(d) = &self.targets.device {
                if let (Some(prev), Some(cur)) =
                    (&self.xfs_prev, journal::xfs_log_counters(&d.name))
                {
                    let deltas: Vec<_> = cur
                        .iter()
                        .zip(prev)
                        .map(|((k, a), (_, b))| (*k, (a - b) / dt))
                        .collect();
                    for (k, v) in deltas {
                        self.push(&mut out, "journal", names::xfs_per_s(k), v);
                    }
                    self.xfs_prev = Some(cur);
                }
            }
            if let Some(dir) = &self.btrfs_dir {
                if let Some(cur) = journal::btrfs_commit_stats(dir) {
                    for (k, v) in &cur {
                        self.push(&mut out, "journal", k.clone(), *v);
                    }
                    self.btrfs_prev = Some(cur);
                }
            }
        }
        if self.on(Kind::Frag) && now >= self.frag_next {
            if let Some(img) = &self.targets.image {
                let t0 = Instant::now();
                if let Ok(n) = frag::count(img) {
                    self.push(&mut out, "frag", names::IMAGE_EXTENTS, n as f64);
                }
                // Counting costs about 0.5 us an extent: keep it under 5% of the time.
                self.frag_every = Duration::from_secs(1).max(t0.elapsed() * 20);
                self.frag_next = now + self.frag_every;
            }
        }
        self.points
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend(out);
    }

    fn phase_end(&mut self, index: u32) -> Vec<ProbeNote> {
        self.sample(Instant::now());
        let mut notes = Vec::new();
        let secs = self
            .phase
            .as_ref()
            .map(|p| p.start.elapsed().as_secs_f64())
            .unwrap_or(0.0)
            .max(1e-9);
        if self.on(Kind::Cpu) {
            let mut threads: Vec<(&String, &u64)> =
                self.kthread_phase.iter().filter(|(_, t)| **t > 0).collect();
            threads.sort_by(|a, b| b.1.cmp(a.1));
            let summary = CpuSummary {
                mean: CpuShares::from_samples(
                    self.cpu_phase.iter().map(|(m, v)| (m.as_str(), *v)),
                    secs,
                ),
                workload: self.proc_prev.map(|_| {
                    let s = |t: u64| t as f64 / procfs::user_hz();
                    ProcessCpu {
                        usr_s: s(self.proc_phase.usr),
                        sys_s: s(self.proc_phase.sys),
                        usr_pct: s(self.proc_phase.usr) / secs * 100.0,
                        sys_pct: s(self.proc_phase.sys) / secs * 100.0,
                    }
                }),
                fs_kthreads: threads
                    .iter()
                    .take(8)
                    .map(|(c, t)| ThreadCpu {
                        thread: c.to_string(),
                        cpu_s: **t as f64 / procfs::user_hz(),
                    })
                    .collect(),
            };
            notes.push(typed(Some(index), &summary));
        }
        if self.on(Kind::Disk) {
            let text = std::fs::read_to_string("/proc/diskstats").unwrap_or_default();
            let mut summary = DiskSummary::default();
            for dev in [self.targets.device.clone(), self.targets.host.clone()]
                .into_iter()
                .flatten()
            {
                if let (Some(a), Some(b)) = (
                    self.disk_first.get(&dev.name),
                    procfs::parse_diskstats(&text, &dev.name),
                ) {
                    summary.0.insert(
                        dev.name.clone(),
                        DiskPhase {
                            read_bytes: (b.sectors_read.saturating_sub(a.sectors_read)) * 512,
                            write_bytes: (b.sectors_written.saturating_sub(a.sectors_written))
                                * 512,
                            reads: b.reads.saturating_sub(a.reads),
                            writes: b.writes.saturating_sub(a.writes),
                            util_pct: (b.ms_io.saturating_sub(a.ms_io)) as f64 / 10.0 / secs,
                        },
                    );
                }
            }
            notes.push(typed(Some(index), &summary));
        }
        if let Some(t) = &self.tracer {
            let st = t.state.lock().unwrap_or_else(|e| e.into_inner());
            if self.kinds.contains(&Kind::Blockio) {
                let mut summary = BlockioSummary {
                    dropped_events: t.instance.dropped(),
                    ..Default::default()
                };
                for dev in [self.targets.device.clone(), self.targets.host.clone()]
                    .into_iter()
                    .flatten()
                {
                    if let Some(tr) = st.devs.get(&dev.trace_dev()) {
                        summary
                            .devices
                            .insert(dev.name.clone(), BlockioPhase::new(&tr.phase, secs));
                    }
                }
                notes.push(typed(Some(index), &summary));
                let phase = self.phase.as_ref().map(|p| p.name.as_str());
                let guest = self
                    .targets
                    .device
                    .as_ref()
                    .and_then(|d| st.devs.get(&d.trace_dev()));
                let backend = self
                    .targets
                    .host
                    .as_ref()
                    .and_then(|d| st.devs.get(&d.trace_dev()));
                if let (Some(g), Some(b)) = (guest, backend) {
                    self.metrics
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .extend(guest_and_backend(phase, &g.phase, &b.phase, secs));
                }
            }
            if self.kinds.contains(&Kind::Journal) && !st.commit_lines.is_empty() {
                notes.push(typed(Some(index), &Jbd2Commits(st.commit_lines.clone())));
            }
            if self.kinds.contains(&Kind::Writeback) {
                notes.push(typed(Some(index), &WritebackReasons(st.wb_phase.clone())));
            }
        }
        if self.on(Kind::Stacks) {
            notes.push(typed(
                Some(index),
                &StacksTop {
                    rounds: self.stacks.samples,
                    stacks: self.stacks.top(10),
                },
            ));
        }
        if let Some(p) = self.perf.take() {
            match p.finish() {
                Ok((top, graph)) => {
                    notes.push(typed(Some(index), &top));
                    notes.push(note(
                        Some(index),
                        "perf",
                        "callgraph",
                        serde_json::Value::String(graph),
                    ));
                }
                Err(e) => notes.push(note(
                    Some(index),
                    "perf",
                    "error",
                    serde_json::Value::String(e),
                )),
            }
        }
        self.phase = None;
        notes
    }

    fn finish(&mut self) -> Vec<ProbeNote> {
        let mut notes = std::mem::take(&mut self.run_notes);
        if let Some(mut t) = self.tracer.take() {
            let _ = t.instance.set_on(false);
            t.stop.store(true, Ordering::Relaxed);
            if let Some(r) = t.reader.take() {
                let _ = r.join();
            }
            let mut st = t.state.lock().unwrap_or_else(|e| e.into_inner());
            if self.kinds.contains(&Kind::Blockio) {
                let blob = st.spool.take().map(|s| s.finish());
                let mut n = typed(
                    None,
                    &BlockioEvents {
                        kept: st.kept,
                        not_kept: st.not_kept,
                        dropped: t.instance.dropped(),
                        t0_mono_ns: self.first_mono.unwrap_or(0),
                        record_bytes: blockio::RECORD as u64,
                    },
                );
                match blob {
                    Some(Ok(b)) => n.blob = Some(b),
                    Some(Err(e)) => {
                        notes.push(note(None, "blockio", "error", serde_json::Value::String(e)))
                    }
                    None => {}
                }
                notes.push(n);
            }
            drop(st);
            // Dropping the instance switches tracing off and removes it.
        }
        if self.on(Kind::Frag) {
            if let Some(img) = &self.targets.image {
                if let Ok(ext) = frag::extents(img, false) {
                    let mut n = typed(
                        None,
                        &FragFinalMap {
                            image: img.display().to_string(),
                            extents: ext.len() as u64,
                        },
                    );
                    n.blob = Some(fslab_record::Blob::Bytes(blockio::compress(
                        &frag::encode_map(&ext),
                    )));
                    notes.push(n);
                }
            }
        }
        notes
    }
}

/// A phase's IOs on the filesystem's loop device (the guest) against those
/// on the device under its image (the backend): counts, per second, and
/// backend IOs per guest IO (seed 000: "btrfs does a couple of hundred
/// IOPS, the back end 25,000").
pub(crate) fn guest_and_backend(
    phase: Option<&str>,
    guest: &blockio::DevAcc,
    backend: &blockio::DevAcc,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guest_and_backend_ios_and_their_ratio() {
        let guest = blockio::DevAcc {
            reads: 50,
            writes: 150,
            ..Default::default()
        };
        let backend = blockio::DevAcc {
            writes: 25_000,
            ..Default::default()
        };
        let v = guest_and_backend(Some("create"), &guest, &backend, 2.0);
        let get = |n: &str| v.iter().find(|m| m.name == n).map(|m| m.value);
        assert_eq!(get(names::GUEST_IOS), Some(200.0));
        assert_eq!(get(names::BACKEND_IOPS), Some(12_500.0));
        assert_eq!(get(names::BACKEND_PER_GUEST), Some(125.0));
        assert!(v
            .iter()
            .all(|m| m.source == "blockio" && m.phase.as_deref() == Some("create")));
        // No guest IO: no ratio.
        let none = guest_and_backend(None, &Default::default(), &backend, 1.0);
        assert!(none.iter().all(|m| m.name != names::BACKEND_PER_GUEST));
    }
}
