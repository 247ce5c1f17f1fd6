//! What `fslab run` shows while it runs, on stderr: on a terminal a live
//! line for the cell (its step, its memory pressure, the experiment's
//! time left) and under it the running phase's line, drawn as a
//! standalone workload draws it ([`PhaseBar`]: done of total, percentage,
//! rate, time left); plain lines otherwise; `--quiet` leaves out all but
//! the notes.

use std::time::Instant;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use fslab_experiment::runner::Progress;
use fslab_experiment::spec::Cell;
use fslab_workload::live::PhaseBar;

/// Progress on stderr: live lines on a terminal, plain lines otherwise.
pub struct Display {
    /// `--quiet`: no live line and no remarks.
    quiet: bool,
    pub bar: ProgressBar,
    /// The running phase's line, under the cell's.
    phase: PhaseBar,
    /// The phase the line shows and its operations so far.
    shown: Option<(String, u64)>,
    tty: bool,
    start: Instant,
    done: usize,
    total: usize,
    label: String,
    /// The workload's memory pressure, shown after its line.
    pressure: Option<String>,
}

impl Display {
    pub fn new(quiet: bool) -> Display {
        let tty = std::io::IsTerminal::is_terminal(&std::io::stderr()) && !quiet;
        let multi = MultiProgress::with_draw_target(if tty {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        });
        let bar = multi.add(ProgressBar::new_spinner());
        bar.set_style(
            ProgressStyle::with_template("{spinner} {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        bar.enable_steady_tick(std::time::Duration::from_millis(200));
        Display {
            quiet,
            bar,
            phase: PhaseBar::among(multi),
            shown: None,
            tty,
            start: Instant::now(),
            done: 0,
            total: 0,
            label: String::new(),
            pressure: None,
        }
    }

    fn eta(&self) -> String {
        if self.done == 0 {
            return "?".into();
        }
        let per = self.start.elapsed().as_secs_f64() / self.done as f64;
        let left = per * (self.total - self.done) as f64;
        format!("{}m{:02}s", (left / 60.0) as u64, left as u64 % 60)
    }

    /// A remark on stderr, unless quiet.
    fn remark(&self, line: String) {
        if !self.quiet {
            eprintln!("{line}");
        }
    }

    /// A line that stays (above the spinner on a terminal).
    fn print(&self, line: String) {
        if self.tty {
            self.bar.println(line);
        } else {
            self.remark(line);
        }
    }

    /// The phase's line is erased.
    fn end_phase(&mut self) {
        self.phase.end();
        self.shown = None;
    }

    fn say(&self, msg: String) {
        if self.tty {
            match &self.pressure {
                Some(p) => self.bar.set_message(format!("{msg} [{p}]")),
                None => self.bar.set_message(msg),
            }
        }
    }
}

impl fslab_experiment::launch::Display for Display {
    fn clear(&mut self) {
        self.bar.finish_and_clear();
    }
}

impl Progress for Display {
    fn cell_start(&mut self, k: usize, total: usize, cell: &Cell, rep: u32, reps: u32) {
        self.pressure = None;
        self.end_phase();
        self.done = k;
        self.total = total;
        let which = if rep == fslab_model::WARM_UP {
            "warm-up (not compared)".to_string()
        } else {
            format!("repetition {rep}/{reps}")
        };
        self.label = format!(
            "[{}/{}] cell {} {:?} {which}",
            k + 1,
            total,
            cell.index,
            cell.label
        );
        if self.tty {
            self.say(format!(
                "{}: starting (time left ~{})",
                self.label,
                self.eta()
            ));
        } else {
            self.remark(format!("fslab: {}", self.label));
        }
    }
    fn step(&mut self, what: &str) {
        self.say(format!(
            "{}: {what} (time left ~{})",
            self.label,
            self.eta()
        ));
    }
    fn rate(&mut self, phase: &str, _ops_per_s: f64, total: u64, expected: Option<u64>) {
        // A new phase, or the same one again (mdtest's iterations).
        let again = match &self.shown {
            Some((name, done)) => name != phase || total < *done,
            None => true,
        };
        if again {
            self.phase.start(phase, expected);
            self.say(format!(
                "{}: {phase} (time left ~{})",
                self.label,
                self.eta()
            ));
        }
        self.phase.update(total);
        self.shown = Some((phase.to_string(), total));
    }
    fn note(&mut self, what: &str) {
        self.print(format!("fslab: {what}"));
    }
    fn pressure(&mut self, now: Option<&str>) {
        // Without a live line, a line when the pressure starts, changes
        // kind (at the limit, reclaiming) or ends.
        let kind = |p: Option<&str>| p.map(|p| p.split(':').next().unwrap_or(p).to_string());
        if !self.tty && kind(now) != kind(self.pressure.as_deref()) {
            match now {
                Some(p) => self.remark(format!("fslab: {}: {p}", self.label)),
                None => self.remark(format!(
                    "fslab: {}: no longer at its memory limit",
                    self.label
                )),
            }
        }
        self.pressure = now.map(str::to_string);
        if self.tty {
            self.say(format!("{} (time left ~{})", self.label, self.eta()));
        }
    }
    fn cell_end(&mut self, ok: bool, message: &str) {
        self.end_phase();
        let line = format!(
            "fslab: {} {}: {message}",
            self.label,
            if ok { "done" } else { "FAILED" }
        );
        self.print(line);
    }
}
