//! What a run will cost, before it runs: the dry run's estimate, and the
//! refusal past a threshold that `--yes` or a `--scale` lifts.

use crate::support::{privileged, stderr, stdout, Lab, Tmpfs};

/// The one line of a refusal's "or run with --scale F", if any.
fn suggested_scale(line: &str) -> Option<String> {
    let at = line.find("or run with --scale ")? + "or run with --scale ".len();
    Some(line[at..].split_whitespace().next()?.to_string())
}

#[test]
fn every_builtins_dry_run_passes_at_its_default_scale_or_says_the_scale_that_does() {
    if !privileged("a 50 GiB tmpfs as the image directory") {
        return;
    }
    // A machine like this one: the images go on a filesystem with 50 GiB
    // free (a tmpfs limit, nothing reserved); its memory is the machine's.
    let images = Tmpfs::mount("size=50g");
    let lab = Lab::new();
    for name in fslab_experiment::builtin::BUILTIN.iter().map(|(n, _)| *n) {
        let o = lab
            .run_cmd()
            .env("FSLAB_IMAGE_DIR", images.path())
            .args(["run", name, "--dry-run"])
            .output()
            .unwrap();
        if o.status.success() {
            assert!(
                stdout(&o).contains("\ncost: time "),
                "{name}: {}",
                stdout(&o)
            );
            continue;
        }
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{name}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{name}: {err}");
        let f = suggested_scale(&err).unwrap_or_else(|| panic!("{name}: no scale: {err}"));
        // The scale it suggests passes.
        let o = lab
            .run_cmd()
            .env("FSLAB_IMAGE_DIR", images.path())
            .args(["run", name, "--dry-run", "--scale", &f])
            .output()
            .unwrap();
        assert!(o.status.success(), "{name} at {f}: {}", stderr(&o));
    }
    // The image directory is untouched by every dry run.
    assert_eq!(std::fs::read_dir(images.path()).unwrap().count(), 0);
}

#[test]
fn a_builtin_whose_image_cannot_fit_says_the_scale_at_which_it_does() {
    if !privileged("a small ext4 as the image directory") {
        return;
    }
    // ext4 holds files of 16 TiB at most: seed001-crc-overhead's 100 TiB image does not fit.
    let ext4 = crate::support::LoopFs::new(fslab_lab::mkfs::FsType::Ext4, 4 << 30, &[]);
    let lab = Lab::new();
    let o = lab
        .run_cmd()
        .env("FSLAB_IMAGE_DIR", ext4.path())
        .args(["run", "seed001-crc-overhead", "--dry-run"])
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("image of 100 TiB does not fit on"), "{err}");
    let f = suggested_scale(&err).unwrap_or_else(|| panic!("no scale: {err}"));
    let o = lab
        .run_cmd()
        .env("FSLAB_IMAGE_DIR", ext4.path())
        .args(["run", "seed001-crc-overhead", "--dry-run", "--scale", &f])
        .output()
        .unwrap();
    assert!(o.status.success(), "at {f}: {}", stderr(&o));
}

const LONG: &str = r#"
name = "long"
[device]
size = "1G"
image_dir = "IMAGES"
[workload]
kind = "dbench"
args = ["-t", "3000", "-D", "{dir}", "1"]
[[target]]
fs = "ext4"
"#;

#[test]
fn a_run_over_an_hour_is_refused_in_one_line_until_yes() {
    let lab = Lab::new();
    let f = lab.experiment(
        "long.toml",
        &LONG.replace("name = \"long\"", "name = \"long\"\nrepetitions = 2"),
    );
    let o = lab
        .run_cmd()
        .args(["run"])
        .arg(&f)
        .arg("--dry-run")
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(
        err.trim(),
        "fslab: run: it is estimated to take 1 h 40 min, more than 1 h: add --yes to run it \
         anyway, or run with --scale 0.5"
    );
    assert!(stdout(&o).is_empty(), "{}", stdout(&o));
    let o = lab
        .run_cmd()
        .args(["run"])
        .arg(&f)
        .args(["--dry-run", "--yes"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("\ncost: time 1 h 40 min for 2 runs; disk "),
        "{out}"
    );
    assert!(
        out.contains("  cell 0 ext4: 50 min 5 s a run (no stored run: 3000 s as its options say + 5 s to make and time its filesystem;"),
        "{out}"
    );
    // Nothing was made.
    assert_eq!(std::fs::read_dir(lab.images()).unwrap().count(), 0);
}
