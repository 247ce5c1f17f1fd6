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

    /// Mounts of `lab`'s state directory (where cells mount) in host `i`'s
    /// mount namespace.
    fn mounts_on(hosts: &NsHosts, i: usize, lab: &Lab) -> Vec<String> {
        let pid = hosts.hosts[i].holder_pid();
        std::fs::read_to_string(format!("/proc/{pid}/mountinfo"))
            .unwrap()
            .lines()
            .filter(|l| l.contains(lab.state().to_str().unwrap()))
            .map(String::from)
            .collect()
    }

    #[test]
    fn each_host_makes_its_own_filesystem_for_every_run_and_nothing_is_left_behind() {
        let lab = Lab::new();
        let Some(hosts) = setup(3, &lab) else { return };
        let id = hosts.id.clone();
        let exp = lab.experiment(
            "per-host.toml",
            &format!(
                "name = \"cluster-per-host\"\nrepetitions = 1\n\
                 [device]\nsize = \"256M\"\nimage_dir = \"IMAGES\"\n\
                 [workload]\nkind = \"createmany\"\nargs = [\"-m\", \"{{dir}}/f\", \"2000\"]\n\
                 probes = [\"none\"]\n\
                 [[target]]\nfs = \"ext4\"\nmkfs_options = [\"\", \"-O ^has_journal\"]\n{}",
                cluster(&hosts, 2, "")
            ),
        );
        let t = std::time::Instant::now();
        let o = on_head(&hosts, &lab, 300, &["run", exp.to_str().unwrap()])
            .output()
            .unwrap();
        eprintln!("{} in {:.1} s", show(&o), t.elapsed().as_secs_f64());
        assert!(o.status.success(), "{}", show(&o));
        let e = lab.latest_experiment();
        let store = fslab_store::Store::open_read(&lab.db()).unwrap();
        let runs = store.experiment(e).unwrap().cell_runs;
        assert_eq!(runs.len(), 2, "{}", show(&o));
        for r in &runs {
            assert_eq!(r.status, Some(fslab_record::RunStatus::Complete), "{r:?}");
            let run = export(&lab, r.run_id.unwrap());
            let facts = run["run"]["params"]["mpi"]["host_facts"]
                .as_array()
                .unwrap();
            assert_eq!(facts.len(), 3, "{run}");
            let mut devices: Vec<String> = Vec::new();
            for (i, f) in facts.iter().enumerate() {
                // Each host's ranks worked on its own ext4, on a loop
                // device of its own, at the one mount path.
                assert_eq!(f["host"], hosts.hosts[i].name.as_str());
                assert_eq!(f["ranks"], serde_json::json!([2 * i, 2 * i + 1]));
                assert_eq!(f["fs_type"], "ext4", "{f}");
                let dev = f["mount_source"].as_str().unwrap().to_string();
                assert!(
                    r.loop_device
                        .contains(&format!("{}: {dev}", hosts.hosts[i].name)),
                    "{} {f}",
                    r.loop_device
                );
                assert!(
                    f["mount_point"]
                        .as_str()
                        .unwrap()
                        .starts_with(lab.state().to_str().unwrap()),
                    "{f}"
                );
                devices.push(dev);
            }
            devices.sort();
            devices.dedup();
            assert_eq!(devices.len(), 3, "three hosts, three devices: {facts:?}");
            assert_eq!(run["phases"][0]["ops"], 6 * 2000, "{run}");
        }
        let o = lab.run(&["compare"]);
        assert!(o.status.success(), "{}", show(&o));
        assert!(stdout(&o).contains("-O ^has_journal"), "{}", stdout(&o));
        // Nothing left: images, journals, loop devices, mounts on any host.
        assert_eq!(lab.leftovers(), Vec::<String>::new());
        for i in 0..3 {
            assert_eq!(mounts_on(&hosts, i, &lab), Vec::<String>::new(), "host {i}");
        }
        drop(hosts);
        assert_eq!(leftovers(&id), Vec::<String>::new());
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
