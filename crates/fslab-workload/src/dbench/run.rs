//! dbench's run: the clients' threads over the loadfile, the warm-up and measured windows, the per-second lines, the operation table and what is recorded.

#[allow(clippy::wildcard_imports)]
use super::*;
use crate::{Begun, Start};

/// One client's turn at a phase: thread `t`, until `deadline` (the hot
/// loops' clock) or `passes` passes over the loadfile.
struct Turn {
    t: usize,
    deadline: u64,
    passes: u64,
    /// When the warm-up ends and the measured period begins, the client
    /// running on: its statistics start again from there (u64::MAX: never).
    boundary: u64,
}

/// A client replays the loadfile, line after line, timing each operation.
fn client_loop(
    o: &DbenchOptions,
    kinds: &[usize],
    c: &mut Client,
    Turn {
        t,
        deadline,
        passes,
        boundary,
    }: Turn,
    stop: &AtomicBool,
    live: &Live,
    progress: &crate::measure::Progress,
) {
    let mut buf = vec![0u8; 1 << 20];
    let mut done = 0u64;
    let mut bytes = 0u64;
    let mut pass = 0u64;
    let mut now = now_ns();
    while now < deadline && pass < passes && !stop.load(Ordering::Relaxed) {
        let (line, kind) = (&o.lines[c.pos], kinds[c.pos]);
        c.pos = (c.pos + 1) % o.lines.len();
        if c.pos == 0 {
            pass += 1;
        }
        let t0 = now_ns();
        let (status, moved) = exec(o, c, &line.op, &mut buf);
        now = now_ns();
        let ns = now - t0;
        if now >= boundary && c.warm.is_none() {
            // dbench moves its accounting window and runs on.
            let ops = c.stats.iter().map(|s| s.hist.count()).sum();
            let cpu = fslab_sys::rusage(fslab_sys::Who::Thread).unwrap_or_default();
            c.warm = Some((ops, bytes, cpu));
            c.stats = vec![OpStat::default(); OPS.len()];
            (bytes, done) = (0, 0);
        }
        c.stats[kind].hist.record(ns);
        // Only this client raises its maximum (others read or reset it): a
        // plain load first spares the locked read-modify-write per operation.
        if ns > live.max_ns[t].load(Ordering::Relaxed) {
            live.max_ns[t].fetch_max(ns, Ordering::Relaxed);
        }
        if status != line.status && line.op.checks_status() {
            c.mismatches += 1;
            if c.first_mismatches.len() < 5 {
                let m = format!(
                    "client {} line {}: {} returned {status}, the loadfile says {}",
                    c.id,
                    line.number,
                    line.op.name(),
                    line.status
                );
                c.first_mismatches.push(m);
            }
            if status == "NT_STATUS_DISK_FULL" {
                c.error = Some(format!(
                    "client {}: the filesystem is full ({} at line {})",
                    c.id,
                    line.op.name(),
                    line.number
                ));
                break;
            }
        }
        bytes += moved;
        done += 1;
        live.bytes[t].store(bytes, Ordering::Relaxed);
        progress.set(t, done);
    }
}

/// dbench's operation table (count, average and maximum latency per
/// operation), printed; its rows and the largest latency.
fn op_table(merged: &[LatencyHistogram], out: &mut dyn Write) -> (Vec<OpRow>, f64) {
    let _ = writeln!(out, "\n Operation                Count    AvgLat    MaxLat");
    let _ = writeln!(out, " --------------------------------------------------");
    let mut rows = Vec::new();
    let mut max_ms = 0.0f64;
    for (i, h) in merged.iter().enumerate() {
        if h.count() == 0 {
            continue;
        }
        let s = h.summary();
        let row = OpRow {
            operation: OPS[i].into(),
            count: s.count,
            avg_ms: s.mean_ns / 1e6,
            max_ms: s.max_ns as f64 / 1e6,
        };
        max_ms = max_ms.max(row.max_ms);
        let _ = writeln!(
            out,
            " {:<22} {:7} {:9.03} {:9.03}",
            row.operation, row.count, row.avg_ms, row.max_ms
        );
        rows.push(row);
    }
    (rows, max_ms)
}

