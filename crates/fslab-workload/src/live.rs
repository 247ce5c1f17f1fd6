//! A phase's live progress on a terminal, drawn in this one place for
//! every workload and for `fslab run`'s cells: one line with the phase's
//! operations done of its total, the percentage, the rate and the time
//! left; when the total is not known (time-limited or stonewalled phases),
//! the operations done, the rate and the time elapsed.
//!
//! It is drawn by the phase's coordinator thread when a second's point is
//! made ([`crate::RunCtx::second`]), never from a timed loop: the workers
//! only set their counter ([`crate::measure::Progress::set`]).

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};

use crate::common::PhaseWatch;

/// `1m05s`, `2h03m`: minutes and seconds, hours and minutes past an hour.
pub fn clock_time(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 {
        format!("{}h{:02}m", s / 3600, s / 60 % 60)
    } else {
        format!("{}m{:02}s", s / 60, s % 60)
    }
}

/// The line of a phase with a total: `create [####>---] 1,234/6,000 ops
/// 21%, 4,321 ops/s, 0m02s left`, the bar as wide as the terminal allows.
fn with_total() -> ProgressStyle {
    ProgressStyle::with_template(
        "{prefix} [{wide_bar}] {human_pos}/{human_len} ops {percent}%, {rate}, {left} left",
    )
    .map(|s| s.progress_chars("#>-"))
    .unwrap_or_else(|_| ProgressStyle::default_bar())
    .with_key("rate", rate)
    .with_key("left", left)
}

/// The line of a phase without one: `execute 1,234 ops, 4,321 ops/s,
/// 0m07s elapsed`.
fn without_total() -> ProgressStyle {
    ProgressStyle::with_template("{prefix} {human_pos} ops, {rate}, {spent} elapsed")
        .unwrap_or_else(|_| ProgressStyle::default_spinner())
        .with_key("rate", rate)
        .with_key("spent", |s: &ProgressState, w: &mut dyn std::fmt::Write| {
            let _ = w.write_str(&clock_time(s.elapsed()));
        })
}

fn rate(s: &ProgressState, w: &mut dyn std::fmt::Write) {
    let _ = write!(
        w,
        "{} ops/s",
        indicatif::HumanCount(s.per_sec().round() as u64)
    );
}

fn left(s: &ProgressState, w: &mut dyn std::fmt::Write) {
    let _ = match s.per_sec() > 0.0 || s.pos() >= s.len().unwrap_or(0) {
        true => w.write_str(&clock_time(s.eta())),
        false => w.write_str("?"),
    };
}

/// The running phase's line, among the lines of `multi`.
pub struct PhaseBar {
    multi: MultiProgress,
    bar: Option<ProgressBar>,
}

impl PhaseBar {
    /// A line on stderr when stderr is a terminal, else none.
    pub fn on_stderr() -> Option<PhaseBar> {
        // Drawn when told (once a second, and around the workload's own
        // lines), so the redraw limit is only there against bursts.
        let target = || ProgressDrawTarget::stderr_with_hz(100);
        std::io::stderr()
            .is_terminal()
            .then(|| PhaseBar::among(MultiProgress::with_draw_target(target())))
    }

    /// A line among the lines `multi` draws (`fslab run` draws its cell's
    /// line above it; a benchmark draws to a terminal of its own).
    pub fn among(multi: MultiProgress) -> PhaseBar {
        PhaseBar { multi, bar: None }
    }

    /// Phase `phase` starts; it will make `total` operations, if known.
    pub fn start(&mut self, phase: &str, total: Option<u64>) {
        self.end();
        let bar = match total {
            Some(n) => ProgressBar::new(n).with_style(with_total()),
            None => ProgressBar::no_length().with_style(without_total()),
        };
        let bar = self.multi.add(bar.with_prefix(phase.to_string()));
        bar.tick();
        self.bar = Some(bar);
    }

    /// The running phase has made `done` operations.
    pub fn update(&self, done: u64) {
        if let Some(b) = &self.bar {
            b.set_position(done);
        }
    }

    /// The running phase is over: its line is erased.
    pub fn end(&mut self) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
            self.multi.remove(&b);
        }
    }

    /// `w`, with the line erased while it writes a whole line and drawn
    /// again after (the workload's own text on the same terminal).
    pub fn above(&self, w: Box<dyn Write>) -> Box<dyn Write> {
        Box::new(Above {
            multi: self.multi.clone(),
            inner: w,
            pending: Vec::new(),
        })
    }
}

impl Drop for PhaseBar {
    fn drop(&mut self) {
        self.end();
    }
}

impl PhaseWatch for PhaseBar {
    fn start(&mut self, phase: &str, total: Option<u64>) {
        PhaseBar::start(self, phase, total);
    }
    fn second(&mut self, _phase: &str, p: &fslab_model::SeriesPoint) {
        self.update(p.total_ops);
    }
    fn end(&mut self, _phase: &str) {
        PhaseBar::end(self);
    }
}

/// A writer whose whole lines are written with the bar erased.
struct Above {
    multi: MultiProgress,
    inner: Box<dyn Write>,
    pending: Vec<u8>,
}

