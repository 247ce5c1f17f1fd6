//! `perf`: a kernel profile of each phase (`perf record -a -g`), reduced to
//! the top symbols and the hottest call chains (off by default).

use crate::notes::PerfTop;
use crate::probe::{note, Ctx, PhaseOut, Probe, Sample};
use crate::source::Profiling;
use crate::{Kind, ProbeError};

#[derive(Default)]
pub struct Perf {
    running: Option<Box<dyn Profiling>>,
    error: Option<ProbeError>,
}

impl Probe for Perf {
    fn kind(&self) -> Kind {
        Kind::Perf
    }

    fn phase_start(&mut self, ctx: &Ctx) -> Vec<Sample> {
        match ctx
            .source
            .profile(ctx.scratch, &ctx.phase.index.to_string())
        {
            Ok(p) => self.running = Some(p),
            Err(e) => self.error = Some(e),
        }
        Vec::new()
    }

    fn sample(&mut self, _ctx: &Ctx, _dt: f64) -> Vec<Sample> {
        Vec::new()
    }

    fn phase_end(&mut self, ctx: &Ctx, _secs: f64) -> PhaseOut {
        let mut out = PhaseOut::default();
        let i = Some(ctx.phase.index);
        let result = match (self.running.take(), self.error.take()) {
            (Some(p), _) => p.finish(),
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
