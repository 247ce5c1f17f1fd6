//! `fslab man`'s pages: clap_mangen's rendering of a command's own
//! definition, with the sections clap does not know: EXIT STATUS,
//! ENVIRONMENT and SEE ALSO ([`page`]); every visible command's page into
//! a directory ([`write_all`]).

use std::path::Path;

/// Why a page was not made.
#[derive(Debug, thiserror::Error)]
pub enum ManError {
    /// clap_mangen could not render it.
    #[error("man: {0}")]
    Render(#[source] std::io::Error),
    /// A page could not be written.
    #[error("man: {}: {source}", .path.display())]
    Write {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Bad input (exit 2): `fslab man NAME` names no command (under the
    /// command before it).
    #[error("man: no command {name:?} under {under:?} (fslab help lists them)")]
    NoCommand { name: String, under: String },
    /// Bad input (exit 2): `--dir DIR` is not a directory.
    #[error("man: --dir {}: no such directory", .0.display())]
    NoDirectory(std::path::PathBuf),
}

impl ManError {
    /// Bad input rather than a failure.
    pub fn is_usage(&self) -> bool {
        matches!(self, ManError::NoCommand { .. } | ManError::NoDirectory(_))
    }
}

/// The page of the command `path` names under `root` (`["results",
/// "show"]`; none: fslab's own), a visible one.
pub fn page_at(root: &clap::Command, path: &[String]) -> Result<Vec<u8>, ManError> {
    let mut cmd = root;
    for name in path {
        cmd = cmd
            .find_subcommand(name)
            .filter(|c| !c.is_hide_set() && c.get_name() != "help")
            .ok_or_else(|| ManError::NoCommand {
                name: name.clone(),
                under: cmd.get_display_name().unwrap_or(cmd.get_name()).to_string(),
            })?;
    }
    page(cmd, root)
}

/// Every visible command's page into `dir`, which must exist: how many.
pub fn write_dir(root: &clap::Command, dir: &Path) -> Result<usize, ManError> {
    if !dir.is_dir() {
        return Err(ManError::NoDirectory(dir.to_path_buf()));
    }
    let mut n = 0;
    write_all(root, dir, &mut n)?;
    Ok(n)
}

/// What every command's exit status means.
const EXIT_STATUS: &[(&str, &str)] = &[
    ("0", "Done."),
    (
        "1",
        "The work failed: for fslab run, any run failed (what was measured is printed and \
         stored, and the failure named); for compare, no cell of the selection has a completed run.",
    ),
    (
        "2",
        "Bad input: one line naming the bad value; nothing was made (the dry run refuses what the \
         run refuses).",
    ),
    (
        "130",
        "Interrupted by SIGINT or SIGTERM: what was measured is printed and stored, and what fslab \
         made is torn down (for fslab run a second signal kills the workload, a third exits at once).",
    ),
];

/// The environment fslab reads.
const ENVIRONMENT: &[(&str, &str)] = &[
    (
        "FSLAB_DB",
        "The results store when --db is not given; else $XDG_DATA_HOME/fslab/results.sqlite, else \
         ~/.local/share/fslab/results.sqlite (under sudo, the home of SUDO_USER).",
    ),
    (
        "FSLAB_STATE_DIR",
        "Where fslab run keeps its journal and mount points (default /run/fslab): fslab cleanup \
         reads the journals there.",
    ),
    (
        "FSLAB_IMAGE_DIR",
        "Where sparse images go when the experiment names no image_dir (default /var/tmp).",
    ),
    (
        "FSLAB_CACHE_DIR",
        "Where guest kernels are kept once fetched (default /var/cache/fslab).",
    ),
    (
        "FSLAB_GUEST_ACCEL",
        "kvm or tcg: the accelerator of guests on other kernels (default: kvm where it works).",
    ),
    (
        "FSLAB_BUSYBOX",
        "The static busybox a guest's init runs (default /usr/bin/busybox or /bin/busybox).",
    ),
    (
        "FSLAB_CLOCK",
        "monotonic: time calls with clock_gettime instead of the TSC.",
    ),
];

/// Every visible command's page under `cmd` (itself included) into
/// `dir`, named as [`page_name`]; `n` counts them.
pub fn write_all(cmd: &clap::Command, dir: &Path, n: &mut usize) -> Result<(), ManError> {
    let root = cmd;
    fn go(
        cmd: &clap::Command,
        root: &clap::Command,
        dir: &Path,
        n: &mut usize,
    ) -> Result<(), ManError> {
        let path = dir.join(format!("{}.1", page_name(cmd)));
        std::fs::write(&path, page(cmd, root)?).map_err(|source| ManError::Write {
            path: path.clone(),
            source,
        })?;
        *n += 1;
        for sub in visible(cmd) {
            go(sub, root, dir, n)?;
        }
        Ok(())
    }
    go(cmd, root, dir, n)
}

/// A command's subcommands that have a page: not hidden, not clap's `help`.
pub fn visible(cmd: &clap::Command) -> impl Iterator<Item = &clap::Command> {
    cmd.get_subcommands()
        .filter(|s| !s.is_hide_set() && s.get_name() != "help")
}

/// `fslab`, `fslab-run`, `fslab-results-show`.
pub fn page_name(cmd: &clap::Command) -> String {
    cmd.get_display_name().unwrap_or(cmd.get_name()).to_string()
}

/// One page: clap_mangen's sections, then fslab's own.
/// One page of `cmd` (`root`: fslab's command, for SEE ALSO).
pub fn page(cmd: &clap::Command, root: &clap::Command) -> Result<Vec<u8>, ManError> {
    let mut out = Vec::new();
    clap_mangen::Man::new(cmd.clone())
        .render(&mut out)
        .map_err(ManError::Render)?;
    let mut extra = String::new();
    section(&mut extra, "EXIT STATUS", EXIT_STATUS);
    section(&mut extra, "ENVIRONMENT", ENVIRONMENT);
    extra.push_str(".SH \"SEE ALSO\"\n");
    let name = page_name(cmd);
    let mut see: Vec<String> = if name == "fslab" {
        visible(root)
            .map(|s| format!("{}(1)", page_name(s)))
            .collect()
    } else {
        let mut v = vec!["fslab(1)".to_string()];
        v.extend(visible(cmd).map(|s| format!("{}(1)", page_name(s))));
        v
    };
    see.push("the guide: README.md and docs/ in fslab's source".into());
    extra.push_str(&escape(&see.join(", ")));
    extra.push('\n');
    out.extend_from_slice(extra.as_bytes());
    Ok(out)
}

fn section(out: &mut String, title: &str, items: &[(&str, &str)]) {
    out.push_str(&format!(".SH \"{title}\"\n"));
    for (tag, text) in items {
        out.push_str(&format!(".TP\n\\fB{}\\fR\n{}\n", escape(tag), escape(text)));
    }
}

/// Text safe on a roff line: backslashes and hyphens escaped, and a line
/// never starting with a control character.
fn escape(s: &str) -> String {
    let e = s.replace('\\', "\\e").replace('-', "\\-");
    if e.starts_with('.') || e.starts_with('\'') {
        format!("\\&{e}")
    } else {
        e
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_is_found_by_its_path_and_a_hidden_or_missing_command_is_bad_input() {
        let mut root = clap::Command::new("tool")
            .subcommand(clap::Command::new("results").subcommand(clap::Command::new("show")))
            .subcommand(clap::Command::new("job").hide(true));
        root.build();
        let page = page_at(&root, &["results".into(), "show".into()]).unwrap();
        assert!(String::from_utf8(page)
            .unwrap()
            .contains("tool\\-results\\-show"));
        for path in [
            vec!["job".to_string()],
            vec!["results".into(), "nosuch".into()],
        ] {
            let e = page_at(&root, &path).unwrap_err();
            assert!(e.is_usage(), "{e}");
            let under = if path.len() == 1 {
                "tool"
            } else {
                "tool-results"
            };
            let last = path.last().unwrap();
            assert_eq!(
                e.to_string(),
                format!("man: no command {last:?} under {under:?} (fslab help lists them)")
            );
        }
        let d = tempfile::tempdir().unwrap();
        let e = write_dir(&root, &d.path().join("nosuch")).unwrap_err();
        assert!(
            e.is_usage() && e.to_string().ends_with("nosuch: no such directory"),
            "{e}"
        );
        assert_eq!(
            write_dir(&root, d.path()).unwrap(),
            3,
            "tool, results, results show"
        );
    }

    #[test]
    fn roff_control_characters_are_escaped() {
        assert_eq!(escape(".x-y"), "\\&.x\\-y");
        assert_eq!(escape("a\\b"), "a\\eb");
    }
}
