//! `[cluster]` experiments: `fslab run` on the head node of namespace
//! hosts (fslab_cluster::netns), starting each cell's workload with mpirun
//! across the hosts, each host's filesystem made by fslab itself (or a
//! shared directory), a stonewall with every host's probes, a host killed
//! mid-phase, and the bad input.

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

    /// Runs the experiment file `exp` on the head node within `secs`,
    /// requires it to succeed, and returns its cell runs and what it said.
    fn run_on_head(
        hosts: &NsHosts,
        lab: &Lab,
        secs: u32,
        exp: &std::path::Path,
    ) -> (Vec<fslab_model::CellRunInfo>, String) {
        let t = std::time::Instant::now();
        let o = on_head(hosts, lab, secs, &["run", exp.to_str().unwrap()])
            .output()
            .unwrap();
        eprintln!("{} in {:.1} s", show(&o), t.elapsed().as_secs_f64());
        assert!(o.status.success(), "{}", show(&o));
        let store = fslab_store::Store::open_read(&lab.db()).unwrap();
        let runs = store.experiment(lab.latest_experiment()).unwrap().cell_runs;
        (runs, show(&o))
    }

    /// Nothing left: the lab's images, journals and loop devices, the
    /// mounts on every host, and (once dropped) the hosts themselves.
    fn assert_nothing_left(hosts: NsHosts, lab: &Lab) {
        assert_eq!(lab.leftovers(), Vec::<String>::new());
        for i in 0..hosts.hosts.len() {
            assert_eq!(mounts_on(&hosts, i, lab), Vec::<String>::new(), "host {i}");
        }
        let id = hosts.id.clone();
        drop(hosts);
        assert_eq!(leftovers(&id), Vec::<String>::new());
    }

    #[test]
    fn each_host_makes_its_own_filesystem_for_every_run_and_nothing_is_left_behind() {
        let lab = Lab::new();
        let Some(hosts) = setup(3, &lab) else { return };
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
        let (runs, said) = run_on_head(&hosts, &lab, 300, &exp);
        assert_eq!(runs.len(), 2, "{said}");
        for r in &runs {
            assert_eq!(r.status, Some(fslab_model::RunStatus::Complete), "{r:?}");
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
        assert_nothing_left(hosts, &lab);
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
        // Each host's clock against rank 0's is in the result.
        let shown = lab.run(&["results", "show", "1"]);
        let clocks = stdout(&shown);
        let at = clocks.find("clock per host").expect("clocks shown");
        for h in &hosts.hosts {
            assert!(clocks[at..].contains(h.name.as_str()), "{clocks}");
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

    #[test]
    fn an_external_mpi_program_runs_under_the_clusters_mpirun_and_its_output_is_parsed() {
        let lab = Lab::new();
        let Some(hosts) = setup(2, &lab) else { return };
        let id = hosts.id.clone();
        let shared: PathBuf = lab.path("shared");
        std::fs::create_dir(&shared).unwrap();
        // The program: fslab's own mdtest, an MPI program fslab did not
        // start as its ranks (its store is the cell's, not fslab run's).
        let program = assert_cmd::cargo::cargo_bin("fslab");
        let exp = lab.experiment(
            "external.toml",
            &format!(
                "name = \"cluster-external\"\nrepetitions = 1\n[workload]\nkind = \"command\"\n\
                 args = [\"{}\", \"--db\", \"{{dir}}/its.sqlite\", \"mdtest\", \"--probes\", \"none\", \
                 \"-n\", \"300\", \"-F\", \"-u\", \"-P\", \"-d\", \"{{dir}}/md\"]\nparser = \"mdtest\"\n{}",
                program.display(),
                cluster(&hosts, 2, &format!("shared_dir = \"{}\"\n", shared.display()))
            ),
        );
        let o = on_head(&hosts, &lab, 180, &["run", exp.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", show(&o));
        let run = export(&lab, 1);
        assert_eq!(run["run"]["status"], "complete", "{}", show(&o));
        assert_eq!(run["run"]["workload"], "command");
        let launcher: Vec<String> =
            serde_json::from_value(run["run"]["params"]["launcher"].clone()).unwrap();
        let hosts_arg = launcher
            .iter()
            .position(|a| a == "-H")
            .map(|i| launcher[i + 1].clone());
        let want: Vec<String> = hosts
            .hosts
            .iter()
            .map(|h| format!("{}:2", h.addr))
            .collect();
        assert_eq!(
            hosts_arg,
            Some(want.join(",")),
            "mpirun on the cluster's hosts: {launcher:?}"
        );
        let phases: Vec<&str> = run["phases"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["phase"].as_str().unwrap())
            .collect();
        assert_eq!(
            phases[0], "fslab",
            "the program's own phase first: {phases:?}"
        );
        assert!(
            phases.contains(&"file creation"),
            "mdtest's phases: {phases:?}"
        );
        let rate = metrics_named(&run, "rate");
        let creation = rate
            .iter()
            .find(|m| m.source == "mdtest" && m.phase.as_deref() == Some("file creation"))
            .expect("mdtest's file creation rate, parsed");
        assert!(creation.value > 0.0);
        // Its output is kept: mdtest's header says it ran as 4 ranks on 2 hosts.
        let kept = lab.run(&["results", "output", "1"]);
        assert!(
            stdout(&kept).contains("launched with 4 total task(s) on 2 node(s)"),
            "{}",
            stdout(&kept)
        );
        assert_eq!(lab.leftovers(), Vec::<String>::new());
        drop(hosts);
        assert_eq!(leftovers(&id), Vec::<String>::new());
    }

    #[test]
    fn an_external_mpi_program_runs_on_each_hosts_own_filesystem_in_its_directory() {
        let lab = Lab::new();
        let Some(hosts) = setup(2, &lab) else { return };
        // fslab's createmany as a program: each rank in {dir}/rankNNNN on
        // its host's own ext4, started in {dir}, which each host's lab made.
        let program = assert_cmd::cargo::cargo_bin("fslab");
        let exp = lab.experiment(
            "external-per-host.toml",
            &format!(
                "name = \"cluster-external-per-host\"\nrepetitions = 1\n\
                 [device]\nsize = \"256M\"\nimage_dir = \"IMAGES\"\n\
                 [workload]\nkind = \"command\"\nargs = [\"{}\", \"--db\", \"{{dir}}/its.sqlite\", \
                 \"createmany\", \"--probes\", \"none\", \"-m\", \"{{dir}}/f\", \"500\"]\nparser = \"none\"\n\
                 [[target]]\nfs = \"ext4\"\n{}",
                program.display(),
                cluster(&hosts, 2, "")
            ),
        );
        let (runs, said) = run_on_head(&hosts, &lab, 300, &exp);
        assert_eq!(runs.len(), 1, "{said}");
        assert_eq!(
            runs[0].status,
            Some(fslab_model::RunStatus::Complete),
            "{said}"
        );
        let run = export(&lab, runs[0].run_id.unwrap());
        let launcher: Vec<String> =
            serde_json::from_value(run["run"]["params"]["launcher"].clone()).unwrap();
        assert!(
            launcher
                .windows(2)
                .any(|w| w[0] == "-wdir" && w[1] == "{dir}"),
            "the ranks start in the cell's directory: {launcher:?}"
        );
        // Its output is kept: 4 ranks on the 2 hosts made their 2000 names.
        let kept = stdout(&lab.run(&["results", "output", &runs[0].run_id.unwrap().to_string()]));
        assert!(kept.contains("4 MPI ranks on 2 hosts"), "{kept}");
        assert!(
            kept.contains("create mknod       :           2000"),
            "{kept}"
        );
        assert_nothing_left(hosts, &lab);
    }

    /// The metrics of `run`'s JSON named `name` (in any phase).
    fn metrics_named(run: &serde_json::Value, name: &str) -> Vec<fslab_model::Metric> {
        let all: Vec<fslab_model::Metric> = serde_json::from_value(run["metrics"].clone()).unwrap();
        all.into_iter().filter(|m| m.name == name).collect()
    }

    #[test]
    fn two_cells_three_repetitions_on_three_hosts_with_a_stonewall_and_every_hosts_probes() {
        let lab = Lab::new();
        let Some(hosts) = setup(3, &lab) else { return };
        // fs_mark's create loop stops at a 1 s stonewall, long before its
        // 200,000 files a rank; every rank then wears out to the largest
        // count any rank reached (each host on its own filesystem).
        let exp = lab.experiment(
            "stonewall.toml",
            &format!(
                "name = \"cluster-stonewall\"\nrepetitions = 3\n\
                 [device]\nsize = \"2G\"\nimage_dir = \"IMAGES\"\n\
                 [workload]\nkind = \"fsmark\"\n\
                 args = [\"-n\", \"200000\", \"-s\", \"0\", \"-S\", \"0\", \"-L\", \"1\", \"--stonewall\", \"1\"]\n\
                 probes = [\"mem\", \"blockio\"]\n\
                 [[target]]\nfs = \"ext4\"\nmkfs_options = [\"-N 600000\", \"-N 600000 -O ^has_journal\"]\n{}",
                cluster(&hosts, 2, "")
            ),
        );
        let (runs, said) = run_on_head(&hosts, &lab, 600, &exp);
        assert_eq!(runs.len(), 6, "2 cells x 3 repetitions: {said}");
        for r in &runs {
            assert_eq!(r.status, Some(fslab_model::RunStatus::Complete), "{r:?}");
            let id = r.run_id.unwrap();
            let run = export(&lab, id);
            // The stonewall: every rank's count at it, and after the
            // wear-out every rank made exactly the most any rank had.
            let per_rank: Vec<f64> = (0..6)
                .map(|k| {
                    let m = metrics_named(&run, &format!("items at stonewall, rank {k}"));
                    assert_eq!(m.len(), 1, "rank {k}: {}", run["metrics"]);
                    m[0].value
                })
                .collect();
            let most = per_rank.iter().copied().fold(0.0, f64::max);
            assert!(most > 0.0 && most < 200_000.0, "{per_rank:?}");
            let create = run["phases"]
                .as_array()
                .unwrap()
                .iter()
                .find(|p| p["phase"] == "create")
                .unwrap_or_else(|| panic!("{}", run["phases"]));
            assert_eq!(create["ops"].as_f64().unwrap(), 6.0 * most, "{per_rank:?}");
            assert_eq!(metrics_named(&run, "wear-out rate").len(), 1, "{run}");
            // Probes on every host, beside its ranks, kept per host.
            let facts = run["run"]["params"]["mpi"]["host_facts"]
                .as_array()
                .unwrap();
            assert_eq!(facts.len(), 3, "{run}");
            for (i, f) in facts.iter().enumerate() {
                assert_eq!(f["host"], hosts.hosts[i].name.as_str());
                let probes: Vec<fslab_model::Metric> =
                    serde_json::from_value(f["probes"].clone()).unwrap();
                let writes: Vec<&fslab_model::Metric> = probes
                    .iter()
                    .filter(|m| m.source == "blockio" && m.phase.as_deref() == Some("create"))
                    .collect();
                assert!(!writes.is_empty(), "host {i}'s probes: {probes:?}");
            }
            // `results show` lays them out a column per host.
            let o = lab.run(&["results", "show", &id.to_string()]);
            assert!(o.status.success(), "{}", show(&o));
            let text = stdout(&o);
            let table = text
                .split("probes per host:\n")
                .nth(1)
                .unwrap_or_else(|| panic!("{text}"));
            if r.run_id == runs[0].run_id {
                eprintln!("probes per host:\n{table}");
            }
            let head = table.lines().next().unwrap();
            for h in &hosts.hosts {
                assert!(head.contains(h.name.as_str()), "{head}");
            }
        }
        let o = lab.run(&["compare"]);
        assert!(o.status.success(), "{}", show(&o));
        assert!(stdout(&o).contains("stonewall rate"), "{}", stdout(&o));
        // The report has every host's probes too.
        let o = lab.run(&["report", "-o", "-"]);
        assert!(o.status.success(), "{}", show(&o));
        let html = stdout(&o);
        assert!(
            html.contains("probes per host"),
            "no per-host probes in the report"
        );
        for h in &hosts.hosts {
            assert!(
                html.contains(h.name.as_str()),
                "{} not in the report",
                h.name
            );
        }
        assert_nothing_left(hosts, &lab);
    }

    #[test]
    fn a_host_killed_mid_phase_is_named_its_cell_failed_and_the_others_work_kept() {
        let lab = Lab::new();
        let Some(hosts) = setup(3, &lab) else { return };
        let exp = lab.experiment(
            "killed.toml",
            &format!(
                "name = \"cluster-killed\"\nrepetitions = 1\n\
                 [device]\nsize = \"2G\"\nimage_dir = \"IMAGES\"\n\
                 [workload]\nkind = \"fsmark\"\n\
                 args = [\"-n\", \"400000\", \"-s\", \"0\", \"-L\", \"1\", \"-S\", \"0\"]\n\
                 probes = [\"none\"]\n\
                 [[target]]\nfs = \"ext4\"\nmkfs_options = [\"-N 1000000\"]\n{}",
                cluster(&hosts, 2, "")
            ),
        );
        let child = on_head(&hosts, &lab, 300, &["run", exp.to_str().unwrap()])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let db = lab.db();
        // Once the ranks have kept the run's description and make files,
        // the third host fails: its ranks and its daemon die.
        assert!(crate::support::ranks_described(&db, 120), "no spool");
        std::thread::sleep(std::time::Duration::from_secs(2));
        assert!(hosts.kill_processes(2) > 0, "host 2 ran nothing");
        let o = child.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(1), "{}", show(&o));
        let store = fslab_store::Store::open(&lab.db()).unwrap();
        let e = store
            .experiment(store.latest_experiment().unwrap().unwrap())
            .unwrap();
        let r = &e.cell_runs[0];
        assert_eq!(r.status, Some(fslab_model::RunStatus::Failed), "{r:?}");
        let error = r.error.clone().unwrap_or_default();
        let lost = &hosts.hosts[2].name;
        assert!(
            error.contains(&format!(
                "host {lost} failed or disappeared (ranks 4, 5 sent no results)"
            )),
            "{r:?}\n{}",
            show(&o)
        );
        for h in &hosts.hosts[..2] {
            assert!(!error.contains(h.name.as_str()), "{error}");
        }
        // What the other hosts' ranks made before they were stopped is kept.
        let run = store.run(r.run_id.expect("the rescued run")).unwrap();
        assert_eq!(run.run.status.as_str(), "failed");
        let status: Vec<String> = run.run.params["mpi"]["rank_status"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s[1].as_str().unwrap().to_string())
            .collect();
        assert_eq!(
            status,
            [
                "interrupted",
                "interrupted",
                "interrupted",
                "interrupted",
                "failed",
                "failed"
            ],
            "{}",
            show(&o)
        );
        let create = &run.phases[0];
        assert!(create.ops > 0 && create.ops < 2_400_000, "{}", create.ops);
        // Every host's lab is gone, the killed host's too.
        assert!(fslab_cluster::rescue::Spool::beside(&db).is_empty());
        assert_nothing_left(hosts, &lab);
    }

    #[test]
    fn a_host_that_cannot_be_reached_is_named_in_one_line_before_anything_is_made() {
        let lab = Lab::new();
        let Some(hosts) = setup(2, &lab) else { return };
        // An address on the hosts' network that no host holds.
        let nobody = hosts.cidr.replace("0/24", "250");
        let text =
            cluster(&hosts, 1, "").replacen("hosts = [", &format!("hosts = [\"{nobody}\", "), 1);
        let exp = lab.experiment(
            "unreachable.toml",
            &format!(
                "name = \"cluster-unreachable\"\n[device]\nsize = \"256M\"\nimage_dir = \"IMAGES\"\n\
                 [workload]\nkind = \"createmany\"\nargs = [\"-m\", \"{{dir}}/f\", \"10\"]\n\
                 probes = [\"none\"]\n[[target]]\nfs = \"ext4\"\n{text}"
            ),
        );
        let o = on_head(&hosts, &lab, 200, &["run", exp.to_str().unwrap()])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{}", show(&o));
        let err = stderr(&o);
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(
            err.contains(&format!("cluster.hosts: host {nobody} ("))
                && err.contains("cannot be reached"),
            "{err}"
        );
        for h in &hosts.hosts {
            assert!(!err.contains(&format!("host {} (", h.addr)), "{err}");
        }
        // Nothing was made, no experiment recorded.
        assert_eq!(lab.leftovers(), Vec::<String>::new());
        assert!(
            !lab.db().exists()
                || fslab_store::Store::open_read(&lab.db())
                    .unwrap()
                    .latest_experiment()
                    .unwrap()
                    .is_none()
        );
    }

    #[test]
    fn a_shared_directory_one_host_cannot_see_is_refused_in_one_line() {
        let lab = Lab::new();
        let Some(hosts) = setup(2, &lab) else { return };
        // A tmpfs on the head node alone: the hosts see the empty directory
        // under it.
        let shared = lab.path("head-only");
        std::fs::create_dir(&shared).unwrap();
        let m = hosts
            .head()
            .command("mount")
            .args(["-t", "tmpfs", "fslab-test", shared.to_str().unwrap()])
            .status()
            .unwrap();
        assert!(m.success());
        let exp = lab.experiment(
            "unshared.toml",
            &format!(
                "name = \"cluster-unshared\"\n[workload]\nkind = \"mdtest\"\n\
                 args = [\"-n\", \"10\", \"-F\"]\nprobes = [\"none\"]\n{}",
                cluster(
                    &hosts,
                    1,
                    &format!("shared_dir = \"{}\"\n", shared.display())
                )
            ),
        );
        let o = on_head(&hosts, &lab, 120, &["run", exp.to_str().unwrap()])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{}", show(&o));
        let err = stderr(&o);
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(
            err.contains(&format!(
                "cluster.shared_dir {} is not shared",
                shared.display()
            )) && err.contains(&hosts.hosts[0].name),
            "{err}"
        );
        let _ = hosts.head().command("umount").arg(&shared).status();
        assert_eq!(lab.leftovers(), Vec::<String>::new());
    }
}

/// `[cluster]` input that cannot be run: one line naming the bad value,
/// exit status 2, before anything is made (no MPI needed to refuse it).
#[test]
fn bad_cluster_input_is_refused_in_one_line() {
    use crate::support::{stderr, Lab};
    let lab = Lab::new();
    std::fs::write(lab.path("nodes"), "node1 slots=2\nnode2 slots=two\n").unwrap();
    let head = "name = \"bad\"\n[device]\nsize = \"256M\"\nimage_dir = \"IMAGES\"\n\
                [workload]\nkind = \"createmany\"\nargs = [\"-m\", \"{dir}/f\", \"10\"]\n\
                [[target]]\nfs = \"ext4\"\n";
    let cases: [(&str, &str); 6] = [
        (
            "hosts = [\"no-such-host.invalid\"]\n",
            "unknown host \"no-such-host.invalid\": the name does not resolve",
        ),
        (
            "hostfile = \"nodes\"\n",
            "line 2: \"slots=two\" is not slots=N or max_slots=N",
        ),
        ("hostfile = \"missing\"\n", "missing"),
        (
            "hosts = [\"localhost\"]\nranks_per_host = 0\n",
            "0 is not from 1 to 1024",
        ),
        ("hosts = []\n", "names no host"),
        (
            "hosts = [\"localhost\"]\nshared_dir = \"relative/dir\"\n",
            "\"relative/dir\" is not an absolute path",
        ),
    ];
    for (cluster, says) in cases {
        let f = lab.experiment("bad.toml", &format!("{head}[cluster]\n{cluster}"));
        for dry in [true, false] {
            let mut args = vec!["run", f.to_str().unwrap()];
            if dry {
                args.push("--dry-run");
            }
            let o = lab.run(&args);
            let err = stderr(&o);
            assert_eq!(o.status.code(), Some(2), "{cluster}: {err}");
            assert_eq!(err.trim().lines().count(), 1, "{cluster}: {err}");
            assert!(err.contains(says), "{cluster}: {err}");
        }
    }
    // mdtest's ranks share rank 0's tree: on hosts with filesystems of
    // their own it cannot run.
    let f = lab.experiment(
        "tree.toml",
        "name = \"tree\"\n[device]\nsize = \"256M\"\nimage_dir = \"IMAGES\"\n\
         [workload]\nkind = \"mdtest\"\nargs = [\"-n\", \"10\", \"-F\"]\n\
         [[target]]\nfs = \"ext4\"\n[cluster]\nhosts = [\"localhost\", \"127.0.0.1\"]\n",
    );
    let o = lab.run(&["run", f.to_str().unwrap(), "--dry-run"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("mdtest's ranks work in one directory tree: on 2 hosts it needs"),
        "{err}"
    );
    assert_eq!(lab.leftovers(), Vec::<String>::new());
}
