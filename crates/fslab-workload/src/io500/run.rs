//! One `fslab io500md` run on this rank: IO500's phases in its order, each
//! timed around the whole phase as IO500's main loop times it, then rank
//! 0's result lines, MD score and validity, printed and recorded.

use crate::{Begun, Start};
use std::io::Write;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use fslab_cluster::Cluster;
use fslab_model::{Better, Metric, Unit};
use serde::Serialize;

use super::files::ResultFiles;
use super::find::{self, Count, Criteria};
use super::options::{Io500Args, MdPhase, Step, HARD_BYTES, IO500_MINWRITE_S, IO500_STONEWALL_S};
use super::score::{self, PhaseScore};
use super::{Phase, Tree, PHASES};
use crate::common::{phase_result, Outcome, RunCtx, WithOutcome};

/// What `fslab io500md` returns, beside the run's outcome.
#[derive(Debug, Clone, Serialize)]
pub struct Io500Report {
    #[serde(flatten)]
    pub outcome: Outcome,
    /// Each phase as IO500 reports it, on rank 0.
    pub io500: Vec<PhaseScore>,
    /// The MD score, kIOPS, on rank 0.
    pub md_score_kiops: f64,
    /// Whether IO500's rules (as scaled) hold for every phase.
    pub valid: bool,
}

impl WithOutcome for Io500Report {
    fn outcome(&self) -> &Outcome {
        &self.outcome
    }
}

/// The source of io500md's numbers in the store.
const SOURCE: &str = "io500";
const TIMESTAMP_FILE: &str = "timestampfile";

/// True when every rank is here and running (a barrier); see
/// mdtest's stonewall module for why a sum of 0.
fn all_running(c: &dyn Cluster) -> bool {
    c.sum(0) == 0
}

/// The mdtest operation whose rate is a phase's score.
fn operation(step: Step) -> &'static str {
    match step {
        Step::Write => "File creation",
        Step::Stat => "File stat",
        Step::Read => "File read",
        Step::Delete => "File removal",
    }
}

/// One phase's numbers on this rank before the rules: its score (rank 0's
/// is the run's), IO500's words for what its own checks found, and the
/// metrics it adds.
#[derive(Default)]
struct Ran {
    score: f64,
    invalid: Vec<String>,
    metrics: Vec<Metric>,
    /// The phase's own pairs in `result.txt`, after its `exe`
    /// (`rate-stonewall`, `nproc`, `found`, `total-files`).
    pairs: Vec<(&'static str, String)>,
}

struct Runner<'c, 'r, 'h> {
    a: &'c Io500Args,
    c: &'c dyn Cluster,
    ctx: RunCtx<'r, 'h>,
    stop: &'c AtomicBool,
    error: Option<String>,
    /// IO500's result files (rank 0).
    files: Option<ResultFiles>,
}

fn setup_err(what: &str, p: &Path, e: std::io::Error) -> crate::Error {
    crate::Error::Setup(format!("{what} {}: {e}", p.display()))
}

