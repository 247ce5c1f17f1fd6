//! The `fslab` binary: fslab's command line with the built-in workloads.

fn main() -> std::process::ExitCode {
    fslab::main_with(&[])
}
