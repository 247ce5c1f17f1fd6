//! `fslab io500md CONFIG.ini`: IO500's configuration file, read with
//! IO500's own grammar ([`fslab_parse::io500::ini`]), into io500md's
//! options. io500md reads the keys of the phases it runs: `[global]`
//! datadir, resultdir, timestamp-datadir, timestamp-resultdir, drop-caches
//! (and `api = POSIX`, what it does); `[debug]` stonewall-time;
//! `[mdtest-easy]` n, run; `[mdtest-hard]` n, files-per-dir, run; `[find]`
//! run. The phases it does not run (ior's, md-workbench's, the optional
//! finds) may be there with `run = FALSE`. Any other section or key is
//! refused in one line naming it and its line: unknown to IO500, or
//! IO500's but not io500md's.

use std::path::{Path, PathBuf};

use fslab_parse::io500::ini;

use super::options::Io500Args;

/// Every section of IO500's (src/phase-definitions.h, in its order) with
/// its keys and defaults, as `io500 --list` prints them: `config.ini` is
/// written with these.
pub const SECTIONS: &[(&str, &[(&str, &str)])] = &[
    (
        "global",
        &[
            ("datadir", "./datafiles"),
            ("timestamp-datadir", "TRUE"),
            ("resultdir", "./results"),
            ("timestamp-resultdir", "TRUE"),
            ("api", "POSIX"),
            ("drop-caches", "FALSE"),
            (
                "drop-caches-cmd",
                "sudo -n bash -c \"echo 3 > /proc/sys/vm/drop_caches\"",
            ),
            ("io-buffers-on-gpu", "FALSE"),
            ("verbosity", "1"),
            ("scc", "FALSE"),
            ("dataPacketType", "timestamp"),
        ],
    ),
    ("debug", &[("stonewall-time", "300"), ("pause-dir", "")]),
    (
        "ior-easy",
        &[
            ("API", ""),
            ("transferSize", "2m"),
            ("blockSize", "9920000m"),
            ("filePerProc", "TRUE"),
            ("uniqueDir", "FALSE"),
            ("run", "TRUE"),
            ("verbosity", ""),
        ],
    ),
    ("ior-easy-write", &[("API", ""), ("run", "TRUE")]),
    (
        "mdtest-easy",
        &[("API", ""), ("n", "1000000"), ("run", "TRUE")],
    ),
    ("mdtest-easy-write", &[("API", ""), ("run", "TRUE")]),
    (
        "mdworkbench",
        &[
            ("API", ""),
            ("waitingTime", "0.0"),
            ("precreatePerSet", ""),
            ("filesPerProc", ""),
            ("run", "FALSE"),
            ("verbosity", ""),
        ],
    ),
    ("mdworkbench-create", &[("run", "TRUE")]),
    ("timestamp", &[]),
    ("find-easy", FIND),
    (
        "ior-hard",
        &[
            ("API", ""),
            ("segmentCount", "10000000"),
            ("collective", ""),
            ("run", "TRUE"),
            ("verbosity", ""),
        ],
    ),
    (
        "ior-hard-write",
        &[("API", ""), ("collective", ""), ("run", "TRUE")],
    ),
    (
        "mdtest-hard",
        &[
            ("API", ""),
            ("n", "1000000"),
            ("files-per-dir", ""),
            ("run", "TRUE"),
        ],
    ),
    ("mdtest-hard-write", &[("API", ""), ("run", "TRUE")]),
    ("find", FIND),
    ("find-hard", FIND),
    ("mdworkbench-bench", &[("run", "TRUE")]),
    ("ior-easy-read", &[("API", ""), ("run", "TRUE")]),
    ("mdtest-easy-stat", &[("API", ""), ("run", "TRUE")]),
    (
        "ior-hard-read",
        &[("API", ""), ("collective", ""), ("run", "TRUE")],
    ),
    ("mdtest-hard-stat", &[("API", ""), ("run", "TRUE")]),
    ("mdworkbench-delete", &[("run", "TRUE")]),
    ("mdtest-easy-delete", &[("API", ""), ("run", "TRUE")]),
    ("mdtest-hard-read", &[("API", ""), ("run", "TRUE")]),
    ("mdtest-hard-delete", &[("API", ""), ("run", "TRUE")]),
    ("ior-rnd4K-easy-read", &[("API", ""), ("run", "TRUE")]),
];

