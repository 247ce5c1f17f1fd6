//! What fslab adds inside a timed loop, per operation, in nanoseconds: the
//! clock read (`fslab_workload::measure::now_ns`, the TSC where it is
//! usable, and `Instant::now` beside it), a latency histogram's `record`,
//! the progress counter's `set`, and the three together (what createmany's
//! and tiotest's sequential loops add per call: one clock read, one record,
//! one set). Then that sum beside one bare call it rides on: a `mknod` of a
//! new name on tmpfs (createmany -m's call) and a 4 KiB `write` at the file
//! position (tiotest's), timed by `fslab_bench::bare`'s loops. 11 rounds,
//! medians.
//!
//! Last, where the call is made: 4 KiB writes to tmpfs with the `write`
//! in the loop's own body, and the same writes each made inside a function
//! that is not inlined (a `ret` after every system call). On the AMD EPYC
//! VMs fslab was measured on (kernel's SRSO mitigation "Safe RET") the
//! second costs some 500 ns more per write, a quarter of the call: why
//! fslab's hot loops make their calls inline (tiotest's `transfer` is
//! `#[inline(always)]`), as the bare loops do.
//!
//! Last, the phase's live line (`fslab_workload::live::PhaseBar`): the
//! same timed loop of 4 KiB `pwrite`s on tmpfs (its progress counter set
//! after each) run under `fslab_workload::measure::supervise`, once with
//! the coordinator drawing the line each second to a terminal in
//! memory (`live::Screen`) and once without; 6 alternating pairs of rounds
//! of about 3 s, medians, and the median of the pairs' ratios.
//!
//! ```text
//! cargo run --release -p fslab-bench --bin loop_cost
//! ```

use std::hint::black_box;
use std::path::Path;
use std::time::Instant;

use rustix::fd::OwnedFd;
use rustix::fs::{Mode, OFlags};

use fslab_bench::{bare, median, Scratch};
use fslab_model::LatencyHistogram;
use fslab_workload::live::{PhaseBar, Screen};
use fslab_workload::measure::{now_ns, start_timebase, supervise, PhaseClock, Progress};

const OPS: u64 = 2_000_000;
/// 4 KiB writes a round in the where-the-call-is-made comparison (256 MiB).
const WRITES: usize = 65_536;
const ROUNDS: usize = 11;

/// Nanoseconds per iteration of `f` over OPS iterations.
fn per_op(mut f: impl FnMut(u64)) -> f64 {
    let t = Instant::now();
    for i in 0..OPS {
        f(black_box(i));
    }
    t.elapsed().as_nanos() as f64 / OPS as f64
}

/// Seconds for WRITES 4 KiB writes to a new file `path` from a buffer
/// aligned to a page, each made by `write` (a closure, inlined into this
/// loop, or [`write_called`]).
fn writes(path: &Path, write: impl Fn(&OwnedFd, &[u8]) -> usize) -> f64 {
    let _ = std::fs::remove_file(path);
    let fd = rustix::fs::open(
        path,
        OFlags::RDWR | OFlags::CREATE | OFlags::TRUNC | OFlags::CLOEXEC,
        Mode::from_bits_truncate(0o600),
    )
    .expect("open");
    let v = vec![0x5a; 8192];
    let buf = &v[v.as_ptr().align_offset(4096)..][..4096];
    let t = Instant::now();
    for _ in 0..WRITES {
        assert_eq!(write(&fd, black_box(buf)), 4096);
    }
    t.elapsed().as_secs_f64()
}

/// One `write` inside a function of its own: the `ret` follows the call.
#[inline(never)]
fn write_called(fd: &OwnedFd, buf: &[u8]) -> usize {
    rustix::io::write(fd, buf).expect("write")
}

