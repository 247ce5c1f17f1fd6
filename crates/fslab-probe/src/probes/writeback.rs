//! `writeback`: writeback starts on the filesystem's device by reason
//! (background, periodic, vmscan, sync, ...), per second and per phase.

use crate::names;
use crate::notes::WritebackReasons;
use crate::plugin::{Described, Filter, Needs, Plugin, Series, TraceEvent};
use crate::probe::{Ctx, PhaseOut, Probe, Reading};

#[derive(Default)]
pub struct Writeback;

impl Probe for Writeback {
    fn phase_start(&mut self, ctx: &Ctx) -> Vec<Reading> {
        if let Some(mut st) = ctx.trace_state() {
            st.wb_second.clear();
            st.wb_phase.clear();
        }
        Vec::new()
    }

    fn sample(&mut self, ctx: &Ctx, _dt: f64) -> Vec<Reading> {
        let Some(mut st) = ctx.trace_state() else {
            return Vec::new();
        };
        std::mem::take(&mut st.wb_second)
            .into_iter()
            .map(|(reason, n)| Reading::now(names::writeback_start(&reason), n as f64))
            .collect()
    }

    fn phase_end(&mut self, ctx: &Ctx, _secs: f64) -> PhaseOut {
        let mut out = PhaseOut::default();
        if let Some(st) = ctx.trace_state() {
            out.notes
                .push(ctx.phase_note(&WritebackReasons(st.wb_phase.clone())));
        }
        out
    }
}

/// The `writeback` probe.
pub struct WritebackPlugin;

/// Writeback starts, by reason.
const EVENTS: [TraceEvent; 1] = [TraceEvent {
    event: "writeback/writeback_start",
    filter: Filter::DeviceName,
    optional: true,
    fs_prefix: None,
}];

impl Plugin for WritebackPlugin {
    fn name(&self) -> &'static str {
        "writeback"
    }

    fn needs(&self) -> Needs {
        Needs {
            trace: &EVENTS,
            ..Needs::default()
        }
    }

    fn make(&self) -> Box<dyn Probe> {
        Box::new(Writeback)
    }

    fn series(&self) -> Vec<Series> {
        ["background", "periodic", "vmscan", "sync"]
            .into_iter()
            .map(|r| Series::new(names::writeback_start(r), "starts/s", r))
            .collect()
    }

    /// The phase's writeback starts by reason.
    fn describe_phase(&self, phase: &Described) -> Vec<String> {
        match phase.note::<WritebackReasons>() {
            Some(WritebackReasons(r)) if !r.is_empty() => {
                let r: Vec<String> = r.iter().map(|(k, n)| format!("{k} {n}")).collect();
                vec![format!("writeback starts: {}", r.join(", "))]
            }
            _ => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::bed::*;
    use super::*;
    use crate::notes::Note;

    #[test]
    fn starts_by_reason() {
        let b = Bed::new();
        let mut p = Writeback;
        p.phase_start(&b.ctx());
        let line = |r: &str| {
            format!("  kworker/u8:1-9 [000] ..... 1.5: writeback_start: bdi 7:3: sb_dev 0:0 nr_pages=1 sync_mode=0 kupdate=0 range_cyclic=1 background=1 reason={r} cgroup_ino=1")
        };
        b.trace_lines(&[line("background"), line("background"), line("vmscan")]);
        let s = p.sample(&b.ctx(), 1.0);
        assert_eq!(value(&s, &names::writeback_start("background")), 2.0);
        assert_eq!(value(&s, &names::writeback_start("vmscan")), 1.0);
        // The second's counts were taken; the phase keeps its own.
        assert!(p.sample(&b.ctx(), 1.0).is_empty());
        let w = WritebackReasons::from_value(&p.phase_end(&b.ctx(), 2.0).notes[0].value);
        assert_eq!(w.0["background"], 2);
    }
}
