//! fslab's integration tests: one binary that drives the real `fslab`
//! executable. Tests that need root or kernel features skip with a reason
//! outside CI and fail under `CI=true`.

mod calibrate;
mod catalogue;
mod conventions;
mod endings;
mod fsmark;
mod fsmark_fs;
mod hostile;
mod hosts;
mod json;
mod lab;
mod lab_safety;
mod mechanisms;
mod metrics;
mod mpi;
mod parity;
mod parity_dbench;
mod parity_fsmark;
mod parity_reference;
mod probes;
mod report;
mod results;
mod scheduler;
mod support;
mod workloads;
