//! `fslab mdtest`: hpc/ior's mdtest (src/mdtest.c, 4.1.0+dev), the
//! metadata benchmark of parallel filesystems and of IO500's metadata
//! phases, on one process or one MPI rank per process.
//!
//! Per iteration, in mdtest's order: tree creation, then for directories
//! and for files each create, stat, read (files), rename (directories) and
//! remove phase asked for, then tree removal. Every phase starts together
//! on every rank (the runtime's phase gate) and ends at a barrier; its time
//! runs past that barrier (mdtest's "time"), and each rank's own time to
//! its last item is kept too (its "time before barrier"). -W makes file
//! creation stop at a stonewall and wear out to the count the ranks agree
//! on ([`stonewall`]). Rank 0 prints mdtest's header and SUMMARY tables and
//! records the run's numbers as metrics; every rank records its phases.
//!
//! - [`options`]: the letters and mdtest's derived numbers;
//! - `prologue`: the header, the -d directory and the -x count;
//! - [`tree`]: the directory tree and the items' names;
//! - [`phases`]: the calls on each item;
//! - [`stonewall`]: the stonewall agreement and its numbers (the crate's
//!   [`crate::stonewall`], shared with fsmark and createmany);
//! - [`summary`]: the SUMMARY tables and IO500's per-rank CSV.

pub mod options;
pub mod phases;
pub mod plugin;
mod prologue;
mod run;
pub mod summary;
pub mod tree;

#[cfg(test)]
mod run_tests;

pub use crate::stonewall;
pub use options::{MdtestArgs, Options};
pub use run::{run, run_within, MdtestReport, Part};

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        a: MdtestArgs,
    }

    /// The options of an mdtest command line (without the program).
    pub fn opts(args: &str) -> Options {
        let argv = std::iter::once("mdtest").chain(args.split_whitespace());
        Cli::try_parse_from(argv).unwrap().a.validate().unwrap()
    }
}
