//! A/A calibration (`fslab run --calibrate CELL`) and `fslab compare`
//! taking its noise threshold from it, saying where it came from.

use crate::support::{stderr, stdout, Lab};

fn exp(dir: &std::path::Path, kind: &str, args: &str) -> String {
    format!(
        "name = \"cal\"\nrepetitions = 2\n[device]\nkind = \"directory\"\npath = \"{}\"\n[workload]\nkind = \"{kind}\"\nargs = [{args}]\nprobes = []\n",
        dir.display()
    )
}

/// `fslab run FILE --calibrate 0 --repetitions REPS`: the calibration's id.
fn calibrate(lab: &Lab, file: &std::path::Path, reps: &str) -> (i64, String) {
    let (id, out, _) = calibrate_with(lab, file, reps, &[]);
    (id, out)
}

/// `calibrate` with more arguments to `fslab run`; its stderr too.
fn calibrate_with(
    lab: &Lab,
    file: &std::path::Path,
    reps: &str,
    more: &[&str],
) -> (i64, String, String) {
    let o = lab
        .run_cmd()
        .args(["run", "--calibrate", "0", "--repetitions", reps])
        .args(more)
        .arg(file)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    (lab.latest_experiment(), stdout(&o), stderr(&o))
}

/// A cell run against itself keeps each metric's noise; compare then takes
/// δ from it for runs of the same workload, filesystem and machine, and
/// says so; a calibration that does not fit, or bad --alpha, is refused in
/// one line with status 2.
#[test]
fn a_calibration_is_kept_and_compare_takes_its_threshold_from_it() {
    let lab = Lab::new();
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let fsmark = lab.experiment(
        "f.toml",
        &exp(
            dir.path(),
            "fsmark",
            "\"-n\", \"100\", \"-s\", \"0\", \"-S0\"",
        ),
    );
    let (cal, text) = calibrate(&lab, &fsmark, "3");
    assert!(
        text.contains(&format!("calibration {cal} (")) && text.contains("metric(s) kept"),
        "{text}"
    );
    assert!(text.contains("directory (A')"), "the two copies: {text}");
    // Two ordinary experiments of the same cell, compared: δ from the
    // calibration for the metrics it has.
    for _ in 0..2 {
        let o = lab.run_cmd().arg("run").arg(&fsmark).output().unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let b = lab.latest_experiment();
    let (a, b) = ((b - 1).to_string(), b.to_string());
    let o = lab.run(&["compare", "--experiment", &a, "--experiment", &b]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains(&format!("from calibration {cal} (")),
        "{text}"
    );
    let o = lab.run(&[
        "compare",
        "--experiment",
        &a,
        "--experiment",
        &b,
        "--format",
        "csv",
    ]);
    assert!(
        stdout(&o).contains(&format!(",\"calibration {cal} (")),
        "{}",
        stdout(&o)
    );
    // The report is the same analysis: the same calibration, said the same
    // way (it had no --calibration, and said nothing of δ's source).
    let o = lab.run(&[
        "report",
        "--experiment",
        &a,
        "--experiment",
        &b,
        "--calibration",
        &cal.to_string(),
        "-o",
        "-",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains(&format!("from calibration {cal} (")),
        "the report's δ"
    );
    // --delta wins, and says so.
    let o = lab.run(&[
        "compare",
        "--experiment",
        &a,
        "--experiment",
        &b,
        "--delta",
        "3",
    ]);
    assert!(stdout(&o).contains("from --delta"), "{}", stdout(&o));
    calibrations_that_do_not_fit_are_refused(&lab, dir.path(), (&a, &b), cal);
    // One repetition gives no noise: refused before anything runs.
    let o = lab
        .run_cmd()
        .args(["run", "--calibrate", "0", "--repetitions", "1"])
        .arg(&fsmark)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--calibrate 0: 1 repetition(s) give no noise"),
        "{}",
        stderr(&o)
    );
}

/// Compare and the report pass over a calibration of other options and
/// refuse one, named, that does not fit (another workload, other options,
/// none such), as they refuse a bad --alpha.
fn calibrations_that_do_not_fit_are_refused(
    lab: &Lab,
    dir: &std::path::Path,
    (a, b): (&str, &str),
    cal: i64,
) {
    // A calibration of another workload does not fit fs_mark's runs.
    let createmany = lab.experiment(
        "c.toml",
        &exp(dir, "createmany", "\"-o\", \"{dir}/f\", \"100\""),
    );
    let other = calibrate(lab, &createmany, "2").0.to_string();
    // Nor does one of fs_mark with other options (4 KiB files): it is no
    // calibration of these cells.
    let bigger = lab.experiment(
        "g.toml",
        &exp(dir, "fsmark", "\"-n\", \"100\", \"-s\", \"4096\", \"-S0\""),
    );
    let options = calibrate(lab, &bigger, "2").0.to_string();
    let o = lab.run(&["compare", "--experiment", a, "--experiment", b]);
    assert!(
        stdout(&o).contains(&format!("from calibration {cal} (")),
        "the newest calibration of other options is passed over: {}",
        stdout(&o)
    );
    for (args, says) in [
        (
            vec!["--calibration", options.as_str()],
            format!("--calibration {options}: made for other options (file_size 4096 vs 0)"),
        ),
        (
            vec!["--calibration", other.as_str()],
            format!("--calibration {other}: made for createmany on tmpfs"),
        ),
        (
            vec!["--calibration", "999"],
            "--calibration 999: the store has no calibration from experiment 999".to_string(),
        ),
        (
            vec!["--alpha", "0"],
            "\"0\" is not a significance level".to_string(),
        ),
    ] {
        for command in [&["compare"][..], &["report", "-o", "-"]] {
            let mut all = command.to_vec();
            all.extend(["--experiment", a, "--experiment", b]);
            all.extend(&args);
            let o = lab.run(&all);
            assert_eq!(o.status.code(), Some(2), "{all:?}: {}", stderr(&o));
            assert!(stderr(&o).contains(&says), "{all:?}: {}", stderr(&o));
        }
    }
}

/// One family: `fslab run`'s summary and `fslab compare` of the same
/// experiment correct the same number of comparisons together (every cell
/// and every metric), and both say how many.
#[test]
fn the_summary_and_compare_correct_the_same_family() {
    let lab = Lab::new();
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let f = lab.experiment(
        "fam.toml",
        &format!(
            "name = \"fam\"\nrepetitions = 3\n[device]\nkind = \"directory\"\npath = \"{}\"\n[workload]\nkind = \"fsmark\"\nargs = [\"-n\", \"100\", \"-s\", \"0\", \"-S0\"]\nprobes = []\n[[variant]]\nname = \"a\"\n[[variant]]\nname = \"b\"\nworkload_args = [\"-s\", \"8192\"]\n[[variant]]\nname = \"c\"\nworkload_args = [\"-s\", \"4096\"]\n",
            dir.path().display()
        ),
    );
    let o = lab.run_cmd().arg("run").arg(&f).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let count = |text: &str, head: &str| -> usize {
        text.lines()
            .find_map(|l| l.strip_prefix(head))
            .and_then(|r| r.split_whitespace().next()?.parse().ok())
            .unwrap_or_else(|| panic!("no {head:?} in {text}"))
    };
    let summary = count(&stdout(&o), "verdicts: ");
    let compare = count(&stdout(&lab.run(&["compare"])), "p: ");
    assert_eq!(summary, compare);
    // Two cells against the baseline, several metrics each.
    assert!(summary > 2 * 4, "{summary}");
}

/// A count its workload's options fix gets an exact verdict from one run a
/// side: two ext4 cells of ONE repetition each, on loop devices, told to
/// create 100 and 200 files; fs_mark declares its files created exact by
/// construction (threads x files x loops), so they are compared exactly (a
/// difference, said to be exact), while the image's extents, a count no
/// option fixes, and the timed metrics are not. (Undeclared counts seen not
/// to vary in two runs a side: fslab-stats' compare tests.)
#[test]
fn a_count_its_options_fix_gets_an_exact_verdict_from_one_run_a_side() {
    if !crate::support::privileged("fslab run on loop devices") {
        return;
    }
    let lab = Lab::new();
    let f = lab.experiment(
        "one.toml",
        "name = \"one\"\nrepetitions = 1\n[device]\nsize = \"600M\"\nimage_dir = \"IMAGES\"\n[workload]\nkind = \"fsmark\"\nargs = [\"-n\", \"100\", \"-s\", \"4096\", \"-S0\"]\nprobes = []\n[[target]]\nfs = \"ext4\"\n[[variant]]\nname = \"a\"\n[[variant]]\nname = \"b\"\nworkload_args = [\"-n\", \"200\"]\n",
    );
    let o = lab.run_cmd().arg("run").arg(&f).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let line = |name: &str| {
        out.lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("{name}: {out}"))
            .to_string()
    };
    assert!(line("fsmark files created").ends_with("(exact)"), "{out}");
    assert!(!line("image extents").ends_with("(exact)"), "{out}");
    assert!(!line("create rate (ops/s)").ends_with("(exact)"), "{out}");
    let o = lab.run(&["compare", "--format", "csv"]);
    let csv = stdout(&o);
    let row = |prefix: &str| {
        csv.lines()
            .find(|l| l.starts_with(prefix))
            .map(String::from)
            .unwrap_or_else(|| panic!("{prefix}: {csv}"))
    };
    let files = row("fsmark files created,ext4 [b]");
    assert!(files.contains(",deterministic,"), "{files}");
    let extents = row("image extents,ext4 [b]");
    assert!(!extents.contains(",deterministic,"), "{extents}");
}

