//! IO500's result files, in IO500's byte formats (github.com/IO500/io500,
//! src/main.c and src/util.c), written by rank 0 as the run goes:
//!
//! - `result_summary.txt`: the version line, a `[RESULT]` (or `[      ]`)
//!   line a phase, the `[SCORE ]` line;
//! - `result.txt`: the INI of the run (`[run]`: procs, version,
//!   result-dir, mode) and of every phase (t_start, exe, the phase's own
//!   pairs, `; ERROR INVALID` comments, score, t_delta, t_end), then
//!   `[SCORE]` (MD, BW, SCORE);
//! - `config-orig.ini` (the file as given, or the options as one) and
//!   `config.ini` (every IO500 key, as `io500 --list` names them).
//!
//! Every file says it is fslab's engine, not the IO500 app: the version is
//! `fslab-io500md-VERSION (fslab's engine, not an IO500 submission)`, and
//! there is no `config-hash` or `hash` line (IO500's verifier reads those
//! to accept a submission). io500md runs no bandwidth phase, so, as the app
//! says of a run without them, BW and TOTAL are 0 and the `[SCORE ]` line
//! INVALID; MD is the metadata phases' score.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::ini::SECTIONS;
use super::options::Io500Args;
use super::score::{self, PhaseScore};

/// What the files call the engine that made them.
pub fn version() -> String {
    format!(
        "fslab-io500md-{} (fslab's engine, not an IO500 submission)",
        env!("CARGO_PKG_VERSION")
    )
}

/// The result directory's files being written.
pub struct ResultFiles {
    summary: File,
    result: File,
    dir: PathBuf,
}

/// A key and its value as IO500's `PRINT_PAIR` writes them.
fn pair(key: &str, value: &str) -> String {
    format!("{key:<15} = {value}\n")
}

/// The time as IO500's `u_print_timestamp` writes it.
fn now() -> String {
    chrono::Local::now().format("%Y-%m-%d %H:%M:%S").to_string()
}

fn err(path: &Path, e: std::io::Error) -> crate::Error {
    crate::Error::Setup(format!("cannot write {}: {e}", path.display()))
}

impl ResultFiles {
    /// Opens the files in `dir` (made) for a run on `procs` ranks: the
    /// configuration files written, `result.txt`'s `[run]` and the
    /// summary's version line.
    pub fn create(dir: &Path, a: &Io500Args, procs: usize) -> crate::Result<ResultFiles> {
        let open = |name: &str| {
            let p = dir.join(name);
            File::create(&p).map_err(|e| err(&p, e))
        };
        let mut f = ResultFiles {
            summary: open("result_summary.txt")?,
            result: open("result.txt")?,
            dir: dir.to_path_buf(),
        };
        f.write_file("config-orig.ini", &config_orig(a))?;
        f.write_file("config.ini", &config_ini(a))?;
        let v = version();
        let mut r = String::from("[run]\n");
        r += &pair("procs", &procs.to_string());
        r += &pair("version", &v);
        r += &pair("result-dir", &a.results().display().to_string());
        r += &pair("mode", "standard");
        r += "; fslab io500md: IO500's metadata phases on fslab's mdtest and find, not the IO500 app; no config-hash or hash\n";
        r += &format!("; START {}\n", now());
        f.put(&r)?;
        f.summarize(&format!("IO500 version {v} (standard)\n"))?;
        Ok(f)
    }

    /// Writes a whole file of the result directory.
    pub fn write_file(&self, name: &str, text: &str) -> crate::Result<()> {
        let p = self.dir.join(name);
        std::fs::write(&p, text).map_err(|e| err(&p, e))
    }

    fn put(&mut self, text: &str) -> crate::Result<()> {
        let p = self.dir.join("result.txt");
        self.result
            .write_all(text.as_bytes())
            .and_then(|()| self.result.flush())
            .map_err(|e| err(&p, e))
    }

    fn summarize(&mut self, text: &str) -> crate::Result<()> {
        let p = self.dir.join("result_summary.txt");
        self.summary
            .write_all(text.as_bytes())
            .and_then(|()| self.summary.flush())
            .map_err(|e| err(&p, e))
    }

    /// A reason the whole run is INVALID, before its phases (IO500's
    /// `[debug]` check).
    pub fn invalid(&mut self, why: &str) -> crate::Result<()> {
        self.put(&format!("; ERROR INVALID {why}\n"))
    }

    /// The end of the run's own lines, before the first phase.
    pub fn phases_begin(&mut self) -> crate::Result<()> {
        self.put("\n")
    }

