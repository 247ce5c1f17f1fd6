//! `fslab trace show RUN` (rendered by fslab-present).

use std::path::Path;

use fslab_present::trace::{blkparse, Which};

use crate::Failure;
use fslab_present::results_args::TraceCommand;

pub fn run(cmd: TraceCommand, db: &Path) -> Result<(), Failure> {
    let TraceCommand::Show {
        id,
        limit,
        dev,
        all_devices,
    } = cmd;
    let store = super::open_store_read(db)?;
    let id = super::run_id(&store, &id)?;
    let which = Which {
        limit,
        dev,
        all_devices,
    };
    let mut remark = |line: &str| remark!("{line}");
    blkparse(
        &store,
        id,
        which,
        &mut std::io::stdout().lock(),
        &mut remark,
    )
    .map_err(super::results_failure)
}
