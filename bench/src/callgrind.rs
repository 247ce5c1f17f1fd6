//! Reading `valgrind --tool=callgrind` profiles: each function's own
//! (exclusive) cost per event and how many times it was called.
//!
//! Callgrind counts instructions, not time, so its numbers do not move with
//! the machine's load; with `--collect-systime=nsec` it also counts the
//! system calls each function issued itself (`sysCount`), which tells
//! whether a timed loop makes its calls in its own body or inside a
//! function it calls once per item.
//!
//! The format (valgrind's docs/callgrind-format): `events:` names the
//! columns; `fn=(ID) NAME` starts a function's cost lines (later `fn=(ID)`
//! alone); a cost line is a position and one number per event; a
//! `calls=COUNT ...` line says the function named by the last `cfn=` was
//! called COUNT times, and the cost line right after it is that call's
//! inclusive cost (not the caller's own).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// One function's numbers.
#[derive(Debug, Clone, Default)]
pub struct Function {
    /// Its own cost, one number per event.
    pub own: Vec<u64>,
    /// Times it was called (all callers).
    pub calls: u64,
}

/// A profile: its events and every function by name.
#[derive(Debug, Clone, Default)]
pub struct Profile {
    pub events: Vec<String>,
    pub functions: HashMap<String, Function>,
}

impl Profile {
    /// Reads a callgrind output file.
    pub fn read(path: &Path) -> std::io::Result<Profile> {
        Ok(Profile::parse(&std::fs::read_to_string(path)?))
    }

    /// Parses a callgrind output file's text.
    pub fn parse(text: &str) -> Profile {
        let mut p = Profile::default();
        let mut names: HashMap<String, String> = HashMap::new();
        let mut current = String::new();
        let mut callee = String::new();
        let mut call_cost_next = false;
        for line in text.lines() {
            if let Some(ev) = line.strip_prefix("events:") {
                p.events = ev.split_whitespace().map(String::from).collect();
            } else if let Some(f) = line.strip_prefix("fn=") {
                current = name_of(f, &mut names);
                p.functions.entry(current.clone()).or_default();
            } else if let Some(f) = line.strip_prefix("cfn=") {
                callee = name_of(f, &mut names);
            } else if let Some(c) = line.strip_prefix("calls=") {
                let n: u64 = c
                    .split_whitespace()
                    .next()
                    .and_then(|x| x.parse().ok())
                    .unwrap_or(0);
                p.functions.entry(callee.clone()).or_default().calls += n;
                call_cost_next = true;
            } else if line
                .starts_with(|c: char| c.is_ascii_digit() || c == '+' || c == '-' || c == '*')
            {
                if call_cost_next {
                    call_cost_next = false;
                    continue;
                }
                let costs = line
                    .split_whitespace()
                    .skip(1)
                    .map(|x| x.parse().unwrap_or(0));
                let f = p.functions.entry(current.clone()).or_default();
                for (i, v) in costs.enumerate() {
                    if f.own.len() <= i {
                        f.own.resize(i + 1, 0);
                    }
                    f.own[i] += v;
                }
            }
        }
        p
    }

    /// The index of event `name` (`Ir`, `sysCount`).
    pub fn event(&self, name: &str) -> Option<usize> {
        self.events.iter().position(|e| e == name)
    }

    /// The profile's total of event `name`.
    pub fn total(&self, name: &str) -> u64 {
        let Some(i) = self.event(name) else { return 0 };
        self.functions
            .values()
            .map(|f| f.own.get(i).copied().unwrap_or(0))
            .sum()
    }

    /// Functions that issued at least `min` system calls themselves, with
    /// their count and how many times they were called, most calls first.
    pub fn issuers(&self, min: u64) -> Vec<(String, u64, u64)> {
        let Some(i) = self.event("sysCount") else {
            return Vec::new();
        };
        let mut v: Vec<(String, u64, u64)> = self
            .functions
            .iter()
            .filter_map(|(n, f)| {
                let s = f.own.get(i).copied().unwrap_or(0);
                (s >= min).then(|| (n.clone(), s, f.calls))
            })
            .collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        v
    }
}