const FIND: &[(&str, &str)] = &[
    ("external-script", ""),
    ("external-mpi-args", ""),
    ("external-extra-args", ""),
    ("nproc", ""),
    ("run", "TRUE"),
    ("pfind-queue-length", "10000"),
    ("pfind-steal-next", "FALSE"),
    ("pfind-parallelize-single-dir-access-using-hashing", "FALSE"),
];

/// The keys io500md reads, by section (those of the phases it runs).
const READ: &[(&str, &[&str])] = &[
    (
        "global",
        &[
            "datadir",
            "timestamp-datadir",
            "resultdir",
            "timestamp-resultdir",
            "drop-caches",
            "api",
        ],
    ),
    ("debug", &["stonewall-time"]),
    ("mdtest-easy", &["n", "run"]),
    ("mdtest-hard", &["n", "files-per-dir", "run"]),
    ("find", &["run"]),
];

/// The sections of the phases io500md runs, whose own keys (API, run)
/// it has none of: their group's `run` (`[mdtest-easy] run`) stands for
/// them.
const OWN_PHASES: [&str; 8] = [
    "mdtest-easy-write",
    "mdtest-easy-stat",
    "mdtest-easy-delete",
    "mdtest-hard-write",
    "mdtest-hard-stat",
    "mdtest-hard-read",
    "mdtest-hard-delete",
    "timestamp",
];

/// What the file says, as io500md takes it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Config {
    pub datadir: Option<PathBuf>,
    pub resultdir: Option<PathBuf>,
    pub timestamp_datadir: Option<bool>,
    pub timestamp_resultdir: Option<bool>,
    pub drop_caches: Option<bool>,
    pub stonewall_time: Option<u64>,
    pub easy_n: Option<u64>,
    pub hard_n: Option<u64>,
    pub easy_run: Option<bool>,
    pub hard_run: Option<bool>,
    pub find_run: Option<bool>,
}

fn names(list: &[&str]) -> String {
    list.join(", ")
}

/// Why an IO500 ini file is refused: one line naming the file, the line,
/// and the section and key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{} line {line}: {why}", file.display())]
pub struct IniError {
    pub file: PathBuf,
    pub line: usize,
    pub why: IniWhy,
}

/// What is wrong at an ini file's line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IniWhy {
    /// Not ini (the ini reader's words).
    #[error("{0}")]
    Syntax(String),
    #[error("unknown section [{section}] (IO500's: {known})")]
    UnknownSection { section: String, known: String },
    #[error("[{section}] {key}: unknown key (IO500's [{section}] keys: {known})")]
    UnknownKey {
        section: &'static str,
        key: String,
        known: String,
    },
    #[error("[{section}] {key} = {value}: {why}")]
    Value {
        section: &'static str,
        key: String,
        value: String,
        why: ValueWhy,
    },
}

/// Why a key's value is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ValueWhy {
    #[error("expects TRUE or FALSE (IO500's bool)")]
    NotBool,
    #[error("expects an integer >= 0 (IO500's uint)")]
    NotCount,
    /// A key io500md reads no value of (why).
    #[error("{0}")]
    Unsupported(&'static str),
}

/// Reads `text` (the file `file`); the error is one line naming the file,
/// the line and the section and key.
pub fn read(file: &Path, text: &str) -> Result<Config, IniError> {
    let at = |line: usize, why: IniWhy| IniError {
        file: file.to_path_buf(),
        line,
        why,
    };
    let parsed = ini::parse(text).map_err(|(line, m)| at(line, IniWhy::Syntax(m)))?;
    let mut c = Config::default();
    for s in parsed.sections.iter().filter(|s| s.line > 0) {
        let Some((name, keys)) = SECTIONS
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(&s.name))
        else {
            let known: Vec<&str> = SECTIONS.iter().map(|(n, _)| *n).collect();
            let section = s.name.clone();
            let known = names(&known);
            return Err(at(s.line, IniWhy::UnknownSection { section, known }));
        };
        for (key, value, line) in &s.pairs {
            if !keys.iter().any(|(k, _)| k.eq_ignore_ascii_case(key)) {
                let known: Vec<&str> = keys.iter().map(|(k, _)| *k).collect();
                return Err(at(
                    *line,
                    IniWhy::UnknownKey {
                        section: name,
                        key: key.clone(),
                        known: names(&known),
                    },
                ));
            }
            take(&mut c, name, key, value).map_err(|why| {
                let (key, value) = (key.clone(), value.clone());
                let section = *name;
                at(
                    *line,
                    IniWhy::Value {
                        section,
                        key,
                        value,
                        why,
                    },
                )
            })?;
        }
    }
    Ok(c)
}