/// dbench's clients, each with its name (`clientN`) and state.
fn new_clients(o: &DbenchOptions) -> Vec<Mutex<Client>> {
    (1..=o.clients)
        .map(|id| {
            Mutex::new(Client {
                id,
                name: format!("client{id}"),
                paths: Default::default(),
                fds: HashMap::new(),
                dirbuf: vec![std::mem::MaybeUninit::uninit(); 32 << 10],
                pos: 0,
                stats: vec![OpStat::default(); OPS.len()],
                mismatches: 0,
                first_mismatches: Vec::new(),
                error: None,
                warm: None,
                cpu: Default::default(),
            })
        })
        .collect()
}

/// dbench's cleanup: every client closes its handles and removes its tree.
fn cleanup(o: &DbenchOptions, clients: &[Mutex<Client>], out: &mut dyn Write) {
    let n = o.clients as usize;
    let t = Instant::now();
    for c in clients {
        c.lock().unwrap_or_else(|e| e.into_inner()).fds.clear();
    }
    if o.cleanup {
        for id in 1..=o.clients {
            let _ = std::fs::remove_dir_all(o.dir.join(format!("clients/client{id}")));
        }
        let _ = std::fs::remove_dir(o.dir.join("clients"));
    }
    let _ = writeln!(out, "{:4}  cleanup {:3} sec", n, t.elapsed().as_secs());
}

/// Operations whose status differs from the loadfile's: a few printed, and
/// the run's note.
fn say_mismatches(mismatches: u64, first: &[String], out: &mut dyn Write) -> Option<String> {
    if mismatches == 0 {
        return None;
    }
    let _ = writeln!(
        out,
        "{mismatches} operations returned another status than the loadfile's, for example:"
    );
    for m in first.iter().take(5) {
        let _ = writeln!(out, "  {m}");
    }
    Some(format!(
        "{mismatches} operations returned another status than the loadfile's (first: {})",
        first.first().cloned().unwrap_or_default()
    ))
}

/// dbench's line for the second just ended (replacing the previous one
/// when the phase's last tick lands in the second already printed).
fn second_line(
    live: &Live,
    n: usize,
    phase: &'static str,
    start: Instant,
    pt: &fslab_model::SeriesPoint,
    lines_out: &mut Vec<String>,
    last_sec: &mut Option<(&'static str, u64)>,
) {
    let b: u64 = live.bytes.iter().map(|x| x.load(Ordering::Relaxed)).sum();
    let lat = live
        .max_ns
        .iter()
        .map(|x| x.swap(0, Ordering::Relaxed))
        .max()
        .unwrap_or(0);
    let secs = start.elapsed().as_secs_f64();
    // The phase's last tick can land in the second already printed: it
    // replaces that line, so there is one line per second as in dbench.
    let sec = pt.t_s.round() as u64;
    if *last_sec == Some((phase, sec)) {
        lines_out.pop();
    }
    *last_sec = Some((phase, sec));
    lines_out.push(format!(
        "{:4}  {:8}  {:7.2} MB/sec  {} {:3} sec  latency {:.03} ms",
        n,
        // As dbench: operations per client, on average.
        pt.total_ops / n as u64,
        b as f64 / 1e6 / secs.max(1e-9),
        if phase == "warmup" {
            "warmup"
        } else {
            "execute"
        },
        sec,
        lat as f64 / 1e6
    ));
}

/// The clients' operation statistics merged, their status mismatches (and
/// the first few), and the first client's error.
fn merge(clients: &[Mutex<Client>]) -> (Vec<LatencyHistogram>, u64, Vec<String>, Option<String>) {
    let mut merged: Vec<LatencyHistogram> = vec![LatencyHistogram::new(); OPS.len()];
    let mut mismatches = 0;
    let mut first = Vec::new();
    let mut error = None;
    for c in clients {
        let c = c.lock().unwrap_or_else(|e| e.into_inner());
        for (i, s) in c.stats.iter().enumerate() {
            merged[i].merge(&s.hist);
        }
        mismatches += c.mismatches;
        first.extend(c.first_mismatches.iter().cloned());
        if error.is_none() {
            error = c.error.clone();
        }
    }
    (merged, mismatches, first, error)
}

/// What the clients share during a run.
struct Window<'a> {
    clients: &'a [Mutex<Client>],
    live: &'a Live,
    kinds: &'a [usize],
}