/// `(ID) NAME` defines ID; `(ID)` alone refers to it.
fn name_of(spec: &str, names: &mut HashMap<String, String>) -> String {
    let spec = spec.trim();
    if let Some(rest) = spec.strip_prefix('(') {
        if let Some(end) = rest.find(')') {
            let id = &rest[..end];
            let name = rest[end + 1..].trim();
            if name.is_empty() {
                return names.get(id).cloned().unwrap_or_else(|| id.to_string());
            }
            names.insert(id.to_string(), name.to_string());
            return name.to_string();
        }
    }
    spec.to_string()
}

impl Profile {
    /// Adds `other`'s functions' costs and calls to this profile's.
    pub fn add(&mut self, other: &Profile) {
        if self.events.is_empty() {
            self.events.clone_from(&other.events);
        }
        for (name, f) in &other.functions {
            let mine = self.functions.entry(name.clone()).or_default();
            if mine.own.len() < f.own.len() {
                mine.own.resize(f.own.len(), 0);
            }
            for (i, v) in f.own.iter().enumerate() {
                mine.own[i] += v;
            }
            mine.calls += f.calls;
        }
    }
}

/// Runs `program args` under callgrind (system calls counted, children not
/// followed, one profile per thread) and returns the threads' profiles in
/// the order they started (the main thread first); `out` names the files
/// (OUT-01, OUT-02, ...), which are removed.
pub fn profile_threads(
    program: &Path,
    args: &[String],
    out: &Path,
) -> std::io::Result<Vec<Profile>> {
    run(program, args, out, true)?;
    let mut threads = Vec::new();
    for i in 1.. {
        let f = PathBuf::from(format!("{}-{i:02}", out.display()));
        if !f.exists() {
            break;
        }
        threads.push(Profile::read(&f)?);
        let _ = std::fs::remove_file(&f);
    }
    let _ = std::fs::remove_file(out);
    Ok(threads)
}

/// Runs `program args` under callgrind (system calls counted, children not
/// followed) with its profile written to `out`; its standard output.
pub fn profile(program: &Path, args: &[String], out: &Path) -> std::io::Result<String> {
    run(program, args, out, false)
}

fn run(program: &Path, args: &[String], out: &Path, threads: bool) -> std::io::Result<String> {
    let o = Command::new("valgrind")
        .arg("--tool=callgrind")
        .arg("--collect-systime=nsec")
        .arg(format!(
            "--separate-threads={}",
            if threads { "yes" } else { "no" }
        ))
        .arg(format!("--callgrind-out-file={}", out.display()))
        .arg(program)
        .args(args)
        .output()?;
    if !o.status.success() {
        return Err(std::io::Error::other(format!(
            "valgrind {} {args:?}: {}",
            program.display(),
            String::from_utf8_lossy(&o.stderr)
                .lines()
                .rev()
                .take(15)
                .collect::<Vec<_>>()
                .join("\n")
        )));
    }
    Ok(String::from_utf8_lossy(&o.stdout).into_owned())
}

/// Whether valgrind is on PATH.
pub fn available() -> bool {
    Command::new("valgrind")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "\
version: 1
events: Ir sysCount sysTime
fl=(1) a.rs
fn=(1) main
0 10 0 0
cfn=(2) item
calls=1000 0
0 50000 1000 9
+2 5 0 0
fn=(2) item
0 49000 1000 9
cfn=(3) other
calls=3 0
0 7 0 0
fn=(3)
0 7
";

    #[test]
    fn own_costs_leave_out_calls_and_calls_are_counted() {
        let p = Profile::parse(SAMPLE);
        assert_eq!(p.events, ["Ir", "sysCount", "sysTime"]);
        assert_eq!(p.functions["main"].own, [15, 0, 0]);
        assert_eq!(p.functions["item"].own, [49000, 1000, 9]);
        assert_eq!(p.functions["item"].calls, 1000);
        assert_eq!(p.functions["other"].calls, 3);
        assert_eq!(p.functions["other"].own, [7]);
        assert_eq!(p.total("Ir"), 49022);
        assert_eq!(p.issuers(500), vec![("item".to_string(), 1000, 1000)]);
    }
}
