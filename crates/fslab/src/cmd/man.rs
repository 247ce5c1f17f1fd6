//! `fslab man [COMMAND...] [--dir DIR]`: a man page per command, rendered
//! by fslab-present's `man` from the command line's own definition.

use std::path::Path;

use fslab_present::man::{page_at, write_dir, ManError};

use crate::Failure;

/// `fslab man`: one page to stdout (fslab's, or COMMAND's), or every page
/// into DIR.
pub fn run(command: &[String], dir: Option<&Path>) -> Result<(), Failure> {
    let mut root = crate::cli::command().disable_help_subcommand(true);
    root.build();
    let failure = |e: ManError| Failure::usage_if(e.is_usage(), e.to_string());
    if let Some(dir) = dir {
        let n = write_dir(&root, dir).map_err(failure)?;
        remark!("fslab man: {n} pages written to {}", dir.display());
        return Ok(());
    }
    super::print_all(&page_at(&root, command).map_err(failure)?)
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
}
