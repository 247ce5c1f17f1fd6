//! `fslab run --resume`: an interrupted experiment resumed into the same
//! record, and more repetitions asked for never fewer.

use std::process::Stdio;

use fslab_store::Store;

use crate::support::*;

#[test]
fn an_interrupted_experiment_is_resumed_into_the_same_record() {
    if !privileged("fslab run on loop devices") {
        return;
    }
    let lab = Lab::new();
    let f = lab.experiment(
        "resume.toml",
        r#"
name = "resume"
repetitions = 3
order = "sequential"
[device]
size = "512M"
image_dir = "IMAGES"
[workload]
kind = "fsmark"
args = ["-n", "3000", "-s", "4096", "-S1"]
[[target]]
fs = "ext4"
"#,
    );
    let said = interrupt_during_the_second_repetition(&lab, &f);
    let e = Store::open(&lab.db()).unwrap().experiment(1).unwrap();
    assert_eq!(e.status, fslab_model::RunStatus::Interrupted);
    let complete = |e: &fslab_store::ExperimentRecord| {
        e.cell_runs
            .iter()
            .filter(|r| r.status == Some(fslab_model::RunStatus::Complete))
            .count()
    };
    // Repetition 1 completed; 2 was cut short (or, on a very fast machine, just made it).
    let before = complete(&e);
    assert!((1..3).contains(&before), "{said}");
    let list = stdout(
        &lab.fslab()
            .args(["results", "experiments"])
            .output()
            .unwrap(),
    );
    // A header, then experiment 1.
    let row = list.lines().nth(1).unwrap_or_default();
    assert!(
        row.starts_with("1  ")
            && row.contains(" interrupted ")
            && row.contains(&format!(
                "{before}/3  resume  1 cell x 3 repetitions, scale 1, "
            )),
        "{list}"
    );

    // --resume runs the rest only, into experiment 1.
    let o = lab
        .run_cmd()
        .args(["run", "--resume", "1"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let want = format!(
        "resuming experiment 1 (resume) at scale 1: {before} of 3 runs completed before, {} to run",
        3 - before
    );
    assert!(stderr(&o).contains(&want), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("3 of 3 runs completed"),
        "{}",
        stdout(&o)
    );
    let e = Store::open(&lab.db()).unwrap().experiment(1).unwrap();
    assert_eq!(
        (e.status.as_str(), complete(&e), e.cell_runs.len()),
        ("complete", 3, 3)
    );
    assert!(Store::open(&lab.db()).unwrap().latest_experiment().unwrap() == Some(1));
    more_repetitions_never_fewer(&lab);
    assert_eq!(lab.leftovers(), Vec::<String>::new());
}

/// `fslab run` of `f`, Ctrl-C once the first repetition is done (the second
/// is cut short): exit 130. Returns what it said on stderr.
fn interrupt_during_the_second_repetition(lab: &Lab, f: &std::path::Path) -> String {
    use std::io::BufRead;
    // Ctrl-C once the first repetition is done: the second is cut short.
    let mut child = lab.spawn_run(f, Stdio::null(), Stdio::piped());
    let mut err = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut said = String::new();
    let mut line = String::new();
    while err.read_line(&mut line).unwrap() > 0 {
        said.push_str(&line);
        if line.contains("repetition 2/3") && !line.contains("done") {
            break;
        }
        line.clear();
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(child.id() as i32).unwrap(),
        rustix::process::Signal::INT,
    )
    .unwrap();
    let _ = std::io::Read::read_to_string(&mut err, &mut said);
    assert_eq!(child.wait().unwrap().code(), Some(130), "{said}");
    said
}

/// `--resume` adds repetitions, never removes them, and says when nothing
/// is left to run.
fn more_repetitions_never_fewer(lab: &Lab) {
    // More repetitions on top; never fewer; and nothing left is said so.
    let o = lab
        .run_cmd()
        .args(["run", "--resume", "1", "--repetitions", "4"])
        .output()
        .unwrap();
    assert!(
        stdout(&o).contains("4 of 4 runs completed"),
        "{}",
        stdout(&o)
    );
    let list = stdout(
        &lab.fslab()
            .args(["results", "experiments"])
            .output()
            .unwrap(),
    );
    assert_eq!(
        list.lines().count(),
        2,
        "a header and one experiment: {list}"
    );
    assert!(
        list.contains(" complete ") && list.contains(" 4/4  resume  1 cell x 4 repetitions"),
        "{list}"
    );
    let o = lab
        .run_cmd()
        .args(["run", "--resume", "1", "--repetitions", "2"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("already has 4 repetitions"),
        "{}",
        stderr(&o)
    );
    let o = lab
        .run_cmd()
        .args(["run", "--resume", "1"])
        .output()
        .unwrap();
    assert!(o.status.success());
    assert!(stdout(&o).contains("nothing to resume"), "{}", stdout(&o));
    let o = lab
        .run_cmd()
        .args(["run", "--resume", "7"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--resume 7: no such experiment"),
        "{}",
        stderr(&o)
    );
}
