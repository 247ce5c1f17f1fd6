//! `fslab io500md io500.ini` beside the real IO500 app
//! (`tests/data/reference/io500.json`: the app at 02091cf run at small
//! settings, recorded outside CI by `bench/src/bin/record_io500.rs`): the
//! same configuration file read, the same metadata phases in the same
//! order with the same mdtest options, and result files that IO500's own
//! parsing accepts: the list's upload reads `result_summary.txt` with two
//! regular expressions (IO500/submission-system,
//! src/Controller/SubmissionsController.php), and `result.txt` is IO500's
//! INI (src/ini-parse.c's grammar) with IO500's keys.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::support::*;

fn reference() -> serde_json::Value {
    let p = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/reference/io500.json"
    );
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// The upload's first expression: each phase's name and score (the
/// timestamp left out, as the upload leaves it out).
fn upload_results(summary: &str) -> BTreeMap<String, String> {
    let re = regex::Regex::new(r"(?m)\[.*\]\s*(\S*)\s*(\S*)\s*(\S*)\s*:\s*time\s*(\S*)\s*seconds")
        .unwrap();
    re.captures_iter(summary)
        .filter(|c| &c[1] != "timestamp")
        .map(|c| (c[1].to_string(), c[2].to_string()))
        .collect()
}

/// The upload's second expression, its first match: Bandwidth, IOPS and
/// TOTAL by name.
fn upload_totals(summary: &str) -> BTreeMap<String, String> {
    let re = regex::Regex::new(
        r"(?m)\[.*\]\s*(\S*)\s*(\S*)\s*(\S*)\s*:\s*(\S*)\s*(\S*)\s*(\S*)\s*:\s*(\S*)\s*(\S*)",
    )
    .unwrap();
    let m = re
        .captures(summary)
        .expect("the upload's second expression matches");
    [(1, 2), (4, 5), (7, 8)]
        .iter()
        .map(|&(k, v)| (m[k].to_string(), m[v].to_string()))
        .collect()
}

/// Each section of an IO500 INI and its keys, in order, read by IO500's
/// grammar.
fn sections(text: &str) -> Vec<(String, BTreeSet<String>)> {
    let ini = fslab_parse::io500::ini::parse(text)
        .unwrap_or_else(|(l, m)| panic!("line {l}: {m}\n{text}"));
    ini.sections
        .iter()
        .filter(|s| s.line > 0)
        .map(|s| {
            (
                s.name.clone(),
                s.pairs.iter().map(|p| p.0.clone()).collect(),
            )
        })
        .collect()
}

/// IO500's mdtest command without what fslab's mdtest has no equivalent
/// of: the program's path, `--dataPacketType` and `-G` (the data's
/// pattern and seed: fslab writes zeros), `-X` (read verification) and `-a
/// POSIX` (fslab's mdtest is POSIX calls alone).
fn comparable(exe: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < exe.len() {
        match exe[i] {
            "./mdtest" => out.push("mdtest".to_string()),
            "-G" | "-a" => i += 1,
            "-X" => {}
            a if a.starts_with("--dataPacketType=") || a.starts_with("-G=") => {}
            a => out.push(a.to_string()),
        }
        i += 1;
    }
    out
}

/// `result_summary.txt` against the app's: the upload's expressions find
/// the app's metadata phases (its bandwidth phases aside) and the three
/// totals. Returns the IOPS total.
fn check_summary(summary: &str, ref_summary: &str) -> f64 {
    let want: BTreeSet<String> = upload_results(ref_summary)
        .into_keys()
        .filter(|k| !k.starts_with("ior-"))
        .collect();
    let got = upload_results(summary);
    assert_eq!(
        got.keys().cloned().collect::<BTreeSet<_>>(),
        want,
        "{summary}"
    );
    assert!(
        got.values()
            .all(|v| v.parse::<f64>().is_ok_and(|x| x > 0.0)),
        "{got:?}"
    );
    let totals = upload_totals(summary);
    assert_eq!(
        totals.keys().cloned().collect::<Vec<_>>(),
        ["Bandwidth", "IOPS", "TOTAL"]
    );
    assert_eq!(
        upload_totals(ref_summary).keys().count(),
        3,
        "the port reads the app's own"
    );
    let md: f64 = totals["IOPS"].parse().unwrap();
    assert!(md > 0.0, "{summary}");
    assert!(
        summary.starts_with("IO500 version fslab-io500md-"),
        "says what made it"
    );
    assert!(summary
        .lines()
        .next()
        .unwrap()
        .contains("not an IO500 submission"));
    md
}

