//! Power before running: what the planned repetitions of each cell can
//! resolve, from the stored A/A calibration that fits the cell (the same
//! machine, filesystem, workload and options as its runs will have).
//! `fslab run --dry-run` prints it for the planned repetitions,
//! `--until-resolved MAX` for MAX. The calibration of a cell is its A/A
//! experiment's (`--calibrate CELL` of the same file's text, at the same
//! scale).

use std::path::Path;

use crate::spec::{Device, Experiment};

/// One line per calibrated metric of each cell (`power: cell N LABEL:
/// ...`), or one saying that no calibration fits it and how to make one
/// (every cell, when there is no store yet).
pub fn lines(
    exp: &Experiment,
    (db, file, text, scale): (&Path, &str, &str, f64),
    reps: u32,
) -> Vec<String> {
    let store = fslab_store::Store::open_read(db).ok();
    let host = fslab_model::host_facts().1;
    let mut out = Vec::new();
    for cell in &exp.cells {
        let fs = match (&cell.fs, &exp.device) {
            (Some(fs), _) => fs.name().to_string(),
            (None, _) if cell.path.is_some() => {
                fslab_lab::image::host_fs(cell.path.as_deref().unwrap_or(Path::new("/")))
            }
            (None, Device::Directory { path }) => fslab_lab::image::host_fs(path),
            (None, _) => continue,
        };
        let aa = crate::aa::name(exp, &cell.label);
        let head = format!("power: cell {} {}", cell.index, cell.label);
        let found = store
            .as_ref()
            .map(|s| fslab_analysis::calibration::for_cell(s, &host, &fs, &aa, scale, text));
        match found {
            Some(Ok(cals)) if !cals.is_empty() => {
                for c in &cals {
                    if let Some(l) = fslab_analysis::calibration::resolvable_line(c, reps as usize) {
                        out.push(format!("{head}: {l}"));
                    }
                }
            }
            _ => out.push(format!(
                "{head}: no stored calibration fits it, so what {reps} repetitions resolve is not known \
                 (make one: fslab run {file} --calibrate {} --repetitions 5)",
                cell.index
            )),
        }
    }
    out
}
