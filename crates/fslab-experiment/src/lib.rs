//! `fslab run`: experiment files, the matrix of cells they expand into,
//! the scheduler that runs every cell and repetition on a fresh filesystem,
//! the machine settings around it, and the journal that lets `fslab
//! cleanup` undo a killed run.
//!
//! - [`spec`]: the file format and its validation;
//! - [`plan`]: order, `--scale`, commands, dry-run text;
//! - [`safety`]: what an experiment may make fslab do as root, checked
//!   before anything is made;
//! - [`machine`]: sysctls, drop_caches, memory cgroups;
//! - [`state`]: the journal and `cleanup`;
//! - [`backend`]: making and tearing down a cell's filesystem (real, or a
//!   plain directory);
//! - [`image_host`]: the host XFS for images larger than `image_dir` holds;
//! - [`runner`]: the scheduler;
//! - [`signals`]: how a run ends on one, two or three signals;
//! - [`deadline`]: stopping a workload from outside (a signal, its time
//!   limit);
//! - [`pressure`]: whether a workload is at its memory limit;
//! - [`summary`]: mean, standard deviation and difference per cell.

pub mod backend;
pub mod deadline;
pub mod findings;
pub mod image_host;
pub mod machine;
pub mod plan;
pub mod pressure;
pub mod runner;
pub mod safety;
pub mod signals;
pub mod spec;
pub mod state;
pub mod summary;
