//! A standalone workload's CPU figures are its own threads' CPU: a thread
//! of the fslab process that is not a worker (a probe's sampler, the phase
//! clock, the results store) is not in them, with the probes on or off.
//!
//! No probe burns enough CPU to show that, so a hungry one is put into the
//! process from outside: a small library built here with `cc` and loaded
//! with `LD_PRELOAD` starts a thread that spins in user space for the
//! process's whole life and writes its own CPU time to a file at exit.
//! createmany's create phase is almost all system time; were the phase's
//! figure the process's (`RUSAGE_SELF`), its user CPU would hold the
//! spinner's.

use std::time::Instant;

use crate::support::{need_tool, stderr, Lab};

const SPINNER: &str = r#"
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile int stop;
static pthread_t spinner;
static char out[4096];

static void *spin(void *arg) {
    (void)arg;
    volatile unsigned long x = 0;
    while (!stop) x++;
    return 0;
}

__attribute__((constructor)) static void start(void) {
    const char *o = getenv("FSLAB_TEST_SPIN_OUT");
    if (!o) return;
    strncpy(out, o, sizeof out - 1);
    /* fslab's children (none expected) must not spin or write too. */
    unsetenv("FSLAB_TEST_SPIN_OUT");
    unsetenv("LD_PRELOAD");
    pthread_create(&spinner, 0, spin, 0);
}

__attribute__((destructor)) static void end(void) {
    if (!out[0]) return;
    clockid_t c;
    struct timespec t;
    if (pthread_getcpuclockid(spinner, &c) || clock_gettime(c, &t)) return;
    FILE *f = fopen(out, "w");
    if (!f) return;
    fprintf(f, "%.6f\n", t.tv_sec + t.tv_nsec / 1e9);
    fclose(f);
}
"#;

/// What one createmany run reported, and what the spinner used.
struct Seen {
    /// The create phase's wall time and its user and system CPU (seconds).
    elapsed: f64,
    usr: f64,
    sys: f64,
    /// The spinner's CPU over the whole process, and the process's wall time.
    spinner: f64,
    wall: f64,
}

fn run_with_spinner(lab: &Lab, lib: &std::path::Path, probes: &str, tag: &str) -> Seen {
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let spun = lab.path(&format!("spinner-{tag}"));
    let prefix = dir.path().join("f");
    let start = Instant::now();
    let o = lab
        .fslab()
        .env("LD_PRELOAD", lib)
        .env("FSLAB_TEST_SPIN_OUT", &spun)
        .args(["createmany", "--json", "--probes", probes, "-m"])
        .arg(&prefix)
        .arg("300000")
        .output()
        .unwrap();
    let wall = start.elapsed().as_secs_f64();
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let phase = &doc["phases"][0];
    assert_eq!(phase["phase"], "create", "{phase}");
    let num = |k: &str| {
        phase[k]
            .as_f64()
            .unwrap_or_else(|| panic!("{k} in {phase}"))
    };
    let spinner: f64 = std::fs::read_to_string(&spun)
        .expect("the spinner wrote its CPU time (was the library loaded?)")
        .trim()
        .parse()
        .unwrap();
    Seen {
        elapsed: num("elapsed_s"),
        usr: num("usr_cpu_s"),
        sys: num("sys_cpu_s"),
        spinner,
        wall,
    }
}

#[test]
fn a_busy_thread_beside_the_workers_is_not_in_their_cpu_figures() {
    if !need_tool("cc") {
        return;
    }
    let lab = Lab::new();
    let src = lab.path("spinner.c");
    let lib = lab.path("spinner.so");
    std::fs::write(&src, SPINNER).unwrap();
    let cc = std::process::Command::new("cc")
        .args(["-shared", "-fPIC", "-O1", "-o"])
        .arg(&lib)
        .arg(&src)
        .arg("-lpthread")
        .output()
        .unwrap();
    assert!(
        cc.status.success(),
        "cc: {}",
        String::from_utf8_lossy(&cc.stderr)
    );
    for probes in ["none", "default"] {
        let s = run_with_spinner(&lab, &lib, probes, probes);
        // Of the spinner's CPU, at least this much fell inside the phase:
        // outside it, it could have used at most the rest of the process's
        // wall time.
        let during = s.spinner - (s.wall - s.elapsed).max(0.0);
        let what = format!(
            "--probes {probes}: phase {:.3} s, usr {:.3} s, sys {:.3} s; spinner {:.3} s \
             in a {:.3} s process, at least {during:.3} s of it during the phase",
            s.elapsed, s.usr, s.sys, s.spinner, s.wall
        );
        // Both sides in CPU time, not wall time: a loaded machine stretches
        // the phase (to 4.3 s once under CI) but shares its CPUs between
        // the spinner and the worker alike.
        // The premise: the spinner was busy enough during the phase that
        // counting it would break the bound below (else the test could not
        // fail): at least half the worker's system time (about equal when
        // the two threads share the CPUs).
        assert!(
            during >= 0.5 * s.sys,
            "the spinner got too little CPU to test anything: {what}"
        );
        // The workers' own user time is a few percent of their system time
        // (createmany -m is mknods); with the spinner in it, usr would be
        // at least `during`, above this bound whenever `during` > 0.2 of
        // sys (the premise asks 0.5).
        assert!(
            s.usr <= 0.1 * s.sys + 0.5 * during,
            "the phase's user CPU holds another thread's: {what}"
        );
        // And the workers' own time is there: createmany -m is system time,
        // 300,000 mknods at some 3 us of CPU each here, at least 1 us each
        // (CPU time, not wall time: a loaded machine stretches the phase,
        // to 4.3 s once under CI, but not the CPU its calls take).
        assert!(
            s.usr + s.sys >= 0.3,
            "the workers' own CPU is missing: {what}"
        );
    }
}