/// Power before running: after an A/A calibration of a cell, the dry run
/// says, per calibrated metric, the smallest difference the planned
/// repetitions resolve (80% power) from that calibration's noise, and
/// `--until-resolved MAX` says it for MAX; a cell no calibration fits says
/// so and how to make one.
#[test]
fn the_dry_run_says_what_the_planned_repetitions_resolve_for_a_calibrated_cell() {
    let lab = Lab::new();
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let fsmark = lab.experiment(
        "p.toml",
        &exp(
            dir.path(),
            "fsmark",
            "\"-n\", \"100\", \"-s\", \"0\", \"-S0\"",
        ),
    );
    let dry = |reps: &str| {
        let o = lab
            .run_cmd()
            .args(["run", "--dry-run", "--repetitions", reps])
            .arg(&fsmark)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        stdout(&o)
    };
    assert!(
        dry("5").contains(
            "power: cell 0 directory: no stored calibration fits it, so what 5 repetitions \
             resolve is not known (make one: fslab run"
        ),
        "{}",
        dry("5")
    );
    let (cal, _) = calibrate(&lab, &fsmark, "3");
    let conn = rusqlite::Connection::open(lab.db()).unwrap();
    let rows: Vec<(String, f64, f64)> = conn
        .prepare("SELECT metric, sd_log, delta_pct FROM calibrations WHERE experiment_id = ?1")
        .unwrap()
        .query_map([cal], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert!(!rows.is_empty());
    for reps in [5usize, 12] {
        let text = dry(&reps.to_string());
        for (metric, sd, delta) in &rows {
            let want = fslab_stats::power::resolvable_pct(*sd, reps, *delta, 0.05).unwrap();
            let line = format!(
                "power: cell 0 directory: {metric}: differences from {want:.1}% up resolve with \
                 {reps} repetitions a cell (80% power, 5% two-sided, before correction over the \
                 comparison's family; calibration {cal}: sd of the runs' logs {sd:.4}"
            );
            assert!(text.contains(&line), "{line}\n{text}");
        }
    }
    // More repetitions resolve less: the first metric's figure shrinks.
    let (_, sd, delta) = &rows[0];
    let at = |n| fslab_stats::power::resolvable_pct(*sd, n, *delta, 0.05).unwrap();
    assert!(at(12) < at(5) || *sd == 0.0);
    // --until-resolved MAX says it for MAX before it runs.
    let o = lab
        .run_cmd()
        .args(["run", "--until-resolved", "3"])
        .arg(&fsmark)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!(
            "fslab: until resolved, at most 3 repetitions a cell: power: cell 0 directory: {}: \
             differences from {:.1}% up resolve with 3 repetitions",
            rows[0].0,
            at(3)
        )),
        "{}",
        stderr(&o)
    );
}

