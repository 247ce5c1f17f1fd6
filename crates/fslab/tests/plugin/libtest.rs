//! What a `harness = false` test binary that is its own fslab needs to
//! look like libtest to cargo and to the suite's script: `--list`, name
//! filters, and libtest's closing line.

use std::process::ExitCode;

/// How a test ended (a failure panics).
#[allow(dead_code)] // Not every test binary skips.
pub enum Outcome {
    Passed,
    Skipped,
}

/// A test: its name and its function.
pub type Test = (&'static str, fn() -> Outcome);

/// Runs `tests` as libtest would: `--list` lists them, a filter that
/// matches none of a test's name leaves it out, and the closing line is
/// libtest's (the suite's script counts those).
pub fn run(tests: &[Test]) -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--list") {
        for (name, _) in tests {
            println!("{name}: test");
        }
        return ExitCode::SUCCESS;
    }
    let takes_value = [
        "--test-threads",
        "--skip",
        "--format",
        "--color",
        "--logfile",
    ];
    let mut filters = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if takes_value.contains(&a.as_str()) {
            it.next();
        } else if !a.starts_with('-') {
            filters.push(a);
        }
    }
    let chosen: Vec<&Test> = tests
        .iter()
        .filter(|(name, _)| filters.is_empty() || filters.iter().any(|f| name.contains(f.as_str())))
        .collect();
    println!(
        "\nrunning {} test{}",
        chosen.len(),
        if chosen.len() == 1 { "" } else { "s" }
    );
    let (mut passed, mut failed, mut ignored) = (0, 0, 0);
    for (name, test) in &chosen {
        let word = match std::panic::catch_unwind(*test) {
            Ok(Outcome::Passed) => {
                passed += 1;
                "ok"
            }
            Ok(Outcome::Skipped) => {
                ignored += 1;
                "ignored"
            }
            Err(_) => {
                failed += 1;
                "FAILED"
            }
        };
        println!("test {name} ... {word}");
    }
    println!(
        "\ntest result: {}. {passed} passed; {failed} failed; {ignored} ignored; 0 measured; {} filtered out\n",
        if failed == 0 { "ok" } else { "FAILED" },
        tests.len() - chosen.len()
    );
    ExitCode::from(if failed == 0 { 0 } else { 101 })
}
