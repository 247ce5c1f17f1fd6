//! One mdtest run on this rank: its iterations and phases, timed and
//! recorded, then rank 0's summary of every rank.

use crate::{Begun, Start};
use std::ffi::CString;
use std::io::Write;
use std::os::unix::ffi::OsStringExt;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use fslab_cluster::Cluster;
use fslab_model::{Better, Metric, Unit};
use rustix::fs::{Access, Mode, CWD};
use serde::Serialize;

use super::options::Options;
use super::phases::{Items, Stretch, Times};
use super::prologue::{mkdir, prologue, timestamp, Prologue};
use super::summary::{self, Cell, RankIteration, Row, ROWS};
use super::tree::{Kind, Op, Tree};
use crate::common::{phase_result, Outcome, RunCtx, WithOutcome};
use crate::measure::{counted, supervise_here, CpuMeter, PhaseClock, Progress, ThreadCpu};
use crate::stonewall::{agree, all_running, keep_count, Check, Wall, WallSummary};

/// What `fslab mdtest --json` prints, beside the run's outcome.
#[derive(Debug, Clone, Serialize)]
pub struct MdtestReport {
    #[serde(flatten)]
    pub outcome: Outcome,
    pub options: Options,
    /// The SUMMARY rate table's rows (ops/s), on rank 0.
    pub rates: Vec<Row>,
    /// The SUMMARY time table's rows (s), on rank 0.
    pub times: Vec<Row>,
    /// Each iteration's stonewall (with -W), on rank 0.
    pub stonewall: Vec<WallSummary>,
}

impl WithOutcome for MdtestReport {
    fn outcome(&self) -> &Outcome {
        &self.outcome
    }
}

/// This rank's run.
struct Runner<'c, 'r, 'h, 'o> {
    ctx: &'c mut RunCtx<'r, 'h>,
    c: &'c dyn Cluster,
    o: &'o Options,
    out: &'c mut dyn Write,
    /// The first failed phase's words.
    error: Option<String>,
    /// What its phases' names start with (IO500's phase, when the run is
    /// one of [`run_within`]'s), or nothing.
    prefix: &'c str,
}

/// A phase's numbers on this rank.
struct Done {
    times: Times,
    wall: Option<Wall>,
}

fn phase_name(prefix: &str, row: usize) -> String {
    if prefix.is_empty() {
        ROWS[row].to_lowercase()
    } else {
        format!("{prefix} {}", ROWS[row].to_lowercase())
    }
}

impl Runner<'_, '_, '_, '_> {
    fn rank0(&self) -> bool {
        self.c.rank() == 0
    }

