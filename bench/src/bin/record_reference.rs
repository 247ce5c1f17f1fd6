//! Records a reference trace of an original tool that is not packaged
//! (tiotest 0.3.5, Lustre's createmany, compilebench 0.6, seed 002's
//! alloctest) for the parity tests: for each of the workload's option sets
//! ([`fslab_bench::reference::cases`]), the original's calls counted by
//! `fslab_bench::trace` (every call of every task, kind by kind, failures,
//! bytes) and its output lines, into one JSON file.
//!
//! It builds nothing: it takes the command of an original someone built by
//! hand from its public source, outside this repository, and says so in
//! the data with the repository, commit and version given here.
//!
//! ```text
//! record_reference NAME VERSION REPOSITORY COMMIT "HOW IT WAS BUILT" -- COMMAND... > FILE.json
//! record_reference tiotest 0.3.5 https://github.com/mkuoppal/tiobench 654eea7e... \
//!     "gcc ..." -- /tmp/originals/tiotest035/tiotest \
//!     > crates/fslab/tests/data/reference/tiotest.json
//! ```

use std::process::{Command, ExitCode};

use fslab_bench::reference;
use fslab_bench::trace;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(dash) = args.iter().position(|a| a == "--") else {
        eprintln!("usage: record_reference NAME VERSION REPOSITORY COMMIT HOW -- COMMAND...");
        return ExitCode::from(2);
    };
    let (meta, command) = (&args[..dash], &args[dash + 1..]);
    let [name, version, repository, commit, built] = meta else {
        eprintln!("record_reference: want NAME VERSION REPOSITORY COMMIT HOW before --");
        return ExitCode::from(2);
    };
    if command.is_empty() {
        eprintln!("record_reference: no command after --");
        return ExitCode::from(2);
    }
    let Some(cases) = reference::cases(name) else {
        eprintln!("record_reference: no option sets for {name:?} (tiotest, createmany, compilebench, alloctest, mdtest)");
        return ExitCode::from(2);
    };
    let scratch = fslab_bench::Scratch::new(&format!("ref-{name}"));
    let mut recorded = Vec::new();
    for (i, case) in cases.iter().enumerate() {
        let dir = scratch.0.join(format!("case{i}"));
        std::fs::create_dir_all(&dir).expect("case dir");
        let argv = case.original_args(&dir);
        let mut cmd = Command::new(&command[0]);
        cmd.args(&command[1..]).args(&argv).current_dir(&scratch.0);
        let logs = trace::log_dir(&scratch.0, &format!("log{i}"));
        let (out, t) = trace::record(cmd, &logs);
        if !out.status.success() {
            eprintln!(
                "record_reference: {name} {argv:?} failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            return ExitCode::FAILURE;
        }
        let marker = dir.to_str().unwrap_or_default();
        let counts = t.counts(marker);
        let mut ops: std::collections::BTreeMap<String, serde_json::Value> = Default::default();
        for (label, c) in reference::per_op(&t, marker, reference::op_lines(name)) {
            ops.insert(label, serde_json::json!(c));
        }
        let traced = std::iter::once(command.join(" "))
            .chain(
                argv.iter()
                    .map(|a| a.replace(dir.to_str().unwrap_or_default(), "DIR")),
            )
            .collect::<Vec<_>>()
            .join(" ");
        recorded.push(serde_json::json!({
            "case": case.label,
            "command": traced,
            "tasks": counts.per_task.len(),
            "calls": counts.compared(),
            "calls_by_operation": ops,
            "output": String::from_utf8_lossy(&out.stdout).lines().collect::<Vec<_>>(),
        }));
        std::fs::remove_dir_all(&dir).ok();
        std::fs::remove_dir_all(&logs).ok();
        eprintln!("record_reference: {name}: {} recorded", case.label);
    }
    let doc = serde_json::json!({
        "original": name,
        "version": version,
        "repository": repository,
        "commit": commit,
        "built": format!("by hand from that commit, outside this repository: {built}"),
        "recorded_with": "cargo run -p fslab-bench --bin record_reference (strace -ff -y -qq -s 24; \
            every call of every task that named the case's directory, counted by fslab_bench::trace)",
        "kernel": fslab_bench::kernel_release(),
        "cases": recorded,
    });
    println!("{}", serde_json::to_string_pretty(&doc).expect("json"));
    ExitCode::SUCCESS
}