fn boolean(v: &str) -> Result<bool, ValueWhy> {
    ini::boolean(v).ok_or(ValueWhy::NotBool)
}

fn count(v: &str) -> Result<u64, ValueWhy> {
    v.parse().map_err(|_| ValueWhy::NotCount)
}

/// One key of section `name` into `c`: read, or refused as a key of a
/// phase io500md does not run or does not implement.
fn take(c: &mut Config, name: &str, key: &str, v: &str) -> Result<(), ValueWhy> {
    let read = READ
        .iter()
        .find(|(n, _)| *n == name)
        .is_some_and(|(_, keys)| keys.iter().any(|k| k.eq_ignore_ascii_case(key)));
    if !read {
        let off = key.eq_ignore_ascii_case("run") && ini::boolean(v) == Some(false);
        if off && !OWN_PHASES.contains(&name) {
            // A phase io500md does not run anyway.
            return Ok(());
        }
        let why = if OWN_PHASES.contains(&name) {
            "not supported by io500md (its phases run as a group: [mdtest-easy] run, [mdtest-hard] run, [find] run)"
        } else if READ.iter().any(|(n, _)| *n == name) {
            "not supported by io500md (fslab's engine has no such setting)"
        } else {
            "not supported: io500md runs IO500's metadata phases, not this one (leave the section out, or set run = FALSE)"
        };
        return Err(ValueWhy::Unsupported(why));
    }
    match key.to_ascii_lowercase().as_str() {
        "datadir" => c.datadir = Some(PathBuf::from(v)),
        "resultdir" => c.resultdir = Some(PathBuf::from(v)),
        "timestamp-datadir" => c.timestamp_datadir = Some(boolean(v)?),
        "timestamp-resultdir" => c.timestamp_resultdir = Some(boolean(v)?),
        "drop-caches" => c.drop_caches = Some(boolean(v)?),
        "api" if v.eq_ignore_ascii_case("POSIX") => {}
        "api" => {
            return Err(ValueWhy::Unsupported(
                "not supported: io500md does POSIX calls only",
            ))
        }
        "stonewall-time" => c.stonewall_time = Some(count(v)?),
        "n" if name == "mdtest-easy" => c.easy_n = Some(count(v)?),
        "n" => c.hard_n = Some(count(v)?),
        "files-per-dir" if count(v)? == 0 => {}
        "files-per-dir" => {
            return Err(ValueWhy::Unsupported(
                "not supported: fslab's mdtest does not run -n with -I (and IO500 marks such a run INVALID)",
            ))
        }
        _ => {
            let run = Some(boolean(v)?);
            match name {
                "mdtest-easy" => c.easy_run = run,
                "mdtest-hard" => c.hard_run = run,
                _ => c.find_run = run,
            }
        }
    }
    Ok(())
}

/// IO500's timestamp (`%Y.%m.%d-%H.%M.%S`, local time), which suffixes
/// the directories with `timestamp-datadir` and `timestamp-resultdir`.
pub fn timestamp() -> String {
    chrono::Local::now().format("%Y.%m.%d-%H.%M.%S").to_string()
}

