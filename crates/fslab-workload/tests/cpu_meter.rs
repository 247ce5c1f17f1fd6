//! The CPU meter counts the workers and not the process's other threads.
//!
//! A test binary of its own (a process of its own): the meter sums every
//! worker of the process, as a run has one workload per process; inside
//! the library's unit-test binary other tests' workers ran beside it and
//! were counted (a sleeping worker read 0.06 + 0.77 s once under CI).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use fslab_sys::{rusage, Who};
use fslab_workload::measure::{counted, CpuMeter};

fn spin(d: Duration) {
    let t = Instant::now();
    let mut x = 0u64;
    while t.elapsed() < d {
        x = std::hint::black_box(x.wrapping_add(1));
    }
}

/// What fslab's own threads burn (a probe, here a spinning thread) is
/// not the workload's CPU; what a worker burns is.
#[test]
fn the_meter_counts_the_workers_and_not_the_other_threads() {
    /// Stops the spinning thread however the test ends (a failed
    /// assertion too, which would otherwise leave the scope waiting).
    struct StopOnDrop<'a>(&'a AtomicBool);
    impl Drop for StopOnDrop<'_> {
        fn drop(&mut self) {
            self.0.store(true, Ordering::Relaxed);
        }
    }
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        let _stop = StopOnDrop(&stop);
        s.spawn(|| {
            while !stop.load(Ordering::Relaxed) {
                spin(Duration::from_millis(5));
            }
        });
        let m = CpuMeter::start();
        let process = rusage(Who::Process).unwrap();
        // The worker sleeps until the other thread has spun 150 ms of
        // CPU (at most 20 s: the machine is shared).
        std::thread::scope(|w| {
            w.spawn(|| {
                counted(|| {
                    let t0 = std::time::Instant::now();
                    while rusage(Who::Process).unwrap().since(&process).user
                        < Duration::from_millis(150)
                        && t0.elapsed() < Duration::from_secs(20)
                    {
                        std::thread::sleep(Duration::from_millis(20));
                    }
                });
            });
        });
        let (u, s) = m.read();
        let burnt = rusage(Who::Process).unwrap().since(&process);
        assert!(
            burnt.user.as_secs_f64() > 0.1,
            "the other thread spun: {burnt:?}"
        );
        assert!(u + s < 0.05, "a sleeping worker used {u} + {s} s");
        let m = CpuMeter::start();
        // Until the worker's own CPU reaches 150 ms (the machine is shared).
        std::thread::scope(|w| {
            w.spawn(|| {
                counted(|| {
                    let t0 = rusage(Who::Thread).unwrap();
                    while rusage(Who::Thread).unwrap().since(&t0).user < Duration::from_millis(150)
                    {
                        spin(Duration::from_millis(1));
                    }
                });
            });
        });
        let (u, _) = m.read();
        stop.store(true, Ordering::Relaxed);
        assert!(u >= 0.15, "a spinning worker used {u} s");
    });
}
