//! From a selection of runs to one [`Analysis`]: the groups (an
//! experiment's cells, or groups of run ids), every metric the catalogue
//! names for their runs (`fslab_model::catalogue`), each group's
//! statistics and its difference from the baseline with its interval and
//! verdict (`fslab_stats::compare`), the noise thresholds from stored A/A
//! calibrations, and the explanations instruments attach to it. `fslab
//! compare`, `fslab report`, `fslab run`'s summary and `--until-resolved`
//! all read one; the exporters (fslab-present) only lay it out.
//!
//! - [`analysis`]: [`analyse`] (an [`Input`] of runs and their samples, in
//!   memory) and [`from_store`] (a [`Choice`] of experiments or runs read
//!   from the store);
//! - [`select`]: what a choice selects in the store, and what it mixes;
//! - [`calibration`]: which stored calibration gives each metric its δ;
//! - [`explain`]: what instruments say about a comparison or a phase
//!   ([`Explanation`]; an [`Explainer`] makes them);
//! - [`ids`]: run ids as typed (`latest`, `latest~N`, `7-12`, labelled
//!   groups `ext4=7,9,11`);
//! - [`history`]: `fslab history`'s series of experiments and their change
//!   points.

pub mod analysis;
pub mod calibration;
mod error;
pub mod explain;
pub mod history;
pub mod ids;
pub mod kernels;
pub mod select;

pub use analysis::{
    add_caveats, add_explanations, analyse, from_store, Analysis, Choice, Explainer, Input,
    RunSamples, Settings,
};
pub use error::{Error, Result};
pub use explain::{About, Explanation, ExplanationKind};
pub use select::GroupRun;