impl Runner<'_, '_, '_> {
    fn rank0(&self) -> bool {
        self.c.rank() == 0
    }

    /// An mdtest phase through fslab's mdtest, its text kept as IO500 keeps
    /// it (RESULTDIR/PHASE.txt); its score IO500's: every rank's items
    /// over the slowest rank's time, the stonewall's wear-out included.
    fn mdtest(&mut self, p: MdPhase) -> crate::Result<Ran> {
        let o = self.a.mdtest(p)?;
        let argv = self.a.mdtest_command(p);
        let mut text = Vec::new();
        let name = p.name();
        let part = crate::mdtest::run_within(&o, &argv, self.c, &mut self.ctx, &mut text, &name)?;
        if let Some(e) = part.error {
            self.error.get_or_insert(format!("{name}: {e}"));
        }
        let mut ran = Ran::default();
        if !self.rank0() {
            return Ok(ran);
        }
        let txt = self.a.results().join(format!("{name}.txt"));
        std::fs::write(&txt, &text).map_err(|e| setup_err("cannot write", &txt, e))?;
        ran.score = part
            .totals
            .iter()
            .find(|t| t.operation == operation(p.step))
            .map_or(0.0, |t| t.rate() / 1000.0);
        if let (Step::Write, Some(w)) = (p.step, part.stonewall.first()) {
            // IO500's rate-stonewall: the items at the stonewall over the
            // time to it.
            let kiops = w.stonewall_rate / 1000.0;
            ran.pairs.push(("rate-stonewall", format!("{kiops:.6}")));
            ran.metrics.push(Metric::new(
                SOURCE,
                Some(&name),
                "rate-stonewall",
                kiops,
                Unit::KiloOpsPerSec,
                Better::Higher,
            ));
        }
        Ok(ran)
    }

    /// Rank 0 makes the timestamp file (IO500's timestamp phase).
    fn timestamp(&mut self) -> crate::Result<Ran> {
        let mut r = Ok(());
        if self.rank0() {
            let f = self.a.results().join(TIMESTAMP_FILE);
            r = std::fs::write(&f, b"").map_err(|e| setup_err("cannot write", &f, e));
        }
        if self.c.sum(u64::from(r.is_err())) > 0 {
            return Err(r.err().unwrap_or_else(|| {
                crate::Error::Setup("rank 0 could not write the timestamp file".into())
            }));
        }
        Ok(Ran::default())
    }

    /// The parallel find over both trees: every rank's share walked as a
    /// phase, the counts added up, the rate over the slowest rank's time.
    fn find(&mut self) -> crate::Result<Ran> {
        let mine = if self.rank0() {
            find::ctime_of(&self.a.results().join(TIMESTAMP_FILE)).unwrap_or(-1)
        } else {
            -1
        };
        // Every rank learns rank 0's ctime (a maximum over ranks giving 0).
        let shared = self.c.max(u64::try_from(mine + 1).unwrap_or(0));
        if shared == 0 {
            return Err(crate::Error::Setup(format!(
                "cannot read {}",
                self.a.results().join(TIMESTAMP_FILE).display()
            )));
        }
        let crit = Criteria {
            ctime_min: shared as i64 - 1,
            size: HARD_BYTES,
        };
        let roots = [self.a.tree_dir(Tree::Easy), self.a.tree_dir(Tree::Hard)];
        let (rank, size, stop) = (self.c.rank(), self.c.size(), self.stop);
        let run = self.ctx.phase("find", None, 1, |_, p| {
            find::walk(&roots, &crit, rank, size, stop, p)
        })?;
        let mine = run.results.first().copied().flatten().unwrap_or_default();
        let complete = !self.ctx.stopping();
        self.ctx
            .record_phase(phase_result("find", mine.total_files, 0, &run, complete))?;
        let each = self
            .c
            .gather(&serde_json::to_vec(&mine).unwrap_or_default());
        let all = Count {
            total_files: self.c.sum(mine.total_files),
            found: self.c.sum(mine.found),
            errors: self.c.sum(mine.errors),
        };
        let runtime_s = self.c.max((run.elapsed_s * 1e9) as u64) as f64 / 1e9;
        if let (Some(f), Some(each)) = (&self.files, each) {
            let ranks: Vec<Count> = each
                .iter()
                .map(|b| serde_json::from_slice(b).unwrap_or_default())
                .collect();
            f.write_file("find.csv", &find_csv(runtime_s, &all, &ranks))?;
        }
        let mut invalid = Vec::new();
        if all.found == 0 {
            invalid.push("Find didn't find anything, this is likely invalid.".to_string());
        }
        let count = |name: &str, v: u64| {
            Metric::new(
                SOURCE,
                Some("find"),
                name,
                v as f64,
                Unit::Count,
                Better::Neither,
            )
        };
        Ok(Ran {
            score: if runtime_s > 0.0 {
                all.total_files as f64 / runtime_s / 1000.0
            } else {
                0.0
            },
            invalid,
            metrics: vec![
                count("found", all.found),
                count("total-files", all.total_files),
                count("errors", all.errors),
            ],
            pairs: vec![
                ("nproc", self.c.size().to_string()),
                ("found", all.found.to_string()),
                ("total-files", all.total_files.to_string()),
            ],
        })
    }

    fn phase(&mut self, p: Phase) -> crate::Result<Ran> {
        match p {
            Phase::Md(m) => self.mdtest(m),
            Phase::Timestamp => self.timestamp(),
            Phase::Find => self.find(),
        }
    }

    /// Phase `p` as IO500's main loop runs it: its section opened and its
    /// command written (rank 0), the phase run and timed whole (or, turned
    /// off by the ini's `run = FALSE`, not run: a score of 0), IO500's
    /// checks, its lines printed and written. None on the other ranks.
    fn one(
        &mut self,
        p: Phase,
        out: &mut dyn Write,
    ) -> crate::Result<Option<(PhaseScore, Vec<Metric>)>> {
        if let Some(f) = self.files.as_mut() {
            f.phase_start(&p.name())?;
            if let Some(exe) = self.a.exe(p) {
                f.pair("exe", &exe)?;
            }
        }
        let start = Instant::now();
        let ran = if self.a.runs(p) {
            self.phase(p)?
        } else {
            Ran::default()
        };
        all_running(self.c);
        let time_s = start.elapsed().as_secs_f64();
        let Some(f) = self.files.as_mut() else {
            return Ok(None);
        };
        for (k, v) in &ran.pairs {
            f.pair(k, v)?;
        }
        let a = self.a;
        let mut invalid = ran.invalid;
        invalid.extend(score::rules(
            p,
            time_s,
            ran.score,
            a.stonewall_time,
            a.minwrite,
        ));
        let s = PhaseScore {
            phase: p.name(),
            score_kiops: ran.score,
            time_s,
            scored: p.scored(),
            invalid,
        };
        for why in &s.invalid {
            let _ = writeln!(out, "{}", score::invalid_line(&s.phase, why));
        }
        let _ = writeln!(out, "{}", score::result_line(&s));
        let _ = out.flush();
        f.phase_end(&s)?;
        Ok(Some((s, ran.metrics)))
    }
}