/// What went with the noise: a calibration run beside a process burning a
/// CPU shares its create rate's variance out over the readings of its runs'
/// cpu probe (one row, every run of both copies) and names the busy
/// neighbour, with how much of a CPU it took.
#[test]
fn the_calibration_says_what_went_with_its_noise() {
    let lab = Lab::new();
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    // Phases of a few seconds: the cpu probe reads once a second.
    let text = exp(
        dir.path(),
        "fsmark",
        "\"-n\", \"40000\", \"-s\", \"0\", \"-S0\", \"-L\", \"4\"",
    )
    .replace("probes = []", "probes = [\"cpu\"]");
    let fsmark = lab.experiment("n.toml", &text);
    let mut burner = std::process::Command::new("sh")
        .args(["-c", "while :; do :; done"])
        .spawn()
        .unwrap();
    let o = lab
        .run_cmd()
        .args(["run", "--calibrate", "0", "--repetitions", "3"])
        .arg(&fsmark)
        .output()
        .unwrap();
    let _ = burner.kill();
    let _ = burner.wait();
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("what went with the noise"), "{out}");
    let row = out
        .lines()
        .find(|l| l.starts_with("create rate (ops/s)") && l.contains("% ("))
        .unwrap_or_else(|| panic!("no create rate row in the noise block:\n{out}"));
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(cells[3], "6", "every run of both copies: {row}");
    let used: f64 = out
        .split("other processes used up to ")
        .nth(1)
        .and_then(|s| s.split('%').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("the burner is not named:\n{out}"));
    assert!(
        (60.0..=220.0).contains(&used),
        "the burner took {used}% of a CPU:\n{out}"
    );
}