/// `result.txt` against the app's: IO500's grammar reads it; its phases
/// are the app's metadata phases in the app's order, with the app's keys
/// (no hash), and the same mdtest options phase by phase.
fn check_result(result: &str, r: &serde_json::Value) {
    let ref_result = r["result"].as_str().unwrap();
    let (mine, theirs) = (sections(result), sections(ref_result));
    let names = |v: &[(String, BTreeSet<String>)]| -> Vec<String> {
        v.iter().map(|s| s.0.clone()).collect()
    };
    let ref_md: Vec<String> = names(&theirs)
        .into_iter()
        .filter(|n| !n.starts_with("ior-"))
        .collect();
    assert_eq!(names(&mine), ref_md, "phases and their order");
    for (name, keys) in &mine {
        let want = &theirs.iter().find(|s| &s.0 == name).unwrap().1;
        let expected: BTreeSet<String> = want
            .iter()
            .filter(|k| *k != "config-hash" && *k != "hash")
            .cloned()
            .collect();
        assert_eq!(keys, &expected, "[{name}]'s keys");
    }
    assert!(
        result.contains("version         = fslab-io500md-"),
        "{result}"
    );
    assert!(
        !result
            .lines()
            .any(|l| l.starts_with("hash") || l.starts_with("config-hash")),
        "no hash line: {result}"
    );
    let exe_of = |text: &str, phase: &str| -> Option<Vec<String>> {
        let ini = fslab_parse::io500::ini::parse(text).ok()?;
        Some(
            ini.section(phase)?
                .get("exe")?
                .split(' ')
                .map(String::from)
                .collect(),
        )
    };
    for p in r["phases"].as_array().unwrap() {
        let phase = p["phase"].as_str().unwrap();
        if !phase.starts_with("mdtest-") {
            continue;
        }
        let app: Vec<&str> = p["exe"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap())
            .collect();
        let ours = exe_of(result, phase).unwrap_or_else(|| panic!("no exe for {phase}"));
        assert_eq!(ours, comparable(&app), "{phase}");
    }
}

#[test]
fn io500md_reads_io500s_ini_runs_its_phases_as_the_app_and_writes_files_its_parsing_accepts() {
    let r = reference();
    let lab = Lab::new();
    let d = tempfile::tempdir_in("/dev/shm").unwrap();
    let (data, results) = (d.path().join("datafiles"), d.path().join("results"));
    let config = r["config"].as_str().unwrap();
    let ini = lab.path("io500.ini");
    std::fs::write(
        &ini,
        config
            .replace("DATADIR", data.to_str().unwrap())
            .replace("RESULTDIR", results.to_str().unwrap()),
    )
    .unwrap();
    let o = lab.run(&["io500md", "--probes", "none", ini.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let read = |name: &str| {
        std::fs::read_to_string(results.join(name))
            .unwrap_or_else(|e| panic!("{name}: {e}"))
            .replace(data.to_str().unwrap(), "DATADIR")
            .replace(results.to_str().unwrap(), "RESULTDIR")
    };
    // The same files as the app's, by name.
    let mine: BTreeSet<String> = std::fs::read_dir(&results)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    let theirs: BTreeSet<String> = r["result_files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap().to_string())
        .collect();
    assert_eq!(mine, theirs, "the result directory's files");

    let md = check_summary(
        &read("result_summary.txt"),
        r["result_summary"].as_str().unwrap(),
    );
    let result = read("result.txt");
    check_result(&result, &r);
    // fslab's reader of the app's result.txt reads io500md's too.
    let parsed = fslab_parse::io500::read_result(&result, "result.txt").unwrap();
    assert_eq!(
        parsed.md.map(|m| (m * 1e6).round()),
        Some((md * 1e6).round())
    );
    assert!(Path::new(&results.join("config-orig.ini")).exists());
    // config.ini: every section and key of the app's, in its order (an
    // empty value too, which the grammar leaves out).
    let keys = |text: &str| -> Vec<String> {
        text.lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            .map(|l| l.split(" = ").next().unwrap_or(l).to_string())
            .collect()
    };
    assert!(
        sections(&read("config.ini")).len() > 20,
        "IO500's grammar reads it"
    );
    assert_eq!(
        keys(&read("config.ini")),
        keys(r["config_ini"].as_str().unwrap()),
        "config.ini has every IO500 key"
    );
}

#[test]
fn an_ini_io500md_cannot_read_is_refused_in_one_line_before_anything_is_made() {
    let lab = Lab::new();
    let d = tempfile::tempdir_in("/dev/shm").unwrap();
    let data = d.path().join("data");
    for (text, says) in [
        (
            "[global]\ndatadir = DATA\n[bogus]\nx = 1\n",
            "line 3: unknown section [bogus]",
        ),
        (
            "[global]\ndatadir = DATA\ndatdir = y\n",
            "line 3: [global] datdir: unknown key",
        ),
        (
            "[global]\ndatadir = DATA\n[ior-easy]\ntransferSize = 4m\n",
            "[ior-easy] transferSize = 4m: not supported",
        ),
        (
            "[global]\ndatadir = DATA\n[mdtest-easy]\nn = lots\n",
            "[mdtest-easy] n = lots: expects an integer",
        ),
    ] {
        let ini = lab.path("bad.ini");
        std::fs::write(&ini, text.replace("DATA", data.to_str().unwrap())).unwrap();
        let o = lab.run(&["io500md", ini.to_str().unwrap()]);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{text}: {e}");
        assert_eq!(e.lines().count(), 1, "{e}");
        assert!(e.contains(says), "{text}: {e}");
    }
    assert!(
        !data.exists() && !lab.path("results").exists(),
        "nothing made"
    );
    assert!(!lab.db().exists(), "nothing recorded");
}