    /// One phase of `total` items when known: the gate, `run` (given the
    /// phase's progress and start), with -Y a sync, the closing barrier;
    /// recorded. `tree`: a tree phase, a handful of calls made with no
    /// other thread (its CPU read outside the time); a phase of items has
    /// a helper thread take its seconds ([`supervise_here`]), started
    /// before the opening barrier and ended after the closing one: inside
    /// the time its start and end cost 50-170 us a phase (docs/speed.md).
    fn phase(
        &mut self,
        row: usize,
        call: &str,
        total: Option<u64>,
        tree: bool,
        run: impl FnOnce(&mut Self, &Progress, &mut Instant) -> (Stretch, Option<Wall>),
    ) -> crate::Result<Done> {
        let name = phase_name(self.prefix, row);
        // The phases before store their records before a phase of items,
        // where the writes do not show, not before a tree phase (a handful
        // of calls), which runs right after the phase before it as
        // mdtest's does (common/held.rs).
        if row < summary::TREE_CREATE {
            self.ctx.release()?;
        }
        self.ctx.hold();
        let index = self.ctx.start_phase(&name, total);
        let progress = Progress::new(1);
        let mut clock = PhaseClock::start(index);
        let cpu = CpuMeter::start();
        let sync = self.o.call_sync && row < summary::TREE_CREATE;
        let timed = |me: &mut Self| {
            // mdtest's barrier before each phase (the runtime's gate is
            // one too, under MPI; this one holds wherever the ranks come
            // from).
            all_running(me.c);
            let own = tree.then(ThreadCpu::start);
            let mut start = Instant::now();
            let (stretch, wall) = run(me, &progress, &mut start);
            let before = Instant::now();
            // -Y: mdtest's phase_end syncs after each item phase (its tree
            // phases have none).
            if sync {
                rustix::fs::sync();
            }
            all_running(me.c);
            let times = Times::since(start, before);
            if let Some(own) = own {
                own.add();
            }
            (stretch, wall, times, before)
        };
        let (stretch, wall, times, before) = if tree {
            timed(self)
        } else {
            let mut beside = self.ctx.beside(&name);
            let r = supervise_here(|| timed(self), &mut clock, &progress, &mut |p| {
                beside.second(p);
            });
            self.ctx.keep_beside(beside);
            r
        };
        clock.stop_at(before);
        let (usr, sys) = cpu.read();
        if let Some(p) = clock.finish(progress.total()) {
            self.ctx.second(&name, p);
        }
        self.ctx.end_phase(index, &name)?;
        let p = crate::common::PhaseRun::<()> {
            results: Vec::new(),
            index,
            elapsed_s: clock.elapsed().as_secs_f64(),
            usr_cpu_s: usr,
            sys_cpu_s: sys,
        };
        let complete = stretch.failures == 0 && !self.ctx.stopping();
        let bytes = if row == summary::FILE_CREATE {
            stretch.done * self.o.write_bytes
        } else {
            0
        };
        let Stretch {
            done,
            failures,
            first_failure,
            hist,
            ..
        } = stretch;
        self.ctx
            .record_phase(phase_result(&name, done, bytes, &p, complete))?;
        // Kept as it is while held: not copied, not read (36 KiB).
        self.ctx.keep_latency(&name, call, hist)?;
        if let Some(e) = &first_failure {
            let m = format!("{name}: {failures} of {done} items failed (first: {e})");
            let _ = writeln!(self.out, "WARNING: {m}");
            self.error.get_or_insert(m);
        }
        if self.o.verbose > 0 && self.rank0() {
            let rate = if times.after_s > 0.0 {
                done as f64 / times.after_s
            } else {
                0.0
            };
            let _ = writeln!(
                self.out,
                "V-1: {:<18}: {:14.3} sec, {:14.3} ops/sec",
                ROWS[row], times.after_s, rate
            );
        }
        Ok(Done { times, wall })
    }

    /// An item phase: `count` items of `kind` (file creation with -W
    /// stops at the stonewall and wears out to the agreed count).
    fn items(&mut self, tree: &Tree, op: Op, kind: Kind, count: u64) -> crate::Result<Done> {
        let row = match kind {
            Kind::Dir => [0, 1, 2, 3, 4],
            Kind::File => [5, 6, 7, 7, 8],
        }[op as usize];
        let call = match (op, kind) {
            (Op::Create, Kind::File) => "create",
            (Op::Create, Kind::Dir) => "mkdir",
            (Op::Stat, _) => "stat",
            (Op::Read, _) => "read",
            (Op::Rename, _) => "rename",
            (Op::Remove, Kind::File) => "unlink",
            (Op::Remove, Kind::Dir) => "rmdir",
        };
        let stonewall = if op == Op::Create && kind == Kind::File {
            self.o.stonewall_s
        } else {
            0
        };
        let stop = self.ctx.stop;
        // A stonewalled phase's count is not known until its wall.
        let total = (stonewall == 0).then_some(count);
        self.phase(row, call, total, false, |me, progress, start| {
            if op == Op::Create && me.o.unique_dir {
                // mdtest's barrier as each task names its directory: in
                // the time only with -t.
                all_running(me.c);
                if !me.o.time_unique_dir {
                    *start = Instant::now();
                }
            }
            let wall = Check::after(stonewall);
            let mut items = Items::new(tree, op, kind);
            let mut s = stretch(|| items.run(0..count, count, wall, stop, progress, 0));
            if stonewall == 0 {
                return (s, None);
            }
            let at_wall = s.done;
            let Some(agreed) = agree(me.c, at_wall) else {
                return (s, None);
            };
            let wall_s = start.elapsed().as_secs_f64();
            if agreed > at_wall {
                let more = stretch(|| {
                    items.run(
                        at_wall..agreed,
                        agreed,
                        Check::NEVER,
                        stop,
                        progress,
                        at_wall,
                    )
                });
                s.done += more.done;
                s.failures += more.failures;
                s.first_failure = s.first_failure.or(more.first_failure);
                s.hist.merge(&more.hist);
            }
            let at_end = s.done;
            (
                s,
                Some(Wall {
                    at_wall,
                    agreed,
                    wall_s,
                    at_end,
                }),
            )
        })
    }

