//! `fslab io500md`: IO500's metadata phases on a loop ext4 (their order,
//! the result lines, the MD score as the geometric mean of the printed
//! scores, INVALID when a write phase ends before the scaled stonewall and
//! minimum write time, valid when the stonewall ends it), on two MPI ranks,
//! the `io500-md` built-in through `fslab run`, and bad input.

use std::path::Path;
use std::process::Output;

use fslab_lab::mkfs::FsType;

use crate::support::*;

/// IO500's phases as io500md prints them, in IO500's order.
const ORDER: [&str; 9] = [
    "mdtest-easy-write",
    "timestamp",
    "mdtest-hard-write",
    "find",
    "mdtest-easy-stat",
    "mdtest-hard-stat",
    "mdtest-easy-delete",
    "mdtest-hard-read",
    "mdtest-hard-delete",
];

/// A phase's result line: its name, score (kIOPS), time (s) and whether it
/// is marked INVALID.
#[derive(Debug)]
struct Line {
    tag: String,
    phase: String,
    score: f64,
    time_s: f64,
    invalid: bool,
}

fn result_lines(text: &str) -> Vec<Line> {
    text.lines()
        .filter(|l| l.starts_with("[RESULT]") || l.starts_with("[      ]"))
        .map(|l| {
            let (tag, rest) = l.split_at(8);
            let w: Vec<&str> = rest.split_whitespace().collect();
            assert_eq!(
                (w[2], w[3], w[4], w[6]),
                ("kIOPS", ":", "time", "seconds"),
                "{l}"
            );
            Line {
                tag: tag.to_string(),
                phase: w[0].to_string(),
                score: w[1].parse().unwrap(),
                time_s: w[5].parse().unwrap(),
                invalid: l.ends_with(" [INVALID]"),
            }
        })
        .collect()
}

/// The `[SCORE ]` line's kIOPS (IO500's `Bandwidth 0 ... : IOPS X kiops :
/// TOTAL 0 [INVALID]`: no bandwidth phase ran) and whether the metadata
/// phases are INVALID (the line after it says).
fn score_line(text: &str) -> (f64, bool) {
    let l = text
        .lines()
        .find(|l| l.starts_with("[SCORE ] Bandwidth 0.000000 GiB/s : IOPS "))
        .unwrap_or_else(|| panic!("no score line: {text}"));
    let w: Vec<&str> = l.split_whitespace().collect();
    assert_eq!((w[8], w[10], w[11]), ("kiops", "TOTAL", "0.000000"), "{l}");
    assert!(l.ends_with(" [INVALID]"), "no total without bandwidth: {l}");
    let md = text
        .lines()
        .find_map(|l| l.strip_prefix("; the metadata phases are "))
        .unwrap_or_else(|| panic!("no validity line: {text}"));
    (w[7].parse().unwrap(), md.starts_with("INVALID"))
}

fn io500md(lab: &Lab, dir: &Path, args: &[&str]) -> Output {
    let mut all = vec!["io500md", "--probes", "none"];
    all.extend_from_slice(args);
    all.extend(["-d", dir.to_str().unwrap()]);
    lab.run(&all)
}

fn export(lab: &Lab, id: &str) -> serde_json::Value {
    let o = lab.run(&["results", "export", id]);
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_slice(&o.stdout).unwrap()
}

fn metric<'a>(
    run: &'a serde_json::Value,
    phase: Option<&str>,
    name: &str,
) -> &'a serde_json::Value {
    run["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["source"] == "io500" && m["name"] == name && m["phase"].as_str() == phase)
        .unwrap_or_else(|| panic!("no io500 metric {phase:?} {name} in {}", run["metrics"]))
}

/// The printed score against the geometric mean of the printed phase
/// scores (each printed with 6 decimals).
fn check_score(lines: &[Line], score: f64) {
    let scored: Vec<f64> = lines
        .iter()
        .filter(|l| l.tag == "[RESULT]")
        .map(|l| l.score)
        .collect();
    assert_eq!(scored.len(), 8, "eight scored phases: {lines:?}");
    let geo = (scored.iter().map(|v| v.ln()).sum::<f64>() / 8.0).exp();
    assert!(
        (geo - score).abs() <= 1e-6 * geo.max(1.0) + 1e-6,
        "the score {score} is the geometric mean {geo} of {scored:?}"
    );
}

