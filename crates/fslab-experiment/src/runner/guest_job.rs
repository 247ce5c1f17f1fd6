//! What the host hands a guest for one repetition of a cell on another
//! kernel ([`GuestJob`], a JSON file the guest reads through the shared
//! root), and the one-cell experiment the guest's fslab runs from it.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::spec::{self, Cell, Device, Experiment, Order};

/// One repetition of a cell, for a guest to run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GuestJob {
    /// The experiment as `fslab run` read it: where from, its text, scale.
    pub file: String,
    pub text: String,
    pub scale: f64,
    /// What the command line changed: the probes, the time limit.
    pub probes: Option<String>,
    pub time_limit_s: Option<f64>,
    /// The cell (its kernel is the guest's own).
    pub cell: Cell,
    /// The guest's disk for the cell's filesystem, and the one its results
    /// are handed back on.
    pub disk: PathBuf,
    pub out: PathBuf,
    /// The guest's own results store (on its tmpfs).
    pub db: PathBuf,
}

/// The guest's disks: the cell's filesystem, then the results.
pub const GUEST_DISK: &str = "/dev/vda";
pub const GUEST_OUT: &str = "/dev/vdb";
/// The guest's store, on the tmpfs its init mounts on /tmp.
pub const GUEST_DB: &str = "/tmp/fslab-guest.sqlite";

impl GuestJob {
    /// The experiment the guest runs: the file's, scaled as on the host,
    /// with this one cell once on the guest's disk, no findings.
    pub fn experiment(&self) -> Result<Experiment, spec::SpecError> {
        let exp = spec::parse(&self.file, &self.text, &spec::Defaults::default())?;
        let mut exp = crate::plan::scaled(&exp, self.scale);
        exp.workload.probes.clone_from(&self.probes);
        exp.time_limit = self.time_limit_s.map(std::time::Duration::from_secs_f64);
        let mut cell = self.cell.clone();
        cell.kernel = None;
        cell.index = 0;
        exp.cells = vec![cell];
        exp.repetitions = 1;
        exp.until_resolved = None;
        exp.warm_up = false;
        exp.order = Order::Sequential;
        exp.findings.clear();
        exp.cluster = None;
        exp.device = Device::Block {
            path: self.disk.clone(),
        };
        Ok(exp)
    }
}