    /// Tree creation or removal: rank 0 makes (or removes) the shared
    /// tree, with -u every rank its own. A handful of directories: made on
    /// the calling thread (its CPU counted as a worker's), as mdtest makes
    /// them; a worker thread of its own cost more than the `mkdir` (one
    /// directory's phase took 146 us against mdtest's 23 us). The
    /// histogram is made and the thread's CPU read outside the time: inside
    /// it, a one-directory phase ran at 0.27x a bare `mkdir` on tmpfs.
    /// Every phase of a rank runs on its one thread, as mdtest's: a tree
    /// removal on the other CPU than the file removal before it (when item
    /// phases ran on worker threads) ran at 0.75x mdtest's on tmpfs.
    fn tree_phase(&mut self, tree: &Tree, create: bool) -> crate::Result<Done> {
        let row = if create {
            summary::TREE_CREATE
        } else {
            summary::TREE_REMOVE
        };
        let mine = self.o.unique_dir || self.rank0();
        let stop = self.ctx.stop;
        let mut dirs = if mine { tree.tree_dirs() } else { Vec::new() };
        if !create {
            dirs.reverse();
        }
        // As C strings before the time: a `Path` given to rustix is copied
        // into one inside the call's own closure (the call then made inside
        // a function that returns, docs/speed.md), as the items' are not.
        let dirs = dirs
            .into_iter()
            .map(|d| CString::new(d.into_os_string().into_vec()))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| {
                crate::Error::Setup(format!(
                    "{}: a NUL byte in the path",
                    String::from_utf8_lossy(&e.into_vec())
                ))
            })?;
        let total = Some(dirs.len() as u64);
        self.phase(
            row,
            if create { "mkdir" } else { "rmdir" },
            total,
            true,
            |_, progress, start| {
                let mut s = Stretch::default();
                s.hist.touch();
                *start = Instant::now();
                tree_dirs(&mut s, &dirs, create, stop, progress);
                (s, None)
            },
        )
    }

    /// One iteration; `items` is the count later phases work on (the
    /// stonewall's agreed count replaces it, as mdtest's o.items).
    fn iteration(&mut self, j: u64, items: &mut u64) -> crate::Result<RankIteration> {
        let o = self.o;
        let tree = Tree::new(o, self.c.rank(), self.c.size(), j);
        let mut it = RankIteration::default();
        let cell = |d: &Done, items: u64| Cell {
            items,
            time_s: d.times.after_s,
            before_s: d.times.before_s,
        };
        if o.create {
            if self.rank0() && rustix::fs::access(&tree.testdir, Access::EXISTS).is_err() {
                mkdir(&tree.testdir)?;
            }
            let d = self.tree_phase(&tree, true)?;
            it.cells[summary::TREE_CREATE] = cell(&d, o.num_dirs);
        }
        if o.dirs {
            let mut step = |me: &mut Self, op: Op, row: usize| -> crate::Result<()> {
                let d = me.items(&tree, op, Kind::Dir, *items)?;
                it.cells[row] = cell(&d, *items);
                Ok(())
            };
            if o.create {
                step(self, Op::Create, 0)?;
            }
            if o.stat {
                step(self, Op::Stat, 1)?;
            }
            if o.read {
                // mdtest's directory read phase reads nothing: its -Y sync
                // and barriers alone.
                if o.call_sync {
                    rustix::fs::sync();
                }
                all_running(self.c);
            }
            if o.rename && *items > 1 {
                step(self, Op::Rename, 3)?;
            }
            if o.remove {
                step(self, Op::Remove, 4)?;
            }
        }
        if o.files {
            if o.create {
                let d = self.items(&tree, Op::Create, Kind::File, *items)?;
                if let Some(w) = d.wall {
                    *items = w.agreed;
                    it.wall = Some(w);
                    if let (Some(x), true) = (&o.stonewall_file, self.rank0()) {
                        keep_count(x, w.agreed)?;
                    }
                }
                it.cells[summary::FILE_CREATE] = cell(&d, *items);
            }
            for (op, row, on) in [
                (Op::Stat, 6, o.stat),
                (Op::Read, 7, o.read),
                (Op::Remove, 8, o.remove),
            ] {
                if on {
                    let d = self.items(&tree, op, Kind::File, *items)?;
                    it.cells[row] = cell(&d, *items);
                }
            }
        }
        if o.remove {
            let d = self.tree_phase(&tree, false)?;
            it.cells[summary::TREE_REMOVE] = cell(&d, o.num_dirs);
            if self.rank0() && rustix::fs::access(&tree.testdir, Access::EXISTS).is_ok() {
                if let Err(e) =
                    rustix::fs::unlinkat(CWD, &tree.testdir, rustix::fs::AtFlags::REMOVEDIR)
                {
                    let _ = writeln!(
                        self.out,
                        "WARNING: unable to remove directory {}: {}",
                        tree.testdir.display(),
                        std::io::Error::from(e)
                    );
                }
            }
        }
        Ok(it)
    }
}