/// The warm-up flowing into the measured period, as in dbench: the clients
/// run from the start to the end without a pause; at the warm-up's end
/// each moves its accounting window (its statistics start again) and the
/// probes are told a new phase began, the clients running on. Nothing
/// happens at the boundary that could stop them: no thread join, no cache
/// drop (`--drop-caches` drops before the run only). Returns the measured
/// period's bytes and seconds.
fn warmup_then_execute(
    o: &DbenchOptions,
    ctx: &mut RunCtx,
    w: &Window,
    stop: &AtomicBool,
    lines_out: &mut Vec<String>,
    last_sec: &mut Option<(&'static str, u64)>,
) -> crate::Result<(u64, f64)> {
    use crate::measure::{PhaseClock, Progress};
    let n = o.clients as usize;
    // Time-limited: no count is known.
    let index = ctx.start_phase("warmup", None);
    let hook = ctx.hooks.before_phase.take();
    let boundary = now_ns().saturating_add(o.warmup.saturating_mul(1_000_000_000));
    let deadline = boundary.saturating_add(o.seconds.saturating_mul(1_000_000_000));
    let progress = Progress::new(n);
    let mut clock = PhaseClock::start(index);
    let (mut phase, mut index, mut start) = ("warmup", index, Instant::now());
    let mut warm_s = 0.0;
    let mut failure = None;
    std::thread::scope(|s| {
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        for t in 0..n {
            let (tx, progress) = (tx.clone(), &progress);
            s.spawn(move || {
                let mut c = w.clients[t].lock().unwrap_or_else(|e| e.into_inner());
                c.cpu.0 = fslab_sys::rusage(fslab_sys::Who::Thread).unwrap_or_default();
                let turn = Turn {
                    t,
                    deadline,
                    passes: u64::MAX,
                    boundary,
                };
                client_loop(o, w.kinds, &mut c, turn, stop, w.live, progress);
                c.cpu.1 = fslab_sys::rusage(fslab_sys::Who::Thread).unwrap_or_default();
                let _ = tx.send(());
            });
        }
        drop(tx);
        let mut left = n;
        while left > 0 {
            match rx.recv_timeout(clock.until_tick()) {
                Ok(()) => left -= 1,
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
            }
            let crossed = phase == "warmup" && now_ns() >= boundary;
            let point = if crossed {
                clock.stop();
                clock.finish(progress.total())
            } else {
                clock.tick(progress.total())
            };
            if let Some(p) = point {
                second_line(w.live, n, phase, start, &p, lines_out, last_sec);
                ctx.second(phase, p);
            }
            if crossed {
                warm_s = clock.elapsed().as_secs_f64();
                if let Err(e) = ctx.end_phase(index, "warmup") {
                    failure.get_or_insert(e);
                }
                index = ctx.start_phase("execute", None);
                (phase, start) = ("execute", Instant::now());
                clock = PhaseClock::start(index);
            }
        }
    });
    clock.stop();
    if let Some(p) = clock.finish(progress.total()) {
        second_line(w.live, n, phase, start, &p, lines_out, last_sec);
        ctx.second(phase, p);
    }
    let exec_s = if phase == "execute" {
        clock.elapsed().as_secs_f64()
    } else {
        0.0
    };
    ctx.end_phase(index, phase)?;
    ctx.hooks.before_phase = hook;
    if let Some(e) = failure {
        return Err(e.into());
    }
    record_flowing(ctx, w, warm_s, exec_s, !stop.load(Ordering::Relaxed))
}

/// Records the two phases of [`warmup_then_execute`]: each client's
/// operations, bytes and thread CPU on each side of its boundary.
fn record_flowing(
    ctx: &mut RunCtx,
    w: &Window,
    warm_s: f64,
    exec_s: f64,
    complete: bool,
) -> crate::Result<(u64, f64)> {
    let (mut warm, mut exec) = ((0u64, 0u64, 0.0, 0.0), (0u64, 0u64, 0.0, 0.0));
    for (t, c) in w.clients.iter().enumerate() {
        let c = c.lock().unwrap_or_else(|e| e.into_inner());
        let ops: u64 = c.stats.iter().map(|s| s.hist.count()).sum();
        let bytes = w.live.bytes[t].load(Ordering::Relaxed);
        let (w_ops, w_bytes, mid) = c.warm.unwrap_or((ops, bytes, c.cpu.1));
        let (before, after) = (mid.since(&c.cpu.0), c.cpu.1.since(&mid));
        warm.0 += w_ops;
        warm.1 += w_bytes;
        warm.2 += before.user.as_secs_f64();
        warm.3 += before.system.as_secs_f64();
        if c.warm.is_some() {
            exec.0 += ops;
            exec.1 += bytes;
            exec.2 += after.user.as_secs_f64();
            exec.3 += after.system.as_secs_f64();
        }
    }
    for (name, (ops, bytes, usr, sys), secs, index) in
        [("warmup", warm, warm_s, 0), ("execute", exec, exec_s, 1)]
    {
        let p = crate::common::PhaseRun::<()> {
            results: Vec::new(),
            index,
            elapsed_s: secs,
            usr_cpu_s: usr,
            sys_cpu_s: sys,
        };
        ctx.record_phase(phase_result(name, ops, bytes, &p, complete))?;
    }
    Ok((exec.1, exec_s))
}

/// Runs dbench.
pub fn run(o: &DbenchOptions, start: Start<'_, '_>) -> crate::Result<DbenchReport> {
    // dbench stops when it cannot make its clients' directory; so does fslab.
    std::fs::create_dir_all(o.dir.join("clients")).map_err(|e| {
        crate::Error::Setup(format!(
            "cannot create {}: {e}",
            o.dir.join("clients").display()
        ))
    })?;
    let Begun { mut ctx, out, .. } = start.begin("dbench", &o.dir, o)?;
    let stop = ctx.stop;
    let n = o.clients as usize;
    let clients = new_clients(o);
    let live = Live {
        bytes: (0..n).map(|_| Slot::default()).collect(),
        max_ns: (0..n).map(|_| Slot::default()).collect(),
    };
    let mut lines_out: Vec<String> = Vec::new();
    let mut bytes_total = 0u64;
    let mut execute_secs = 0.0;
    // Each line's row in the operation table, found once rather than per operation.
    let kinds: Vec<usize> = o.lines.iter().map(|l| op_index(l.op.name())).collect();
    let mut last_sec: Option<(&'static str, u64)> = None;
    let flowing = o.loops.is_none() && o.warmup > 0;
    if flowing {
        let w = Window {
            clients: &clients,
            live: &live,
            kinds: &kinds,
        };
        (bytes_total, execute_secs) =
            warmup_then_execute(o, &mut ctx, &w, stop, &mut lines_out, &mut last_sec)?;
    }
    for (phase, secs) in [("warmup", o.warmup), ("execute", o.seconds)] {
        if flowing || secs == 0 || ctx.stopping() {
            continue;
        }
        for c in &clients {
            let mut c = c.lock().unwrap_or_else(|e| e.into_inner());
            c.stats = vec![OpStat::default(); OPS.len()];
        }
        for b in &live.bytes {
            b.store(0, Ordering::Relaxed);
        }
        // On the hot loops' timebase, so the deadline check reuses the
        // clock read that ends each operation's latency.
        let deadline = if o.loops.is_some() {
            u64::MAX
        } else {
            now_ns().saturating_add(secs.saturating_mul(1_000_000_000))
        };
        let passes = o.loops.unwrap_or(u64::MAX);
        let start = Instant::now();
        let p = ctx.phase_ticking(
            phase,
            None,
            n,
            |t, progress| {
                let mut c = clients[t].lock().unwrap_or_else(|e| e.into_inner());
                let turn = Turn {
                    t,
                    deadline,
                    passes,
                    boundary: u64::MAX,
                };
                client_loop(o, &kinds, &mut c, turn, stop, &live, progress);
            },
            |pt| second_line(&live, n, phase, start, pt, &mut lines_out, &mut last_sec),
        )?;
        let ops: u64 = clients
            .iter()
            .map(|c| {
                c.lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .stats
                    .iter()
                    .map(|s| s.hist.count())
                    .sum::<u64>()
            })
            .sum();
        let bytes: u64 = live.bytes.iter().map(|x| x.load(Ordering::Relaxed)).sum();
        let complete = !stop.load(Ordering::Relaxed);
        ctx.record_phase(phase_result(phase, ops, bytes, &p, complete))?;
        if phase == "execute" {
            bytes_total = bytes;
            execute_secs = p.elapsed_s;
        }
    }
    for l in &lines_out {
        let _ = writeln!(out, "{l}");
    }
    cleanup(o, &clients, out);
    let (merged, mismatches, first, error) = merge(&clients);
    let (rows, max_ms) = op_table(&merged, out);
    for (i, h) in merged.iter().enumerate() {
        if h.count() > 0 {
            ctx.record_latency("execute", OPS[i], h)?;
        }
    }
    let throughput = bytes_total as f64 / 1e6 / execute_secs.max(1e-9);
    let _ = writeln!(
        out,
        "\nThroughput {} MB/sec  {} clients  {} procs  max_latency={:.03} ms",
        fslab_stats_g(throughput),
        n,
        n,
        max_ms
    );
    if let Some(note) = say_mismatches(mismatches, &first, out) {
        ctx.out.notes.push(note);
    }
    let _ = out.flush();
    ctx.record_metrics(metrics(throughput, max_ms, &rows))?;
    let outcome = ctx.finish(error)?;
    Ok(DbenchReport {
        outcome,
        options: o.clone(),
        throughput_mb_s: throughput,
        max_latency_ms: max_ms,
        operations: rows,
        status_mismatches: mismatches,
    })
}

/// dbench's numbers: its closing line's Throughput (MB of 10^6 bytes, as
/// dbench counts) and max_latency, and its operation table.
fn metrics(throughput: f64, max_ms: f64, rows: &[OpRow]) -> Vec<fslab_model::Metric> {
    use fslab_model::{Better, Metric, Unit};
    let mut v = vec![
        Metric::new(
            "dbench",
            None,
            "Throughput",
            throughput,
            Unit::MbPerSec,
            Better::Higher,
        ),
        Metric::new(
            "dbench",
            None,
            "max_latency",
            max_ms,
            Unit::Milliseconds,
            Better::Lower,
        ),
    ];
    for r in rows {
        let op = Some(r.operation.as_str());
        let row = |name: &str, value: f64, unit: Unit, better: Better| {
            Metric::new("dbench", op, name, value, unit, better).detail()
        };
        v.push(row("Count", r.count as f64, Unit::Count, Better::Neither));
        v.push(row("AvgLat", r.avg_ms, Unit::Milliseconds, Better::Lower));
        v.push(row("MaxLat", r.max_ms, Unit::Milliseconds, Better::Lower));
    }
    v
}

/// dbench prints the throughput with `%g`.
pub(super) fn fslab_stats_g(x: f64) -> String {
    fslab_stats::fmt_g(x, 6)
}

/// The bare replay `fslab-bench` compares `fslab dbench` with: the same
/// clients' threads making, line after line, exactly the calls of
/// [`exec`] (the same files, flags and sizes), and nothing else: no clock
/// read or histogram per operation, no status check, no progress, no
/// results store; the clock is read once every 64 lines, for the end of
/// the warm-up and of the run. Returns dbench's Throughput (MB of 10^6
/// bytes moved per second after the warm-up, over the measured seconds).
pub fn bare_replay(o: &DbenchOptions) -> std::io::Result<f64> {
    std::fs::create_dir_all(o.dir.join("clients"))?;
    let clients = new_clients(o);
    let start = Instant::now();
    let boundary = start + std::time::Duration::from_secs(o.warmup);
    let deadline = boundary + std::time::Duration::from_secs(o.seconds);
    let bytes: u64 = std::thread::scope(|s| {
        let handles: Vec<_> = clients
            .iter()
            .map(|c| {
                s.spawn(move || {
                    let mut c = c.lock().unwrap_or_else(|e| e.into_inner());
                    let mut buf = vec![0u8; 1 << 20];
                    let (mut moved, mut warm) = (0u64, false);
                    let mut k = 0u64;
                    loop {
                        if k.is_multiple_of(64) {
                            let now = Instant::now();
                            if now >= deadline {
                                break;
                            }
                            if !warm && now >= boundary {
                                (moved, warm) = (0, true);
                            }
                        }
                        k += 1;
                        let op = &o.lines[c.pos].op;
                        c.pos = (c.pos + 1) % o.lines.len();
                        moved += exec(o, &mut c, op, &mut buf).1;
                    }
                    moved
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or(0)).sum()
    });
    let secs = (Instant::now() - boundary).as_secs_f64();
    cleanup(o, &clients, &mut std::io::sink());
    Ok(bytes as f64 / 1e6 / secs.max(1e-9))
}
