//! `frag`: the extent count of the image behind the loop device, at the
//! phase's start and then sampled (at most 5% of the time: counting costs
//! about 0.5 us an extent), and its final extent map when the run ends.

use std::time::{Duration, Instant};

use fslab_model::{Blob, ProbeNote};

use crate::blockio;
use crate::frag;
use crate::names;
use crate::notes::FragFinalMap;
use crate::plugin::{Chart, Described, Needs, Plugin, Series};
use crate::probe::{typed_note, Ctx, PhaseOut, Probe, Reading};

pub struct Frag {
    next: Instant,
    every: Duration,
}

impl Default for Frag {
    fn default() -> Frag {
        Frag {
            next: Instant::now(),
            every: Duration::from_secs(1),
        }
    }
}

impl Frag {
    fn count(ctx: &Ctx) -> Option<u64> {
        ctx.source.extent_count(ctx.targets.image.as_ref()?)
    }
}

impl Probe for Frag {
    /// A baseline at t = 0, so growth during the phase shows.
    fn phase_start(&mut self, ctx: &Ctx) -> Vec<Reading> {
        Frag::count(ctx)
            .map(|n| vec![Reading::at(names::IMAGE_EXTENTS, n as f64, 0.0)])
            .unwrap_or_default()
    }

    fn sample(&mut self, ctx: &Ctx, _dt: f64) -> Vec<Reading> {
        let now = Instant::now();
        if now < self.next {
            return Vec::new();
        }
        let n = Frag::count(ctx);
        self.every = Duration::from_secs(1).max(now.elapsed() * 20);
        self.next = now + self.every;
        n.map(|n| vec![Reading::now(names::IMAGE_EXTENTS, n as f64)])
            .unwrap_or_default()
    }

    fn phase_end(&mut self, _ctx: &Ctx, _secs: f64) -> PhaseOut {
        PhaseOut::default()
    }

    fn finish(&mut self, ctx: &Ctx) -> Vec<ProbeNote> {
        let Some(img) = ctx.targets.image.as_ref() else {
            return Vec::new();
        };
        let Some(ext) = ctx.source.extent_map(img) else {
            return Vec::new();
        };
        let mut n = typed_note(
            None,
            &FragFinalMap {
                image: img.display().to_string(),
                extents: ext.len() as u64,
            },
        );
        n.blob = Some(Blob::Bytes(blockio::compress(&frag::encode_map(&ext))));
        vec![n]
    }
}

/// The `frag` probe.
pub struct FragPlugin;

impl Plugin for FragPlugin {
    fn name(&self) -> &'static str {
        "frag"
    }

    fn needs(&self) -> Needs {
        Needs {
            image: true,
            ..Needs::default()
        }
    }

    fn make(&self) -> Box<dyn Probe> {
        Box::<Frag>::default()
    }

    fn series(&self) -> Vec<Series> {
        vec![
            Series::new(names::IMAGE_EXTENTS, "extents", "extents").on(Chart {
                title: "backing image extents",
                y_label: "extents",
            }),
        ]
    }

    /// The image's extents at the end of the run.
    fn describe_run(&self, run: &Described) -> Vec<String> {
        run.note::<FragFinalMap>()
            .map(|m| format!("frag: image {} ends with {} extents", m.image, m.extents))
            .into_iter()
            .collect()
    }

    fn describe_phase(&self, _phase: &Described) -> Vec<String> {
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::super::bed::*;
    use super::*;
    use crate::notes::Note;
    use fslab_sys::fiemap::Extent;

    fn extents(n: u64) -> Vec<Extent> {
        (0..n)
            .map(|i| Extent {
                logical: i * 8192,
                physical: i * 16384,
                length: 4096,
                flags: 0,
            })
            .collect()
    }

    #[test]
    fn counts_from_the_start_and_the_final_map() {
        let b = Bed::new();
        b.source.set_extents("/img/fs.img", extents(3));
        let mut p = Frag::default();
        assert_eq!(
            p.phase_start(&b.ctx()),
            vec![Reading::at(names::IMAGE_EXTENTS, 3.0, 0.0)]
        );
        b.source.set_extents("/img/fs.img", extents(40));
        assert_eq!(value(&p.sample(&b.ctx(), 1.0), names::IMAGE_EXTENTS), 40.0);
        // Not again within the second.
        assert!(p.sample(&b.ctx(), 0.1).is_empty());
        let n = p.finish(&b.ctx());
        assert_eq!(FragFinalMap::from_value(&n[0].value).extents, 40);
        let map = blockio::decompress(&n[0].blob.as_ref().unwrap().to_vec().unwrap()).unwrap();
        assert_eq!(map, frag::encode_map(&extents(40)));
    }
}
