//! The guide: the README's quick start runs, in order, as a new user would
//! type it; every `fslab` command in the README and docs/ parses against the
//! real command line (a renamed option or command fails here).

use std::path::{Path, PathBuf};

use crate::support::{need_tool, privileged, stderr, stdout, Lab};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The lines of the ```sh block that follows `marker` in `text`.
fn block_after(text: &str, marker: &str) -> Vec<String> {
    let at = text.find(marker).unwrap_or_else(|| panic!("no {marker:?}"));
    let rest = &text[at..];
    let start = rest.find("```sh\n").expect("a sh block") + 6;
    let end = rest[start..].find("```").expect("the block's end");
    rest[start..start + end]
        .lines()
        .map(str::to_string)
        .collect()
}

/// A shell line without its trailing `# comment`.
fn uncommented(line: &str) -> &str {
    match line.find(" #") {
        Some(i) => line[..i].trim_end(),
        None => line.trim_end(),
    }
}

/// The quick start as one script: this lab's directories for /tmp/fslab-quick,
/// the binary under test for the release build.
fn script(lines: &[String], lab: &Lab) -> String {
    let bin = assert_cmd::cargo::cargo_bin("fslab");
    let bin_dir = bin.parent().unwrap().display().to_string();
    let quick = lab.path("quick").display().to_string();
    let mut s = String::from("set -euo pipefail\n");
    for l in lines {
        let l = uncommented(l);
        if l.starts_with("cargo ") {
            continue; // the suite built it already
        }
        let l = l
            .replace("$PWD/target/release", &bin_dir)
            .replace("/tmp/fslab-quick", &quick);
        s.push_str(&format!("echo '>>> {}' >&2\n{l}\n", l.replace('\'', "")));
    }
    s
}

fn run_script(lab: &Lab, script: &str) -> std::process::Output {
    std::process::Command::new("bash")
        .arg("-c")
        .arg(script)
        .current_dir(root())
        .env("FSLAB_STATE_DIR", lab.state())
        .env("FSLAB_IMAGE_DIR", lab.images())
        .output()
        .unwrap()
}

#[test]
fn the_readme_quick_start_runs_in_order() {
    if !privileged("the quick start (loop devices, mkfs)") {
        return;
    }
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let lines = block_after(&readme, "<!-- quick start -->");
    assert!(lines.len() >= 10, "{lines:?}");
    let lab = Lab::new();
    let o = run_script(&lab, &script(&lines, &lab));
    let (out, err) = (stdout(&o), stderr(&o));
    assert!(o.status.success(), "{err}\n{out}");
    // What each step promises: run 1 is the directory's fs_mark, the
    // experiment compares two cells, the built-in judges its claims.
    assert!(out.contains("| ext4") && out.contains("xfs"), "{out}");
    assert!(out.contains("findings"), "{out}");
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(lab.path("quick/run1.json")).unwrap()).unwrap();
    assert_eq!(json["run"]["workload"], "fsmark", "{json}");
    let page = std::fs::read_to_string(lab.path("quick/report.html")).unwrap();
    assert!(page.contains("<svg"), "the report has charts");
    assert!(lab.leftovers().is_empty(), "{:?}", lab.leftovers());

    #[cfg(feature = "mpi")]
    if need_tool("mpirun") {
        // In the same shell as the quick start: its exports first.
        let mut lines: Vec<String> = lines
            .iter()
            .filter(|l| l.starts_with("export "))
            .cloned()
            .collect();
        lines.extend(block_after(&readme, "<!-- quick start mpi -->"));
        let o = run_script(&lab, &script(&lines, &lab));
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(stdout(&o).contains("SUMMARY"), "{}", stdout(&o));
    }
    #[cfg(not(feature = "mpi"))]
    let _ = need_tool;
}

/// Every `fslab ...` line of a ```sh block in `text` (after `sudo`,
/// `mpirun ... `, or `VAR=value`), with its line number.
fn fslab_commands(text: &str) -> Vec<(usize, Vec<String>)> {
    let mut found = Vec::new();
    let mut in_sh = false;
    let mut joined = String::new();
    for (i, line) in text.lines().enumerate() {
        if line.starts_with("```") {
            in_sh = line == "```sh" && !in_sh;
            continue;
        }
        if !in_sh {
            continue;
        }
        // A line ending in `\` goes on on the next.
        let line = uncommented(line);
        if let Some(head) = line.strip_suffix('\\') {
            joined.push_str(head);
            continue;
        }
        let line = std::mem::take(&mut joined) + line;
        // Up to a pipe or a redirection: fslab's own arguments.
        let line = line.split(['|', '>', '<']).next().unwrap_or_default();
        let words = shell_words::split(line).unwrap_or_else(|e| panic!("line {}: {e}", i + 1));
        let Some(at) = words
            .iter()
            .position(|w| w == "fslab" || w.ends_with("/fslab"))
        else {
            continue;
        };
        let before = &words[..at];
        let launcher = before.first().is_some_and(|f| f == "mpirun" || f == "srun");
        if launcher || before.iter().all(|w| w == "sudo" || w.contains('=')) {
            found.push((i + 1, words[at..].to_vec()));
        }
    }
    found
}

#[test]
fn every_command_in_the_guide_parses() {
    let mut pages = vec![root().join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    pages.extend(docs);
    let mut checked = 0;
    let mut bad = Vec::new();
    for page in &pages {
        let text = std::fs::read_to_string(page).unwrap();
        for (line, argv) in fslab_commands(&text) {
            checked += 1;
            if let Err(e) = fslab::cli_command().try_get_matches_from(&argv) {
                use clap::error::ErrorKind::*;
                if !matches!(e.kind(), DisplayHelp | DisplayVersion) {
                    bad.push(format!(
                        "{}:{line}: {}: {}",
                        page.display(),
                        argv.join(" "),
                        e.to_string().lines().next().unwrap_or_default()
                    ));
                }
            }
        }
    }
    assert!(checked >= 30, "only {checked} commands found");
    assert!(
        bad.is_empty(),
        "{} of {checked}:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

#[test]
fn a_command_the_cli_does_not_take_is_caught() {
    let text =
        "```sh\nfslab run x.toml --no-such-option  # a comment\nsudo fslab compare | head\n```\n";
    let cmds = fslab_commands(text);
    assert_eq!(cmds.len(), 2, "{cmds:?}");
    assert!(fslab::cli_command()
        .try_get_matches_from(&cmds[0].1)
        .is_err());
    assert!(fslab::cli_command()
        .try_get_matches_from(&cmds[1].1)
        .is_ok());
}