/// A stretch of a phase's items on the calling thread, its CPU counted as a
/// worker's (not the barriers'); a panic is a failed item, as a worker
/// thread's would be.
fn stretch(job: impl FnOnce() -> Stretch) -> Stretch {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| counted(job))).unwrap_or_else(|_| {
        Stretch {
            failures: 1,
            first_failure: Some("the rank's work panicked".into()),
            ..Stretch::default()
        }
    })
}

/// Makes (or removes) the tree's directories `dirs`, in order.
#[inline(always)]
fn tree_dirs(s: &mut Stretch, dirs: &[CString], create: bool, stop: &AtomicBool, p: &Progress) {
    for d in dirs {
        if stop.load(std::sync::atomic::Ordering::Relaxed) {
            break;
        }
        let t = crate::measure::now_ns();
        let r = if create {
            rustix::fs::mkdirat(CWD, d.as_c_str(), Mode::from_raw_mode(0o775))
        } else {
            rustix::fs::unlinkat(CWD, d.as_c_str(), rustix::fs::AtFlags::REMOVEDIR)
        };
        s.hist.record(crate::measure::now_ns() - t);
        if let Err(e) = r {
            s.failures += 1;
            s.first_failure.get_or_insert(format!(
                "{} {}: {}",
                if create { "mkdir" } else { "rmdir" },
                d.to_string_lossy(),
                std::io::Error::from(e)
            ));
        }
        s.done += 1;
        p.set(0, s.done);
    }
}

/// One mdtest run's numbers on rank 0 (empty elsewhere) and its first
/// failed phase's words.
#[derive(Debug, Clone, Default)]
pub struct Part {
    /// The SUMMARY rate table's rows (ops/s).
    pub rates: Vec<Row>,
    /// The SUMMARY time table's rows (s).
    pub times: Vec<Row>,
    /// Each iteration's stonewall (with -W).
    pub stonewall: Vec<WallSummary>,
    /// Each operation's items over the slowest rank's time, of the first
    /// iteration (rank 0; what IO500 scores).
    pub totals: Vec<summary::Total>,
    pub error: Option<String>,
}

/// The iterations, the -d directory removed if the run made it, and rank
/// 0's summary of every rank.
fn body(
    o: &Options,
    c: &dyn Cluster,
    ctx: &mut RunCtx<'_, '_>,
    out: &mut dyn Write,
    prefix: &str,
    pro: Prologue,
) -> crate::Result<Part> {
    let mut items = pro.items;
    let mut r = Runner {
        ctx,
        c,
        o,
        out,
        error: None,
        prefix,
    };
    let mut mine = Vec::new();
    for j in 0..o.iterations {
        mine.push(r.iteration(j, &mut items)?);
        r.ctx.release()?;
        if r.ctx.stopping() {
            break;
        }
    }
    if pro.made_root && o.remove {
        let _ = rustix::fs::unlinkat(CWD, &o.dir, rustix::fs::AtFlags::REMOVEDIR);
    }
    let (rates, times, stonewall, totals) = r.summarize(&mine, items)?;
    if c.rank() == 0 {
        let _ = writeln!(r.out, "-- finished at {} --", timestamp());
    }
    Ok(Part {
        rates,
        times,
        stonewall,
        totals,
        error: r.error,
    })
}

/// Runs mdtest on this rank of `c` (one process: [`fslab_cluster::Solo`]).
pub fn run(o: &Options, start: Start<'_, '_>) -> crate::Result<MdtestReport> {
    let (c, argv) = (start.cluster, start.argv);
    let pro = prologue(o, argv, c, &mut *start.out)?;
    let Begun { mut ctx, out, .. } = start.begin("mdtest", &o.dir, o)?;
    let part = body(o, c, &mut ctx, out, "", pro)?;
    if c.rank() == 0 && !part.rates.is_empty() {
        ctx.record_metrics(metrics(
            &part.rates,
            &part.times,
            &part.stonewall,
            o.rate_and_time,
        ))?;
    }
    let outcome = ctx.finish(part.error)?;
    Ok(MdtestReport {
        outcome,
        options: o.clone(),
        rates: part.rates,
        times: part.times,
        stonewall: part.stonewall,
    })
}

