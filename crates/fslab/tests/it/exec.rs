//! Programs fslab did not write as workloads: `fslab exec` and `kind =
//! "command"`, with Debian's fio and a generic-parser `dd`, their output
//! kept and parsed, refused in one line when they cannot run, and run in
//! experiments that compare, report and explain them like fslab's own.

use crate::support::*;

/// The fio job of these tests: random 4 KiB writes, fio's json+.
const FIO: &[&str] = &[
    "fio",
    "--name=rw",
    "--rw=randwrite",
    "--bs=4k",
    "--size=8m",
    "--output-format=json+",
];

fn json(o: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", stdout(o)))
}

#[test]
fn exec_runs_fio_keeps_what_it_printed_and_records_its_job_and_histogram() {
    if !need_tool("fio") {
        return;
    }
    let lab = Lab::new();
    let dir = lab.path("w");
    let mut argv = vec!["exec", "--json", "-C", dir.to_str().unwrap(), "--"];
    let directory = format!("--directory={}", dir.display());
    argv.extend(FIO);
    argv.push(&directory);
    let o = lab.run(&argv);
    assert!(o.status.success(), "{}", stderr(&o));
    let run = json(&o);
    assert!(
        run_schema_errors(&run).is_empty(),
        "{:?}",
        run_schema_errors(&run)
    );
    assert_eq!(phase_names(&run), ["fio", "rw"]);
    let rw = &run["phases"][1];
    assert_eq!(
        (rw["ops"].as_u64(), rw["reported"].as_bool()),
        (Some(2048), Some(true))
    );
    assert_eq!(
        run["phases"][0]["ops"], 2048,
        "the program's phase counts the tool's IOs"
    );
    let bw = run["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "write bw")
        .expect("fio's bandwidth");
    assert_eq!(
        (bw["source"].as_str(), bw["unit"].as_str()),
        (Some("fio"), Some("mib_per_sec"))
    );
    let lat = &run["latency"][0];
    assert_eq!(
        (lat["phase"].as_str(), lat["op"].as_str()),
        (Some("rw"), Some("write clat"))
    );
    assert_eq!(lat["count"], 2048, "every IO of json+'s bins");
    // fio's JSON is kept byte for byte, as fio printed it.
    let id = run["run"]["id"].as_i64().unwrap().to_string();
    let kept = lab.run(&["results", "output", &id]);
    assert!(kept.status.success(), "{}", stderr(&kept));
    let doc: serde_json::Value = serde_json::from_slice(&kept.stdout).unwrap();
    assert_eq!(doc["jobs"][0]["jobname"], "rw");
    let show = lab.run(&["results", "show", &id]);
    assert!(
        stdout(&show).contains("output kept: stdout ("),
        "{}",
        stdout(&show)
    );
}

#[test]
fn exec_refuses_what_cannot_run_in_one_line_before_anything_is_made() {
    let lab = Lab::new();
    let dir = lab.path("w");
    let d = dir.to_str().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (
            &["exec", "-C", d, "--", "nosuch-benchmark"],
            "\"nosuch-benchmark\" not found on PATH",
        ),
        (
            &["exec", "-C", d, "--parser", "fiio", "--", "true"],
            "--parser fiio: unknown parser",
        ),
        (
            &["exec", "-C", d, "--", "sh", "-c", "true"],
            "--allow-command sh",
        ),
        (
            &["exec", "-C", d, "--parser", "fio", "--", "true", "--name=x"],
            "--output-format=json+",
        ),
        (
            &["exec", "-C", d, "--", "true", "--filename=/etc/passwd"],
            "names /etc/passwd: outside the program's directory",
        ),
        (
            &["exec", "-C", d, "--parser", "regex", "--", "true"],
            "needs a pattern",
        ),
    ];
    for (argv, says) in cases {
        let o = lab.run(argv);
        assert_eq!(o.status.code(), Some(2), "{argv:?}: {}", stderr(&o));
        let err = stderr(&o);
        assert_eq!(err.lines().count(), 1, "{argv:?}: one line: {err}");
        assert!(err.contains(says), "{argv:?}: {err}");
    }
    assert!(!lab.db().exists(), "a refusal records nothing");
    assert!(!dir.exists(), "a refusal makes nothing");
}

