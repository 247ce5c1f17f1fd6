//! One program's run. Its phase (named after the program) is timed by
//! fslab around the program, with the probes beside it; its CPU time is
//! the program's own (and its waited-for children's, from `wait4`). What it
//! prints on stdout goes on to fslab's text output as it comes (once a
//! second); its stdout and stderr are kept with the run whole (up to
//! [`MAX_KEPT`] each). Then its parser reads the output: the tool's phases
//! follow the program's (marked reported), then its metrics, latency
//! histograms and the result files it read.
//!
//! The program runs in a process group of its own, dying with fslab: a
//! stop (Ctrl-C, `fslab run`'s time limit) reaches it as one SIGINT, which
//! fio, IOR and mdtest answer by printing what they measured.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

use fslab_model::PhaseResult;
use fslab_parse::{Output, Parsed};
use serde::Serialize;

use super::{CommandArgs, NO_PARSER};
use crate::common::{Begun, Outcome, RunCtx, WithOutcome};
use crate::plugin::Start;

/// The most of each stream kept with the run; more is counted, not kept.
pub const MAX_KEPT: usize = 128 << 20;

/// What `fslab exec` returns, beside the run's outcome.
#[derive(Debug, Clone, Serialize)]
pub struct CommandReport {
    #[serde(flatten)]
    pub outcome: Outcome,
    /// The program as it ran (its launcher first, if any).
    pub argv: Vec<String>,
    /// Its exit status, when it exited.
    pub exit_status: Option<i32>,
    /// The signal that ended it, when one did.
    pub signal: Option<i32>,
    /// The parser that read its output.
    pub parser: String,
}

impl WithOutcome for CommandReport {
    fn outcome(&self) -> &Outcome {
        &self.outcome
    }
}

/// A stream read as it comes.
#[derive(Default)]
struct Captured {
    bytes: Vec<u8>,
    /// Bytes past [`MAX_KEPT`], counted only.
    dropped: u64,
}

type Shared = Arc<Mutex<Captured>>;

fn capture(mut r: impl Read + Send + 'static) -> (Shared, std::thread::JoinHandle<()>) {
    let shared: Shared = Arc::default();
    let to = Arc::clone(&shared);
    let t = std::thread::spawn(move || {
        let mut buf = [0u8; 64 << 10];
        while let Ok(n @ 1..) = r.read(&mut buf) {
            let mut c = to.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            let room = MAX_KEPT.saturating_sub(c.bytes.len()).min(n);
            c.bytes.extend_from_slice(&buf[..room]);
            c.dropped += (n - room) as u64;
        }
    });
    (shared, t)
}

/// Writes what `from` got since `shown` to `to`; returns the new mark.
fn pass_on(from: &Shared, shown: usize, to: &mut dyn Write) -> usize {
    let c = from
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if c.bytes.len() > shown {
        let _ = to.write_all(&c.bytes[shown..]);
        let _ = to.flush();
    }
    c.bytes.len()
}

fn take(s: Shared) -> Captured {
    std::mem::take(&mut *s.lock().unwrap_or_else(std::sync::PoisonError::into_inner))
}

fn setup(what: String) -> crate::Error {
    crate::Error::Setup(what)
}

/// How the program ended: (exit status, signal, usr and sys CPU seconds).
type Ended = (Option<i32>, Option<i32>, f64, f64);