/// Runs mdtest as a part of another workload's run (IO500's phases), on
/// this rank of `c`: its phases recorded in `ctx`, each named after
/// `prefix` (`mdtest-easy-write file creation`), its text (header,
/// SUMMARY) written to `out`; its metrics are not recorded (the caller
/// records its own from the returned numbers).
pub fn run_within(
    o: &Options,
    argv: &[String],
    c: &dyn Cluster,
    ctx: &mut RunCtx<'_, '_>,
    out: &mut dyn Write,
    prefix: &str,
) -> crate::Result<Part> {
    let pro = prologue(o, argv, c, out)?;
    body(o, c, ctx, out, prefix, pro)
}

type Summary = (Vec<Row>, Vec<Row>, Vec<WallSummary>, Vec<summary::Total>);

impl Runner<'_, '_, '_, '_> {
    /// Gathers every rank's iterations on rank 0, which prints the SUMMARY
    /// tables, the stonewall lines and the CSV, and records the metrics.
    fn summarize(&mut self, mine: &[RankIteration], items: u64) -> crate::Result<Summary> {
        let none = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        if !all_running(self.c) {
            // A rank has ended: the others cannot be gathered.
            return Ok(none);
        }
        let bytes = serde_json::to_vec(mine).unwrap_or_default();
        let Some(parts) = self.c.gather(&bytes) else {
            return Ok(none);
        };
        let all: Vec<Vec<RankIteration>> = parts
            .iter()
            .map(|p| serde_json::from_slice(p).unwrap_or_default())
            .collect();
        let iterations = mine.len();
        if all.iter().any(|r| r.len() != iterations) || iterations == 0 {
            return Ok(none);
        }
        let o = self.o;
        let rates = summary::rows(o, &all, false);
        let times = summary::rows(o, &all, true);
        let _ = write!(self.out, "{}", summary::table(&rates, iterations, false));
        if o.rate_and_time {
            let _ = write!(self.out, "{}", summary::table(&times, iterations, true));
        }
        let walls: Vec<WallSummary> = (0..iterations)
            .filter_map(|j| {
                let w: Option<Vec<Wall>> = all.iter().map(|r| r[j].wall).collect();
                let phase_s = all
                    .iter()
                    .map(|r| r[j].cells[summary::FILE_CREATE].time_s)
                    .fold(0.0, f64::max);
                w.map(|w| WallSummary::of(j as u64, &w, phase_s))
            })
            .collect();
        for w in &walls {
            let _ = writeln!(self.out, "{}", w.line());
            if o.verbose > 0 {
                let each: Vec<String> = w.per_rank.iter().map(u64::to_string).collect();
                let _ = writeln!(
                    self.out,
                    "V-1: items at the stonewall, rank by rank: {}",
                    each.join(" ")
                );
            }
        }
        if let Some(csv) = &o.rank_details {
            std::fs::write(csv, summary::rank_csv(items, &all)).map_err(|e| {
                crate::Error::Setup(format!(
                    "--saveRankPerformanceDetails {}: {e}",
                    csv.display()
                ))
            })?;
        }
        Ok((rates, times, walls, summary::totals(&all)))
    }
}

/// The run's numbers: each shown operation's rate (the SUMMARY's Mean, its
/// Max and Min as detail rows), with -P its time, and with -W the
/// stonewall's (means over the iterations).
fn metrics(rates: &[Row], times: &[Row], walls: &[WallSummary], with_time: bool) -> Vec<Metric> {
    let mut m = Vec::new();
    for r in rates {
        let phase = r.operation.to_lowercase();
        let p = Some(phase.as_str());
        m.push(Metric::new(
            "mdtest",
            p,
            "rate",
            r.mean,
            Unit::OpsPerSec,
            Better::Higher,
        ));
        m.push(
            Metric::new(
                "mdtest",
                p,
                "rate max",
                r.max,
                Unit::OpsPerSec,
                Better::Higher,
            )
            .detail(),
        );
        m.push(
            Metric::new(
                "mdtest",
                p,
                "rate min",
                r.min,
                Unit::OpsPerSec,
                Better::Higher,
            )
            .detail(),
        );
    }
    if with_time {
        for t in times {
            let phase = t.operation.to_lowercase();
            m.push(Metric::new(
                "mdtest",
                Some(&phase),
                "time",
                t.mean,
                Unit::Seconds,
                Better::Lower,
            ));
        }
    }
    m.extend(crate::stonewall::metrics("mdtest", "file creation", walls));
    m
}
