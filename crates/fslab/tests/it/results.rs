//! `fslab results`: list, show, export, and the global --db option.

use crate::support::*;

#[test]
fn results_read_back_what_fsmark_recorded() {
    let lab = Lab::new();
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let p = dir.path().to_str().unwrap();
    for _ in 0..2 {
        assert!(lab
            .run(&["fsmark", "-d", p, "-n", "200", "-s", "100", "-S", "0", "-L", "2"])
            .status
            .success());
    }
    // --db after the subcommand works as well as before it.
    let o = Command::cargo_bin("fslab")
        .unwrap()
        .args(["results", "list", "--db"])
        .arg(lab.db())
        .output()
        .unwrap();
    let list = stdout(&o);
    let lines: Vec<&str> = list.lines().collect();
    assert_eq!(lines.len(), 3, "a header and two runs: {list}");
    assert!(lines[0].starts_with("id  started  "), "{list}");
    for (i, l) in lines[1..].iter().enumerate() {
        let f: Vec<&str> = l.split_whitespace().collect();
        assert_eq!(
            f[0],
            (i + 1).to_string(),
            "each line starts with the run id: {l}"
        );
        assert!(
            l.contains("fsmark") && l.contains("complete") && l.contains("tmpfs"),
            "{l}"
        );
    }

    let show = stdout(&lab.run(&["results", "show", "2"]));
    for want in [
        "run 2: fsmark (complete)",
        "command:",
        "kernel:",
        "tmpfs",
        "FSUse%",
        "phases:",
        "latency (microseconds):",
        "creat",
        "close",
        "write",
    ] {
        assert!(show.contains(want), "show lacks {want:?}:\n{show}");
    }
    // The loops' table: a row a loop, its FSUse% and cumulative Count first.
    assert!(show.contains("\nfsmark per loop:\n"), "{show}");
    assert!(
        show.lines()
            .any(|r| r.trim_start().starts_with("loop 1 ")
                && r.split_whitespace().nth(3) == Some("400")),
        "{show}"
    );

    let v: serde_json::Value = serde_json::from_slice(
        &lab.run(&["results", "export", "2", "--format", "json"])
            .stdout,
    )
    .unwrap();
    assert_eq!(v["fslab_schema"], fslab_model::json::SCHEMA_VERSION);
    assert_eq!(v["run"]["id"], 2);
    assert_eq!(v["run"]["command_line"][1], "--db");
    assert!(v["run"]["kernel"].as_str().unwrap().len() > 2);
    let loops = v["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["name"] == "Count" && m["detail"] == true)
        .count();
    assert_eq!(loops, 2, "each loop's row is metrics of its own: {v}");
    assert_eq!(v["run"]["params"]["file_size"], 100);

    let csv = stdout(&lab.run(&["results", "export", "2", "--format", "csv"]));
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some("run_id,table,phase,op,index,metric,value")
    );
    assert!(csv.contains("2,metric,loop 1,fsmark,,Count,400\n"), "{csv}");
    // A machine fact's value may hold commas (the kernel command line):
    // quoted, as CSV does.
    let records: Vec<csv::StringRecord> = csv::Reader::from_reader(csv.as_bytes())
        .records()
        .collect::<Result<_, _>>()
        .unwrap();
    assert!(
        records.iter().all(|r| r.len() == 7),
        "every CSV record has 7 fields"
    );
    assert!(
        records
            .iter()
            .any(|r| &r[1] == "fact" && &r[5] == "kernel command line"),
        "{csv}"
    );
}

