//! Which of a program's arguments name paths, and that each stays inside
//! the program's directory. An argument names a path where it, or a part
//! of it after an `=` (fio's `--filename=/x`, IOR's `-O
//! summaryFile=/x`) and split at `,` and `:` (fio's `--filename=a:b`),
//! starts with `/`, `~` or `..`, or holds a `/`. Relative paths are from
//! the program's directory, where it runs. Outside it only the read-only
//! `--input` files and devices that hold nothing (`/dev/null`, ...).

use std::path::{Path, PathBuf};

use super::CommandArgs;
use crate::args::stays_inside;

/// Devices a program may name anywhere: they read nothing and keep
/// nothing of what is written to them.
pub const HARMLESS: [&str; 6] = [
    "/dev/null",
    "/dev/zero",
    "/dev/urandom",
    "/dev/random",
    "/dev/stdout",
    "/dev/stderr",
];

/// The paths argument `arg` names.
pub fn paths_in(arg: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for part in arg.split('=') {
        for piece in part.split([',', ':']) {
            // A path glued to a short option (`-o/mnt/x`).
            let piece = match (piece.starts_with('-'), piece.find('/')) {
                (true, Some(i)) => &piece[i..],
                (true, None) => continue,
                _ => piece,
            };
            let named = piece.starts_with(['/', '~'])
                || piece == ".."
                || piece.starts_with("../")
                || piece.contains('/');
            if named && !piece.is_empty() {
                out.push(piece);
            }
        }
    }
    out
}

/// The directory as an absolute path (the current directory's for a
/// relative one), lexically.
fn absolute(dir: &Path) -> PathBuf {
    std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf())
}

impl CommandArgs {
    /// Whether `piece` (a path an argument names) is an `--input` file or
    /// a device that holds nothing.
    fn may_be_outside(&self, piece: &str) -> bool {
        HARMLESS.contains(&piece)
            || self
                .inputs
                .iter()
                .any(|i| i == Path::new(piece) || absolute(i) == absolute(&self.dir.join(piece)))
    }

    /// Every path among the program's arguments that must stay inside its
    /// directory, with the argument naming it, made absolute (relative
    /// ones from the directory).
    pub fn argument_paths(&self) -> Vec<(String, PathBuf)> {
        let dir = absolute(&self.dir);
        self.program
            .iter()
            .skip(1)
            .flat_map(|a| paths_in(a).into_iter().map(move |p| (a, p)))
            .filter(|(_, p)| !self.may_be_outside(p))
            .map(|(a, p)| (a.clone(), dir.join(p)))
            .collect()
    }
}

fn bad(m: String) -> crate::Error {
    crate::Error::Options(m)
}

/// The paths of `o` stay inside its directory; its inputs are files.
pub fn check(o: &CommandArgs) -> crate::Result<()> {
    let dir = absolute(&o.dir);
    for i in &o.inputs {
        if !std::fs::metadata(i).is_ok_and(|m| m.is_file()) {
            return Err(bad(format!(
                "--input {}: not a file (an input is a file the program only reads)",
                i.display()
            )));
        }
    }
    for (arg, path) in o.argument_paths() {
        if arg.contains('~') {
            return Err(bad(format!(
                "argument {arg:?} names a home directory: give paths inside the program's directory"
            )));
        }
        if !stays_inside(&path, &dir) {
            return Err(bad(format!(
                "argument {arg:?} names {}: outside the program's directory {} (start its paths \
                 with {{dir}} in an experiment; name a file it only reads with --input)",
                path.display(),
                dir.display()
            )));
        }
    }
    if let Some(f) = &o.parse_file {
        if !stays_inside(&dir.join(f), &dir) {
            return Err(bad(format!(
                "--parse-file {}: outside the program's directory {}",
                f.display(),
                dir.display()
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_found_in_options_values_and_lists() {
        assert_eq!(paths_in("--directory=/mnt/0"), ["/mnt/0"]);
        assert_eq!(paths_in("--filename=/a/f:/b/g"), ["/a/f", "/b/g"]);
        assert_eq!(paths_in("summaryFile=/x/s"), ["/x/s"]);
        assert_eq!(paths_in("-o/mnt/x"), ["/mnt/x"]);
        assert_eq!(paths_in("sub/file"), ["sub/file"]);
        assert_eq!(paths_in("../up"), ["../up"]);
        assert!(paths_in("--rw=randwrite").is_empty());
        assert!(paths_in("4k").is_empty());
        assert!(paths_in("--name=rw").is_empty());
    }

    fn args(dir: &str, program: &[&str], inputs: &[&str]) -> CommandArgs {
        let kind = crate::WorkloadRef::of("command").unwrap();
        let mut argv: Vec<String> = vec!["--dir".into(), dir.into()];
        for i in inputs {
            argv.extend(["--input".to_string(), i.to_string()]);
        }
        argv.extend(program.iter().map(|s| s.to_string()));
        let job = kind.parse(&argv).unwrap();
        serde_json::from_value(job.to_json()["options"].clone()).unwrap()
    }

    #[test]
    fn every_path_stays_inside_the_programs_directory() {
        let ok = args(
            "/mnt/0",
            &[
                "fio",
                "--directory=/mnt/0/d",
                "--output=res/out.json",
                "--filename=/dev/null",
            ],
            &[],
        );
        assert!(check(&ok).is_ok());
        let out = args("/mnt/0", &["fio", "--filename=/dev/sda"], &[]);
        let e = check(&out).unwrap_err().to_string();
        assert!(e.starts_with("argument \"--filename=/dev/sda\" names /dev/sda: outside the program's directory /mnt/0"), "{e}");
        let climb = args("/mnt/0", &["ior", "-o", "../../etc/x"], &[]);
        assert!(check(&climb).unwrap_err().to_string().contains("outside"));
        let home = args("/mnt/0", &["ior", "-o", "~/x"], &[]);
        assert!(check(&home)
            .unwrap_err()
            .to_string()
            .contains("home directory"));
        // A file it only reads may be anywhere, and must be one.
        let job = tempfile::NamedTempFile::new().unwrap();
        let jp = job.path().display().to_string();
        assert!(check(&args("/mnt/0", &["fio", &jp], &[&jp])).is_ok());
        assert!(check(&args("/mnt/0", &["fio", &jp], &[])).is_err());
        let e = check(&args("/mnt/0", &["fio"], &["/nonexistent.fio"])).unwrap_err();
        assert!(
            e.to_string()
                .contains("--input /nonexistent.fio: not a file"),
            "{e}"
        );
        let paths = ok.argument_paths();
        assert_eq!(paths.len(), 2, "{paths:?}");
        assert_eq!(paths[1].1, PathBuf::from("/mnt/0/res/out.json"));
    }
}
