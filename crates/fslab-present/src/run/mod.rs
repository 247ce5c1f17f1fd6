//! What `fslab run` shows: its progress on stderr while it runs
//! ([`display`]), and when it is over the summary of every cell
//! ([`summary`]), the tools' own tables, the findings and the runs that
//! failed ([`closing`]).

pub mod closing;
pub mod display;
pub mod summary;