fn main() {
    if std::env::args().len() > 1 {
        eprintln!("loop_cost: takes no arguments");
        std::process::exit(2);
    }
    start_timebase();
    let progress = Progress::new(2);
    let mut rows: Vec<(&str, Vec<f64>)> = vec![
        ("empty loop", vec![]),
        ("clock read: now_ns", vec![]),
        ("clock read: Instant::now", vec![]),
        ("histogram record", vec![]),
        ("progress set", vec![]),
        ("clock read + record + set", vec![]),
    ];
    for _ in 0..ROUNDS {
        let mut h = LatencyHistogram::new();
        // Latencies as a filesystem call gives them: 1 to 30 µs.
        rows[0].1.push(per_op(|i| {
            black_box(i);
        }));
        rows[1].1.push(per_op(|_| {
            black_box(now_ns());
        }));
        rows[2].1.push(per_op(|_| {
            black_box(Instant::now());
        }));
        rows[3]
            .1
            .push(per_op(|i| h.record(1000 + (i * 7919) % 29_000)));
        rows[4].1.push(per_op(|i| progress.set(0, i)));
        let mut prev = now_ns();
        rows[5].1.push(per_op(|i| {
            let now = now_ns();
            h.record((now - prev).max(1));
            prev = now;
            progress.set(0, i);
        }));
        black_box(h.count());
    }
    println!("{OPS} iterations a round, {ROUNDS} rounds, medians (ns per operation)");
    for (name, v) in &rows {
        println!("  {name:28} {:7.1} ns", median(v));
    }
    // The three together, less the loop's own cost.
    let added = median(&rows[5].1) - median(&rows[0].1);
    // The calls they ride on, bare.
    let work = Scratch::new("loopcost");
    let n = 200_000;
    let (mut mk, mut wr) = (vec![], vec![]);
    for r in 0..5 {
        work.clear();
        let d = work.0.join(format!("m{r}"));
        std::fs::create_dir_all(&d).expect("dir");
        mk.push(bare::createmany(&format!("{}/f", d.display()), n, false) * 1e9 / n as f64);
        let s = bare::tiotest(&work.0, 1, 256, 4096, 0, [true, false, false, false]);
        wr.push(s[0] * 1e9 / (256.0 * 256.0));
    }
    for (call, v) in [("mknod (tmpfs)", &mk), ("4 KiB write (tmpfs)", &wr)] {
        let c = median(v);
        println!(
            "  clock read + record + set beside one bare {call} of {c:.0} ns: {added:.1} ns, {:.2}%",
            100.0 * added / c
        );
    }
    // Where the call is made, alternating, a fresh file each round.
    let (mut inline, mut called) = (vec![], vec![]);
    let file = work.0.join("w");
    for r in 0..ROUNDS {
        for k in 0..2 {
            if (r + k) % 2 == 1 {
                called.push(writes(&file, write_called) * 1e9 / WRITES as f64);
            } else {
                let s = writes(&file, |fd, buf| rustix::io::write(fd, buf).expect("write"));
                inline.push(s * 1e9 / WRITES as f64);
            }
            let _ = std::fs::remove_file(&file);
        }
    }
    let (i, c) = (median(&inline), median(&called));
    println!(
        "  4 KiB write (tmpfs), the call in the loop body: {i:.0} ns; inside a function not inlined: {c:.0} ns ({:+.0} ns, {:.2}x)",
        c - i,
        c / i
    );
    drawn_or_not(&work.0.join("live"));
}

/// `pwrite`s a timed phase makes, about 3 s of them on tmpfs.
const PWRITES: u64 = 4_000_000;

/// Nanoseconds per `pwrite` of one phase on `file`: a worker's timed loop
/// (a 4 KiB `pwrite` in a 1 MiB file, the counter set after it) while the
/// coordinator makes a point each second and, with `bar`, draws it.
fn phase_of_pwrites(file: &Path, mut bar: Option<&mut PhaseBar>) -> f64 {
    let fd = rustix::fs::open(
        file,
        OFlags::RDWR | OFlags::CREATE | OFlags::CLOEXEC,
        Mode::from_bits_truncate(0o600),
    )
    .expect("open");
    let buf = vec![0x5a_u8; 4096];
    let progress = Progress::new(1);
    let mut clock = PhaseClock::start(0);
    if let Some(b) = bar.as_mut() {
        b.start("write", Some(PWRITES));
    }
    let (fd, buf, progress_ref) = (&fd, &buf[..], &progress);
    let job = move || {
        let t = Instant::now();
        for i in 0..PWRITES {
            let n = rustix::io::pwrite(fd, buf, (i % 256) * 4096).expect("pwrite");
            assert_eq!(n, 4096);
            progress_ref.set(0, i + 1);
        }
        t.elapsed().as_nanos() as f64 / PWRITES as f64
    };
    let jobs: Vec<Box<dyn FnOnce() -> f64 + Send + '_>> = vec![Box::new(job)];
    let ns = supervise(jobs, &mut clock, &progress, &mut |p| match bar.as_mut() {
        Some(b) => b.update(p.total_ops),
        None => {
            black_box(p);
        }
    });
    if let Some(b) = bar {
        b.end();
    }
    ns[0].expect("the worker")
}

/// The timed loop's cost per operation with the phase's line drawn and
/// without, alternating.
fn drawn_or_not(file: &Path) {
    let screen = Screen::default();
    let mut bar = screen.bar();
    let (mut drawn, mut plain) = (vec![], vec![]);
    for r in 0..6 {
        for k in 0..2 {
            if (r + k) % 2 == 0 {
                drawn.push(phase_of_pwrites(file, Some(&mut bar)));
            } else {
                plain.push(phase_of_pwrites(file, None));
            }
        }
    }
    let _ = std::fs::remove_file(file);
    let (d, p) = (median(&drawn), median(&plain));
    // Each round's pair as a ratio: the machine's drift between rounds cancels.
    let pairs: Vec<f64> = drawn.iter().zip(&plain).map(|(d, p)| d / p).collect();
    let draws = screen.flushes();
    println!(
        "  4 KiB pwrite (tmpfs) in a timed phase, the live line drawn each second ({draws} draws in {} phases): {d:.0} ns; not drawn: {p:.0} ns; drawn/not {:.3}x (median of the rounds' ratios, {:.3}-{:.3})",
        drawn.len(),
        median(&pairs),
        pairs.iter().copied().fold(f64::INFINITY, f64::min),
        pairs.iter().copied().fold(0.0, f64::max),
    );
}
