//! A cell's first pass (`[first_pass]`): the workload runs once on the
//! cell's image before the judged run, with its own IO scheduler; then the
//! image's extents are counted (all, and past the first region), the cell's
//! memory cgroup's counters are reset, and the filesystem is made again on
//! the same image, without discard, for the judged run. What the first
//! pass measured becomes the judged run's metrics named `first pass ...`
//! (seed 000: the author's judged runs ran on an image that small IOs had
//! fragmented before).

use fslab_model::{Better, Metric, Unit};

use crate::outcome::WorkloadOutcome;
use crate::spec::FirstPass;

/// The source every first-pass metric is named under.
pub const FIRST_PASS: &str = "first pass";

/// Its image's extents, all of them.
pub const IMAGE_EXTENTS: &str = "image extents";

/// Its image's extents that start past the first region.
pub const EXTENTS_PAST_REGION: &str = "image extents past the first region";

/// `name` as a first-pass metric's name is written in findings.
pub fn named(name: &str) -> String {
    format!("{FIRST_PASS} {name}")
}

/// What a first pass's workload measured, as metrics of the judged run:
/// each phase's time, rate and CPU, the tool's numbers and the probes',
/// each named `first pass SOURCE ...`.
pub fn metrics(w: &WorkloadOutcome) -> Vec<Metric> {
    let mut out: Vec<Metric> = w
        .phases
        .iter()
        .flat_map(|p| fslab_model::catalogue::phase_metrics(FIRST_PASS, p))
        .collect();
    for m in w.metrics.iter().chain(&w.probe_metrics) {
        let mut m = m.clone();
        m.source = named(&m.source);
        out.push(m);
    }
    out
}

/// The image's extents after the first pass: all, and (with a region)
/// those past it.
pub fn image_counts(image: &std::path::Path, pass: &FirstPass) -> std::io::Result<Vec<Metric>> {
    let (total, past) = fslab_probe::frag::count_past(image, pass.region.unwrap_or(u64::MAX))?;
    let m = |name: &str, v: u64| {
        Metric::new(
            FIRST_PASS,
            None,
            name,
            v as f64,
            Unit::Count,
            Better::Neither,
        )
    };
    let mut out = vec![m(IMAGE_EXTENTS, total)];
    if pass.region.is_some() {
        out.push(m(EXTENTS_PAST_REGION, past));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use fslab_model::catalogue::tool_name;

    #[test]
    fn a_first_pass_is_named_as_findings_read_it() {
        let w = WorkloadOutcome {
            phases: vec![fslab_model::PhaseResult {
                phase: "create".into(),
                ops_per_s: 1000.0,
                ..Default::default()
            }],
            probe_metrics: vec![Metric::new(
                "blockio",
                Some("create"),
                "guest IO size after memory full",
                8.0,
                Unit::Kib,
                Better::Neither,
            )],
            ..Default::default()
        };
        let names: Vec<String> = metrics(&w).iter().map(tool_name).collect();
        assert!(
            names.contains(&"first pass create rate (ops/s)".to_string()),
            "{names:?}"
        );
        assert!(
            names.contains(
                &"first pass blockio create guest IO size after memory full (KiB)".to_string()
            ),
            "{names:?}"
        );
    }

    #[test]
    fn an_images_extents_are_counted_past_its_first_region() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("img");
        let f = std::fs::File::create(&p).unwrap();
        use std::os::unix::fs::FileExt;
        // Three islands of data with holes between them: at 0, 1 MiB, 8 MiB.
        for at in [0u64, 1 << 20, 8 << 20] {
            f.write_all_at(&[1u8; 4096], at).unwrap();
        }
        f.sync_all().unwrap();
        let pass = FirstPass {
            scheduler: None,
            region: Some(2 << 20),
        };
        let v = image_counts(&p, &pass).unwrap();
        let get = |n: &str| v.iter().find(|m| m.name == n).map(|m| m.value);
        assert_eq!(get(IMAGE_EXTENTS), Some(3.0));
        assert_eq!(get(EXTENTS_PAST_REGION), Some(1.0));
    }
}