    /// A phase starts: its section and `t_start`.
    pub fn phase_start(&mut self, name: &str) -> crate::Result<()> {
        self.put(&format!("\n[{name}]\n{}", pair("t_start", &now())))
    }

    /// One of the phase's pairs (`exe`, `rate-stonewall`, `found`).
    pub fn pair(&mut self, key: &str, value: &str) -> crate::Result<()> {
        self.put(&pair(key, value))
    }

    /// A phase ends: its INVALID reasons, `score` (not for a dummy phase),
    /// `t_delta` and `t_end`; then its summary line.
    pub fn phase_end(&mut self, s: &PhaseScore) -> crate::Result<()> {
        let mut r = String::new();
        for why in &s.invalid {
            r += &format!("; ERROR INVALID {why}\n");
        }
        if s.scored {
            r += &pair("score", &format!("{:.6}", s.score_kiops));
        }
        r += &pair("t_delta", &format!("{:.4}", s.time_s));
        r += &pair("t_end", &now());
        self.put(&r)?;
        self.summarize(&format!("{}\n", score::result_line(s)))
    }

    /// The run's `[SCORE]`: MD, BW (0: no bandwidth phase ran) and their
    /// total (0), INVALID as IO500 says of a run without its bandwidth
    /// phases; the summary's `[SCORE ]` line.
    pub fn finish(&mut self, md: f64) -> crate::Result<()> {
        let mut r = String::from("\n[SCORE]\n");
        r += &pair("MD", &format!("{md:.6}"));
        r += &pair("BW", &format!("{:.6}", 0.0));
        r += &pair("SCORE", &format!("{:.6} [INVALID]", 0.0));
        r += "; io500md runs no bandwidth phase: BW and SCORE are 0 and the total INVALID, as IO500 says of a run without them; MD is the metadata phases'\n";
        r += &format!("; END {}\n", now());
        self.put(&r)?;
        self.summarize(&format!("{}\n", score::score_line(md, false)))
    }
}

/// `config-orig.ini`: the file given, or the options as IO500 would read
/// them from one.
fn config_orig(a: &Io500Args) -> String {
    if let Some(t) = &a.config_text {
        return t.clone();
    }
    format!(
        "[global]\ndatadir = {}\nresultdir = {}\ntimestamp-datadir = FALSE\ntimestamp-resultdir = FALSE\ndrop-caches = {}\n\n[debug]\nstonewall-time = {}\n\n[mdtest-easy]\nn = {}\n\n[mdtest-hard]\nn = {}\n",
        a.dir.display(),
        a.results().display(),
        bool_text(a.common.drop_caches),
        a.stonewall_time,
        a.easy_n,
        a.hard_n
    )
}

fn bool_text(b: bool) -> &'static str {
    if b {
        "TRUE"
    } else {
        "FALSE"
    }
}

/// `config.ini`: every IO500 section and key, as `io500 --list` names
/// them, with the values io500md ran with; `run = FALSE` for the phases it
/// does not run and nothing for the settings it has none of (IO500
/// writes an unset key so too).
fn config_ini(a: &Io500Args) -> String {
    let mut s = String::from(
        "# fslab io500md: the settings it ran with in IO500's keys; keys left empty are settings fslab's engine does not have\n",
    );
    for (section, keys) in SECTIONS {
        s += &format!("[{section}]\n");
        for (key, _) in *keys {
            let v = value(a, section, key);
            s += &format!("{key} = {v}\n");
        }
        s += "\n";
    }
    s
}

/// The value of IO500's `section` `key` in io500md's run.
fn value(a: &Io500Args, section: &str, key: &str) -> String {
    let runs = |skip: bool| bool_text(!skip).to_string();
    match (section, key) {
        ("global", "datadir") => a.dir.display().to_string(),
        ("global", "resultdir") => a.results().display().to_string(),
        ("global", "timestamp-datadir" | "timestamp-resultdir") => "FALSE".into(),
        ("global", "api") => "POSIX".into(),
        ("global", "drop-caches") => bool_text(a.common.drop_caches).into(),
        ("debug", "stonewall-time") => a.stonewall_time.to_string(),
        ("mdtest-easy", "n") => a.easy_n.to_string(),
        ("mdtest-hard", "n") => a.hard_n.to_string(),
        ("mdtest-easy", "run") => runs(a.skip_easy),
        ("mdtest-hard", "run") => runs(a.skip_hard),
        ("find", "run") => runs(a.skip_find),
        (s, "run") if s.starts_with("mdtest-") => "TRUE".into(),
        (_, "run") => "FALSE".into(),
        _ => String::new(),
    }
}
