//! Scale models that keep the seeds' mechanisms, shown by the run's own
//! numbers: seed 004's htree depth at 1 KiB blocks.

use fslab_store::Store;

use crate::support::*;

/// A run's stored metric `source phase name`.
fn metric(lab: &Lab, run: i64, source: &str, name: &str) -> Option<f64> {
    Store::open(&lab.db())
        .unwrap()
        .metrics(run)
        .unwrap()
        .into_iter()
        .find(|m| m.source == source && m.name == name)
        .map(|m| m.value)
}

#[test]
fn large_dir_takes_a_1k_block_directory_into_a_third_htree_level_where_the_default_stops_full_at_two(
) {
    if !privileged("loop devices and mkfs") {
        return;
    }
    let lab = Lab::new();
    let f = lab.experiment(
        "htree.toml",
        r#"
name = "htree"
order = "sequential"
[device]
size = "8G"
image_dir = "IMAGES"
[workload]
kind = "createmany"
args = ["-m", "{dir}/f", "480000"]
probes = ["none"]
[[target]]
fs = "ext4"
mkfs_options = ["-b 1024 -I 256"]
workload_args = ["--until-full"]
[[variant]]
name = "default"
[[variant]]
name = "large_dir"
mkfs_options = "-O large_dir"
"#,
    );
    let o = lab.run_cmd().arg("run").arg(&f).output().unwrap();
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    let e = Store::open(&lab.db()).unwrap().experiment(1).unwrap();
    let (default, large) = (
        e.cell_runs[0].run_id.unwrap(),
        e.cell_runs[1].run_id.unwrap(),
    );
    // Without large_dir the directory is full at two levels, said so, and the cell completes.
    assert_eq!(metric(&lab, default, "htree", "levels"), Some(2.0));
    let made = metric(&lab, default, "createmany", "total").unwrap();
    assert!((250_000.0..480_000.0).contains(&made), "{made}");
    assert!(
        e.cell_runs[0]
            .output
            .contains("the directory's htree is full: 2 levels"),
        "{}",
        e.cell_runs[0].output
    );
    assert!(metric(&lab, default, "createmany", "ops/second, 2-level htree").is_some());
    assert_eq!(
        metric(&lab, default, "createmany", "ops/second, 3-level htree"),
        None
    );
    // With it the directory grows a third level, and the rate there is its own number.
    assert_eq!(metric(&lab, large, "htree", "levels"), Some(3.0));
    assert_eq!(metric(&lab, large, "createmany", "total"), Some(480_000.0));
    assert!(metric(&lab, large, "createmany", "ops/second, 3-level htree").is_some());
    assert!(
        stdout(&o).contains("htree levels"),
        "the summary names it: {}",
        stdout(&o)
    );
    assert_eq!(lab.leftovers(), Vec::<String>::new());
}