impl Io500Args {
    /// Applies `CONFIG.ini` (when given) to the options, as IO500 reads
    /// it: its defaults where the file says nothing (`./datafiles` and
    /// `./results`, each suffixed with the timestamp unless the file turns
    /// that off).
    pub fn apply_config(&mut self) -> crate::Result<()> {
        let Some(file) = self.config.clone() else {
            return Ok(());
        };
        let text = std::fs::read_to_string(&file).map_err(|e| {
            crate::Error::Options(format!("{}: cannot read it: {e}", file.display()))
        })?;
        let c = read(&file, &text).map_err(|e| crate::Error::Options(e.to_string()))?;
        let stamp = timestamp();
        let stamped = |base: PathBuf, on: Option<bool>| match on.unwrap_or(true) {
            true => base.join(&stamp),
            false => base,
        };
        self.dir = stamped(
            c.datadir.unwrap_or_else(|| "./datafiles".into()),
            c.timestamp_datadir,
        );
        self.resultdir = Some(stamped(
            c.resultdir.unwrap_or_else(|| "./results".into()),
            c.timestamp_resultdir,
        ));
        self.easy_n = c.easy_n.unwrap_or(1_000_000);
        self.hard_n = c.hard_n.unwrap_or(1_000_000);
        self.stonewall_time = c
            .stonewall_time
            .unwrap_or(super::options::IO500_STONEWALL_S);
        self.common.drop_caches |= c.drop_caches.unwrap_or(false);
        self.skip_easy = !c.easy_run.unwrap_or(true);
        self.skip_hard = !c.hard_run.unwrap_or(true);
        self.skip_find = !c.find_run.unwrap_or(true);
        self.config_text = Some(text);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(text: &str) -> String {
        read(Path::new("io500.ini"), text).unwrap_err().to_string()
    }

    #[test]
    fn io500s_keys_of_its_metadata_phases_are_read() {
        let text = "[global]\ndatadir = /mnt/io500\ntimestamp-datadir = FALSE\nresultdir = /mnt/r\ndrop-caches = TRUE\napi = POSIX\n[debug]\nstonewall-time = 3\n[mdtest-easy]\nn = 500\n[mdtest-hard]\nn = 400\nfiles-per-dir = 0\nrun = TRUE\n[find]\nrun = FALSE\n[ior-easy]\nrun = FALSE\n";
        let c = read(Path::new("x.ini"), text).unwrap();
        assert_eq!(c.datadir, Some("/mnt/io500".into()));
        assert_eq!(
            (c.timestamp_datadir, c.timestamp_resultdir),
            (Some(false), None)
        );
        assert_eq!(
            (c.easy_n, c.hard_n, c.stonewall_time),
            (Some(500), Some(400), Some(3))
        );
        assert_eq!(
            (c.drop_caches, c.find_run, c.hard_run),
            (Some(true), Some(false), Some(true))
        );
    }

    #[test]
    fn unknown_and_unsupported_sections_and_keys_are_refused_by_line() {
        let e = refused("[global]\ndatadir = x\n[bogus]\n");
        assert!(
            e.starts_with("io500.ini line 3: unknown section [bogus] (IO500's: global, debug,"),
            "{e}"
        );
        let e = refused("[global]\ndatdir = x\n");
        assert!(
            e.starts_with(
                "io500.ini line 2: [global] datdir: unknown key (IO500's [global] keys: datadir,"
            ),
            "{e}"
        );
        let e = refused("[ior-easy]\ntransferSize = 4m\n");
        assert!(e.starts_with("io500.ini line 2: [ior-easy] transferSize = 4m: not supported: io500md runs IO500's metadata phases"), "{e}");
        let e = refused("[global]\ndataPacketType = random\n");
        assert!(
            e.contains("[global] dataPacketType = random: not supported by io500md"),
            "{e}"
        );
        let e = refused("[mdtest-hard]\nfiles-per-dir = 100\n");
        assert!(e.contains("does not run -n with -I"), "{e}");
        let e = refused("[mdtest-easy-write]\nrun = FALSE\n");
        assert!(e.contains("its phases run as a group"), "{e}");
        let e = refused("[mdtest-easy]\nn = many\n");
        assert_eq!(
            e,
            "io500.ini line 2: [mdtest-easy] n = many: expects an integer >= 0 (IO500's uint)"
        );
        assert_eq!(
            refused("[global]\n junk\n"),
            "io500.ini line 2: unexpected content in section global: \" junk\""
        );
    }
}