impl Above {
    fn write_out(&mut self, upto: usize) -> std::io::Result<()> {
        let (inner, pending) = (&mut self.inner, &self.pending[..upto]);
        self.multi
            .suspend(|| inner.write_all(pending).and_then(|_| inner.flush()))?;
        self.pending.drain(..upto);
        Ok(())
    }
}

impl Write for Above {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.pending.extend_from_slice(buf);
        if let Some(last) = self.pending.iter().rposition(|&b| b == b'\n') {
            self.write_out(last + 1)?;
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.write_out(self.pending.len())
    }
}

impl Drop for Above {
    fn drop(&mut self) {
        let _ = self.flush();
    }
}

/// A terminal in memory, 120 columns wide, that keeps what is drawn on
/// it (the tests read it; the `loop_cost` benchmark draws the line to it).
#[derive(Debug, Clone, Default)]
pub struct Screen {
    text: Arc<Mutex<String>>,
    flushes: Arc<AtomicU64>,
}

impl Screen {
    /// Everything drawn so far, escape sequences included.
    pub fn text(&self) -> String {
        self.text.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// How many times a drawing was flushed to it (about one a draw).
    pub fn flushes(&self) -> u64 {
        self.flushes.load(Ordering::Relaxed)
    }

    /// A phase's line drawn on this screen.
    pub fn bar(&self) -> PhaseBar {
        let target = ProgressDrawTarget::term_like_with_hz(Box::new(self.clone()), 250);
        PhaseBar::among(MultiProgress::with_draw_target(target))
    }

    /// A cursor move of `n` in direction `d`, none when `n` is 0 (as a
    /// terminal's own writer does).
    fn moved(&self, n: usize, d: char) -> std::io::Result<()> {
        match n {
            0 => Ok(()),
            n => self.put(&format!("\x1b[{n}{d}")),
        }
    }

    fn put(&self, s: &str) -> std::io::Result<()> {
        self.text
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push_str(s);
        Ok(())
    }
}

impl indicatif::TermLike for Screen {
    fn width(&self) -> u16 {
        120
    }
    fn move_cursor_up(&self, n: usize) -> std::io::Result<()> {
        self.moved(n, 'A')
    }
    fn move_cursor_down(&self, n: usize) -> std::io::Result<()> {
        self.moved(n, 'B')
    }
    fn move_cursor_right(&self, n: usize) -> std::io::Result<()> {
        self.moved(n, 'C')
    }
    fn move_cursor_left(&self, n: usize) -> std::io::Result<()> {
        self.moved(n, 'D')
    }
    fn write_line(&self, s: &str) -> std::io::Result<()> {
        self.put(s)?;
        self.put("\n")
    }
    fn write_str(&self, s: &str) -> std::io::Result<()> {
        self.put(s)
    }
    fn clear_line(&self) -> std::io::Result<()> {
        self.put("\r\x1b[2K")
    }
    fn flush(&self) -> std::io::Result<()> {
        self.flushes.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_phase_with_a_total_shows_done_of_total_percent_rate_and_time_left() {
        let screen = Screen::default();
        let mut b = screen.bar();
        b.start("unlink", Some(6000));
        std::thread::sleep(Duration::from_millis(20));
        b.update(1500);
        let drawn = screen.text().trim_end().to_string();
        assert!(drawn.contains("unlink [#"), "{drawn}");
        assert!(drawn.contains("1,500/6,000 ops 25%, "), "{drawn}");
        assert!(drawn.contains(" ops/s, 0m"), "{drawn}");
        assert!(drawn.ends_with("s left"), "{drawn}");
        b.end();
        assert!(screen.text().ends_with("\r\x1b[2K"), "{:?}", screen.text());
    }

    #[test]
    fn a_phase_without_a_total_shows_done_rate_and_time_elapsed() {
        let screen = Screen::default();
        let mut b = screen.bar();
        b.start("execute", None);
        std::thread::sleep(Duration::from_millis(20));
        b.update(42_000);
        let drawn = screen.text().trim_end().to_string();
        assert!(drawn.contains("execute 42,000 ops, "), "{drawn}");
        assert!(drawn.ends_with("ops/s, 0m00s elapsed"), "{drawn}");
        assert!(!drawn.contains('%'), "{drawn}");
    }

    #[test]
    fn text_above_the_line_is_written_whole_lines_at_a_time() {
        let screen = Screen::default();
        let mut b = screen.bar();
        b.start("create", Some(10));
        let out = Arc::new(Mutex::new(Vec::new()));
        struct Shared(Arc<Mutex<Vec<u8>>>);
        impl Write for Shared {
            fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
                self.0.lock().unwrap().extend_from_slice(buf);
                Ok(buf.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let mut w = b.above(Box::new(Shared(out.clone())));
        write!(w, "#   1 ").unwrap();
        assert!(out.lock().unwrap().is_empty(), "a part of a line waits");
        writeln!(w, "10 files").unwrap();
        write!(w, "tail").unwrap();
        assert_eq!(&out.lock().unwrap()[..], b"#   1 10 files\n");
        drop(w);
        assert_eq!(&out.lock().unwrap()[..], b"#   1 10 files\ntail");
    }

    #[test]
    fn clock_times() {
        assert_eq!(clock_time(Duration::from_secs(65)), "1m05s");
        assert_eq!(clock_time(Duration::from_secs(7380)), "2h03m");
    }
}