/// Why the program could not be started or waited for: the run's error
/// line says it.
#[derive(Debug, thiserror::Error)]
enum ProgramError {
    #[error("the program was started twice")]
    StartedTwice,
    #[error("cannot start {program}: {source}")]
    Start {
        program: String,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot wait for the program: {0}")]
    Wait(#[source] std::io::Error),
    #[error("the program's watcher died")]
    WatcherDied,
}

fn ended_of(waited: std::io::Result<(i32, fslab_sys::Usage)>) -> Result<Ended, ProgramError> {
    let (status, u) = waited.map_err(ProgramError::Wait)?;
    let (code, signal) = if status & 0x7f == 0 {
        (Some((status >> 8) & 0xff), None)
    } else {
        (None, Some(status & 0x7f))
    };
    Ok((code, signal, u.user.as_secs_f64(), u.system.as_secs_f64()))
}

/// The program's argv as it runs: the launcher, the resolved program, its
/// arguments.
fn program_argv(o: &CommandArgs, program: &Path) -> Vec<String> {
    o.launcher
        .iter()
        .cloned()
        .chain(std::iter::once(program.display().to_string()))
        .chain(o.program.iter().skip(1).cloned())
        .collect()
}

/// Makes `o`'s directory where this process runs the program itself, and
/// refuses a parser's result file already there; returns where the program
/// (or its launcher) starts.
fn prepare_dir<'o>(o: &'o CommandArgs, checked: &super::Checked) -> crate::Result<&'o Path> {
    // Under a launcher the ranks start where it says (`-wdir`), on hosts
    // whose filesystems this one may not have: the directory is made only
    // for a program this process runs itself.
    if o.launcher.is_empty() {
        std::fs::create_dir_all(&o.dir)
            .map_err(|e| setup(format!("cannot create {}: {e}", o.dir.display())))?;
    }
    if let Some(p) = checked.parser {
        for f in p.result_files(&o.program) {
            if o.dir.join(&f).exists() {
                return Err(crate::Error::Options(format!(
                    "{}: {} exists already: {} would read what is in it as this run's (remove it, or name a new file)",
                    p.name(),
                    f.display(),
                    o.program_name()
                )));
            }
        }
    }
    Ok(if o.dir.is_dir() {
        o.dir.as_path()
    } else {
        Path::new("/")
    })
}

/// Runs `o`'s program and records it.
pub fn run(o: &CommandArgs, start: Start<'_, '_>) -> crate::Result<CommandReport> {
    let checked = o.validate()?;
    let here = prepare_dir(o, &checked)?;
    let argv = program_argv(o, &checked.program);
    let parser_name = checked.parser.map_or(NO_PARSER, |p| p.name()).to_string();
    // Its arguments with its directory as `{dir}`: repetitions of a cell
    // (each in a directory of its own) have the same.
    let dir_text = o.dir.display().to_string();
    let neutral = |words: &[String]| -> Vec<String> {
        words
            .iter()
            .map(|a| match dir_text.as_str() {
                "" | "." => a.clone(),
                d => a.replace(d, "{dir}"),
            })
            .collect()
    };
    let args = neutral(&o.program[1..]);
    let params = serde_json::json!({
        "program": o.program_name(),
        "path": checked.program,
        "args": args,
        "launcher": neutral(&o.launcher),
        "dir": o.dir,
        "parser": parser_name,
        "metrics": o.metrics,
        "inputs": o.inputs,
        "parse_file": o.parse_file,
    });
    let stop = start.stop;
    let Begun { mut ctx, out, .. } = start.begin("command", &o.dir, &params)?;
    let mut cmd = Command::new(&argv[0]);
    cmd.args(&argv[1..])
        .current_dir(here)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // The program sees its name as given (its messages say `ls:`, not
    // `/usr/bin/ls:`); it runs from where it was found.
    if o.launcher.is_empty() {
        std::os::unix::process::CommandExt::arg0(&mut cmd, &o.program[0]);
    }
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    fslab_sys::die_with_parent(&mut cmd);
    let name = o.program_name().to_string();
    // The program starts within its phase: after the before-phase hook
    // (caches dropped) and with the probes and the clock running.
    let (result, live, elapsed) = program_phase(&mut ctx, cmd, &name, stop, out)?;
    let (ended, started) = match result {
        Ok(r) => r,
        Err(error) => {
            let outcome = ctx.finish(Some(error.to_string()))?;
            return Ok(report(outcome, argv, None, None, parser_name));
        }
    };
    drop(started.child);
    for t in started.readers {
        let _ = t.join();
    }
    let (stdout, stderr) = match live {
        Some(l) => {
            pass_on(&l.out, l.shown[0], out);
            pass_on(&l.err, l.shown[1], &mut std::io::stderr());
            (take(l.out), take(l.err))
        }
        None => (Captured::default(), Captured::default()),
    };
    let mut ran = Ran {
        ctx,
        o,
        checked: &checked,
        name: &name,
        error: None,
    };
    let (code, signal) = ran.close(ended, elapsed, &stdout, &stderr)?;
    let error = ran.error.take();
    let outcome = ran.ctx.finish(error)?;
    Ok(report(outcome, argv, code, signal, parser_name))
}

