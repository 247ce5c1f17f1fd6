//! fslab's integration tests: one binary that drives the real `fslab`
//! executable. Tests that need root or kernel features skip with a reason
//! outside CI and fail under `CI=true`.

mod calibrate;
mod catalogue;
mod cluster;
mod compilebench;
mod conventions;
mod cost;
mod cpu_figures;
mod dbench;
mod docs;
mod endings;
mod exec;
mod explain;
mod fsmark;
mod fsmark_fs;
mod hostile;
mod hosts;
mod io500;
mod io500_files;
mod json;
mod kernels;
mod lab;
mod lab_safety;
mod live;
mod mdtest;
mod mechanisms;
mod metrics;
mod mpi;
mod parity;
mod parity_dbench;
mod parity_fsmark;
mod parity_reference;
mod paths;
mod probes;
mod report;
mod results;
mod resume;
mod scheduler;
mod slurm;
mod stonewall;
mod support;
mod usability;
mod workloads;
