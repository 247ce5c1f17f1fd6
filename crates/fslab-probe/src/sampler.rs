//! The probes' own thread: it only schedules. Each probe is sampled every
//! [`Probe::period`] while a phase runs (once a second; wait stacks ten
//! times a second), told when phases start and end, and its samples become
//! the run's points on the workload's clock. A second thread reads the
//! trace events ([`crate::trace::Tracer`]).

use std::path::PathBuf;
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use fslab_model::{Metric, ProbeNote, ProbePoint};

use crate::cgroup::{own_memory_cgroup, MemoryCgroup};
use crate::devices::Targets;
use crate::mono_ns;
use crate::plugin::Needs;
use crate::probe::{note, typed_note, Ctx, PhaseInfo, Probe, Reading};
use crate::source::Source;
use crate::trace::{start_tracer, Tracer};
use crate::{Cmd, ProbeRef};

/// A need a probe may have that is not met here: why, and whether that is
/// worth a word on stderr though the probe was not named.
type Check<'a> = &'a dyn Fn(&Needs) -> Option<(String, bool)>;

/// What the sampler hands over to [`crate::ProbeSet`] as it goes.
pub(crate) type Shared<T> = Arc<Mutex<Vec<T>>>;

/// What every probe may look at (see [`Ctx`]).
struct World {
    source: Box<dyn Source>,
    targets: Targets,
    scratch: PathBuf,
    tracer: Option<Tracer>,
    pid: u32,
    memory_cgroup: Option<MemoryCgroup>,
    first_mono: Option<u64>,
    /// The device's kernel threads, and when /proc was last scanned for them.
    kthreads: Vec<(u32, String)>,
    kthreads_at: Option<Instant>,
    /// A program the workload started ([`Cmd::Program`]).
    program: Option<u32>,
    /// `pid`, and the program and its descendants found by the last scan.
    processes: Vec<u32>,
    /// The processes doing the work (see [`Ctx::workers`]).
    workers: Vec<u32>,
}

impl World {
    /// What the probes see now; the device's kernel threads are looked for
    /// again when the last look is a second old.
    fn ctx<'a>(&'a mut self, phase: &'a PhaseInfo) -> Ctx<'a> {
        if self
            .kthreads_at
            .is_none_or(|t| t.elapsed() >= Duration::from_secs(1))
        {
            let found = crate::probes::scan(&*self.source, &self.targets, self.program);
            self.kthreads = found.kthreads;
            let tree: Vec<(u32, bool)> = found
                .program
                .into_iter()
                .filter(|p| p.0 != self.pid)
                .collect();
            self.processes = std::iter::once(self.pid)
                .chain(tree.iter().map(|p| p.0))
                .collect();
            // A process of the program's that started others coordinates
            // them (as a main thread does its workers): the workers are
            // those without children, the workload's own process while
            // there is no program.
            self.workers = tree.iter().filter(|p| !p.1).map(|p| p.0).collect();
            if self.workers.is_empty() {
                self.workers = vec![self.pid];
            }
            self.kthreads_at = Some(Instant::now());
        }
        let dropped = self.dropped();
        Ctx {
            source: &*self.source,
            targets: &self.targets,
            pid: self.pid,
            processes: &self.processes,
            workers: &self.workers,
            memory_cgroup: self.memory_cgroup.as_ref(),
            trace: self.tracer.as_ref().map(|t| &*t.state),
            trace_dropped: dropped,
            phase,
            first_mono_ns: self.first_mono.unwrap_or(0),
            now_mono_ns: mono_ns(),
            scratch: &self.scratch,
            kthreads: &self.kthreads,
        }
    }

    fn dropped(&self) -> u64 {
        self.tracer
            .as_ref()
            .map(|t| t.instance.dropped())
            .unwrap_or(0)
    }
}

/// A probe and when it is next due.
struct Entry {
    kind: ProbeRef,
    probe: Box<dyn Probe>,
    last: Instant,
    next: Instant,
}

pub(crate) struct Sampler {
    world: World,
    probes: Vec<Entry>,
    points: Shared<ProbePoint>,
    metrics: Shared<Metric>,
    /// The phase running (None between phases), and when it started.
    phase: Option<(PhaseInfo, Instant)>,
    /// The last phase, for the notes at the end of the run.
    last_phase: PhaseInfo,
    run_notes: Vec<ProbeNote>,
}