/// The program's output as it comes, what of it was passed on, and its
/// pidfd (a stop is sent through it), once it has started.
struct Live {
    out: Shared,
    err: Shared,
    shown: [usize; 2],
    pidfd: Option<rustix::fd::OwnedFd>,
}

/// The started program and the threads reading its output.
struct Started {
    child: std::process::Child,
    readers: [std::thread::JoinHandle<()>; 2],
}

/// How the program's phase went: how it ended and its handles (or why it
/// could not start), its output, the phase's seconds.
type PhaseOutcome = (
    Result<(Result<Ended, ProgramError>, Started), ProgramError>,
    Option<Live>,
    f64,
);

/// Phase `name`: starts `cmd` and waits for it, passing on what it prints
/// each second (its stderr to fslab's) and asking it to stop once, with
/// SIGINT, when fslab is stopped.
fn program_phase(
    ctx: &mut RunCtx<'_, '_>,
    cmd: Command,
    name: &str,
    stop: &crate::StopFlag,
    out: &mut dyn Write,
) -> crate::Result<PhaseOutcome> {
    let cmd = Mutex::new(Some(cmd));
    let live: Mutex<Option<Live>> = Mutex::new(None);
    let mut asked = false;
    let watch = ctx.program_watch();
    // Another program's operations: none is counted.
    let phase = ctx.phase_ticking(
        name,
        None,
        1,
        |_, _| {
            let mut cmd = cmd
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .take()
                .ok_or(ProgramError::StartedTwice)?;
            let mut child = cmd.spawn().map_err(|source| ProgramError::Start {
                program: cmd.get_program().to_string_lossy().into_owned(),
                source,
            })?;
            let pid = child.id();
            // The probes watch the program (and what it starts), not this
            // process waiting for it.
            if let Some(w) = &watch {
                w(pid);
            }
            let (out, out_t) = capture(child.stdout.take().expect("piped"));
            let (err, err_t) = capture(child.stderr.take().expect("piped"));
            let pidfd = rustix::process::Pid::from_raw(pid as i32).and_then(|p| {
                rustix::process::pidfd_open(p, rustix::process::PidfdFlags::empty()).ok()
            });
            *live
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(Live {
                out,
                err,
                shown: [0, 0],
                pidfd,
            });
            let ended = ended_of(fslab_sys::wait4(pid));
            Ok((
                ended,
                Started {
                    child,
                    readers: [out_t, err_t],
                },
            ))
        },
        |_| {
            let mut l = live
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let Some(l) = l.as_mut() else { return };
            l.shown[0] = pass_on(&l.out, l.shown[0], out);
            l.shown[1] = pass_on(&l.err, l.shown[1], &mut std::io::stderr());
            if stop.load(std::sync::atomic::Ordering::Relaxed) && !asked {
                asked = true;
                if let Some(fd) = &l.pidfd {
                    let _ = rustix::process::pidfd_send_signal(fd, rustix::process::Signal::INT);
                }
            }
        },
    )?;
    let result = phase
        .results
        .into_iter()
        .next()
        .flatten()
        .unwrap_or(Err(ProgramError::WatcherDied));
    let live = live
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    Ok((result, live, phase.elapsed_s))
}

fn report(
    outcome: Outcome,
    argv: Vec<String>,
    exit_status: Option<i32>,
    signal: Option<i32>,
    parser: String,
) -> CommandReport {
    CommandReport {
        outcome,
        argv,
        exit_status,
        signal,
        parser,
    }
}

/// A program that has ended, being recorded.
struct Ran<'c, 'r, 'h> {
    ctx: RunCtx<'r, 'h>,
    o: &'c CommandArgs,
    checked: &'c super::Checked,
    name: &'c str,
    error: Option<String>,
}

