//! A workload's arguments as an experiment file gives them, checked when
//! the experiment is loaded (so `fslab run --dry-run` refuses what the run
//! would refuse): parsed by the workload's own parser, validated by its own
//! rules, with the options `fslab run` sets itself refused, and every path
//! the workload will write to inside the cell's filesystem.

use std::path::{Component, Path, PathBuf};

use crate::plugin::{Job, WorkloadRef};

/// `path` with `.` and `..` resolved by name alone; None when `..` climbs
/// above where the path starts (or above `/`).
fn lexical(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    let mut depth = 0usize;
    for c in path.components() {
        match c {
            Component::RootDir | Component::Prefix(_) => out.push(c.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => {
                depth = depth.checked_sub(1)?;
                out.pop();
            }
            Component::Normal(n) => {
                depth += 1;
                out.push(n);
            }
        }
    }
    Some(out)
}

/// Whether `path` (absolute, or relative to the workload's directory
/// `inside`, where `fslab run` starts it) stays below `inside` by name.
pub fn stays_inside(path: &Path, inside: &Path) -> bool {
    let full = if path.is_absolute() {
        path.to_path_buf()
    } else {
        inside.join(path)
    };
    match (lexical(&full), lexical(inside)) {
        (Some(p), Some(i)) => p.starts_with(&i),
        _ => false,
    }
}

pub use crate::plugin::clap_error_line;

/// Checks a job as an experiment gives it (`{dir}` replaced by directories
/// below `cell`, which must exist) with `fslab_dirs` `-d` directories of
/// fslab's own: the options a person types that `fslab run` sets itself
/// (in the harness it hands the child) are refused, every
/// path it writes must be inside `cell`, and the workload's own
/// validation. The error is one line naming the bad option or value.
pub fn check_job(job: &Job, fslab_dirs: usize, cell: &Path) -> crate::Result<()> {
    let refuse = |m: String| Err(crate::Error::Options(m));
    if job.dirs().len() != fslab_dirs {
        return refuse(
            "-d is set by fslab run (one per workload.dirs, on the cell's filesystem)".into(),
        );
    }
    let c = job.common();
    let owned = [
        ("--json", c.json),
        ("--drop-caches (use [machine] drop_caches)", c.drop_caches),
        (
            "--drop-caches-once (use [machine] drop_caches = \"once\")",
            c.drop_caches_once,
        ),
        (
            "--probes (use probes = [...] in [workload], or fslab run --probes)",
            c.probes != "default",
        ),
    ];
    if c.output.is_some() {
        return refuse(
            "--output is not taken in an experiment file (fslab results export ID --output FILE \
             writes a run's document)"
                .into(),
        );
    }
    if let Some((opt, _)) = owned.iter().find(|(_, set)| *set) {
        return refuse(format!(
            "{opt} is set by fslab run, not by the experiment file"
        ));
    }
    for (opt, p) in job.outputs() {
        if !p.is_absolute() || !stays_inside(&p, cell) {
            return refuse(format!(
                "{opt} {}: outside the cell's filesystem (start workload paths with {{dir}})",
                p.display()
            ));
        }
    }
    job.validate()
}

/// [`check_job`] of `kind`'s arguments as `fslab run` would start it
/// (after the workload's name, with fslab's `-d` options at its end).
pub fn check_experiment_args(
    kind: WorkloadRef,
    argv: &[String],
    fslab_dirs: usize,
    cell: &Path,
) -> crate::Result<()> {
    check_job(&kind.parse(argv)?, fslab_dirs, cell)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A check's error as its message, after making sure it is a usage error.
    fn usage(r: crate::Result<()>) -> Result<(), String> {
        r.map_err(|e| {
            assert!(e.is_usage(), "{e:?}");
            e.to_string()
        })
    }

    fn argv(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn every_option_has_a_long_name_beside_the_originals_letter() {
        let all = crate::plugin::all();
        assert!(all.len() >= 6, "{all:?}");
        for kind in all {
            let (name, c) = (kind.name(), kind.workload().command());
            let mut longs = std::collections::BTreeSet::new();
            for a in c
                .get_arguments()
                .filter(|a| !a.is_positional() && a.get_id() != "help")
            {
                let long = a.get_long().unwrap_or_else(|| {
                    panic!("{name} -{}: no long name", a.get_short().unwrap_or('?'))
                });
                assert!(longs.insert(long), "{name} --{long} twice");
            }
            assert!(longs.len() > 3, "{name}: {longs:?}");
        }
    }

    #[test]
    fn paths_that_climb_out_by_name_are_outside() {
        let cell = Path::new("/run/fslab/mnt-1/c0-r1");
        assert!(stays_inside(Path::new("/run/fslab/mnt-1/c0-r1/0/f"), cell));
        assert!(stays_inside(Path::new("0/log"), cell));
        assert!(!stays_inside(
            Path::new("/run/fslab/mnt-1/c0-r1/0/../../x"),
            cell
        ));
        assert!(!stays_inside(Path::new("../x"), cell));
        assert!(!stays_inside(Path::new("/tmp/x"), cell));
        assert!(!stays_inside(Path::new("/dev/null"), cell));
    }

    #[test]
    fn each_workload_refuses_bad_values_and_options_fslab_owns() {
        let dir = tempfile::tempdir().unwrap();
        let cell = dir.path();
        std::fs::create_dir(cell.join("0")).unwrap();
        let d0 = cell.join("0").display().to_string();
        let fs = |s: &str| {
            let mut v = argv(s);
            v.extend(["-d".to_string(), d0.clone()]);
            usage(check_experiment_args(
                WorkloadRef::of("fsmark").unwrap(),
                &v,
                1,
                cell,
            ))
        };
        assert_eq!(fs("-n 10 -s 0"), Ok(()));
        assert!(fs("-n abc").unwrap_err().contains("abc"));
        assert!(fs("--bogus").unwrap_err().contains("--bogus"));
        assert!(fs("-d/tmp/x")
            .unwrap_err()
            .contains("-d is set by fslab run"));
        assert!(fs("-l /tmp/log").unwrap_err().contains("outside"));
        assert!(fs("--json").unwrap_err().contains("--json"));
        assert!(fs("--text-to=/etc/x").unwrap_err().contains("--text-to"));
        assert!(fs("--db /tmp/x.sqlite").unwrap_err().contains("--db"));

        let cm = |s: &str| {
            usage(check_experiment_args(
                WorkloadRef::of("createmany").unwrap(),
                &argv(s),
                0,
                cell,
            ))
        };
        assert_eq!(cm(&format!("-m {d0}/f 10")), Ok(()));
        assert!(cm(&format!("-m {d0}/../../../x 10"))
            .unwrap_err()
            .contains("outside"));
        assert!(cm("-m f 10").unwrap_err().contains("outside"), "relative");
        let al = |s: &str| {
            usage(check_experiment_args(
                WorkloadRef::of("alloctest").unwrap(),
                &argv(s),
                0,
                cell,
            ))
        };
        assert!(al("/tmp/big 1G").unwrap_err().contains("outside"));
        assert!(al(&format!("{d0}/big nonsense")).is_err());
        let db = |s: &str| {
            usage(check_experiment_args(
                WorkloadRef::of("dbench").unwrap(),
                &argv(s),
                0,
                cell,
            ))
        };
        assert!(db(&format!("-D {d0} -t 1 2")).is_ok());
        assert!(db("-D / -t 1 2").unwrap_err().contains("outside"));
        let cb = |s: &str| {
            usage(check_experiment_args(
                WorkloadRef::of("compilebench").unwrap(),
                &argv(s),
                0,
                cell,
            ))
        };
        assert!(cb(&format!("-D {d0} -i x")).is_err());
        let tio = |s: &str| {
            let mut v = argv(s);
            v.extend(["-d".to_string(), d0.clone()]);
            usage(check_experiment_args(
                WorkloadRef::of("tiotest").unwrap(),
                &v,
                1,
                cell,
            ))
        };
        assert!(tio("-t 2 -f 1 -r 10").is_ok());
        assert!(tio("-d /tmp -t 1").unwrap_err().contains("-d is set"));
        assert!(WorkloadRef::of("nosuch").is_none());
    }
}
