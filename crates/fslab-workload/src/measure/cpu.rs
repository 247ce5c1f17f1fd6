use fslab_sys::{rusage, Usage, Who};

/// User and system CPU of the whole process over an interval.
pub struct CpuMeter {
    start: Usage,
}

impl CpuMeter {
    pub fn start() -> Self {
        CpuMeter {
            start: rusage(Who::Process).unwrap_or_default(),
        }
    }

    /// (user seconds, system seconds) since `start`.
    pub fn read(&self) -> (f64, f64) {
        let d = rusage(Who::Process).unwrap_or_default().since(&self.start);
        (d.user.as_secs_f64(), d.system.as_secs_f64())
    }
}