impl Ran<'_, '_, '_> {
    /// Everything after the program ended: why it ended, its output
    /// parsed, its phases, metrics, histograms and streams recorded.
    fn close(
        &mut self,
        ended: Result<Ended, ProgramError>,
        elapsed: f64,
        stdout: &Captured,
        stderr: &Captured,
    ) -> crate::Result<(Option<i32>, Option<i32>)> {
        let (code, signal, usr, sys) = match ended {
            Ok(e) => e,
            Err(e) => {
                self.error = Some(e.to_string());
                (None, None, 0.0, 0.0)
            }
        };
        let stopped = self.ctx.stopping();
        let last_err = String::from_utf8_lossy(&stderr.bytes)
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .map(|l| format!(": {}", l.trim()))
            .unwrap_or_default();
        if !stopped && self.error.is_none() {
            self.error = match (code, signal) {
                (Some(0), _) => None,
                (Some(c), _) => Some(format!("{} exited with status {c}{last_err}", self.name)),
                (None, Some(s)) => {
                    Some(format!("{} was killed by signal {s}{last_err}", self.name))
                }
                _ => Some(format!("{} ended without a status", self.name)),
            };
        }
        let parsed = self.parse(&stdout.bytes, &stderr.bytes);
        let complete = code == Some(0) && !stopped;
        let counted: Vec<&PhaseResult> = parsed.phases.iter().filter(|p| p.counted).collect();
        let program = PhaseResult {
            usr_cpu_s: usr,
            sys_cpu_s: sys,
            bytes: parsed.phases.iter().map(|p| p.bytes).sum(),
            complete,
            counted: !counted.is_empty(),
            ..PhaseResult::timed(self.name, counted.iter().map(|p| p.ops).sum(), elapsed)
        };
        self.ctx.record_phase(program)?;
        let names = fslab_parse::unique_names(
            std::iter::once(self.name.to_string())
                .chain(parsed.phases.iter().map(|p| p.phase.clone())),
        );
        for (p, n) in parsed.phases.iter().zip(names.iter().skip(1)) {
            self.ctx.record_phase(PhaseResult {
                phase: n.clone(),
                ..p.clone()
            })?;
        }
        self.ctx.record_metrics(parsed.metrics)?;
        for (phase, op, h) in &parsed.latency {
            self.ctx.record_latency(phase, op, h)?;
        }
        let run = self.ctx.out.run_id;
        for (stream, c) in [("stdout", stdout), ("stderr", stderr)] {
            self.ctx.rec.record_output(run, stream, &c.bytes)?;
            if c.dropped > 0 {
                self.ctx.out.notes.push(format!(
                    "{stream}: kept the first {} MiB, {} bytes more were not kept",
                    MAX_KEPT >> 20,
                    c.dropped
                ));
            }
        }
        for (file, bytes) in &parsed.files {
            self.ctx.rec.record_output(run, file, bytes)?;
        }
        self.ctx.out.notes.extend(parsed.notes);
        Ok((code, signal))
    }

    /// The parser's reading of the output; a reading that fails fails the
    /// run (naming the place), what it could not read kept.
    fn parse(&mut self, stdout: &[u8], stderr: &[u8]) -> Parsed {
        let Some(parser) = self.checked.parser else {
            return Parsed::default();
        };
        let program: Vec<String> = self.o.program.clone();
        let out = Output {
            argv: &program,
            stdout,
            stderr,
            dir: &self.o.dir,
            file: self.o.parse_file.as_deref(),
            patterns: &self.checked.patterns,
        };
        match parser.parse(&out) {
            Ok(p) => p,
            // A program stopped early may not have printed its results.
            Err(e) if self.ctx.stopping() => {
                self.ctx.out.notes.push(format!("stopped: {e}"));
                Parsed::default()
            }
            Err(e) => {
                let what = format!(
                    "{e} (the program's output is kept: fslab results output {} stdout)",
                    self.ctx.out.run_id
                );
                match &mut self.error {
                    Some(first) => first.push_str(&format!("; {what}")),
                    None => self.error = Some(what),
                }
                Parsed::default()
            }
        }
    }
}
