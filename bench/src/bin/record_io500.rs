//! Records the real IO500 app at small settings for `fslab io500md`'s
//! side-by-side test (`crates/fslab/tests/it/io500_files.rs`): the app's
//! configuration, each phase's exact command (`result.txt`'s `exe`), and
//! its result files (`result_summary.txt`, `result.txt`, `config.ini`, the
//! names of the rest), its data and result directories written `DATADIR`
//! and `RESULTDIR`, into one JSON file.
//!
//! It builds nothing: it runs an app someone built by hand from its public
//! source, outside this repository (`/work/originals/README-io500.md`
//! says how), and says so in the data with the commit given here.
//!
//! ```text
//! record_io500 RANKS COMMIT "HOW IT WAS BUILT" -- IO500 [MPIRUN...] \
//!     > crates/fslab/tests/data/reference/io500.json
//! ```

use std::process::{Command, ExitCode};

/// The small settings: IO500's metadata phases at 200 files a rank and a
/// 1 s stonewall, its bandwidth phases off (fslab io500md has none).
pub const CONFIG: &str = "[global]\ndatadir = DATADIR\nresultdir = RESULTDIR\ntimestamp-datadir = FALSE\ntimestamp-resultdir = FALSE\n\n[debug]\nstonewall-time = 1\n\n[ior-easy]\nrun = FALSE\n[ior-hard]\nrun = FALSE\n\n[mdtest-easy]\nn = 200\n[mdtest-hard]\nn = 200\n";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(dash) = args.iter().position(|a| a == "--") else {
        eprintln!("usage: record_io500 RANKS COMMIT HOW -- IO500 [MPIRUN...]");
        return ExitCode::from(2);
    };
    let (meta, command) = (&args[..dash], &args[dash + 1..]);
    let [ranks, commit, built] = meta else {
        eprintln!("record_io500: want RANKS COMMIT HOW before --");
        return ExitCode::from(2);
    };
    let Some((io500, launcher)) = command.split_first() else {
        eprintln!("record_io500: no app after --");
        return ExitCode::from(2);
    };
    let scratch = fslab_bench::Scratch::new("ref-io500");
    let (data, results) = (scratch.0.join("datafiles"), scratch.0.join("results"));
    let ini = scratch.0.join("io500.ini");
    let text = CONFIG
        .replace("DATADIR", &data.display().to_string())
        .replace("RESULTDIR", &results.display().to_string());
    std::fs::write(&ini, &text).expect("the configuration");
    let mut argv: Vec<String> = launcher.to_vec();
    if !launcher.is_empty() {
        argv.extend(["-np".into(), ranks.clone()]);
    }
    argv.push(io500.clone());
    argv.push(ini.display().to_string());
    let out = Command::new(&argv[0])
        .args(&argv[1..])
        .current_dir(&scratch.0)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .output()
        .expect("the app starts");
    if !out.status.success() {
        eprintln!(
            "record_io500: the app failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        return ExitCode::FAILURE;
    }
    let placed = |t: String| {
        t.replace(&data.display().to_string(), "DATADIR")
            .replace(&results.display().to_string(), "RESULTDIR")
    };
    let read = |name: &str| placed(std::fs::read_to_string(results.join(name)).unwrap_or_default());
    let result = read("result.txt");
    let phases: Vec<serde_json::Value> = phases_of(&result);
    let mut names: Vec<String> = std::fs::read_dir(&results)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    let version = result
        .lines()
        .find_map(|l| l.strip_prefix("version"))
        .and_then(|l| l.split('=').nth(1))
        .map(|v| v.trim().to_string())
        .unwrap_or_default();
    let doc = serde_json::json!({
        "original": "io500",
        "version": version,
        "repository": "https://github.com/IO500/io500",
        "commit": commit,
        "built": built,
        "kernel": fslab_model::host_facts().0,
        "recorded_with": "cargo run -p fslab-bench --bin record_io500 (bench/src/bin/record_io500.rs), on tmpfs",
        "command": argv.iter().map(|a| placed(a.clone())).map(|a| a.replace(&scratch.0.display().to_string(), "SCRATCH")).collect::<Vec<_>>(),
        "procs": ranks.parse::<u64>().unwrap_or(1),
        "config": CONFIG,
        "phases": phases,
        "result_files": names,
        "result_summary": read("result_summary.txt"),
        "result": result,
        "config_ini": read("config.ini"),
        "stdout": placed(String::from_utf8_lossy(&out.stdout).into_owned()),
    });
    println!("{}", serde_json::to_string_pretty(&doc).expect("JSON"));
    ExitCode::SUCCESS
}

/// Each phase of `result.txt` with its `exe` (the program and its
/// arguments, split at blanks as the app joined them).
fn phases_of(result: &str) -> Vec<serde_json::Value> {
    let mut out = Vec::new();
    let mut name: Option<&str> = None;
    for l in result.lines() {
        if let Some(n) = l.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            name = Some(n);
        } else if let (Some(n), Some(exe)) = (name, l.strip_prefix("exe")) {
            let exe = exe.trim_start().trim_start_matches('=').trim();
            let argv: Vec<&str> = exe.split(' ').collect();
            out.push(serde_json::json!({ "phase": n, "exe": argv }));
        }
    }
    out
}