/// `--warm-up`: every cell once first, shown as a warm-up while it runs
/// and in `results show`, kept in the store, and left out of the
/// calibration's counts and of the summary (n = the repetitions).
#[test]
fn a_warm_up_runs_first_is_kept_and_is_left_out_of_every_number() {
    let lab = Lab::new();
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let fsmark = lab.experiment(
        "w.toml",
        &exp(
            dir.path(),
            "fsmark",
            "\"-n\", \"100\", \"-s\", \"0\", \"-S0\"",
        ),
    );
    // The dry run lists it first and counts it apart.
    let o = lab
        .run_cmd()
        .args(["run", "--warm-up", "--dry-run"])
        .arg(&fsmark)
        .output()
        .unwrap();
    let plan = stdout(&o);
    assert!(
        plan.contains("1 cell(s) x 2 repetition(s) = 2 runs + 1 warm-up run(s)")
            && plan.contains("order (cell.repetition): 0.0 0.1 0.2\n")
            && plan.contains("for 3 runs"),
        "{plan}"
    );
    let (_, out, err) = calibrate_with(&lab, &fsmark, "3", &["--warm-up"]);
    assert!(
        err.contains("[1/8] cell 0 \"directory (A)\" warm-up (not compared)")
            && err.contains("[2/8] cell 1 \"directory (A')\" warm-up (not compared)"),
        "{err}"
    );
    let row = out
        .lines()
        .find(|l| l.starts_with("create rate (ops/s)") && l.contains("(n="))
        .unwrap_or_else(|| panic!("no create rate row:\n{out}"));
    assert_eq!(row.matches("(n=3)").count(), 2, "{row}");
    // The first run of the store is copy A's warm-up, kept and named so.
    let o = lab.run(&["results", "show", "1"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("cell 0 \"directory (A)\", its warm-up (never compared):"),
        "{}",
        stdout(&o)
    );
    let o = lab.run(&["results", "show", "3"]);
    assert!(
        stdout(&o).contains("cell 0 \"directory (A)\", repetition 1:"),
        "{}",
        stdout(&o)
    );
}
