//! The per-call timer of the hot loops: nanoseconds from the CPU's
//! time-stamp counter when the kernel itself trusts it, CLOCK_MONOTONIC
//! otherwise.
//!
//! A vDSO `clock_gettime` costs about 23 ns on the machines fslab runs on and
//! `rdtsc` about 10: at a million 4 KiB reads a second per thread that
//! difference is more than 1% of the rate being measured. The counter is used
//! only when the kernel's own clocksource is `tsc` (it has checked at boot
//! that the counters of all CPUs agree) and the CPU says its rate is
//! invariant (`constant_tsc`, `nonstop_tsc`). Ticks become nanoseconds by a
//! factor measured against CLOCK_MONOTONIC over 0.5 ms when a run starts,
//! before any timing (`fslab` starts it on a thread of its own as soon as a
//! workload command is parsed). `FSLAB_CLOCK=monotonic` forces the fallback.
//!
//! Values are for intervals within one process, like `Instant`: never
//! compare them with another clock.

use std::sync::OnceLock;
use std::time::Duration;

struct Tsc {
    base_ticks: u64,
    base_ns: u64,
    /// Nanoseconds per tick, 32.32 fixed point.
    ns_per_tick: u64,
}

impl Tsc {
    #[inline(always)]
    fn ns(&self, ticks: u64) -> u64 {
        let d = ticks.saturating_sub(self.base_ticks) as u128;
        self.base_ns + ((d * self.ns_per_tick as u128) >> 32) as u64
    }
}

static TIMEBASE: OnceLock<Option<Tsc>> = OnceLock::new();

/// How long the counter is compared with CLOCK_MONOTONIC: with reads
/// bracketed to some 30 ns, the rate is known to about 10^-4 (a latency
/// histogram keeps 2 significant digits). A short run waits for it: 2 ms
/// were 1% of a quarter-second alloctest's process.
const CALIBRATION: Duration = Duration::from_micros(500);

fn monotonic_ns() -> u64 {
    fslab_sys::clock::monotonic_ns()
}

/// Nanoseconds on the run's timebase. The first call picks and calibrates
/// it; runs call [`start_timebase`] first so that this happens outside any
/// timed interval.
#[inline]
pub fn now_ns() -> u64 {
    match TIMEBASE.get_or_init(calibrate) {
        Some(tsc) => tsc.ns(fslab_sys::tsc::read()),
        None => monotonic_ns(),
    }
}

/// Picks and calibrates the timebase (a few milliseconds, once per process).
pub fn start_timebase() {
    TIMEBASE.get_or_init(calibrate);
}

/// `"tsc"` or `"monotonic"`: what [`now_ns`] reads.
#[cfg(test)]
fn timebase_name() -> &'static str {
    match TIMEBASE.get_or_init(calibrate) {
        Some(_) => "tsc",
        None => "monotonic",
    }
}

fn tsc_trusted() -> bool {
    if !fslab_sys::tsc::AVAILABLE || std::env::var("FSLAB_CLOCK").is_ok_and(|v| v == "monotonic") {
        return false;
    }
    let source =
        std::fs::read_to_string("/sys/devices/system/clocksource/clocksource0/current_clocksource")
            .unwrap_or_default();
    if source.trim() != "tsc" {
        return false;
    }
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    cpuinfo
        .lines()
        .find(|l| l.starts_with("flags"))
        .is_some_and(|l| {
            let has = |f: &str| l.split_whitespace().any(|w| w == f);
            has("constant_tsc") && has("nonstop_tsc")
        })
}

/// A (ticks, CLOCK_MONOTONIC ns) pair read as close together as possible:
/// of a few tries, the one whose two counter reads bracket the clock read
/// most tightly, taking the middle of the bracket.
fn pair() -> (u64, u64) {
    let mut best = (u64::MAX, 0, 0);
    for _ in 0..16 {
        let a = fslab_sys::tsc::read();
        let ns = monotonic_ns();
        let b = fslab_sys::tsc::read();
        if b >= a && b - a < best.0 {
            best = (b - a, a + (b - a) / 2, ns);
        }
    }
    (best.1, best.2)
}

fn calibrate() -> Option<Tsc> {
    if !tsc_trusted() {
        return None;
    }
    let (t0, n0) = pair();
    std::thread::sleep(CALIBRATION);
    let (t1, n1) = pair();
    if t1 <= t0 || n1 <= n0 {
        return None;
    }
    let ns_per_tick = (((n1 - n0) as u128) << 32) / (t1 - t0) as u128;
    Some(Tsc {
        base_ticks: t1,
        base_ns: n1,
        ns_per_tick: u64::try_from(ns_per_tick).ok()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_timebase_keeps_pace_with_clock_monotonic() {
        start_timebase();
        let (a, ma) = (now_ns(), monotonic_ns());
        std::thread::sleep(Duration::from_millis(50));
        let (b, mb) = (now_ns(), monotonic_ns());
        let (ours, theirs) = ((b - a) as f64, (mb - ma) as f64);
        // 0.5 ms of calibration leaves an error of about 10^-4; the bound
        // is loose for the reads' own jitter on a busy machine.
        assert!(
            (ours / theirs - 1.0).abs() < 1e-3,
            "{} ({}) measured {ours} ns while CLOCK_MONOTONIC measured {theirs} ns",
            timebase_name(),
            if timebase_name() == "tsc" {
                "rdtsc"
            } else {
                "vDSO"
            }
        );
    }

    #[test]
    fn readings_never_go_back_across_threads() {
        start_timebase();
        let mut last = now_ns();
        for _ in 0..200 {
            let t = std::thread::spawn(now_ns).join().unwrap();
            assert!(t >= last, "{t} < {last}");
            last = now_ns();
            assert!(last >= t);
        }
    }

    #[test]
    fn this_machine_uses_the_counter_when_the_kernel_does() {
        let kernel = std::fs::read_to_string(
            "/sys/devices/system/clocksource/clocksource0/current_clocksource",
        )
        .unwrap_or_default();
        if std::env::var_os("FSLAB_CLOCK").is_none() && kernel.trim() == "tsc" && tsc_trusted() {
            assert_eq!(timebase_name(), "tsc");
        } else {
            assert_eq!(timebase_name(), "monotonic");
        }
    }

    #[test]
    fn ticks_convert_by_the_calibrated_factor() {
        let t = Tsc {
            base_ticks: 1000,
            base_ns: 50,
            ns_per_tick: 1 << 31, // half a nanosecond a tick
        };
        assert_eq!(t.ns(1000), 50);
        assert_eq!(t.ns(3000), 1050);
        assert_eq!(t.ns(10), 50, "a reading before the base saturates");
    }
}
