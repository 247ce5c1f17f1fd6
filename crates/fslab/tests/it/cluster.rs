//! `[cluster]` experiments: `fslab run` on the head node of namespace
//! hosts (fslab_cluster::netns), starting each cell's workload with mpirun
//! across the hosts, each host's filesystem made by fslab itself (or a
//! shared directory), a host killed mid-phase, and the bad input.

#[cfg(feature = "mpi")]
mod with_mpi {
    use std::path::PathBuf;
    use std::process::{Command, Output};

    use fslab_cluster::netns::{leftovers, NsHosts};

    use crate::support::{need_tool, privileged, stderr, stdout, Lab};

    fn setup(n: usize, lab: &Lab) -> Option<NsHosts> {
        if !need_tool("mpirun") || !need_tool("ip") || !privileged("namespace hosts") {
            return None;
        }
        Some(NsHosts::new(n, lab.tmp.path()).unwrap())
    }

    /// The `[cluster]` section that runs `per_host` ranks on every host.
    fn cluster(hosts: &NsHosts, per_host: usize, more: &str) -> String {
        let names: Vec<String> = hosts
            .hosts
            .iter()
            .map(|h| format!("\"{}\"", h.addr))
            .collect();
        let launcher: Vec<String> = hosts
            .launcher()
            .iter()
            .map(|a| format!("\"{a}\""))
            .collect();
        format!(
            "[cluster]\nhosts = [{}]\nranks_per_host = {per_host}\nlauncher = [{}]\n{more}",
            names.join(", "),
            launcher.join(", ")
        )
    }

    /// `fslab ARGS` on the head node (as a login node would run it), with
    /// the lab's store and state directory, within `secs`.
    fn on_head(hosts: &NsHosts, lab: &Lab, secs: u32, args: &[&str]) -> Command {
        let mut c = Command::new("timeout");
        c.arg(secs.to_string())
            .args(["nsenter", "-t", &hosts.head().holder_pid().to_string()])
            .args(["-n", "-m", "-u"])
            .arg(assert_cmd::cargo::cargo_bin("fslab"))
            .arg("--db")
            .arg(lab.db())
            .args(args)
            .env("FSLAB_STATE_DIR", lab.state())
            .env_remove("FSLAB_DB")
            .current_dir(lab.tmp.path());
        c
    }

    fn export(lab: &Lab, id: i64) -> serde_json::Value {
        let o = lab.run(&["results", "export", &id.to_string()]);
        assert!(o.status.success(), "{}", stderr(&o));
        serde_json::from_slice(&o.stdout).unwrap()
    }

    fn show(o: &Output) -> String {
        format!("{}\n{}", stdout(o), stderr(o))
    }

    #[test]
    fn a_shared_directory_experiment_runs_each_cell_across_the_hosts_in_a_fresh_subdirectory() {
        let lab = Lab::new();
        let Some(hosts) = setup(2, &lab) else { return };
        let id = hosts.id.clone();
        let shared: PathBuf = lab.path("shared");
        std::fs::create_dir(&shared).unwrap();
        let exp = lab.experiment(
            "shared.toml",
            &format!(
                "name = \"cluster-shared\"\nrepetitions = 2\n[workload]\nkind = \"mdtest\"\n\
                 args = [\"-n\", \"300\", \"-F\", \"-u\"]\nprobes = [\"none\"]\n{}",
                cluster(
                    &hosts,
                    2,
                    &format!("shared_dir = \"{}\"\n", shared.display())
                )
            ),
        );
        let o = on_head(&hosts, &lab, 120, &["run", exp.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", show(&o));
        let run = export(&lab, 1);
        assert_eq!(run["run"]["status"], "complete", "{}", show(&o));
        let facts = run["run"]["params"]["mpi"]["host_facts"]
            .as_array()
            .unwrap();
        assert_eq!(facts.len(), 2, "{run}");
        for (i, f) in facts.iter().enumerate() {
            assert_eq!(f["host"], hosts.hosts[i].name.as_str());
            assert_eq!(f["ranks"], serde_json::json!([2 * i, 2 * i + 1]));
        }
        // Each run's subdirectory is gone; the directory keeps fslab's marker.
        let left: Vec<String> = std::fs::read_dir(&shared)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(left, [".fslab-directory-device"]);
        assert_eq!(lab.leftovers(), Vec::<String>::new());
        drop(hosts);
        assert_eq!(leftovers(&id), Vec::<String>::new());
    }
}
