//! What a person types to compare what they have and read it back: labelled
//! groups of runs, `latest`, `latest~N` and ranges as run ids, one headline
//! per comparison, `results list --limit` in 100 columns, one spelling of
//! machine output (`--format`, `--output`), exports with histogram bins and
//! the percentiles asked for, each probe's numbers under its own heading.

use crate::support::*;

/// Six fs_mark runs, alternating between two directories: runs 1, 3, 5 in
/// `a` (empty files), 2, 4, 6 in a directory with a long name (4 KiB
/// files, so the groups differ).
fn six_runs(lab: &Lab) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let a = dir.path().join("a");
    let b = dir
        .path()
        .join(format!("b-{}", "long-directory-name-".repeat(6)));
    for d in [&a, &b] {
        std::fs::create_dir(d).unwrap();
    }
    for _ in 0..3 {
        for (d, size) in [(&a, "0"), (&b, "4096")] {
            let o = lab.run(&[
                "fsmark",
                "-d",
                d.to_str().unwrap(),
                "-n",
                "300",
                "-s",
                size,
                "-S",
                "0",
                "-L",
                "1",
            ]);
            assert!(o.status.success(), "{}", stderr(&o));
        }
    }
    let b = b.to_str().unwrap().to_string();
    (dir, b)
}

/// The first line of a comparison after the machines' block.
fn first_verdict(out: &str) -> &str {
    out.lines()
        .find(|l| !l.is_empty() && !l.starts_with(' ') && *l != "before the verdicts:")
        .unwrap_or_default()
}

