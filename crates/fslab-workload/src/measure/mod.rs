//! Measuring shared by all workloads.
//!
//! Workers never block on the coordinator: each owns one cache-line-sized
//! counter that it overwrites with a plain store after every operation, and
//! the coordinator sums the counters once a second ([`PhaseClock`]).

mod clock;
mod cpu;

pub use clock::{PhaseClock, Progress};
pub use cpu::CpuMeter;
