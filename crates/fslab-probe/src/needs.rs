//! What a probe needs to start ([`Needs`]): the capability flags the
//! sampler checks and the trace events the tracer enables (apart from the
//! seam in [`crate::plugin`], so the tracer reads them without naming it).

/// What a probe needs to start: capability flags the sampler checks before
/// it starts the probe. A probe whose need is not met does not start; its
/// "unavailable" note says why.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Needs {
    /// Kernel trace events on the filesystem's device, read from a private
    /// tracefs instance (needs a block device, and root).
    pub trace: &'static [TraceEvent],
    /// Its traced block IO completions are kept (spooled) for `fslab trace
    /// show` and the report's IO pattern.
    pub spool: bool,
    /// Root, for what it reads: says what, as `"reading kernel stacks
    /// (/proc/PID/task/TID/stack)"`.
    pub root: Option<&'static str>,
    /// An image behind a loop device to watch.
    pub image: bool,
    /// `perf` installed (a kernel profile).
    pub perf: bool,
}

impl Needs {
    /// Whether it needs tracing on filesystem `fs_type`: it has trace
    /// events, and one of them applies there.
    pub fn traces_on(&self, fs_type: &str) -> bool {
        self.trace.iter().any(|e| e.applies_to(fs_type))
    }
}

/// A kernel trace event a probe reads.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TraceEvent {
    /// `system/event` under tracefs' events (`block/block_rq_issue`).
    pub event: &'static str,
    /// Which of the watched devices it is filtered to.
    pub filter: Filter,
    /// Enabled only where the kernel has it (else the trace fails to start).
    pub optional: bool,
    /// Only on filesystems whose type starts with this (`ext`: jbd2).
    pub fs_prefix: Option<&'static str>,
}

impl TraceEvent {
    /// Whether the event concerns a filesystem of type `fs_type`.
    pub fn applies_to(&self, fs_type: &str) -> bool {
        self.fs_prefix.is_none_or(|p| fs_type.starts_with(p))
    }
}

/// How a trace event is filtered to the watched devices.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Filter {
    /// The filesystem's device and the host device under its image
    /// (`dev == D || dev == H`).
    DeviceAndHost,
    /// The filesystem's device (`dev == D`).
    Device,
    /// The filesystem's device by its backing device's name
    /// (`name == "MAJ:MIN"`, the writeback events').
    DeviceName,
}
