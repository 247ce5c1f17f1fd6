//! How much a job does, read from its options alone: what `fslab run
//! --dry-run` estimates a run's time and disk from where no stored run of
//! the same cell says better ([`crate::Workload::work`]).

/// The operations a second a workload is assumed to make when nothing
/// measured says otherwise: 20,000 (50 µs an operation: a create, stat or
/// unlink of a small file, a 4 KiB block written or read). fs_mark and
/// createmany made 38k-72k creates a second on a loop ext4 here (unloaded);
/// the assumption is on the slow side of that, as an estimate should be.
pub const ASSUMED_OPS_PER_S: f64 = 20_000.0;

/// The block size an IO workload's bytes are counted in as operations.
pub const OP_BLOCK: u64 = 4096;

/// A job's amount of work, per process (an MPI rank's share when several
/// ranks run it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Work {
    /// Operations it makes: files and directories made, looked at or
    /// removed, 4 KiB blocks written or read.
    pub ops: u64,
    /// Seconds it runs whatever its operations (dbench's `-t`, IO500's
    /// write phases past their stonewall), beside `ops`.
    pub seconds: u64,
    /// The most bytes of file data it holds on the filesystem at once.
    pub bytes: u64,
    /// The most files and directories it holds at once.
    pub entries: u64,
}

impl Work {
    /// `bytes` as operations: one per [`OP_BLOCK`] started.
    pub fn blocks(bytes: u64) -> u64 {
        bytes.div_ceil(OP_BLOCK)
    }
}