/// IO500's `find.csv` from fslab's find: the runtime and rate line, then
/// pfind's first columns a rank (its job-stealing counters are pfind's
/// own; fslab's find has none and writes none).
fn find_csv(runtime_s: f64, all: &Count, ranks: &[Count]) -> String {
    let rate = if runtime_s > 0.0 {
        all.total_files as f64 / runtime_s
    } else {
        0.0
    };
    let mut s = format!("runtime: {runtime_s:.6} rate: {rate:.6}\nrank, errors, found, total\n");
    for (r, c) in ranks.iter().enumerate() {
        s += &format!("{r}, {}, {}, {}\n", c.errors, c.found, c.total_files);
    }
    s
}

/// rank 0 makes the datadir and the resultdir; every rank learns whether
/// it could.
fn make_dirs(a: &Io500Args, c: &dyn Cluster) -> crate::Result<()> {
    let mut r = Ok(());
    if c.rank() == 0 {
        for d in [a.dir.clone(), a.results()] {
            if let Err(e) = std::fs::create_dir_all(&d) {
                r = Err(setup_err("cannot create", &d, e));
                break;
            }
        }
    }
    if c.sum(u64::from(r.is_err())) > 0 {
        return Err(r.err().unwrap_or_else(|| {
            crate::Error::Setup(format!("rank 0 could not create {}", a.dir.display()))
        }));
    }
    Ok(())
}

/// Whether the run's times are IO500's: when not, it is a scaled run,
/// valid or not by the scaled rules but no IO500 result.
fn scaled_words(a: &Io500Args) -> Option<String> {
    (a.stonewall_time != IO500_STONEWALL_S || a.minwrite != IO500_MINWRITE_S).then(|| {
        format!(
            "scaled run: stonewall-time {} s and minwrite {} s stand for IO500's {IO500_STONEWALL_S} s \
             and {IO500_MINWRITE_S} s: its validity is by the scaled rules; it is not an IO500 submission",
            a.stonewall_time, a.minwrite
        )
    })
}

fn header(a: &Io500Args, c: &dyn Cluster, out: &mut dyn Write) {
    let _ = writeln!(out, "IO500 version {} (standard)", super::files::version());
    let _ = writeln!(
        out,
        "; fslab io500md: IO500's metadata phases (its mdtest and find phases, not its ior phases) on fslab's engine, {} rank(s)",
        c.size()
    );
    let _ = writeln!(
        out,
        "; datadir {}, resultdir {}, mdtest-easy n {}, mdtest-hard n {}, stonewall-time {} s, minwrite {} s",
        a.dir.display(),
        a.results().display(),
        a.easy_n,
        a.hard_n,
        a.stonewall_time,
        a.minwrite
    );
}

/// Removes what IO500's cleanup removes: the stonewall files and the
/// trees' directories (when empty: a stopped run's items stay to be seen).
fn cleanup(a: &Io500Args) {
    for t in [Tree::Easy, Tree::Hard] {
        let _ = std::fs::remove_file(a.results().join(format!("{}.stonewall", t.name())));
        let _ = std::fs::remove_dir(a.tree_dir(t));
    }
}

