//! Launched as HPC users launch: a `[cluster]` whose hosts are the Slurm
//! job's (`hosts_from = "slurm"`: SLURM_JOB_NODELIST expanded, its tasks
//! per node the ranks per host), ranks started by srun (`launch =
//! "srun"`), and `fslab --version` saying whether MPI is built in.

use crate::support::*;

fn experiment(lab: &Lab, more: &str) -> std::path::PathBuf {
    let shared = lab.path("shared");
    std::fs::create_dir_all(&shared).unwrap();
    lab.experiment(
        "slurm.toml",
        &format!(
            "name = \"slurm\"\n[workload]\nkind = \"mdtest\"\nargs = [\"-n\", \"10\", \"-F\"]\n\
             probes = [\"none\"]\n[cluster]\nhosts_from = \"slurm\"\nshared_dir = \"{}\"\n{more}",
            shared.display()
        ),
    )
}

fn dry_run(lab: &Lab, f: &std::path::Path, nodelist: Option<&str>) -> std::process::Output {
    let mut c = lab.run_cmd();
    c.args(["run", "--dry-run"])
        .arg(f)
        .env("SLURM_NTASKS_PER_NODE", "2");
    match nodelist {
        Some(l) => c.env("SLURM_JOB_NODELIST", l),
        None => c.env_remove("SLURM_JOB_NODELIST"),
    };
    c.output().unwrap()
}

#[test]
fn a_slurm_jobs_hosts_come_from_its_nodelist_and_its_ranks_from_srun() {
    let lab = Lab::new();
    let f = experiment(&lab, "");
    let o = dry_run(&lab, &f, Some("127.0.0.[1-2]"));
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains("cluster: 2 host(s) x 2 rank(s) = 4 ranks: 127.0.0.1, 127.0.0.2 (from the Slurm job's SLURM_JOB_NODELIST)"),
        "{text}"
    );
    assert!(
        text.contains("-H 127.0.0.1:2,127.0.0.2:2"),
        "mpirun by default: {text}"
    );
    // srun starts the ranks when asked; without Slurm's tools it is refused.
    let f = experiment(&lab, "launch = \"srun\"\nlauncher = [\"--mpi=pmix\"]\n");
    let o = dry_run(&lab, &f, Some("127.0.0.[1-2]"));
    if fslab_lab::mkfs::find_tool("srun").is_some() {
        assert!(
            stdout(&o).contains("ranks started by: srun --nodes=2 --ntasks=4"),
            "{}",
            stdout(&o)
        );
    } else {
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(
            stderr(&o).contains("launch = \"srun\" needs Slurm's srun"),
            "{}",
            stderr(&o)
        );
    }
    // Outside a job, or with a list that does not expand: one line, 2.
    let f = experiment(&lab, "");
    for (list, says) in [
        (
            None,
            "SLURM_JOB_NODELIST is not set: run fslab inside a Slurm job",
        ),
        (Some("node[3-1]"), "range 3-1 runs backwards"),
    ] {
        let o = dry_run(&lab, &f, list);
        assert_eq!(o.status.code(), Some(2), "{list:?}: {}", stderr(&o));
        assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
        assert!(stderr(&o).contains(says), "{list:?}: {}", stderr(&o));
    }
}

#[test]
fn the_version_says_whether_mpi_is_built_in() {
    let o = Lab::new().run(&["--version"]);
    assert!(o.status.success());
    let v = stdout(&o);
    let want = if cfg!(feature = "mpi") {
        "MPI: built in"
    } else {
        "MPI: not built in (cargo build --features mpi)"
    };
    assert!(v.starts_with("fslab ") && v.contains(want), "{v}");
}
