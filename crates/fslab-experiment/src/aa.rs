//! `fslab run EXPERIMENT --calibrate CELL`'s experiment: cell CELL as two
//! copies, interleaved repetition by repetition, so that whatever drifts
//! (the machine, the page cache, the order) falls on both.

use crate::spec::{Experiment, Order};

/// Why there is no A/A experiment of the cell asked for (bad input).
#[derive(Debug, thiserror::Error)]
pub enum AaError {
    #[error("--calibrate {cell}: {name} has cells 0 to {last}")]
    NoSuchCell {
        cell: u32,
        name: String,
        last: usize,
    },
    #[error("--calibrate {cell}: {repetitions} repetition(s) give no noise: use --repetitions 3 or more")]
    TooFew { cell: u32, repetitions: u32 },
}

/// The name of the A/A experiment of `exp`'s cell labelled `label`: what
/// its calibrations are found by (`fslab run --dry-run`'s power lines).
pub fn name(exp: &Experiment, label: &str) -> String {
    format!("{} A/A {label}", exp.name)
}

/// The A/A experiment of cell `cell` of `exp`: two copies of it,
/// interleaved, no findings (they name the experiment's own cells).
pub fn of(exp: &Experiment, cell: u32) -> Result<Experiment, AaError> {
    let Some(c) = exp.cells.iter().find(|c| c.index == cell) else {
        return Err(AaError::NoSuchCell {
            cell,
            name: exp.name.clone(),
            last: exp.cells.len().saturating_sub(1),
        });
    };
    if exp.repetitions < 2 {
        return Err(AaError::TooFew {
            cell,
            repetitions: exp.repetitions,
        });
    }
    let mut aa = exp.clone();
    aa.name = name(exp, &c.label);
    aa.order = Order::Interleaved;
    aa.until_resolved = None;
    aa.findings.clear();
    aa.cells = ["A", "A'"]
        .iter()
        .enumerate()
        .map(|(i, copy)| {
            let mut x = c.clone();
            x.index = i as u32;
            x.label = format!("{} ({copy})", c.label);
            x
        })
        .collect();
    Ok(aa)
}