impl Sampler {
    /// The probes of `kinds`, watching `targets`. `explicit`: the user
    /// named the probes, so a probe that does not apply here (no block
    /// device, no image) is worth a word on stderr too; real failures
    /// (tracefs, perf) always are.
    pub(crate) fn new(
        kinds: &[ProbeRef],
        targets: Targets,
        scratch: PathBuf,
        shared: (Shared<ProbePoint>, Shared<Metric>),
        explicit: bool,
        source: Box<dyn Source>,
    ) -> (Sampler, Vec<String>) {
        let mut problems = Vec::new();
        let mut run_notes = Vec::new();
        let no_device = targets.device.is_none();
        let mut unavailable =
            |k: ProbeRef, why: String, applies: bool, notes: &mut Vec<ProbeNote>| {
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
        // `--probes none` asks for no instrument: not even the machine's own.
        let asked_any = !kinds.is_empty();
        let mut kinds = kinds.to_vec();
        // Each probe's needs, checked in turn: tracing, root, an image, perf.
        let traced: Vec<ProbeRef> = kinds
            .iter()
            .copied()
            .filter(|k| k.needs().traces_on(&targets.fs_type))
            .collect();
        let mut tracer = None;
        if !traced.is_empty() {
            let needs: Vec<Needs> = traced.iter().map(|k| k.needs()).collect();
            match start_tracer(&needs, &targets, &scratch) {
                Ok(t) => tracer = Some(t),
                Err(e) => {
                    for k in &traced {
                        unavailable(*k, e.to_string(), !no_device, &mut run_notes);
                    }
                    kinds.retain(|k| !traced.contains(k));
                }
            }
        }
        // Kernel stacks of other threads need root; so does a system-wide
        // profile, on most machines.
        let root = rustix::process::geteuid().is_root();
        let checks: [Check; 3] = [
            &|n: &Needs| {
                n.root.filter(|_| !root).map(|what| {
                    (
                        format!("{what} needs root (run fslab as root for it)"),
                        false,
                    )
                })
            },
            &|n: &Needs| {
                (n.image && targets.image.is_none()).then(|| {
                    (
                        "the filesystem is not on a loop device, so there is no image to watch"
                            .into(),
                        false,
                    )
                })
            },
            &|n: &Needs| {
                (n.perf && !source.can_profile()).then(|| {
                    (
                        "perf is not installed (apt-get install linux-perf): no kernel profile"
                            .into(),
                        true,
                    )
                })
            },
        ];
        for check in checks {
            for k in kinds.clone() {
                if let Some((why, applies)) = check(&k.needs()) {
                    unavailable(k, why, applies, &mut run_notes);
                    kinds.retain(|x| *x != k);
                }
            }
        }
        let names: Vec<&str> = kinds.iter().map(|k| k.name()).collect();
        if asked_any {
            run_notes.push(typed_note(None, &crate::TargetsNote::of(&targets, &names)));
        }
        // The machine's own measurements run whatever probes were asked for.
        let always = if asked_any {
            crate::registry::always()
        } else {
            Vec::new()
        };
        let probes = kinds
            .iter()
            .chain(always.iter())
            .map(|k| (*k, k.plugin().make()))
            .collect();
        let mut s = Sampler::with_probes(probes, source, targets, scratch, shared);
        s.world.tracer = tracer;
        s.run_notes = run_notes;
        (s, problems)
    }

    /// A sampler of the given probes (tests give fakes).
    pub(crate) fn with_probes(
        probes: Vec<(ProbeRef, Box<dyn Probe>)>,
        source: Box<dyn Source>,
        targets: Targets,
        scratch: PathBuf,
        (points, metrics): (Shared<ProbePoint>, Shared<Metric>),
    ) -> Sampler {
        let now = Instant::now();
        Sampler {
            world: World {
                source,
                targets,
                scratch,
                tracer: None,
                pid: std::process::id(),
                memory_cgroup: own_memory_cgroup().ok(),
                first_mono: None,
                kthreads: Vec::new(),
                kthreads_at: None,
                program: None,
                processes: vec![std::process::id()],
                workers: vec![std::process::id()],
            },
            probes: probes
                .into_iter()
                .map(|(kind, probe)| Entry {
                    kind,
                    probe,
                    last: now,
                    next: now,
                })
                .collect(),
            points,
            metrics,
            phase: None,
            last_phase: PhaseInfo::default(),
            run_notes: Vec::new(),
        }
    }

    pub(crate) fn run(mut self, rx: mpsc::Receiver<Cmd>) {
        loop {
            let wait = match &self.phase {
                None => Duration::from_secs(3600),
                Some(_) => self
                    .probes
                    .iter()
                    .map(|e| e.next)
                    .min()
                    .map(|n| n.saturating_duration_since(Instant::now()))
                    .unwrap_or(Duration::from_secs(3600)),
            };
            match rx.recv_timeout(wait) {
                Ok(Cmd::Watch(w)) => {
                    self.world.pid = w.pid;
                    self.world.processes = vec![w.pid];
                    self.world.workers = vec![w.pid];
                    self.world.memory_cgroup = w.memory_cgroup;
                }
                Ok(Cmd::Program(pid)) => {
                    // Looked for at once: the program is watched from its
                    // first sample, its descendants within a second.
                    self.world.program = Some(pid);
                    self.world.kthreads_at = None;
                }
                Ok(Cmd::PhaseStart(index, name, start, reply)) => {
                    self.phase_start(index, name, start);
                    let _ = reply.send(());
                }
                Ok(Cmd::PhaseEnd(reply)) => {
                    let _ = reply.send(self.phase_end());
                }
                Ok(Cmd::Finish(reply)) => {
                    let _ = reply.send(self.finish());
                    return;
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    self.finish();
                    return;
                }
                Err(mpsc::RecvTimeoutError::Timeout) => self.sample(Instant::now(), false),
            }
        }
    }

    fn keep(&self, out: Vec<ProbePoint>) {
        self.points
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend(out);
    }

    fn points_of(
        info: &PhaseInfo,
        kind: ProbeRef,
        t_s: f64,
        samples: Vec<Reading>,
    ) -> Vec<ProbePoint> {
        samples
            .into_iter()
            .map(|s| ProbePoint {
                phase_index: info.index,
                t_s: s.at_s.unwrap_or(t_s),
                probe: kind.name().into(),
                metric: s.metric,
                value: s.value,
            })
            .collect()
    }

    fn phase_start(&mut self, index: u32, name: String, start: Instant) {
        // What was traced before the phase is read before its baselines.
        if let Some(t) = &self.world.tracer {
            t.catch_up(Duration::from_millis(250));
        }
        let start_mono = crate::mono_ns_of(start);
        self.world.first_mono.get_or_insert(start_mono);
        let info = PhaseInfo {
            index,
            name,
            start_mono_ns: start_mono,
        };
        let ctx = self.world.ctx(&info);
        let mut out = Vec::new();
        let now = Instant::now();
        for e in &mut self.probes {
            let s = e.probe.phase_start(&ctx);
            out.extend(Sampler::points_of(&info, e.kind, 0.0, s));
            e.last = start;
            e.next = now + e.probe.period();
        }
        self.keep(out);
        self.phase = Some((info, start));
    }

    /// Samples the probes that are due (with `all`, every probe sampled
    /// once a second or less often: the phase's last, partial second).
    fn sample(&mut self, now: Instant, all: bool) {
        let Some((info, start)) = &self.phase else {
            return;
        };
        let ctx = self.world.ctx(info);
        let t_s = now.duration_since(*start).as_secs_f64();
        let mut out = Vec::new();
        for e in &mut self.probes {
            let period = e.probe.period();
            let due = if all {
                period >= Duration::from_secs(1)
            } else {
                now >= e.next
            };
            let dt = now.duration_since(e.last).as_secs_f64();
            if !due || dt <= 0.0 {
                continue;
            }
            let s = e.probe.sample(&ctx, dt);
            out.extend(Sampler::points_of(info, e.kind, t_s, s));
            e.last = now;
            e.next = now + period;
        }
        self.keep(out);
    }

    fn phase_end(&mut self) -> Vec<ProbeNote> {
        if let Some(t) = &self.world.tracer {
            t.catch_up(Duration::from_millis(250));
        }
        self.sample(Instant::now(), true);
        let Some((info, start)) = self.phase.take() else {
            return Vec::new();
        };
        let secs = start.elapsed().as_secs_f64().max(1e-9);
        let ctx = self.world.ctx(&info);
        let mut notes = Vec::new();
        let mut metrics = Vec::new();
        for e in &mut self.probes {
            let out = e.probe.phase_end(&ctx, secs);
            notes.extend(out.notes);
            metrics.extend(out.metrics);
        }
        self.metrics
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend(metrics);
        self.last_phase = info;
        notes
    }

    fn finish(&mut self) -> Vec<ProbeNote> {
        let mut notes = std::mem::take(&mut self.run_notes);
        if let Some(t) = self.world.tracer.as_mut() {
            t.stop();
        }
        let info = self
            .phase
            .take()
            .map(|p| p.0)
            .unwrap_or_else(|| self.last_phase.clone());
        let ctx = self.world.ctx(&info);
        for e in &mut self.probes {
            notes.extend(e.probe.finish(&ctx));
        }
        // Dropping the tracer removes its instance.
        self.world.tracer = None;
        notes
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU32, Ordering};

    use fslab_model::{Better, Monitor, Unit};

    use super::*;
    use crate::notes::Note;
    use crate::probe::PhaseOut;
    use crate::source::FakeSource;
    use crate::ProbeSet;

    /// Counts its calls; samples `n` (its number of samples so far).
    struct Fake {
        name: &'static str,
        period: Duration,
        samples: u32,
        finished: Arc<AtomicU32>,
    }

    impl Probe for Fake {
        fn period(&self) -> Duration {
            self.period
        }
        fn phase_start(&mut self, _ctx: &Ctx) -> Vec<Reading> {
            self.samples = 0;
            vec![Reading::at("start", 1.0, 0.0)]
        }
        fn sample(&mut self, ctx: &Ctx, dt: f64) -> Vec<Reading> {
            self.samples += 1;
            assert!(dt > 0.0 && ctx.pid == 77, "dt {dt}, pid {}", ctx.pid);
            vec![Reading::now("n", self.samples as f64)]
        }
        fn phase_end(&mut self, ctx: &Ctx, secs: f64) -> PhaseOut {
            PhaseOut {
                notes: vec![note(
                    Some(ctx.phase.index),
                    self.name,
                    "end",
                    serde_json::json!(self.samples),
                )],
                metrics: vec![Metric::new(
                    self.name,
                    Some(&ctx.phase.name),
                    "secs",
                    secs,
                    Unit::Seconds,
                    Better::Neither,
                )],
            }
        }
        fn finish(&mut self, _ctx: &Ctx) -> Vec<ProbeNote> {
            self.finished.fetch_add(1, Ordering::Relaxed);
            vec![note(None, self.name, "finish", serde_json::Value::Null)]
        }
    }

    #[test]
    fn each_probe_is_sampled_on_its_own_period_on_the_phases_clock() {
        let finished = Arc::new(AtomicU32::new(0));
        let fake = |name, ms| -> (ProbeRef, Box<dyn Probe>) {
            let probe: Box<dyn Probe> = Box::new(Fake {
                name,
                period: Duration::from_millis(ms),
                samples: 0,
                finished: Arc::clone(&finished),
            });
            (ProbeRef::of(name).unwrap(), probe)
        };
        let mut set = ProbeSet::with_probes(
            vec![fake("stacks", 50), fake("cpu", 1000)],
            Box::new(FakeSource::new()),
            Targets::default(),
            &std::env::temp_dir(),
        );
        set.watch(crate::Watched {
            pid: 77,
            memory_cgroup: None,
        });
        let start = Instant::now();
        set.phase_start(3, "create", start);
        std::thread::sleep(Duration::from_millis(420));
        let notes = set.phase_end(3, "create");
        let points = set.drain();
        let of = |probe: &str, metric: &str| -> Vec<&ProbePoint> {
            points
                .iter()
                .filter(|p| p.probe == probe && p.metric == metric)
                .collect()
        };
        // The fast probe about every 50 ms, in time order, on the phase's clock.
        let fast = of("stacks", "n");
        assert!((5..=9).contains(&fast.len()), "{fast:?}");
        assert!(fast
            .windows(2)
            .all(|w| w[0].t_s < w[1].t_s && w[1].value == w[0].value + 1.0));
        assert!(fast
            .iter()
            .all(|p| p.phase_index == 3 && p.t_s > 0.0 && p.t_s < 0.6));
        // The once-a-second probe: not due yet, so sampled once, at the phase's end.
        let slow = of("cpu", "n");
        assert_eq!(slow.len(), 1, "{slow:?}");
        assert!(slow[0].t_s >= 0.4, "{slow:?}");
        // Values at the phase's start, at t = 0.
        assert_eq!(of("cpu", "start")[0].t_s, 0.0);
        // Each probe's notes and metrics of the phase.
        assert_eq!(notes.len(), 2);
        assert_eq!(
            notes.iter().find(|n| n.probe == "cpu").unwrap().value,
            serde_json::json!(1)
        );
        let m = set.metrics();
        assert_eq!(m.len(), 2);
        assert!(m
            .iter()
            .all(|x| x.phase.as_deref() == Some("create") && x.value >= 0.4));
        assert!(set.metrics().is_empty(), "drained");
        // Between phases nothing is sampled.
        std::thread::sleep(Duration::from_millis(150));
        assert!(set.drain().is_empty());
        let end = set.finish();
        assert_eq!(end.iter().filter(|n| n.key == "finish").count(), 2);
        assert_eq!(finished.load(Ordering::Relaxed), 2);
        assert!(start.elapsed() < Duration::from_secs(2));
    }

    /// A probe of a test's own, with `needs`.
    struct Needy(&'static str, Needs);

    impl crate::Plugin for Needy {
        fn name(&self) -> &'static str {
            self.0
        }
        fn needs(&self) -> Needs {
            self.1
        }
        fn make(&self) -> Box<dyn Probe> {
            Box::new(Fake {
                name: self.0,
                period: Duration::from_secs(1),
                samples: 0,
                finished: Arc::default(),
            })
        }
    }

    static NEEDS_IMAGE: Needy = Needy(
        "test-needs-image",
        Needs {
            trace: &[],
            spool: false,
            root: None,
            image: true,
            perf: false,
        },
    );
    static NEEDS_PERF: Needy = Needy(
        "test-needs-perf",
        Needs {
            trace: &[],
            spool: false,
            root: None,
            image: false,
            perf: true,
        },
    );
    static NEEDS_NOTHING: Needy = Needy(
        "test-needs-nothing",
        Needs {
            trace: &[],
            spool: false,
            root: None,
            image: false,
            perf: false,
        },
    );

    #[test]
    fn a_registered_probe_starts_only_where_its_needs_are_met() {
        for p in [&NEEDS_IMAGE, &NEEDS_PERF, &NEEDS_NOTHING] {
            let _ = crate::register(p);
        }
        let kinds =
            crate::parse_list("test-needs-image,test-needs-perf,test-needs-nothing").unwrap();
        // No image behind a device, no profiler: by its needs, not its name.
        let (s, problems) = Sampler::new(
            &kinds,
            Targets::default(),
            std::env::temp_dir(),
            (Arc::default(), Arc::default()),
            true,
            Box::new(FakeSource::new()),
        );
        let started: Vec<&str> = s.probes.iter().map(|e| e.kind.name()).collect();
        // The machine's own measurements run whatever was asked for.
        assert_eq!(started, ["test-needs-nothing", "machine"]);
        assert_eq!(
            problems,
            [
                "probe test-needs-image: the filesystem is not on a loop device, so there is no image to watch",
                "probe test-needs-perf: perf is not installed (apt-get install linux-perf): no kernel profile",
            ]
        );
        let unavailable: Vec<&str> = s
            .run_notes
            .iter()
            .filter(|n| n.key == "unavailable")
            .map(|n| n.probe.as_str())
            .collect();
        assert_eq!(unavailable, ["test-needs-image", "test-needs-perf"]);
        let targets = s
            .run_notes
            .iter()
            .find(|n| crate::TargetsNote::is(&n.probe, &n.key))
            .map(|n| crate::TargetsNote::from_value(&n.value))
            .unwrap();
        assert_eq!(targets.probes, ["test-needs-nothing"]);
        // With an image to watch, the image probe starts.
        let with_image = Targets {
            image: Some("/img".into()),
            ..Targets::default()
        };
        let (s, _) = Sampler::new(
            &kinds,
            with_image,
            std::env::temp_dir(),
            (Arc::default(), Arc::default()),
            true,
            Box::new(FakeSource::new()),
        );
        let started: Vec<&str> = s.probes.iter().map(|e| e.kind.name()).collect();
        assert_eq!(
            started,
            ["test-needs-image", "test-needs-nothing", "machine"]
        );
        // A name taken is refused.
        assert_eq!(
            crate::register(&NEEDS_NOTHING).unwrap_err().to_string(),
            "probe \"test-needs-nothing\" is registered already"
        );
    }
}
