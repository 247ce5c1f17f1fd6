//! `fslab man [COMMAND...] [--dir DIR]`: a man page per command, rendered
//! by clap_mangen from the command line's own definition, each with the
//! sections clap does not know: EXIT STATUS, ENVIRONMENT and SEE ALSO.

use std::path::Path;

use crate::Failure;

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

/// `fslab man`: one page to stdout (fslab's, or COMMAND's), or every page
/// into DIR.
pub fn run(command: &[String], dir: Option<&Path>) -> Result<(), Failure> {
    let mut root = crate::cli::command().disable_help_subcommand(true);
    root.build();
    if let Some(dir) = dir {
        if !dir.is_dir() {
            return Err(Failure::Usage(format!(
                "man: --dir {}: no such directory",
                dir.display()
            )));
        }
        let mut n = 0;
        write_all(&root, dir, &mut n)?;
        remark!("fslab man: {n} pages written to {}", dir.display());
        return Ok(());
    }
    let mut cmd = &root;
    for name in command {
        cmd = cmd
            .find_subcommand(name)
            .filter(|c| !c.is_hide_set() && c.get_name() != "help")
            .ok_or_else(|| {
                Failure::Usage(format!(
                    "man: no command {:?} under {:?} (fslab help lists them)",
                    name,
                    cmd.get_display_name().unwrap_or(cmd.get_name())
                ))
            })?;
    }
    super::print_all(&page(cmd, &root)?)
}

fn write_all(cmd: &clap::Command, dir: &Path, n: &mut usize) -> Result<(), Failure> {
    let root = cmd;
    fn go(
        cmd: &clap::Command,
        root: &clap::Command,
        dir: &Path,
        n: &mut usize,
    ) -> Result<(), Failure> {
        let path = dir.join(format!("{}.1", page_name(cmd)));
        std::fs::write(&path, page(cmd, root)?)
            .map_err(|e| Failure::Failed(format!("man: {}: {e}", path.display())))?;
        *n += 1;
        for sub in visible(cmd) {
            go(sub, root, dir, n)?;
        }
        Ok(())
    }
    go(cmd, root, dir, n)
}

/// A command's subcommands that have a page: not hidden, not clap's `help`.
fn visible(cmd: &clap::Command) -> impl Iterator<Item = &clap::Command> {
    cmd.get_subcommands()
        .filter(|s| !s.is_hide_set() && s.get_name() != "help")
}

/// `fslab`, `fslab-run`, `fslab-results-show`.
fn page_name(cmd: &clap::Command) -> String {
    cmd.get_display_name().unwrap_or(cmd.get_name()).to_string()
}

/// One page: clap_mangen's sections, then fslab's own.
fn page(cmd: &clap::Command, root: &clap::Command) -> Result<Vec<u8>, Failure> {
    let mut out = Vec::new();
    clap_mangen::Man::new(cmd.clone())
        .render(&mut out)
        .map_err(|e| Failure::Failed(format!("man: {e}")))?;
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
    fn every_visible_command_has_a_page_with_fslabs_sections() {
        let dir = tempfile::tempdir().unwrap();
        run(&[], Some(dir.path())).unwrap();
        let mut root = crate::cli::command();
        root.build();
        for sub in root.get_subcommands().filter(|s| !s.is_hide_set()) {
            if sub.get_name() == "help" {
                continue;
            }
            let p = dir.path().join(format!("fslab-{}.1", sub.get_name()));
            let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p:?}: {e}"));
            assert!(text.contains(".SH \"EXIT STATUS\""), "{p:?}");
            assert!(text.contains(".SH \"ENVIRONMENT\""), "{p:?}");
            assert!(text.contains("FSLAB_DB"), "{p:?}");
        }
        assert!(dir.path().join("fslab-results-show.1").exists());
        // Each page renders without a warning (groff -ww), where groff is.
        match std::process::Command::new("groff")
            .arg("--version")
            .output()
        {
            Ok(_) => {
                for e in std::fs::read_dir(dir.path()).unwrap().flatten() {
                    let o = std::process::Command::new("groff")
                        .args(["-man", "-Tutf8", "-ww", "-z"])
                        .arg(e.path())
                        .output()
                        .unwrap();
                    let err = String::from_utf8_lossy(&o.stderr);
                    assert!(
                        o.status.success() && err.is_empty(),
                        "{:?}: {err}",
                        e.path()
                    );
                }
            }
            Err(_) => assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "groff is missing (scripts/install-deps.sh installs groff-base), and CI=true"
            ),
        }
        assert!(!dir.path().join("fslab-job.1").exists(), "a hidden command");
        assert!(
            !dir.path().join("fslab-results-help.1").exists(),
            "clap's help"
        );
        let e = run(&["nosuch".into()], None).unwrap_err();
        assert!(
            matches!(&e, Failure::Usage(m) if m.contains("\"nosuch\"")),
            "{e:?}"
        );
    }

    #[test]
    fn roff_control_characters_are_escaped() {
        assert_eq!(escape(".x-y"), "\\&.x\\-y");
        assert_eq!(escape("a\\b"), "a\\eb");
    }
}
