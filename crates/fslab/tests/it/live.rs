//! The phase's live line (`fslab_workload::live`): on a terminal every
//! phase of a workload shows its operations done of its total, the
//! percentage, the rate and the time left (done, rate and time elapsed
//! when no total is known); nothing of it when stderr is not a terminal,
//! with `--quiet` or `--json`, and the workload's own text unchanged.

use crate::support::*;
use crate::workloads::{s, shm};

/// What `cmd` wrote to the terminal `script` gave it (stdout and stderr).
fn on_a_terminal(cmd: &str) -> String {
    let o = std::process::Command::new("script")
        .args(["-qec", cmd, "/dev/null"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{cmd}: {}{}", stdout(&o), stderr(&o));
    stdout(&o)
}

fn fslab(lab: &Lab, args: &str) -> String {
    format!(
        "{} --db {} {args}",
        assert_cmd::cargo::cargo_bin("fslab").display(),
        s(&lab.db())
    )
}

/// fsmark: 2 loops of 3000 files, then the stat and unlink walks.
fn fsmark_args(dir: &std::path::Path) -> String {
    format!(
        "fsmark -d {} -n 3000 -s 0 -S0 -L 2 --phases create,stat,unlink -l /dev/null --probes none",
        s(dir)
    )
}

#[test]
fn every_phase_shows_done_of_total_percent_rate_and_time_left_on_a_terminal() {
    if !need_tool("script") {
        return;
    }
    let lab = Lab::new();
    let d = shm();
    let tty = on_a_terminal(&fslab(&lab, &fsmark_args(&d.path().join("w"))));
    for phase in ["create", "stat", "unlink"] {
        // Drawn as the phase starts, and again as it goes or ends.
        let start = format!("{phase} [-");
        assert!(tty.contains(&start), "{phase}: {tty:?}");
        let going = format!(r"{phase} \[#+[>-]*\] [0-9,]+/6,000 ops [0-9]+%, [0-9,]+ ops/s, ");
        assert!(
            regex::Regex::new(&going).unwrap().is_match(&tty),
            "{phase}: {tty:?}"
        );
    }
    assert!(tty.contains(" 0/6,000 ops 0%, 0 ops/s, ? left"), "{tty:?}");
    assert!(
        regex::Regex::new(r"6,000/6,000 ops 100%, [0-9,]+ ops/s, 0m00s left")
            .unwrap()
            .is_match(&tty),
        "{tty:?}"
    );
    // The loops' rows are written with the line erased before them, and
    // the summary after the last phase's line is gone.
    for count in ["3000", "6000"] {
        let row = regex::Regex::new(&format!(r"\r\x1b\[2K +0 +{count} +0 ")).unwrap();
        assert!(row.is_match(&tty), "row {count}: {tty:?}");
    }
    assert!(tty.contains("\x1b[2K#\r\n#\tPhase "), "{tty:?}");
    // tiotest: 2 threads, 1 MiB of 4 KiB blocks each, 50 random blocks each.
    let tio = format!("tiotest -t 2 -f 1 -r 50 -d {} --probes none", s(d.path()));
    let tty = on_a_terminal(&fslab(&lab, &tio));
    for (phase, n) in [
        ("write", 512),
        ("random_write", 100),
        ("read", 512),
        ("random_read", 100),
    ] {
        assert!(tty.contains(&format!("{phase} [")), "{tty:?}");
        assert!(tty.contains(&format!("] {n}/{n} ops 100%, ")), "{tty:?}");
    }
    // dbench's phases end with their time: no total, the time elapsed.
    std::fs::create_dir(d.path().join("db")).unwrap();
    let db = format!(
        "dbench -t 2 --warmup 1 -D {} --probes none 2",
        s(&d.path().join("db"))
    );
    let tty = on_a_terminal(&fslab(&lab, &db));
    let untimed =
        regex::Regex::new(r"execute [0-9,]+ ops, [0-9,]+ ops/s, 0m0[0-9]s elapsed").unwrap();
    assert!(untimed.is_match(&tty), "{tty:?}");
    assert!(!tty.contains("execute ["), "{tty:?}");
}

/// The text each phase's line leaves nothing of: stderr to a file (and
/// stdout to a pipe) shows no byte of it, `--quiet` and `--json` none on
/// a terminal, and stdout with the line on the terminal's stderr is the
/// text without it, line for line.
#[test]
fn no_progress_bytes_unless_stderr_is_a_terminal() {
    if !need_tool("script") {
        return;
    }
    let lab = Lab::new();
    let d = shm();
    // stderr to a file.
    let err = lab.path("err");
    let o = std::process::Command::new(assert_cmd::cargo::cargo_bin("fslab"))
        .arg("--db")
        .arg(lab.db())
        .args(shell_words::split(&fsmark_args(&d.path().join("a"))).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .output()
        .unwrap();
    assert!(o.status.success());
    let said = std::fs::read_to_string(&err).unwrap();
    assert_eq!(
        said,
        format!("fslab: fsmark: recorded as run 1 in {}\n", s(&lab.db()))
    );
    let piped = stdout(&o);
    assert!(!piped.contains(['\r', '\x1b']), "{piped:?}");
    // stdout to a file, stderr on the terminal: the lines go to the
    // terminal, the text to the file as it was.
    let text = lab.path("text");
    let tty = on_a_terminal(&format!(
        "{} > {}",
        fslab(&lab, &fsmark_args(&d.path().join("b"))),
        s(&text)
    ));
    assert!(tty.contains("] 6,000/6,000 ops 100%, "), "{tty:?}");
    let written = std::fs::read_to_string(&text).unwrap();
    let shape = |t: &str| -> Vec<String> {
        let digits = regex::Regex::new(r"[0-9]+(\.[0-9]+)?").unwrap();
        let spaces = regex::Regex::new(r" +").unwrap();
        t.lines()
            .filter(|l| !l.starts_with("#  ") && !l.contains("starting at"))
            .map(|l| {
                spaces
                    .replace_all(&digits.replace_all(l, "N"), " ")
                    .into_owned()
            })
            .collect()
    };
    assert_eq!(shape(&written), shape(&piped));
    assert!(!written.contains(['\r', '\x1b']), "{written:?}");
    // --quiet and --json: nothing of the line on the terminal.
    for (global, json) in [("--quiet", ""), ("", "--json")] {
        let dir = d.path().join(format!("q{json}"));
        let cmd = fslab(&lab, &format!("{} {json}", fsmark_args(&dir)));
        let tty = on_a_terminal(&cmd.replacen(" --db ", &format!(" {global} --db "), 1));
        assert!(!tty.contains(" ops/s"), "{global}{json}: {tty:?}");
        assert!(!tty.contains("\x1b[2K"), "{global}{json}: {tty:?}");
    }
}

/// `fslab run` draws the running phase's line, as a workload does, under
/// its cell's line; nothing of either when stderr is not a terminal.
#[test]
fn fslab_run_shows_each_cells_phase_with_its_total() {
    if !need_tool("script") {
        return;
    }
    let lab = Lab::new();
    let d = shm();
    let f = lab.experiment(
        "live.toml",
        &format!(
            "name = \"live\"\nrepetitions = 1\n[device]\nkind = \"directory\"\npath = \"{}\"\n\
             [workload]\nkind = \"fsmark\"\nargs = [\"-n\", \"4000\", \"-s\", \"0\", \"-S0\", \"-L\", \"2\", \
             \"--phases\", \"create,stat,unlink\"]\nprobes = []\n",
            s(d.path())
        ),
    );
    let state = format!("FSLAB_STATE_DIR={}", s(&lab.state()));
    let tty = on_a_terminal(&format!(
        "{state} {}",
        fslab(&lab, &format!("run {}", s(&f)))
    ));
    assert!(tty.contains("[1/1] cell 0 "), "{tty:?}");
    for phase in ["create", "stat", "unlink"] {
        assert!(tty.contains(&format!("{phase} [-")), "{tty:?}");
        assert!(tty.contains(" 0/8,000 ops 0%, 0 ops/s, ? left"), "{tty:?}");
    }
    // Its last line may be erased before it is drawn: some of it was.
    assert!(
        regex::Regex::new(r"create \[#*[>-]*\] [0-9,]+/8,000 ops [0-9]+%")
            .unwrap()
            .is_match(&tty),
        "{tty:?}"
    );
    let o = lab.run_cmd().arg("run").arg(&f).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stderr(&o).contains(" ops/s"), "{}", stderr(&o));
    assert!(!stderr(&o).contains(['\r', '\x1b']), "{}", stderr(&o));
}
