//! `[[target]] path`: filesystems that exist (mounted by someone else)
//! compared in one experiment, each repetition in a fresh subdirectory
//! fslab makes and removes, nothing else there touched.

use std::path::Path;

use fslab_lab::mkfs::FsType;

use crate::support::{privileged, stderr, stdout, Lab, LoopFs, Tmpfs};

fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn experiment(a: &Path, b: &Path) -> String {
    format!(
        r#"
name = "two-dirs"
repetitions = 2
[workload]
kind = "fsmark"
args = ["-S0", "-s", "0", "-n", "300", "-L", "1"]
[[target]]
path = "{}"
label = "tmpfs"
[[target]]
path = "{}"
"#,
        a.display(),
        b.display()
    )
}

#[test]
fn two_mounted_filesystems_are_compared_each_run_in_a_fresh_directory_removed_after() {
    if !privileged("a tmpfs and a loop ext4 the test mounts") {
        return;
    }
    let tmpfs = Tmpfs::mount("size=256m");
    let ext4 = LoopFs::new(FsType::Ext4, 256 << 20, &[]);
    std::fs::write(tmpfs.path().join("precious"), b"mine").unwrap();
    let (before_tmpfs, before_ext4) = (listing(tmpfs.path()), listing(ext4.path()));
    let lab = Lab::new();
    let f = lab.experiment("two.toml", &experiment(tmpfs.path(), ext4.path()));
    let o = lab
        .run_cmd()
        .arg("run")
        .arg(&f)
        .arg("--dry-run")
        .output()
        .unwrap();
    let out = stdout(&o);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        out.contains("\ndevice: none: every target is a directory that exists"),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "    directory: {} (tmpfs fslab-test on {}",
            tmpfs.path().display(),
            tmpfs.path().display()
        )),
        "{out}"
    );
    assert!(
        out.contains(&format!("cell 1: {}\n", ext4.path().display())),
        "{out}"
    );

    let o = lab.run_cmd().arg("run").arg(&f).output().unwrap();
    assert!(o.status.success(), "{}\n{}", stderr(&o), stdout(&o));
    let store = fslab_store::Store::open_read(&lab.db()).unwrap();
    let e = store.experiment(lab.latest_experiment()).unwrap();
    // Each cell is stored with the filesystem found at its path.
    let cells: Vec<(&str, &str)> = e
        .cells
        .iter()
        .map(|c| (c.label.as_str(), c.fs_type.as_str()))
        .collect();
    let ext4_label = ext4.path().display().to_string();
    assert_eq!(cells, [("tmpfs", "tmpfs"), (ext4_label.as_str(), "ext4")]);
    assert_eq!(e.cells[1].device["kind"], "path", "{}", e.cells[1].device);
    assert_eq!(
        e.cells[1].device["source"],
        ext4.dev_path().display().to_string()
    );
    assert_eq!(e.cell_runs.len(), 4);
    for r in &e.cell_runs {
        assert_eq!(r.status, Some(fslab_model::RunStatus::Complete), "{r:?}");
        let run = store.run_row(r.run_id.unwrap()).unwrap();
        let (dir, fs) = if r.cell == 0 {
            (tmpfs.path(), "tmpfs")
        } else {
            (ext4.path(), "ext4")
        };
        // The run worked in a fresh subdirectory of its cell's directory.
        assert!(
            Path::new(&run.target_path).parent() == Some(dir)
                || Path::new(&run.target_path).starts_with(dir),
            "{} in {}",
            run.target_path,
            dir.display()
        );
        assert_ne!(Path::new(&run.target_path), dir);
        assert_eq!(run.fs_type, fs);
    }
    // Nothing is left in either directory, and nothing else was touched.
    assert_eq!(listing(tmpfs.path()), before_tmpfs);
    assert_eq!(listing(ext4.path()), before_ext4);
    assert_eq!(
        std::fs::read(tmpfs.path().join("precious")).unwrap(),
        b"mine"
    );
    assert!(lab.leftovers().is_empty(), "{:?}", lab.leftovers());
}

#[test]
fn a_target_path_that_is_missing_a_file_or_the_root_is_refused_in_one_line_before_anything() {
    let lab = Lab::new();
    let dir = lab.path("here");
    std::fs::create_dir_all(&dir).unwrap();
    let file = lab.path("a-file");
    std::fs::write(&file, b"x").unwrap();
    let missing = lab.path("missing");
    for (bad, says) in [
        (
            missing.clone(),
            format!(
                "target path {}: No such file or directory",
                missing.display()
            ),
        ),
        (
            file.clone(),
            format!("target path {} is not a directory", file.display()),
        ),
        (
            "/".into(),
            "target[1].path: \"/\" is the root directory".to_string(),
        ),
        (
            "/proc/sys".into(),
            "target path /proc/sys is in the kernel's own filesystems".to_string(),
        ),
    ] {
        let f = lab.experiment("bad.toml", &experiment(&dir, &bad));
        for dry in [true, false] {
            let mut c = lab.run_cmd();
            c.arg("run").arg(&f);
            if dry {
                c.arg("--dry-run");
            }
            let o = c.output().unwrap();
            let err = stderr(&o);
            assert_eq!(o.status.code(), Some(2), "{}: {err}", bad.display());
            assert_eq!(err.trim().lines().count(), 1, "{err}");
            assert!(err.contains(&says), "{says}: {err}");
        }
    }
    assert_eq!(listing(&dir), Vec::<String>::new());
    assert!(lab.leftovers().is_empty(), "{:?}", lab.leftovers());
}