/// The run's metrics from the phases' scores (rank 0).
fn metrics(scores: &[PhaseScore], md: f64, valid: bool) -> Vec<Metric> {
    let mut m = vec![
        Metric::new(
            SOURCE,
            None,
            "MD score",
            md,
            Unit::KiloOpsPerSec,
            Better::Higher,
        ),
        Metric::new(
            SOURCE,
            None,
            "valid",
            f64::from(u8::from(valid)),
            Unit::Count,
            Better::Neither,
        ),
    ];
    for s in scores.iter().filter(|s| s.scored) {
        let p = Some(s.phase.as_str());
        m.push(Metric::new(
            SOURCE,
            p,
            "score",
            s.score_kiops,
            Unit::KiloOpsPerSec,
            Better::Higher,
        ));
        m.push(Metric::new(
            SOURCE,
            p,
            "time",
            s.time_s,
            Unit::Seconds,
            Better::Lower,
        ));
    }
    m
}

/// Runs IO500's metadata phases on this rank of `c`.
pub fn run(a: &Io500Args, start: Start<'_, '_>) -> crate::Result<Io500Report> {
    let (c, _argv, stop) = (start.cluster, start.argv, start.stop);
    a.validate()?;
    make_dirs(a, c)?;
    let rank0 = c.rank() == 0;
    let settings = score::settings_rule(a.stonewall_time, a.minwrite);
    if rank0 {
        header(a, c, &mut *start.out);
        if let Some(s) = &settings {
            let _ = writeln!(start.out, "{}", score::invalid_line("debug", s));
        }
    }
    let files = match rank0 {
        true => Some(ResultFiles::create(&a.results(), a, c.size())?),
        false => None,
    };
    let Begun { ctx, out, .. } = start.begin("io500md", &a.dir, a)?;
    let mut r = Runner {
        a,
        c,
        ctx,
        stop,
        error: None,
        files,
    };
    if let Some(f) = r.files.as_mut() {
        if let Some(s) = &settings {
            f.invalid(s)?;
        }
        f.phases_begin()?;
    }
    let mut scores: Vec<PhaseScore> = Vec::new();
    let mut extra = Vec::new();
    for p in PHASES {
        if r.ctx.stopping() || !all_running(c) {
            break;
        }
        if let Some((s, m)) = r.one(p, out)? {
            extra.extend(m);
            scores.push(s);
        }
    }
    let finished = scores.len() == PHASES.len();
    let md = score::md_score(&scores);
    let valid = settings.is_none() && finished && scores.iter().all(PhaseScore::valid);
    if let Some(f) = r.files.as_mut() {
        f.finish(md)?;
    }
    if rank0 {
        let _ = writeln!(out, "{}", score::score_line(md, false));
        let _ = writeln!(
            out,
            "; the metadata phases are {} by IO500's rules; BW and TOTAL are 0, the total INVALID, with no bandwidth phase",
            if valid { "valid" } else { "INVALID" }
        );
        if let Some(s) = scaled_words(a) {
            let _ = writeln!(out, "; {s}");
        }
        let _ = writeln!(
            out,
            "\n{}{}",
            fslab_parse::io500::RESULT_DIR_LINE,
            a.results().display()
        );
        let mut m = metrics(&scores, md, valid);
        m.extend(extra);
        r.ctx.record_metrics(m)?;
        notes(&mut r.ctx.out.notes, a, &settings, &scores, finished);
        cleanup(a);
    }
    let outcome = r.ctx.finish(r.error)?;
    Ok(Io500Report {
        outcome,
        io500: scores,
        md_score_kiops: md,
        valid,
    })
}

/// The run's notes: why it is INVALID, phase by phase, and whether it is
/// a scaled run.
fn notes(
    notes: &mut Vec<String>,
    a: &Io500Args,
    settings: &Option<String>,
    scores: &[PhaseScore],
    finished: bool,
) {
    if let Some(s) = settings {
        notes.push(format!("INVALID (debug): {s}"));
    }
    for s in scores {
        for why in &s.invalid {
            notes.push(format!("INVALID ({}): {why}", s.phase));
        }
    }
    if !finished {
        notes.push(format!(
            "INVALID: {} of IO500's {} phases ran",
            scores.len(),
            PHASES.len()
        ));
    }
    notes.extend(scaled_words(a));
}
