//! `fslab exec [OPTIONS] -- PROGRAM [ARGS]...` and `kind = "command"`: a
//! benchmark program fslab did not write (fio, the IO500 app, IOR,
//! mdtest, elbencho, anything) run as a workload. fslab times it, keeps
//! what it printed with the run, and turns its output into typed metrics,
//! phases and latency histograms through a parser ([`fslab_parse`]: by
//! default the one named after the program).
//!
//! The same safety rules as fslab's other commands, checked before
//! anything is made: the program is an absolute path or found on `PATH`
//! and runs as argv, never through a shell; a shell or an interpreter that
//! takes its program as an argument (which fslab cannot check) only when
//! named with `--allow-command`; every path among its arguments stays
//! inside its directory (`--dir`; `{dir}` in an experiment), but for the
//! read-only `--input` files and `/dev/null`-like devices.
//!
//! - [`confine`]: which arguments name paths, and that they stay inside;
//! - `run`: the program in its phase, its output, the parse and the record;
//! - [`plugin`]: the workload's registration.

pub mod confine;
pub mod plugin;
mod run;

use std::path::{Path, PathBuf};

use clap::Args;
use fslab_parse::{Parser, Pattern};
use serde::{Deserialize, Serialize};

pub use run::{run, CommandReport};

use crate::common::CommonArgs;

/// The parser name that means none.
pub const NO_PARSER: &str = "none";

/// `fslab exec`'s options.
#[derive(Debug, Clone, Args, Serialize, Deserialize)]
pub struct CommandArgs {
    /// How its output becomes metrics: fio, io500, ior, mdtest, elbencho, regex, or none [default: the parser named after the program, if there is one; else none]
    #[arg(short = 'p', long = "parser", value_name = "NAME")]
    pub parser: Option<String>,
    /// A metric of the regex parser: 'NAME (UNIT)=REGEX' (the number is the group named value, else the first; a group named phase gives one a phase); repeat for more
    #[arg(short = 'm', long = "metric", value_name = "NAME (UNIT)=REGEX")]
    pub metrics: Vec<String>,
    /// The file the parser reads instead of the program's output (a result file the program writes, inside --dir)
    #[arg(long = "parse-file", value_name = "PATH")]
    pub parse_file: Option<PathBuf>,
    /// A file the program only reads (a job file, a configuration), which may be outside --dir; repeat for more
    #[arg(long = "input", value_name = "PATH")]
    pub inputs: Vec<PathBuf>,
    /// The directory the program runs in (made if missing): every path among its arguments must be inside it, and the probes watch its filesystem
    #[arg(short = 'C', long = "dir", value_name = "DIR", default_value = ".")]
    pub dir: PathBuf,
    /// Let the program be a shell or an interpreter that takes its program as an argument (sh, bash, env, python3, perl, ...), whose paths fslab cannot check; repeat for more
    #[arg(long = "allow-command", value_name = "PROGRAM")]
    pub allow_command: Vec<String>,
    /// The MPI launcher in front of the program, a word at a time (set by fslab run for [cluster] and ranks)
    #[arg(
        long = "launcher",
        value_name = "WORD",
        hide = true,
        allow_hyphen_values = true
    )]
    pub launcher: Vec<String>,
    /// The program (an absolute path or a name on PATH) and its arguments
    #[arg(
        value_name = "PROGRAM",
        required = true,
        num_args = 1..,
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    pub program: Vec<String>,
    #[command(flatten)]
    pub common: CommonArgs,
}

/// Programs that run a program given as an argument (`sh -c '...'`,
/// `env X=1 prog`, `python3 -c '...'`): fslab cannot see the paths they
/// reach, so they run only when named with `--allow-command`.
pub const SHELLS: [&str; 27] = [
    "sh", "bash", "dash", "zsh", "ksh", "ksh93", "mksh", "pdksh", "csh", "tcsh", "fish", "busybox",
    "env", "xargs", "nohup", "sudo", "su", "chroot", "nice", "timeout", "python", "python3",
    "perl", "ruby", "awk", "gawk", "node",
];

/// What the checks found: the program's resolved path, its parser and the
/// regex parser's patterns.
pub struct Checked {
    pub program: PathBuf,
    pub parser: Option<&'static dyn Parser>,
    pub patterns: Vec<Pattern>,
}

fn bad(m: String) -> crate::Error {
    crate::Error::Options(m)
}

/// Whether `p` is a file this process may execute.
fn executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The program as it will run: an absolute path that exists, or a name
/// found on `PATH`; a relative path is refused (it would depend on where
/// fslab was started).
pub fn resolve_program(program: &str) -> crate::Result<PathBuf> {
    if program.is_empty() {
        return Err(bad(
            "no program given: fslab exec [OPTIONS] -- PROGRAM [ARGS]...".into(),
        ));
    }
    let p = Path::new(program);
    if p.is_absolute() {
        return if executable(p) {
            Ok(p.to_path_buf())
        } else {
            Err(bad(format!(
                "program {program}: not found or not executable"
            )))
        };
    }
    if program.contains('/') {
        return Err(bad(format!(
            "program {program}: give an absolute path or a program on PATH"
        )));
    }
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|d| d.join(program))
        .find(|c| c.is_absolute() && executable(c))
        .ok_or_else(|| bad(format!("program {program:?} not found on PATH")))
}