#[test]
fn io500md_runs_io500s_phases_in_order_and_is_invalid_when_a_write_ends_before_the_stonewall() {
    if !privileged("io500md on a loop ext4") {
        return;
    }
    let fs = LoopFs::new(FsType::Ext4, 1 << 30, &["-i 4096"]);
    let lab = Lab::new();
    let dir = fs.path().join("io500");
    // 400 files a process are made long before a 4 s stonewall: both write
    // phases end early, which IO500's rules call INVALID.
    let o = io500md(
        &lab,
        &dir,
        &[
            "--easy-n",
            "400",
            "--hard-n",
            "400",
            "--stonewall-time",
            "4",
            "--minwrite",
            "4",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    let lines = result_lines(&text);
    let names: Vec<&str> = lines.iter().map(|l| l.phase.as_str()).collect();
    assert_eq!(names, ORDER, "{text}");
    assert_eq!(lines[1].tag, "[      ]", "the timestamp is a dummy phase");
    for l in &lines {
        let write = l.phase.ends_with("-write");
        assert_eq!(
            l.invalid, write,
            "only the write phases are INVALID: {text}"
        );
        if write {
            assert!(l.time_s < 4.0, "{text}");
            for why in [
                "is below stonewall time. This shouldn't happen!",
                "Runtime is smaller than expected minimum runtime",
            ] {
                assert!(
                    text.contains(&format!("ERROR INVALID ({}) ", l.phase)) && text.contains(why),
                    "{why}: {text}"
                );
            }
        }
    }
    let (score, invalid) = score_line(&text);
    assert!(invalid, "{text}");
    check_score(&lines, score);
    assert!(
        text.contains("it is not an IO500 submission"),
        "a scaled run says so: {text}"
    );
    let run = export(&lab, "1");
    assert_eq!(metric(&run, None, "valid")["value"], 0.0);
    let md = metric(&run, None, "MD score");
    assert_eq!(md["unit"], "kilo_ops_per_sec");
    assert!((md["value"].as_f64().unwrap() - score).abs() < 1e-5);
    // The reasons are said as the run's notes (on stderr).
    assert!(
        stderr(&o).contains(
            "fslab: io500md: INVALID (mdtest-easy-write): Runtime is smaller than expected minimum runtime"
        ),
        "{}",
        stderr(&o)
    );
    // Every item is removed; the results stay, as IO500's do.
    let left: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, ["results"]);
    let res = dir.join("results");
    for f in [
        "mdtest-easy-write.csv",
        "mdtest-hard-read.txt",
        "timestampfile",
    ] {
        assert!(res.join(f).exists(), "{f}");
    }
    assert!(!res.join("mdtest-easy.stonewall").exists());
}

#[test]
fn io500md_is_valid_when_the_stonewall_ends_each_write_phase() {
    if !privileged("io500md on a loop ext4") {
        return;
    }
    let fs = LoopFs::new(FsType::Ext4, 1 << 30, &["-i 4096"]);
    let lab = Lab::new();
    let dir = fs.path().join("io500");
    let o = io500md(
        &lab,
        &dir,
        &[
            "--easy-n",
            "5000000",
            "--hard-n",
            "5000000",
            "--stonewall-time",
            "1",
            "--minwrite",
            "1",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    let lines = result_lines(&text);
    assert!(lines.iter().all(|l| !l.invalid), "{text}");
    assert!(!text.contains("ERROR INVALID"), "{text}");
    assert!(lines[0].time_s >= 1.0 && lines[2].time_s >= 1.0, "{text}");
    let (score, invalid) = score_line(&text);
    assert!(!invalid && score > 0.0, "{text}");
    check_score(&lines, score);
    let run = export(&lab, "1");
    assert_eq!(run_schema_errors(&run), Vec::<String>::new());
    assert_eq!(metric(&run, None, "valid")["value"], 1.0);
    // The find looked at every file once: the two write phases' files.
    let made: u64 = [
        "mdtest-easy-write file creation",
        "mdtest-hard-write file creation",
    ]
    .iter()
    .map(|p| {
        run["phases"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["phase"] == *p)
            .unwrap_or_else(|| panic!("no phase {p}"))["ops"]
            .as_u64()
            .unwrap()
    })
    .sum();
    assert!(made < 10_000_000, "the stonewall stopped them");
    assert_eq!(
        metric(&run, Some("find"), "total-files")["value"],
        made as f64
    );
    assert!(
        metric(&run, Some("find"), "found")["value"]
            .as_f64()
            .unwrap()
            > 0.0
    );
}

#[test]
fn bad_io500md_input_is_one_line_and_status_2() {
    let lab = Lab::new();
    let d = lab.path("io");
    let ds = d.to_str().unwrap();
    for (args, want) in [
        (
            &["--easy-n", "0"][..],
            "fslab: io500md: --easy-n 0: must be at least 1",
        ),
        (
            &["--stonewall-time", "0"][..],
            "fslab: io500md: --stonewall-time 0: must be at least 1 second (IO500's is 300)",
        ),
        (
            &["--minwrite", "0"][..],
            "fslab: io500md: --minwrite 0: must be at least 1 second (IO500's is 300)",
        ),
        (&["--resultdir", ds][..], "fslab: io500md: --resultdir"),
        (
            &["--hard-n", "x"][..],
            "fslab: invalid value 'x' for '--hard-n <N>'",
        ),
    ] {
        let o = io500md(&lab, &d, args);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
        assert_eq!(e.lines().count(), 1, "{args:?}: {e}");
        assert!(e.starts_with(want), "{args:?}: {e}");
    }
    assert!(!d.exists(), "nothing made for a refused run");
}

#[test]
fn the_io500_md_built_in_runs_scaled_and_says_it_is_no_io500_submission() {
    if !privileged("the io500-md built-in") || !need_tool("mkfs.xfs") {
        return;
    }
    let lab = Lab::new();
    let o = lab
        .run_cmd()
        .args(["run", "io500-md", "--scale", "0.01", "--dry-run"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("--stonewall-time 300 -> 3, --minwrite 300 -> 3"),
        "the dry run says the 300 s become 3 s: {}",
        stdout(&o)
    );
    let o = lab
        .run_cmd()
        .env("FSLAB_IMAGE_DIR", lab.images())
        .args(["run", "io500-md", "--scale", "0.002", "--repetitions", "1"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("2 of 2 runs completed"), "{out}");
    for cell in ["== ext4 (repetition 1)", "== xfs (repetition 1)"] {
        let text = out
            .split(cell)
            .nth(1)
            .unwrap_or_else(|| panic!("{cell}: {out}"));
        let lines = result_lines(text);
        let names: Vec<&str> = lines.iter().take(9).map(|l| l.phase.as_str()).collect();
        assert_eq!(names, ORDER, "{cell}: {text}");
        let (score, _) = score_line(text);
        check_score(&lines[..9], score);
        assert!(text.contains("stonewall-time 1 s"), "{cell}: {text}");
        assert!(
            text.contains("it is not an IO500 submission"),
            "{cell}: {text}"
        );
    }
    assert!(out.contains("io500 MD score (kIOPS)"), "{out}");
}

/// Two MPI ranks under mpirun on one loop ext4.
#[cfg(feature = "mpi")]
mod on_ranks {
    use std::process::Command;

    use fslab_lab::mkfs::FsType;

    use super::*;

    #[test]
    fn two_ranks_run_io500s_phases_and_the_find_counts_every_file_once() {
        if !privileged("io500md on MPI ranks") || !need_tool("mpirun") {
            return;
        }
        let fs = LoopFs::new(FsType::Ext4, 1 << 30, &["-i 4096"]);
        let lab = Lab::new();
        let dir = fs.path().join("io500");
        let o = Command::new("timeout")
            .args([
                "180",
                "mpirun",
                "--allow-run-as-root",
                "--oversubscribe",
                "-np",
                "2",
            ])
            .arg(assert_cmd::cargo::cargo_bin("fslab"))
            .arg("--db")
            .arg(lab.db())
            .args([
                "io500md", "--probes", "none", "--easy-n", "5000000", "--hard-n", "5000000",
            ])
            .args(["--stonewall-time", "1", "--minwrite", "1", "-d"])
            .arg(&dir)
            .current_dir(lab.tmp.path())
            .output()
            .unwrap();
        assert_ne!(o.status.code(), Some(124), "mpirun hung: {}", stderr(&o));
        assert!(o.status.success(), "{}", stderr(&o));
        let text = stdout(&o);
        assert!(text.contains("2 rank(s)"), "{text}");
        assert_eq!(
            text.matches("[SCORE ]").count(),
            1,
            "rank 0 alone prints: {text}"
        );
        let lines = result_lines(&text);
        let names: Vec<&str> = lines.iter().map(|l| l.phase.as_str()).collect();
        assert_eq!(names, ORDER, "{text}");
        let (score, invalid) = score_line(&text);
        assert!(!invalid, "{text}");
        check_score(&lines, score);
        let run = export(&lab, "1");
        let ops = |p: &str| {
            run["phases"]
                .as_array()
                .unwrap()
                .iter()
                .find(|x| x["phase"] == p)
                .unwrap_or_else(|| panic!("no phase {p}: {}", run["phases"]))["ops"]
                .as_u64()
                .unwrap()
        };
        let made = ops("mdtest-easy-write file creation") + ops("mdtest-hard-write file creation");
        assert_eq!(ops("find"), made, "the ranks' shares add up to every file");
        assert_eq!(
            metric(&run, Some("find"), "total-files")["value"],
            made as f64
        );
        // Each rank made the agreed count in its own easy tree.
        assert_eq!(ops("mdtest-easy-write file creation") % 2, 0);
    }
}