#[test]
fn output_the_parser_cannot_read_fails_the_run_naming_the_line_and_is_kept() {
    let lab = Lab::new();
    let dir = lab.path("w");
    let o = lab.run(&[
        "exec",
        "-C",
        dir.to_str().unwrap(),
        "--parser",
        "regex",
        "--metric",
        "rate (ops/s)=rate: (\\S+)",
        "--",
        "printf",
        "start\\nrate: fast\\n",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("regex parser: stdout line 2: \"fast\" is not a number (rate)"),
        "{err}"
    );
    assert!(err.contains("fslab results output 1 stdout"), "{err}");
    let kept = lab.run(&["results", "output", "1"]);
    assert_eq!(stdout(&kept), "start\nrate: fast\n");
    // A program that fails fails the run with its status and last words.
    let o = lab.run(&[
        "exec",
        "-C",
        dir.to_str().unwrap(),
        "--",
        "ls",
        "nosuchfile",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("ls exited with status 2: ls: cannot access"),
        "{}",
        stderr(&o)
    );
}

/// An experiment of the program on ext4 and xfs, three repetitions each.
fn two_filesystems(name: &str, workload: &str) -> String {
    format!(
        "name = \"{name}\"\nrepetitions = 3\n[device]\nsize = \"512M\"\nimage_dir = \"IMAGES\"\n\
         [workload]\n{workload}\n[[target]]\nfs = \"ext4\"\n[[target]]\nfs = \"xfs\"\n"
    )
}

/// The HTML page `fslab report -o NAME` writes of the lab's runs.
fn report_page(lab: &Lab, name: &str) -> String {
    let html = lab.path(name);
    let o = lab
        .fslab()
        .args(["report", "-o"])
        .arg(&html)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    std::fs::read_to_string(&html).unwrap()
}

/// The compare rows of metric `m`, by cell.
fn rows<'a>(cmp: &'a serde_json::Value, m: &str) -> Vec<&'a serde_json::Value> {
    cmp["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["metric"] == m)
        .collect()
}

#[test]
fn a_fio_experiment_on_two_filesystems_is_recorded_compared_and_reported_with_its_histogram() {
    if !privileged("mkfs and loop devices") || !need_tool("fio") || !need_tool("mkfs.xfs") {
        return;
    }
    let _m = machine_lock();
    let lab = Lab::new();
    let args: Vec<String> = FIO.iter().map(|a| format!("{a:?}")).collect();
    let workload = format!(
        "kind = \"command\"\nargs = [{}, \"--directory={{dir}}\"]",
        args.join(", ")
    );
    let f = lab.experiment("fio.toml", &two_filesystems("fio", &workload));
    let o = lab.run_cmd().arg("run").arg(&f).output().unwrap();
    assert!(o.status.success(), "{}\n{}", stdout(&o), stderr(&o));
    assert!(lab.leftovers().is_empty(), "{:?}", lab.leftovers());
    let cmp = lab.run(&["compare", "--format", "json"]);
    assert!(cmp.status.success(), "{}", stderr(&cmp));
    assert!(
        !stderr(&cmp).contains("a group should be repetitions"),
        "{}",
        stderr(&cmp)
    );
    let cmp = json(&cmp);
    for m in [
        "fio rw write bw (MiB/s)",
        "fio rw write clat p99 (us)",
        "rw rate (ops/s)",
        "fio time (s)",
    ] {
        let r = rows(&cmp, m);
        let cells: Vec<(&str, u64)> = r
            .iter()
            .map(|r| (r["group"].as_str().unwrap(), r["n"].as_u64().unwrap()))
            .collect();
        assert_eq!(cells, [("ext4", 3), ("xfs", 3)], "{m}");
    }
    // The program's phase holds fio's whole job (fio's own runtime).
    for (program, job) in rows(&cmp, "fio time (s)")
        .iter()
        .zip(rows(&cmp, "rw time (s)"))
    {
        let (p, j) = (
            program["mean"].as_f64().unwrap(),
            job["mean"].as_f64().unwrap(),
        );
        assert!(p >= j, "fio's phase took {p} s, its job ran {j} s");
    }
    assert!(
        rows(&cmp, "rw sys cpu (s)").is_empty(),
        "fio's job has no CPU of fslab's"
    );
    assert_eq!(
        rows(&cmp, "blockio fio guest IOs").len(),
        2,
        "the probes watched the program"
    );
    let page = report_page(&lab, "fio.html");
    assert!(
        page.contains("<figcaption>rw write clat latency, every cell (CDF)</figcaption>"),
        "fio's histogram is drawn, every cell on it"
    );
    // A path outside the cell is refused by the dry run, naming the cell.
    let bad = lab.experiment(
        "bad.toml",
        &two_filesystems("bad", "kind = \"command\"\nargs = [\"fio\", \"--filename=/dev/vda\", \"--output-format=json\"]"),
    );
    let o = lab
        .run_cmd()
        .args(["run", "--dry-run"])
        .arg(&bad)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(
        stderr(&o).contains("cell \"ext4\": workload:") && stderr(&o).contains("/dev/vda"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_generic_parser_command_on_two_filesystems_is_compared_like_a_workload() {
    if !privileged("mkfs and loop devices") || !need_tool("mkfs.xfs") {
        return;
    }
    let _m = machine_lock();
    let lab = Lab::new();
    let workload = "kind = \"command\"\n\
         args = [\"dd\", \"if=/dev/zero\", \"of={dir}/f\", \"bs=1M\", \"count=16\", \"conv=fsync\"]\n\
         parser = \"regex\"\n\
         metrics = [\"copy time (s)=copied, ([0-9.]+) s,\", \"copied (bytes)=^([0-9]+) bytes\"]";
    let f = lab.experiment("dd.toml", &two_filesystems("dd", workload));
    let o = lab.run_cmd().arg("run").arg(&f).output().unwrap();
    assert!(o.status.success(), "{}\n{}", stdout(&o), stderr(&o));
    let cmp = json(&lab.run(&["compare", "--format", "json"]));
    // dd's own time (its rate's unit, kB/s to GB/s, depends on the speed).
    let own = rows(&cmp, "dd copy time (s)");
    assert_eq!(own.len(), 2, "{cmp}");
    assert!(own.iter().all(|r| r["mean"].as_f64().unwrap() > 0.0));
    let copied = rows(&cmp, "dd copied (bytes)");
    assert_eq!(copied[0]["mean"], 16.0 * 1048576.0);
    assert!(
        rows(&cmp, "dd rate (ops/s)").is_empty(),
        "dd's phase counts nothing: no rate"
    );
    // The program's phase holds its whole run: never shorter than the time
    // dd says its copy took.
    let time = rows(&cmp, "dd time (s)");
    assert_eq!(time.len(), 2);
    for (t, d) in time.iter().zip(&own) {
        let (t, d) = (t["mean"].as_f64().unwrap(), d["mean"].as_f64().unwrap());
        assert!(t >= 0.9 * d, "dd's phase took {t} s, dd's copy {d} s");
    }
    // The probes watched dd as they watch fslab's workloads: its fsync'd
    // 16 MiB reached each cell's loop device.
    let ios = rows(&cmp, "blockio dd guest IOs");
    assert_eq!(ios.len(), 2, "{cmp}");
    assert!(
        ios.iter().all(|r| r["mean"].as_f64().unwrap() > 0.0),
        "{ios:?}"
    );
    let page = report_page(&lab, "dd.html");
    assert!(
        page.contains("dd copy time (s)"),
        "the parsed metric is reported"
    );
    // An unknown key of another workload is refused.
    let bad = lab.experiment(
        "bad.toml",
        &two_filesystems(
            "bad",
            "kind = \"fsmark\"\nargs = [\"-n\", \"10\"]\nparser = \"fio\"",
        ),
    );
    let o = lab
        .run_cmd()
        .args(["run", "--dry-run"])
        .arg(&bad)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("workload.parser: fsmark takes no parser"),
        "{}",
        stderr(&o)
    );
}
