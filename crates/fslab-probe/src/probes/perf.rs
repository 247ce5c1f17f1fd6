//! `perf`: a kernel profile of each phase (`perf record -a -g`), reduced to
//! the top symbols and the hottest call chains of the workload's processes
//! (a command workload's program and its descendants too) and its
//! filesystem's kernel threads, as shares of their samples (off by
//! default).

use crate::notes::{Note, PerfTop};
use crate::plugin::{Described, Evidence, Needs, Plugin, Table};
use crate::probe::{note, Ctx, PhaseOut, Probe, Reading};
use crate::source::Profiling;
use crate::ProbeError;

#[derive(Default)]
pub struct Perf {
    running: Option<Box<dyn Profiling>>,
    error: Option<ProbeError>,
    /// The workload's processes seen this phase.
    programs: std::collections::BTreeSet<u32>,
}

impl Probe for Perf {
    fn phase_start(&mut self, ctx: &Ctx) -> Vec<Reading> {
        self.programs.clear();
        match ctx
            .source
            .profile(ctx.scratch, &ctx.phase.index.to_string())
        {
            Ok(p) => self.running = Some(p),
            Err(e) => self.error = Some(e),
        }
        Vec::new()
    }

    /// Remembers the workload's processes seen during the phase: a
    /// program's descendants may end before the profile is read.
    fn sample(&mut self, ctx: &Ctx, _dt: f64) -> Vec<Reading> {
        self.programs.extend(ctx.processes.iter().copied());
        Vec::new()
    }

    fn phase_end(&mut self, ctx: &Ctx, _secs: f64) -> PhaseOut {
        let mut out = PhaseOut::default();
        let i = Some(ctx.phase.index);
        let result = match (self.running.take(), self.error.take()) {
            // The workload's process and its filesystem's kernel threads:
            // on a shared machine, not everyone else's work.
            (Some(p), _) => {
                let mut seen = std::mem::take(&mut self.programs);
                seen.extend(ctx.processes.iter().copied());
                seen.insert(ctx.pid);
                let pids: Vec<u32> = seen
                    .into_iter()
                    .chain(ctx.kthreads.iter().map(|(pid, _)| *pid))
                    .collect();
                p.finish(&pids)
            }
            (None, Some(e)) => Err(e),
            (None, None) => return out,
        };
        match result {
            Ok((top, graph)) => {
                out.notes.push(ctx.phase_note::<PerfTop>(&top));
                out.notes.push(note(
                    i,
                    "perf",
                    "callgraph",
                    serde_json::Value::String(graph),
                ));
            }
            Err(e) => out.notes.push(note(
                i,
                "perf",
                "error",
                serde_json::Value::String(e.to_string()),
            )),
        }
        out
    }
}

/// The `perf` probe (off by default).
pub struct PerfPlugin;

impl Plugin for PerfPlugin {
    fn name(&self) -> &'static str {
        "perf"
    }

    fn needs(&self) -> Needs {
        Needs {
            root: Some("a system-wide kernel profile (perf record -a)"),
            perf: true,
            ..Needs::default()
        }
    }

    fn default_on(&self) -> bool {
        false
    }

    fn make(&self) -> Box<dyn Probe> {
        Box::<Perf>::default()
    }

    /// The phase's five hottest kernel symbols.
    fn describe_phase(&self, phase: &Described) -> Vec<String> {
        let Some(PerfTop(syms)) = phase.note::<PerfTop>() else {
            return Vec::new();
        };
        let top: Vec<String> = syms
            .iter()
            .filter(|x| x.kernel)
            .take(5)
            .map(|x| format!("{:.1}% {}", x.percent, x.symbol))
            .collect();
        vec![format!("perf: {}", top.join(", "))]
    }

    /// Each phase's ten hottest symbols.
    fn tables(&self, run: &Described) -> Vec<Table> {
        let rows: Vec<Vec<String>> = run
            .notes_of::<PerfTop>()
            .into_iter()
            .flat_map(|(_, PerfTop(syms))| {
                syms.into_iter()
                    .take(10)
                    .map(|s| vec![format!("{:.2}%", s.percent), s.symbol, s.dso])
            })
            .collect();
        if rows.is_empty() {
            return Vec::new();
        }
        vec![Table {
            head: ["share", "symbol", "object"].map(String::from).to_vec(),
            rows,
        }]
    }

    /// Each phase's profile (a symbol's share of it: seed 001's crc32c).
    fn evidence(&self) -> Evidence {
        Evidence {
            notes: vec![PerfTop::KEY],
            series: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::bed::*;
    use super::*;
    use crate::notes::{Note, PerfSymbol};

    #[test]
    fn a_phases_profile_or_why_there_is_none() {
        let b = Bed::new();
        let top = PerfTop(vec![PerfSymbol {
            symbol: "crc32c_pcl_intel_update".into(),
            ..Default::default()
        }]);
        b.source.set_profile(Ok((top.clone(), "graph".into())));
        let mut p = Perf::default();
        p.phase_start(&b.ctx());
        let out = p.phase_end(&b.ctx(), 1.0);
        assert_eq!(PerfTop::from_value(&out.notes[0].value), top);
        assert_eq!(
            (out.notes[1].key.as_str(), out.notes[1].value.as_str()),
            ("callgraph", Some("graph"))
        );
        b.source.set_profile(Err(ProbeError::Perf(
            "perf record: permission denied".into(),
        )));
        p.phase_start(&b.ctx());
        let out = p.phase_end(&b.ctx(), 1.0);
        assert_eq!(out.notes[0].key, "error");
        assert_eq!(out.notes[0].phase_index, Some(2));
    }
}
