//! `fslab trace show RUN`: the block IO completions a run recorded, as
//! blkparse prints them (seed 000's completion lines).

use std::io::Write;

use fslab_probe::blockio;
use fslab_probe::notes::{BlockioEvents, Note};
use fslab_probe::TargetsNote;
use fslab_store::Store;

use crate::{Error, Result};

/// Which completions to print.
#[derive(Debug, Clone, Copy, Default)]
pub struct Which {
    /// At most this many lines.
    pub limit: Option<usize>,
    /// Only this device's (MAJOR, MINOR) [default: the filesystem's own].
    pub dev: Option<(u32, u32)>,
    /// Every traced device's.
    pub all_devices: bool,
}

/// Writes run `id`'s block IO completions to `out` in blkparse's format;
/// which device it chose is said through `remark`. A closed `out` (`|
/// head`) ends it.
pub fn blkparse(
    store: &Store,
    id: i64,
    which: Which,
    out: &mut dyn Write,
    remark: &mut dyn FnMut(&str),
) -> Result<()> {
    let Which {
        limit,
        dev,
        all_devices,
    } = which;
    let notes = store.probe_notes(id)?;
    // Without --dev, the filesystem's own device (the trace also holds the
    // disk under its image); --all-devices keeps every device's.
    let targets = notes
        .iter()
        .find(|n| TargetsNote::is(&n.probe, &n.key))
        .map(|n| TargetsNote::from_value(&n.value))
        .unwrap_or_default();
    let dev = match (dev, all_devices, targets.device_number()) {
        (Some(d), _, _) => Some(d),
        (None, false, Some(n)) => {
            remark(&format!(
                "fslab: trace: the completions of the filesystem's device, {} ({},{}); \
                 --all-devices shows every traced device's",
                targets.device.as_deref().unwrap_or("?"),
                n >> 20,
                n & 0xfffff
            ));
            Some((n >> 20, n & 0xfffff))
        }
        _ => None,
    };
    let Some((value, blob)) = notes
        .into_iter()
        .find(|n| BlockioEvents::is(&n.probe, &n.key))
        .map(|n| (n.value, n.blob))
    else {
        return Err(Error::Selection(format!(
            "run {id} has no block IO trace (was the blockio probe on, on a block device?)"
        )));
    };
    let blob = blob.unwrap_or_default();
    let damaged = |e: std::io::Error| Error::Damaged(format!("trace of run {id} is damaged: {e}"));
    // Two passes over the records, one at a time: the first finds time
    // zero and the devices traced, the second prints.
    let mut first = u64::MAX;
    let mut traced = std::collections::BTreeSet::new();
    blockio::each_completion(&blob, |c| {
        first = first.min(c.t_ns);
        traced.insert(c.dev);
        true
    })
    .map_err(damaged)?;
    // Times count from the first phase's start, or from an earlier first event.
    let first = if first == u64::MAX { 0 } else { first };
    let t0 = match BlockioEvents::from_value(&value).t0_mono_ns {
        0 => first,
        t => t.min(first),
    };
    let want = dev.map(|(maj, min)| maj << 20 | min);
    if let (Some((maj, min)), Some(w)) = (dev, want) {
        if !traced.contains(&w) {
            let names: Vec<String> = traced
                .iter()
                .map(|d| format!("{},{}", d >> 20, d & 0xfffff))
                .collect();
            return Err(Error::Selection(format!(
                "run {id} traced no IO on device {maj},{min} (it traced: {})",
                if names.is_empty() {
                    "nothing".into()
                } else {
                    names.join(" ")
                }
            )));
        }
    }
    let mut seq: std::collections::HashMap<u16, u64> = Default::default();
    let mut printed = 0usize;
    blockio::each_completion(&blob, |c| {
        if want.is_some_and(|w| c.dev != w) {
            return true;
        }
        if limit.is_some_and(|l| printed >= l) {
            return false;
        }
        printed += 1;
        let s = seq.entry(c.cpu).or_insert(0);
        *s += 1;
        // A closed pipe (| head) ends it.
        writeln!(out, "{}", blockio::blkparse_line(c, *s, t0)).is_ok()
    })
    .map_err(damaged)?;
    Ok(())
}
