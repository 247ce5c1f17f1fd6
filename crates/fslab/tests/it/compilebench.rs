//! compilebench through the real binary: trees made, patched, compiled,
//! read and deleted; the same seed, the same choices; bad input.

use crate::support::*;
use crate::workloads::{s, shm};

#[test]
fn compilebench_makes_patches_compiles_reads_and_deletes_trees() {
    let lab = Lab::new();
    let d = shm();
    // A small tree to model: three files of known sizes.
    let model = lab.path("model");
    std::fs::create_dir_all(model.join("drivers/net")).unwrap();
    std::fs::write(model.join("Makefile"), vec![b'm'; 700]).unwrap();
    std::fs::write(model.join("drivers/net/e1000.c"), vec![b'c'; 5000]).unwrap();
    std::fs::write(model.join("drivers/net/e1000.h"), vec![b'h'; 1200]).unwrap();
    let o = lab.run(&[
        "compilebench",
        "-D",
        &s(d.path()),
        "-i",
        "3",
        "-r",
        "0",
        "-n",
        "--tree-from",
        &s(&model),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.starts_with(&format!(
            "using working directory {}, 3 intial dirs 0 runs\n",
            d.path().display()
        )),
        "{out}"
    );
    assert!(out.contains("intial create total runs 3 avg "), "{out}");
    for t in 0..3 {
        let root = d.path().join(format!("kernel-{t}"));
        assert_eq!(
            std::fs::metadata(root.join("drivers/net/e1000.c"))
                .unwrap()
                .len(),
            5000
        );
        assert_eq!(std::fs::metadata(root.join("Makefile")).unwrap().len(), 700);
        assert_eq!(count_files(&root), 3);
    }
    // Random operations: every kind appears with enough runs, trees change as they say.
    let d2 = shm();
    let o = lab.run(&[
        "compilebench",
        "-D",
        &s(d2.path()),
        "-i",
        "4",
        "-r",
        "60",
        "-n",
        "--tree-from",
        &s(&model),
        "--seed",
        "7",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let table: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.starts_with("test "))
        .collect();
    assert_eq!(table[1], "=".repeat(48));
    let runs: u64 = table[2..]
        .iter()
        .map(|l| l[24..30].trim().parse::<u64>().unwrap())
        .sum();
    assert_eq!(runs, 64, "{out}");
    for kind in [
        "create",
        "patch",
        "compile",
        "read tree",
        "delete tree",
        "stat tree",
    ] {
        assert!(
            table.iter().any(|l| l.starts_with(kind)),
            "no {kind} row: {out}"
        );
    }
    let v: serde_json::Value =
        serde_json::from_slice(&lab.run(&["results", "export", "2"]).stdout).unwrap();
    let res = v["run"]["params"].clone();
    assert_eq!(res["tree_files"], 3);
    // Every tree keeps the model's files; a deleted tree is left an empty
    // directory, as compilebench's rmrf leaves it.
    for e in std::fs::read_dir(d2.path()).unwrap().flatten() {
        let root = e.path();
        if std::fs::read_dir(&root).unwrap().next().is_none() {
            continue;
        }
        assert!(
            root.join("drivers/net/e1000.h").exists() && root.join("Makefile").exists(),
            "{}",
            root.display()
        );
    }
    the_same_seed_makes_the_same_choices(&lab, &model, &out);
    compilebench_refuses_bad_input(&lab);
}

/// `--seed 7` twice: the same operations in the same order.
fn the_same_seed_makes_the_same_choices(lab: &Lab, model: &std::path::Path, out: &str) {
    let same = lab.run(&[
        "compilebench",
        "-D",
        &s(shm().path()),
        "-i",
        "4",
        "-r",
        "60",
        "-n",
        "--tree-from",
        &s(model),
        "--seed",
        "7",
        "--cleanup",
    ]);
    let rows = |t: &str| {
        t.lines()
            .skip_while(|l| !l.starts_with("test "))
            .map(|l| l.get(..30).unwrap_or(l).to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        rows(&stdout(&same)),
        rows(out),
        "the same seed makes the same choices"
    );
}

/// Bad options: one line naming the value, exit 2.
fn compilebench_refuses_bad_input(lab: &Lab) {
    for (args, want) in [
        (vec!["compilebench", "-D", "/nonexistent"], "/nonexistent"),
        (vec!["compilebench", "-D", "/dev/shm", "-i", "-1"], "-i -1"),
        (vec!["compilebench", "-D", "/dev/shm", "-b", "0"], "-b 0"),
        (
            vec![
                "compilebench",
                "-D",
                "/dev/shm",
                "--tree-from",
                "/nonexistent",
            ],
            "--tree-from",
        ),
    ] {
        let o = lab.run(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(stderr(&o).contains(want), "{}", stderr(&o));
    }
}
