//! fslab's workloads and the measuring they share.
//!
//! - [`measure`]: per-thread progress counters, the per-second sampler and
//!   CPU accounting, used by every workload;
//! - [`Error`]: why a workload could not run (bad options, setup, the
//!   store);
//! - [`fsmark`]: fs_mark 3.3 re-implemented, plus stat and unlink phases.
//!
//! Workloads report through [`fslab_model::Recorder`] and never touch the
//! database themselves.

pub mod alloctest;
pub mod args;
pub mod command;
pub mod command_line;
pub mod common;
pub mod compilebench;
pub mod crc32c;
pub mod createmany;
pub mod dbench;
mod error;
pub mod fsmark;
pub mod io500;
pub mod live;
pub mod mdtest;
pub mod measure;
pub mod patience;
pub mod plugin;
pub mod scale;
pub mod stonewall;
pub mod tiotest;
pub mod work;

pub use common::{Begun, CommonArgs, Hooks, PhaseHook, PhaseWatch, Report, RunCtx};
pub use error::{opt, Error, ErrorKind, LineError, OptionError, Result};
pub use plugin::{ChildSpec, Example, Job, Refused, Start, Workload, WorkloadRef};

use std::sync::atomic::AtomicBool;

/// Set by the signal handler (SIGINT, SIGTERM): workloads stop at the next
/// operation and keep what they measured.
pub type StopFlag = AtomicBool;

/// The built-in workloads, one line each: a workload is its module (with
/// its `plugin.rs`) and its line here. Tests add their own with
/// [`plugin::register`].
pub fn registry() -> &'static [&'static dyn plugin::AnyWorkload] {
    use plugin::Plugin;
    static BUILT_IN: &[&dyn plugin::AnyWorkload] = &[
        &Plugin::<fsmark::plugin::FsMark>::new(),
        &Plugin::<createmany::plugin::CreateMany>::new(),
        &Plugin::<tiotest::plugin::TioTest>::new(),
        &Plugin::<alloctest::plugin::AllocTest>::new(),
        &Plugin::<dbench::plugin::Dbench>::new(),
        &Plugin::<compilebench::plugin::CompileBench>::new(),
        &mdtest::plugin::MDTEST,
        &io500::plugin::IO500MD,
        &Plugin::<command::plugin::Exec>::new(),
    ];
    BUILT_IN
}