#[test]
fn results_without_a_store_say_so() {
    let lab = Lab::new();
    let o = lab.run(&["results", "list"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("no results store at"), "{}", stderr(&o));
}

use assert_cmd::Command;

#[test]
fn stats_summarises_fs_mark_columns_like_seed_000() {
    use std::io::Write;
    let input = "\
#  ./fs_mark  -D  10000  -S0
FSUse%        Count         Size    Files/sec     App Overhead
     0       800000            0      53498.9          7898900
     0      1600000            0      11186.5          9409278
     0      2400000            0      17026.1          7907599
     0      3200000            0      25815.6          9749980
     0      4000000            0      11503.0          8556349
     0      4800000            0      43561.9          8295238
     0      5600000            0      17175.3          8304668
";
    let run = |args: &[&str], stdin: &str| {
        let mut c = std::process::Command::new(assert_cmd::cargo::cargo_bin("fslab"))
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        c.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
        c.wait_with_output().unwrap()
    };
    let o = run(&["stats"], input);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "     0 800000-5600000(3.2e+06+/-1.7e+06)            0 11186.500000-53498.900000(25681+/-1.7e+04) 7898900-9749980(8.58886e+06+/-7.2e+05)\n"
    );
    // One far value in a column goes with --trim-outliers.
    let o = run(&["stats", "--trim-outliers"], "10\n11\n12\n11\n10\n1000\n");
    assert_eq!(stdout(&o), "10-12(10.8+/-0.84)\n");
    let o = run(&["stats"], "no numbers here\n");
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn compare_reads_the_latest_experiment_in_every_format() {
    let lab = Lab::new();
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let f = lab.experiment(
        "cmp.toml",
        &format!(
            "name = \"cmp\"\nrepetitions = 3\n[device]\nkind = \"directory\"\npath = \"{}\"\n[workload]\nkind = \"fsmark\"\nargs = [\"-n\", \"300\", \"-s\", \"0\", \"-S0\"]\n[[variant]]\nname = \"empty\"\n[[variant]]\nname = \"4k\"\nworkload_args = [\"-s\", \"4096\"]\n",
            dir.path().display()
        ),
    );
    let o = lab.run_cmd().arg("run").arg(&f).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&lab.run(&["compare"]));
    let rate_block: Vec<&str> = text
        .split("\n\n")
        .find(|b| b.starts_with("create rate (ops/s)"))
        .unwrap()
        .lines()
        .collect();
    assert_eq!(rate_block.len(), 3, "{text}");
    assert!(
        rate_block[1].starts_with("empty") && rate_block[1].ends_with("baseline"),
        "{text}"
    );
    let f4k: Vec<&str> = rate_block[2].split_whitespace().collect();
    assert_eq!((f4k[0], f4k[1]), ("4k", "3"));
    assert!(
        rate_block[2].contains("95% CI [") && rate_block[2].contains(" (BH)"),
        "{}",
        rate_block[2]
    );
    // A verdict, and "faster"/"slower" only with one.
    let verdict = ["faster", "slower", "no difference within", "unresolved"]
        .iter()
        .find(|w| rate_block[2].contains(*w))
        .unwrap_or_else(|| panic!("no verdict: {}", rate_block[2]));
    assert!(!rate_block[2].contains("(slower)") && !rate_block[2].contains("(faster)"));
    let _ = verdict;

    let md = stdout(&lab.run(&["compare", "--format", "markdown", "--baseline", "4k"]));
    assert!(
        md.lines()
            .any(|l| l.starts_with("| create time (s) | 4k | 3 |") && l.ends_with("| baseline |")),
        "{md}"
    );
    let csv = stdout(&lab.run(&["compare", "--format", "csv"]));
    assert!(csv.starts_with("metric,group,n,mean,sd,median,min,max,hmean,cv_pct,diff_pct,direction,ci_low_pct,ci_high_pct,p_value,note,p_adjusted,correction,verdict,delta_pct,needed_n,interval,delta_from,headline\n"));
    let json: serde_json::Value =
        serde_json::from_slice(&lab.run(&["compare", "--format", "json"]).stdout).unwrap();
    assert_eq!(
        json["fslab_schema"],
        fslab_model::json::SCHEMA_VERSION,
        "{json}"
    );
    assert_eq!(json["baseline"], "empty");
    let row = json["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["metric"] == "create rate (ops/s)" && r["group"] == "4k")
        .unwrap();
    assert_eq!(row["n"], 3);
    assert!(row["verdict"].as_str().is_some(), "{row}");
    assert!(row["p_adjusted"].as_f64().is_some(), "{row}");
    assert_eq!(row["correction"], "BH");
    assert!(row["hmean"].as_f64().unwrap() > 0.0 && row["p_value"].as_f64().is_some());

    // Groups of runs chosen by id.
    let by_runs = stdout(&lab.run(&["compare", "--runs", "1,3,5", "--runs", "2,4,6"]));
    assert!(
        by_runs.contains("runs 1,3,5") && by_runs.contains("runs 2,4,6"),
        "{by_runs}"
    );
    // Two experiments side by side (the same file run again, as on
    // another kernel): every cell of each, named by its experiment.
    let o = lab.run_cmd().arg("run").arg(&f).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let both = stdout(&lab.run(&[
        "compare",
        "--experiment",
        "1",
        "--experiment",
        "2",
        "--baseline",
        "4k (exp 1)",
    ]));
    let rate_block: Vec<&str> = both
        .split("\n\n")
        .find(|b| b.starts_with("create rate (ops/s)"))
        .unwrap()
        .lines()
        .collect();
    let groups: Vec<&str> = rate_block[1..]
        .iter()
        .map(|l| l.split("  ").next().unwrap().trim())
        .collect();
    assert_eq!(
        groups,
        ["empty (exp 1)", "4k (exp 1)", "empty (exp 2)", "4k (exp 2)"],
        "{both}"
    );
    assert!(rate_block[2].ends_with("baseline"), "{both}");
    let listed = stdout(&lab.run(&["results", "experiments"]));
    assert_eq!(
        listed.lines().count(),
        3,
        "a header and two experiments: {listed}"
    );

    for (args, want) in [
        (vec!["compare", "--baseline", "nope"], "nope"),
        (vec!["compare", "--runs", "1,x"], "\"x\""),
        (
            vec!["compare", "--experiment", "9"],
            "no experiment with id 9",
        ),
    ] {
        let o = lab.run(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(stderr(&o).contains(want), "{}", stderr(&o));
    }
}

/// `fslab results list | head -1` and the like: a reader that stops reading
/// ends the command quietly (the read end is closed before fslab writes,
/// so every write fails with a broken pipe).
#[test]
fn listing_commands_end_quietly_on_a_closed_pipe() {
    let lab = Lab::new();
    let d = tempfile::tempdir().unwrap();
    let o = lab.run(&[
        "createmany",
        "-o",
        "--probes",
        "none",
        d.path().join("f").to_str().unwrap(),
        "10",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    for args in [
        &["run", "--list"][..],
        &["results", "list"],
        &["results", "show", "1"],
        &["results", "export", "1"],
        &["results", "experiments"],
    ] {
        let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("fslab"))
            .arg("--db")
            .arg(lab.db())
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
        assert!(
            !stderr(&out).contains("internal error"),
            "{args:?}: {}",
            stderr(&out)
        );
    }
}

#[test]
fn completions_and_a_man_page_are_generated() {
    let lab = Lab::new();
    for (shell, want) in [
        ("bash", "_fslab()"),
        ("zsh", "#compdef fslab"),
        ("fish", "complete -c fslab"),
    ] {
        let o = lab.run(&["completions", shell]);
        assert!(o.status.success(), "{shell}: {}", stderr(&o));
        let text = stdout(&o);
        assert!(
            text.contains(want),
            "{shell}: {}",
            &text[..text.len().min(300)]
        );
        assert!(
            text.contains("fsmark") && text.contains("compilebench"),
            "{shell}"
        );
    }
    let o = lab.run(&["man"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let man = stdout(&o);
    assert!(
        man.contains(".TH fslab 1"),
        "{}",
        &man[..man.len().min(300)]
    );
    assert!(man.contains("cleanup"), "the subcommands are listed");
    let o = lab.run(&["completions", "tcsh"]);
    assert_eq!(o.status.code(), Some(2), "an unknown shell is bad input");
}

/// `--until-resolved MAX` on a real (directory) experiment: it runs at
/// least the planned repetitions, no more than MAX per cell, and says how
/// it ended; a MAX below the repetitions is refused.
#[test]
fn until_resolved_runs_more_repetitions_and_says_how_it_ended() {
    let lab = Lab::new();
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let f = lab.experiment(
        "ur.toml",
        &format!(
            "name = \"ur\"\nrepetitions = 2\n[device]\nkind = \"directory\"\npath = \"{}\"\n[workload]\nkind = \"fsmark\"\nargs = [\"-n\", \"200\", \"-s\", \"0\", \"-S0\"]\nprobes = []\n[[variant]]\nname = \"a\"\n[[variant]]\nname = \"b\"\nworkload_args = [\"-s\", \"8192\"]\n",
            dir.path().display()
        ),
    );
    let o = lab
        .run_cmd()
        .args(["run", "--until-resolved", "1"])
        .arg(&f)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--until-resolved 1: below the 2 repetitions"));
    let o = lab
        .run_cmd()
        .args(["run", "--until-resolved", "4"])
        .arg(&f)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let said = out
        .lines()
        .find(|l| l.starts_with("until resolved: "))
        .unwrap_or_else(|| panic!("{out}"));
    let rows = stdout(&lab.run(&["results", "list"]));
    let runs = rows.lines().count() - 1;
    eprintln!("{said} ({runs} runs)");
    assert!((4..=8).contains(&runs), "{rows}");
    if said.contains("every headline comparison is resolved") {
        assert!(
            runs.is_multiple_of(2) && said.ends_with(&format!("after {} repetitions", runs / 2)),
            "{said}"
        );
    } else {
        assert!(
            said.ends_with("stopped at the maximum, 4") && runs == 8,
            "{said}\n{rows}"
        );
    }
}

/// `fslab history`: the same experiment run eight times, the last four
/// with a workload that writes 1 MiB files instead of empty ones
/// (standing in for a kernel that got slower, by about 99%: under a load
/// of 14 on two cores, empty-file experiments scattered tenfold): each stored
/// run of it in order, each with its interval, and one change point, marked
/// at the fifth. Eight experiments are the fewest with which a change can
/// be significant at 5% (the best split of eight is one of 70 orderings,
/// tested over all of them, so the p-value is exact, 2/70, and no random
/// permutation can make the test flaky). Whether noise stays unmarked is
/// checked on fixed numbers and by simulation (history.rs, changepoint.rs):
/// tmpfs runs of a few milliseconds on a machine busy with other tests have
/// differed by half.
#[test]
fn history_marks_the_change_where_it_happened() {
    let lab = Lab::new();
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let exp = |size: u32| {
        format!(
            "name = \"hist\"\nrepetitions = 2\n[device]\nkind = \"directory\"\npath = \"{}\"\n[workload]\nkind = \"fsmark\"\nargs = [\"-n\", \"200\", \"-s\", \"{size}\", \"-S0\"]\nprobes = []\n",
            dir.path().display()
        )
    };
    let mib = 1_048_576;
    let sizes = [0, 0, 0, 0, mib, mib, mib, mib];
    for (i, size) in sizes.iter().enumerate() {
        let f = lab.experiment(&format!("h{i}.toml"), &exp(*size));
        let o = lab.run_cmd().arg("run").arg(&f).output().unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        if i == 2 {
            // Three experiments: the history says no change can be found yet.
            let text = stdout(&lab.run(&["history"]));
            assert!(
                text.contains("note: with fewer than 8 experiments no change can be significant at alpha 0.05"),
                "{text}"
            );
        }
    }
    let o = lab.run(&["history"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.starts_with("history of experiment \"hist\": 8 stored run(s)"),
        "{text}"
    );
    assert!(!text.contains("note: with fewer than"), "{text}");
    let block: Vec<&str> = text
        .split("\n\n")
        .find(|b| b.contains("create rate (ops/s)"))
        .unwrap_or_else(|| panic!("{text}"))
        .lines()
        .collect();
    // The heading, the column line, eight experiments.
    assert_eq!(block.len(), 10, "{text}");
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
    assert!(block[2].contains(kernel.trim()), "{text}");
    assert!(
        block[6].contains("CHANGE: -")
            && block[6].contains("slower than exp ")
            && block[6].contains("(p=0.029)"),
        "the change at the fifth: {text}"
    );
    for (i, line) in block[2..].iter().enumerate() {
        assert_eq!(line.contains("CHANGE"), i == 4, "only at the fifth: {text}");
    }
    // Bad input: one line naming the value, status 2.
    let o = lab.run(&["history", "--alpha", "2"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("\"2\" is not a significance level"),
        "{}",
        stderr(&o)
    );
    let o = lab.run(&["history", "nosuch"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o)
        .contains("no experiment named \"nosuch\" in the results store (there are: hist)"));
}

#[test]
fn db_is_listed_only_where_a_store_is_used() {
    let lab = Lab::new();
    let help = |cmd: &str| stdout(&lab.run(&[cmd, "--help"]));
    for cmd in ["stats", "frag", "crc32c", "man", "completions"] {
        assert!(!help(cmd).contains("--db"), "{cmd}: {}", help(cmd));
    }
    for cmd in [
        "run", "compare", "report", "history", "cleanup", "fsmark", "results",
    ] {
        assert!(help(cmd).contains("--db"), "{cmd}: {}", help(cmd));
    }
}

/// `fslab CMD --help` as a user types it (no --db, no $FSLAB_DB) works for
/// every command `fslab --help` lists, and shows an example. (With --db
/// hidden after clap built the command, `fslab stats --help` once failed
/// with "a value is required for '--db <PATH>'".)
#[test]
fn every_command_has_help_with_an_example() {
    let fslab = assert_cmd::cargo::cargo_bin("fslab");
    let top = std::process::Command::new(&fslab)
        .arg("--help")
        .env_remove("FSLAB_DB")
        .output()
        .unwrap();
    let listed: Vec<String> = stdout(&top)
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next().map(String::from))
        .filter(|c| c != "help")
        .collect();
    assert!(listed.len() >= 18, "{listed:?}");
    for cmd in &listed {
        let o = std::process::Command::new(&fslab)
            .args([cmd.as_str(), "--help"])
            .env_remove("FSLAB_DB")
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{cmd} --help: {}", stderr(&o));
        assert!(
            stdout(&o).contains("Example"),
            "{cmd} --help shows no example:\n{}",
            stdout(&o)
        );
    }
    // --db is still accepted where it is hidden, and makes no store.
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.sqlite");
    let o = std::process::Command::new(&fslab)
        .args(["crc32c", "--chunks", "1", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!db.exists());
}
