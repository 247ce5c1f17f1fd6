//! A CPU profile of a phase with `perf record -e cpu-clock -a -g`, reduced
//! to the top symbols (`perf report --no-children`) and the call chains of
//! the hottest kernel symbols, as seed 001 reads them. Without perf, the
//! probe says so and the run goes on.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use crate::notes::{PerfSymbol, PerfTop};
use crate::ProbeError;

pub struct Profile {
    child: Child,
    data: PathBuf,
}

pub fn available() -> bool {
    Command::new("perf")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

impl Profile {
    pub fn start(dir: &Path, tag: &str) -> Result<Profile, ProbeError> {
        let data = dir.join(format!("perf-{}-{tag}.data", std::process::id()));
        let child = Command::new("perf")
            .args(["record", "-q", "-e", "cpu-clock", "-a", "-g", "-o"])
            .arg(&data)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| ProbeError::Perf(format!("cannot start perf: {e}")))?;
        Ok(Profile { child, data })
    }

    /// Stops recording and returns (top symbols, call-graph text); with
    /// `pids`, of those processes' samples alone, as shares of them
    /// (`perf report --pid LIST --percentage relative`).
    pub fn finish(mut self, pids: &[u32]) -> Result<(PerfTop, String), ProbeError> {
        let only: Vec<String> = if pids.is_empty() {
            Vec::new()
        } else {
            let list: Vec<String> = pids.iter().map(u32::to_string).collect();
            vec![
                "--pid".into(),
                list.join(","),
                "--percentage".into(),
                "relative".into(),
            ]
        };
        if let Some(pid) = rustix::process::Pid::from_raw(self.child.id() as i32) {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::INT);
        }
        let _ = self.child.wait();
        let report = |args: &[&str]| -> Result<String, ProbeError> {
            let out = Command::new("perf")
                .arg("report")
                .args(args)
                .args(&only)
                .arg("-i")
                .arg(&self.data)
                .stdin(Stdio::null())
                .stderr(Stdio::null())
                .output()
                .map_err(|e| ProbeError::Perf(format!("perf report: {e}")))?;
            Ok(String::from_utf8_lossy(&out.stdout).into_owned())
        };
        let flat = report(&[
            "--stdio",
            "--no-children",
            "--sort",
            "dso,symbol",
            "-g",
            "none",
            "--percent-limit",
            "0.5",
            "--show-nr-samples",
        ]);
        let graph = report(&[
            "--stdio",
            "--no-children",
            "--sort",
            "symbol",
            "-g",
            "caller,0.5,callee",
            "--percent-limit",
            "3",
        ]);
        let _ = std::fs::remove_file(&self.data);
        let _ = std::fs::remove_file(self.data.with_extension("data.old"));
        let flat = flat?;
        let top = parse_flat(&flat);
        let graph: String = graph
            .unwrap_or_default()
            .lines()
            .filter(|l| !l.starts_with('#'))
            .take(300)
            .collect::<Vec<_>>()
            .join("\n");
        Ok((PerfTop(top), graph))
    }
}

/// The symbols of `perf report --stdio --sort dso,symbol --show-nr-samples`
/// (`  5.59%  372  [kernel.kallsyms]  [k] _xfs_buf_find   -   -`), the 40
/// first.
fn parse_flat(flat: &str) -> Vec<PerfSymbol> {
    flat.lines()
        .filter(|l| !l.trim_start().starts_with('#') && l.contains('%'))
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let pct: f64 = f.first()?.trim_end_matches('%').parse().ok()?;
            let at = f.iter().position(|x| *x == "[k]" || *x == "[.]")?;
            let sym = f.get(at + 1)?;
            let samples: u64 = f.get(1)?.parse().ok()?;
            let dso = f.get(2).copied().unwrap_or("");
            Some(PerfSymbol {
                percent: pct,
                samples,
                dso: dso.to_string(),
                kernel: f[at] == "[k]",
                symbol: sym.to_string(),
            })
        })
        .take(40)
        .collect()
}

impl Drop for Profile {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.data);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flat_report_gives_each_symbols_share_and_samples() {
        let flat = "# Samples: 8K of event 'cpu-clock'\n#\n     4.42%           372  [kernel.kallsyms]                      [k] find_get_block_common    -      -\n     1.87%           157  librustc_driver-6108105cd7e839cf.so    [.] <rustc_middle::ty::context::CtxtInterners>::intern_ty   -   -\n";
        let top = parse_flat(flat);
        assert_eq!(top.len(), 2);
        assert_eq!(
            (top[0].percent, top[0].samples, top[0].kernel),
            (4.42, 372, true)
        );
        assert_eq!(top[0].dso, "[kernel.kallsyms]");
        assert_eq!(top[0].symbol, "find_get_block_common");
        assert_eq!((top[1].samples, top[1].kernel), (157, false));
        // The shares are of 8,416 samples (372 / 4.42%).
        assert_eq!(PerfTop(top).samples(), Some(8416));
    }
}
