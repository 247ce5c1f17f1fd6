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
    assert_eq!(lines.len(), 2, "{list}");
    for (i, l) in lines.iter().enumerate() {
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
    let rows: Vec<&str> = show
        .lines()
        .filter(|l| l.starts_with("     0 ") || l.starts_with("   "))
        .collect();
    assert!(
        rows.iter()
            .any(|r| r.split_whitespace().nth(1) == Some("400")),
        "{show}"
    );

    let v: serde_json::Value = serde_json::from_slice(
        &lab.run(&["results", "export", "2", "--format", "json"])
            .stdout,
    )
    .unwrap();
    assert_eq!(v["run"]["id"], 2);
    assert_eq!(v["run"]["command_line"][1], "--db");
    assert!(v["run"]["kernel"].as_str().unwrap().len() > 2);
    assert_eq!(v["loops"].as_array().unwrap().len(), 2);
    assert_eq!(v["run"]["params"]["file_size"], 100);

    let csv = stdout(&lab.run(&["results", "export", "2", "--format", "csv"]));
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some("run_id,table,phase,op,index,metric,value")
    );
    assert!(csv.contains("2,loop,create,,1,count,400\n"), "{csv}");
    assert!(
        csv.lines().all(|l| l.split(',').count() == 7),
        "every CSV line has 7 fields"
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