#[test]
fn compare_takes_labelled_groups_latest_and_ranges_and_leads_with_a_headline() {
    let lab = Lab::new();
    let _dirs = six_runs(&lab);
    let o = lab.run(&[
        "compare",
        "--runs",
        "empty=1,3,5",
        "--runs",
        "4k=2-2,4,latest",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    // The machines are checked first (explain's "before the verdicts"
    // block, indented under its heading); the headline is the first verdict.
    let first = first_verdict(&out);
    assert!(
        first.starts_with("create: 4k is ") && first.contains("x as fast as empty"),
        "the headline leads the verdicts: {out}"
    );
    assert!(
        out.find(first) < out.find("create time (s)"),
        "the headline is above the tables: {out}"
    );
    assert!(
        !first.contains("e+") && !first.contains("e-"),
        "plain numbers: {first}"
    );
    assert!(
        !out.contains("runs 1,3,5"),
        "groups print with their labels: {out}"
    );
    let rows: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.starts_with("create rate (ops/s)"))
        .take(3)
        .collect();
    assert!(
        rows[1].starts_with("empty ") && rows[2].starts_with("4k "),
        "{rows:?}"
    );
    // The same groups by `latest~N` ranges: 4k is 2, 4, 6; empty is 1, 3, 5.
    let again = lab.run(&[
        "compare",
        "--runs",
        "empty=1-1,latest~3,latest~1",
        "--runs",
        "4k=latest~4,latest~2-latest~2,6",
        "--format",
        "json",
    ]);
    let j: serde_json::Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(j["groups"], serde_json::json!(["empty", "4k"]));
    assert!(
        j["headlines"][0]
            .as_str()
            .unwrap()
            .starts_with("create: 4k is "),
        "{j}"
    );
    // The baseline by its label.
    let o = lab.run(&[
        "compare",
        "--runs",
        "empty=1,3,5",
        "--runs",
        "4k=2,4,6",
        "--baseline",
        "4k",
    ]);
    assert!(
        first_verdict(&stdout(&o)).starts_with("create: empty is "),
        "{}",
        stdout(&o)
    );
    // Bad run ids: one line each, naming what was typed, exit 2.
    for (runs, bad) in [
        ("x=5-3", "\"5-3\""),
        ("x=latest~9", "latest~9"),
        ("x=1,zz", "\"zz\""),
        ("=1,2", "label"),
        ("x=1-40", "40"),
    ] {
        let o = lab.run(&["compare", "--runs", runs, "--runs", "y=2"]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{runs}: {err}");
        assert_eq!(err.lines().count(), 1, "{runs}: {err}");
        assert!(err.contains(bad), "{runs}: {err}");
    }
    // Run ids wherever one run is taken.
    let show = stdout(&lab.run(&["results", "show", "latest~1"]));
    assert!(show.starts_with("run 5: fsmark"), "{show}");
    let j: serde_json::Value =
        serde_json::from_slice(&lab.run(&["results", "export", "latest"]).stdout).unwrap();
    assert_eq!(j["run"]["id"], 6, "{j}");
}

#[test]
fn results_list_fits_100_columns_and_takes_a_limit() {
    let lab = Lab::new();
    let (_dirs, long) = six_runs(&lab);
    let o = lab.run(&["results", "list", "--limit", "4"]);
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 5, "a header and the newest 4: {out}");
    assert!(
        lines[1].starts_with("3 ") && lines[4].starts_with("6 "),
        "{out}"
    );
    for l in &lines {
        assert!(
            l.chars().count() <= 100,
            "{} columns: {l}",
            l.chars().count()
        );
    }
    assert!(
        stderr(&o).contains("2 older runs not shown"),
        "{}",
        stderr(&o)
    );
    // --wide: every column whole.
    let wide = stdout(&lab.run(&["results", "list", "--wide"]));
    assert!(wide.contains(&long), "{wide}");
    assert_eq!(wide.lines().count(), 7, "{wide}");
}

#[test]
fn every_results_command_takes_format_and_output() {
    let lab = Lab::new();
    let _dirs = six_runs(&lab);
    let cases: [&[&str]; 5] = [
        &["results", "list"],
        &["results", "experiments"],
        &["results", "show", "1"],
        &["results", "export", "1"],
        &["compare", "--runs", "1,3", "--runs", "2,4"],
    ];
    for args in cases {
        let run = |extra: &[&str]| {
            let mut all = args.to_vec();
            all.extend(extra);
            let o = lab.run(&all);
            assert!(o.status.success(), "{all:?}: {}", stderr(&o));
            o
        };
        let j: serde_json::Value = serde_json::from_slice(&run(&["--format", "json"]).stdout)
            .unwrap_or_else(|e| panic!("{args:?}: {e}"));
        assert!(j["fslab_schema"].is_u64(), "{args:?}: {j}");
        let csv = stdout(&run(&["--format", "csv"]));
        let header = csv.lines().next().unwrap_or_default();
        assert!(header.contains(','), "{args:?}: {csv}");
        let md = stdout(&run(&["--format", "markdown"]));
        assert!(
            md.starts_with('|') || md.starts_with("**") || md.starts_with("## "),
            "{args:?}: {md}"
        );
        // --output: the format to the file (by its extension), the text on the terminal.
        let file = lab.path("out.csv");
        let text = stdout(&run(&["--format", "text"]));
        let o = run(&["--output", file.to_str().unwrap()]);
        assert!(
            stdout(&o) == text,
            "{args:?}: the text stays on the terminal"
        );
        assert!(
            std::fs::read_to_string(&file).unwrap() == csv,
            "{args:?}: the file is CSV"
        );
        std::fs::remove_file(&file).unwrap();
    }
    // --output into a missing directory: refused before anything is read.
    for args in [
        &["results", "list", "--output", "/nonexistent/x.json"][..],
        &["report", "-o", "/nonexistent/x.html"],
    ] {
        let o = lab.run(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("--output /nonexistent/x.") && stderr(&o).lines().count() == 1,
            "{}",
            stderr(&o)
        );
    }
}

#[test]
fn an_export_carries_the_histograms_bins_and_the_percentiles_asked() {
    let lab = Lab::new();
    let _dirs = six_runs(&lab);
    let o = lab.run(&["results", "export", "2", "--percentiles", "50,99,99.99"]);
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let hs = j["histograms"].as_array().unwrap();
    assert!(!hs.is_empty(), "{j}");
    for h in hs {
        let ps: Vec<f64> = h["percentiles"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["percentile"].as_f64().unwrap())
            .collect();
        assert_eq!(ps, [50.0, 99.0, 99.99]);
        let bins = h["bins"].as_array().unwrap();
        let total: u64 = bins.iter().map(|b| b["count"].as_u64().unwrap()).sum();
        assert_eq!(total, h["count"].as_u64().unwrap(), "{h}");
        assert!(bins
            .iter()
            .all(|b| b["low_ns"].as_u64() <= b["high_ns"].as_u64()));
    }
    let csv = stdout(&lab.run(&[
        "results",
        "export",
        "2",
        "--format",
        "csv",
        "--percentiles",
        "99.99",
    ]));
    assert!(
        csv.contains(",percentile,create,") && csv.contains(",p99.99_ns,"),
        "{csv}"
    );
    assert!(csv
        .lines()
        .any(|l| l.contains(",bin,create,") && l.contains(",count,")));
    let o = lab.run(&["results", "export", "2", "--percentiles", "101"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("\"101\""), "{}", stderr(&o));
}

#[test]
fn each_probes_numbers_are_under_its_own_heading() {
    let lab = Lab::new();
    let _dirs = six_runs(&lab);
    let show = stdout(&lab.run(&["results", "show", "1"]));
    let tool: String = show
        .split("\nfsmark reported:\n")
        .nth(1)
        .unwrap_or_else(|| panic!("{show}"))
        .split("\n\n")
        .next()
        .unwrap()
        .to_string();
    assert!(
        !tool.contains("peak usage"),
        "a probe's number under fsmark's: {tool}"
    );
    assert!(show.contains("\nmem probe reported:\n"), "{show}");
}

#[test]
fn a_bad_scale_is_named_and_a_prefix_says_which_experiment_it_chose() {
    let lab = Lab::new();
    for bad in ["-1", "0", "x"] {
        let o = lab.run(&["run", "seed004-large-dir", "--dry-run", "--scale", bad]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{bad}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.contains(&format!("\"{bad}\"")) && !err.contains("use '--"),
            "{err}"
        );
    }
    let o = lab.run(&["run", "seed004", "--dry-run", "--scale", "0.001"]);
    assert!(
        stderr(&o).contains("\"seed004\" is the built-in experiment seed004-large-dir"),
        "{}",
        stderr(&o)
    );
    let o = lab.run(&["run", "seed004-large-dir", "--dry-run", "--scale", "0.001"]);
    assert!(!stderr(&o).contains("is the built-in"), "{}", stderr(&o));
}

#[test]
fn mdtest_refuses_a_missing_parent_in_one_line_before_its_header() {
    let lab = Lab::new();
    let missing = lab.path("missing").join("md");
    let o = lab.run(&["mdtest", "-n", "5", "-d", missing.to_str().unwrap()]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains(&format!(
            "no such directory {}",
            lab.path("missing").display()
        )),
        "{err}"
    );
    assert_eq!(stdout(&o), "", "nothing printed before the refusal");
    // -d itself is made, as its help says.
    let made = lab.path("md");
    let o = lab.run(&["mdtest", "-n", "5", "-d", made.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn the_dry_run_refuses_a_nul_and_a_memory_limit_above_the_machines() {
    let lab = Lab::new();
    let file = lab.path("e.toml");
    let images = lab.path("images");
    std::fs::create_dir(&images).unwrap();
    let exp = |extra: &str, target: &str| {
        format!(
            "name = \"ux\"\n[device]\nkind = \"image\"\nsize = \"512M\"\nimage_dir = \"{}\"\n\
             {extra}[[target]]\nfs = \"ext4\"\n{target}[workload]\nkind = \"fsmark\"\n\
             args = [\"-n\", \"10\", \"-s\", \"0\", \"-S\", \"0\", \"-L\", \"1\"]\n",
            images.display()
        )
    };
    for (text, said) in [
        (
            exp("", "mount_options = [\"noatime\\u0000x\"]\n"),
            "target[0].mount_options[0]: holds a NUL character",
        ),
        (
            exp("[machine]\nmemory_limit = \"1E\"\n", ""),
            "machine.memory_limit 1 EiB is more than this machine's memory",
        ),
        (
            exp("", "").replace("\"1\"]", "\"1\", \"--output\", \"x.json\"]"),
            "workload: --output is not taken in an experiment file",
        ),
    ] {
        std::fs::write(&file, &text).unwrap();
        for dry in [true, false] {
            let mut args = vec!["run", file.to_str().unwrap()];
            if dry {
                args.push("--dry-run");
            }
            let o = lab.run(&args);
            let err = stderr(&o);
            assert_eq!(o.status.code(), Some(2), "dry run {dry}: {err}");
            assert_eq!(err.lines().count(), 1, "{err}");
            assert!(err.contains(said), "dry run {dry}: {err}");
        }
    }
    assert_eq!(
        std::fs::read_dir(&images).unwrap().count(),
        0,
        "nothing made"
    );
}

#[test]
fn a_stonewalled_create_alone_without_x_is_warned_of_not_refused() {
    let lab = Lab::new();
    let warned = |extra: &[&str], dir: &str| {
        let d = lab.path(dir);
        let mut args = vec!["mdtest", "-n", "20", "-F", "-C", "-W", "1", "-d"];
        args.push(d.to_str().unwrap());
        args.extend(extra);
        let o = lab.run(&args);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        stdout(&o)
            .lines()
            .filter(|l| l.starts_with("WARNING: -W 1 with -C alone and no -x FILE"))
            .count()
    };
    assert_eq!(warned(&[], "a"), 1, "once, in the header");
    let x = lab.path("sw");
    assert_eq!(warned(&["-x", x.to_str().unwrap()], "b"), 0);
}

#[test]
fn a_workloads_output_file_holds_its_document_and_the_text_stays() {
    let lab = Lab::new();
    let dir = lab.path("d");
    std::fs::create_dir(&dir).unwrap();
    let fsmark = |out: &std::path::Path| {
        lab.run(&[
            "fsmark",
            "-d",
            dir.to_str().unwrap(),
            "-n",
            "50",
            "-s",
            "0",
            "-S",
            "0",
            "--output",
            out.to_str().unwrap(),
        ])
    };
    let json = lab.path("run.json");
    let o = fsmark(&json);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("Files/sec"),
        "fs_mark's text on stdout: {}",
        stdout(&o)
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(doc["run"]["id"], 1, "{doc}");
    assert!(doc["histograms"].is_array(), "{doc}");
    assert_eq!(run_schema_errors(&doc), Vec::<String>::new());
    let csv = lab.path("run.csv");
    assert!(fsmark(&csv).status.success());
    let text = std::fs::read_to_string(&csv).unwrap();
    assert!(
        text.lines().any(|l| l.starts_with("2,phase,create")),
        "{text}"
    );
    // A file in a missing directory: refused before anything runs.
    let o = fsmark(std::path::Path::new("/nonexistent/run.json"));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    assert!(stderr(&o).contains("--output /nonexistent/run.json"));
    let listed = stdout(&lab.run(&["results", "list"]));
    assert_eq!(listed.lines().count(), 3, "two runs stored: {listed}");
}
