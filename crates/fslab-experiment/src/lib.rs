//! `fslab run`: experiment files, the matrix of cells they expand into,
//! what they may do as root, the scheduler that runs every cell and
//! repetition on a fresh filesystem, and the findings judged. What a cell
//! sets up and undoes (images, loop devices, mounts, machine settings,
//! the journal's undo) is `fslab-lab`'s.
//!
//! - [`spec`]: the file format and its validation (one file a part:
//!   `spec_device.rs`, `spec_machine.rs`, `spec_cells.rs`,
//!   `spec_finding.rs`);
//! - [`duration`]: durations as written and as read;
//! - [`plan`]: order, `--scale`, commands, dry-run text;
//! - [`cost`]: a run's time, disk and memory, estimated before it runs;
//! - [`safety`]: what an experiment may make fslab do as root, checked
//!   before anything is made;
//! - [`backend`]: a cell's filesystem from its device and options (the
//!   lab's `cellfs` makes and tears it down), and what is measured on it
//!   after the workload;
//! - [`host_lab`]: what one cluster host's lab is for a cell (the lab's
//!   `host_lab` makes it);
//! - [`image_host`]: whether the images go on a host XFS (the lab's
//!   `image_host` makes it);
//! - [`runner`]: the scheduler, one file a job (see its page);
//! - [`signals`]: how a run ends on one, two or three signals;
//! - [`deadline`]: stopping a workload from outside (a signal, its time
//!   limit);
//! - [`summary`]: a run's samples and its analysis (fslab-analysis), which
//!   fslab-present prints;
//! - [`outcome`]: what a workload, a repetition and a whole run produced;
//! - [`evidence`]: what the probes give the findings;
//! - [`findings`]: the seed authors' claims, judged;
//! - [`builtin`]: the experiments built into fslab, and finding the one
//!   `fslab run` is given;
//! - [`aa`]: `--calibrate CELL`'s A/A experiment;
//! - [`noise_sources`]: what went with an A/A experiment's noise (other load, steal, IO wait, order);
//! - [`run_args`]: `fslab run`'s options, what they change in the
//!   experiment, and how a run ends;
//! - [`resume`]: an earlier experiment read back for `--resume`.
//! - [`bisect`]: `fslab bisect`, the first bad kernel of an ordered list;
//!   [`bisect_steps`]: its steps, each kernel's cell run and recorded;
//! - [`launch`]: a command's run: its checks, its executor, the scheduler
//!   under its journal;
//! - [`guest_cell`]: `fslab guest-cell`, one cell inside a guest;
//! - [`power`]: what the planned repetitions can resolve, from the stored
//!   calibration.
//!
//! No module imports one that imports it back: `spec` (with `findings::finding`
//! and `duration`) is at the bottom, the runner's files at the top.

pub mod aa;
pub mod after;
pub mod backend;
pub mod bisect;
pub mod bisect_args;
pub mod bisect_steps;
pub mod builtin;
pub mod cost;
pub mod deadline;
pub mod duration;
pub mod evidence;
pub mod findings;
pub mod guest_cell;
pub mod host_lab;
pub mod image_host;
pub mod launch;
pub mod noise_sources;
pub mod outcome;
pub mod plan;
pub mod power;
pub mod resume;
pub mod run_args;
pub mod runner;
pub mod safety;
pub mod signals;
pub mod spec;
pub mod summary;