impl CommandArgs {
    /// The program's file name (`fio`), which names its phase.
    pub fn program_name(&self) -> &str {
        self.program
            .first()
            .map_or("program", |p| fslab_parse::program_name(p))
    }

    /// The parser asked for, or the program's own; None for none.
    pub fn parser(&self) -> crate::Result<Option<&'static dyn Parser>> {
        match self.parser.as_deref() {
            Some(NO_PARSER) => Ok(None),
            Some(name) => fslab_parse::by_name(name).map(Some).ok_or_else(|| {
                bad(format!(
                    "--parser {name}: unknown parser (available: {}, {NO_PARSER})",
                    fslab_parse::names()
                ))
            }),
            None => Ok(fslab_parse::default_for(
                self.program.first().map_or("", |p| p.as_str()),
            )),
        }
    }

    /// Every check, before anything runs: the program, a shell, the
    /// parser and what it needs, the patterns, and the paths.
    pub fn validate(&self) -> crate::Result<Checked> {
        let first = self.program.first().map_or("", String::as_str);
        let program = resolve_program(first)?;
        let name = fslab_parse::program_name(first);
        let real = program.file_name().and_then(|n| n.to_str()).unwrap_or(name);
        for n in [name, real] {
            if SHELLS.contains(&n) && !self.allow_command.iter().any(|a| a == n) {
                return Err(bad(format!(
                    "program {first}: a shell or interpreter runs whatever its arguments say, which \
                     fslab cannot check: name it with --allow-command {n} to run it"
                )));
            }
        }
        let patterns = self
            .metrics
            .iter()
            .map(|m| m.parse::<Pattern>())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| bad(e.to_string()))?;
        let parser = self.parser()?;
        match parser {
            Some(p) => p
                .check(&self.program, &patterns)
                .map_err(|e| bad(format!("{}: {e}", p.name())))?,
            None if !patterns.is_empty() => {
                return Err(bad(
                    "--metric: give --parser regex (the metrics are its patterns)".into(),
                ))
            }
            None => {}
        }
        confine::check(self)?;
        Ok(Checked {
            program,
            parser,
            patterns,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(argv: &[&str]) -> crate::Result<Checked> {
        let kind = crate::WorkloadRef::of("command").unwrap();
        let argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
        let job = kind.parse(&argv)?;
        let o: CommandArgs = serde_json::from_value(job.to_json()["options"].clone()).unwrap();
        o.validate()
    }

    fn refusal(argv: &[&str]) -> String {
        match job(argv) {
            Err(e) => {
                assert!(e.is_usage(), "{e}");
                e.to_string()
            }
            Ok(_) => panic!("{argv:?} was accepted"),
        }
    }

    #[test]
    fn the_program_is_found_on_path_or_given_absolute_and_its_parser_follows_its_name() {
        let c = job(&["--dir", "/tmp", "--", "true"]).unwrap();
        assert!(c.program.is_absolute() && c.program.ends_with("true"));
        assert!(c.parser.is_none());
        assert!(refusal(&["nosuch-program-x"]).contains("\"nosuch-program-x\" not found on PATH"));
        assert!(refusal(&["./true"]).contains("absolute path or a program on PATH"));
        assert!(refusal(&["/nonexistent/fio"]).contains("not found or not executable"));
        let e = refusal(&["--parser", "fiio", "true"]);
        assert!(
            e.starts_with("--parser fiio: unknown parser (available: fio,"),
            "{e}"
        );
        assert!(job(&["--parser", "none", "true"]).unwrap().parser.is_none());
    }

    #[test]
    fn a_shell_runs_only_when_named() {
        let e = refusal(&["sh", "-c", "echo hi"]);
        assert!(e.contains("--allow-command sh"), "{e}");
        assert!(job(&["--allow-command", "sh", "sh", "-c", "echo hi"]).is_ok());
        assert!(refusal(&["env", "X=1", "true"]).contains("--allow-command env"));
    }

    #[test]
    fn the_parser_checks_what_it_needs_before_anything_runs() {
        let e = refusal(&["--parser", "fio", "true", "--name=x"]);
        assert!(e.starts_with("fio: fio --output-format=normal"), "{e}");
        let e = refusal(&["--parser", "regex", "true"]);
        assert!(e.contains("needs a pattern"), "{e}");
        let e = refusal(&["--metric", "x (s)=(1)", "true"]);
        assert!(e.contains("give --parser regex"), "{e}");
        let e = refusal(&["--parser", "regex", "--metric", "x (parsecs)=(1)", "true"]);
        assert!(e.contains("unknown unit \"parsecs\""), "{e}");
        assert!(job(&["--parser", "regex", "--metric", "x (s)=(\\d+)", "true"]).is_ok());
    }
}
