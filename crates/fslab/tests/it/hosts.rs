//! Several hosts on one machine: namespace hosts (fslab_cluster::netns),
//! each with its own network, mounts and hostname, and its own ext4 on a
//! loop device mounted at the same path; mpirun launches into them through
//! its remote agent hook, and the ranks talk TCP between them.

#[cfg(feature = "mpi")]
mod with_mpi {
    use std::path::{Path, PathBuf};
    use std::process::{Command, Output};

    use fslab_cluster::netns::{leftovers, NsHosts};
    use fslab_lab::image::Image;
    use fslab_lab::loopdev::LoopDevice;
    use fslab_lab::mkfs::{mkfs_argv, run_mkfs, FsType};

    use crate::support::{need_tool, privileged, stderr, stdout, Lab};

    /// Each host's own ext4, mounted at `mnt` in the host's mount namespace
    /// only. Dropped before the hosts (declared after them).
    struct HostDisks {
        devs: Vec<LoopDevice>,
        _images: Vec<Image>,
    }

    fn disks(hosts: &NsHosts, lab: &Lab, mnt: &Path) -> HostDisks {
        let (mut devs, mut images) = (Vec::new(), Vec::new());
        std::fs::create_dir_all(mnt).unwrap();
        for (i, h) in hosts.hosts.iter().enumerate() {
            let image = Image::create(&lab.path(&format!("host{i}.img")), 64 << 20).unwrap();
            let dev = LoopDevice::attach(image.path(), false).unwrap();
            run_mkfs(&mkfs_argv(&FsType::Ext4, &[], dev.path())).unwrap();
            let o = h
                .command("mount")
                .arg(dev.path())
                .arg(mnt)
                .output()
                .unwrap();
            assert!(o.status.success(), "{}", stderr(&o));
            devs.push(dev);
            images.push(image);
        }
        HostDisks {
            devs,
            _images: images,
        }
    }

    fn setup(n: usize, lab: &Lab) -> Option<NsHosts> {
        if !need_tool("mpirun") || !need_tool("ip") || !privileged("namespace hosts") {
            return None;
        }
        Some(NsHosts::new(n, lab.tmp.path()).unwrap())
    }

    /// `fslab ARGS` on `per_host` ranks of every host, with a time limit.
    fn mpirun(hosts: &NsHosts, lab: &Lab, per_host: usize, args: &[&str]) -> Command {
        let mut c = Command::new("timeout");
        c.args([
            "120",
            "nsenter",
            "-t",
            &hosts.hosts[0].holder_pid().to_string(),
        ])
        .args(["-n", "-m", "-u", "mpirun"])
        .args(fslab_cluster::netns::mpirun_args(
            &hosts
                .hosts
                .iter()
                .map(|h| h.addr.to_string())
                .collect::<Vec<_>>(),
            per_host,
            Some(&hosts.agent),
            Some(&hosts.cidr),
        ))
        .arg(assert_cmd::cargo::cargo_bin("fslab"))
        .arg("--db")
        .arg(lab.db())
        .args(args)
        .current_dir(lab.tmp.path());
        c
    }

    fn export(lab: &Lab, id: i64) -> serde_json::Value {
        let o = lab.run(&["results", "export", &id.to_string()]);
        assert!(o.status.success(), "{}", stderr(&o));
        serde_json::from_slice(&o.stdout).unwrap()
    }

    fn ls(hosts: &NsHosts, i: usize, dir: &Path) -> Vec<String> {
        let o: Output = hosts.hosts[i].command("ls").arg(dir).output().unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        stdout(&o).lines().map(String::from).collect()
    }

    #[test]
    fn createmany_on_three_namespace_hosts_is_one_run_with_each_hosts_filesystem_and_clock() {
        let lab = Lab::new();
        let Some(hosts) = setup(3, &lab) else { return };
        let id = hosts.id.clone();
        let mnt: PathBuf = lab.path("mnt");
        let disks = disks(&hosts, &lab, &mnt);
        let fmt = mnt.join("f");
        let o = mpirun(
            &hosts,
            &lab,
            2,
            &["createmany", "-m", fmt.to_str().unwrap(), "1500"],
        )
        .output()
        .unwrap();
        assert!(o.status.success(), "{}\n{}", stdout(&o), stderr(&o));
        let out = stdout(&o);
        let names: Vec<&str> = hosts.hosts.iter().map(|h| h.name.as_str()).collect();
        assert_eq!(
            out.lines().next().unwrap(),
            format!(
                "fslab createmany: 6 MPI ranks on 3 hosts: {} (2 ranks), {} (2 ranks), {} (2 ranks)",
                names[0], names[1], names[2]
            ),
            "{out}"
        );
        // Each host's filesystem holds its own two ranks' files, and only
        // those: rank 2 and 3 on host 1, say.
        for i in 0..3 {
            let want: Vec<String> = (2 * i..2 * i + 2)
                .map(|r| format!("rank{r:04}"))
                .chain(["lost+found".to_string()])
                .collect();
            let mut got = ls(&hosts, i, &mnt);
            got.sort();
            let mut want = want;
            want.sort();
            assert_eq!(got, want, "host {i}");
            let first = mnt.join(format!("rank{:04}", 2 * i));
            assert_eq!(ls(&hosts, i, &first).len(), 1500);
        }
        // The machine's own view of the path is the empty directory.
        assert_eq!(std::fs::read_dir(&mnt).unwrap().count(), 0);
        let run = export(&lab, 1);
        let mpi = &run["run"]["params"]["mpi"];
        assert_eq!(run["run"]["status"], "complete");
        let facts = mpi["host_facts"].as_array().unwrap();
        assert_eq!(facts.len(), 3, "{mpi}");
        for (i, f) in facts.iter().enumerate() {
            assert_eq!(f["host"], names[i]);
            assert_eq!(f["ranks"], serde_json::json!([2 * i, 2 * i + 1]));
            assert_eq!(f["fs_type"], "ext4");
            assert_eq!(f["mount_source"], disks.devs[i].path().to_str().unwrap());
            // One kernel, one clock: every offset within its own
            // uncertainty (half the round trip) and 1 ms.
            for at in ["clock_start", "clock_end"] {
                let c = &f[at];
                let (off, rtt) = (
                    c["offset_ns"].as_i64().unwrap(),
                    c["rtt_ns"].as_i64().unwrap(),
                );
                assert!(rtt >= 0 && off.abs() <= rtt / 2 + 1_000_000, "{f}");
            }
        }
        assert!(
            facts[1]["clock_start"]["rtt_ns"].as_i64().unwrap() > 0,
            "measured over TCP"
        );
        // Every rank's create phase on rank 0's clock: after its start,
        // and within the run.
        let lines = mpi["timelines"].as_array().unwrap();
        assert_eq!(lines.len(), 6);
        for t in lines {
            let span = &t["spans"][0];
            assert_eq!(span[0], "create", "{t}");
            let (a, b) = (span[1].as_f64().unwrap(), span[2].as_f64().unwrap());
            assert!(a >= 0.0 && b >= a && b < 120.0, "{t}");
        }
        // The merged histogram's count is the sum of the ranks' counts.
        let counts = &mpi["latency_counts"][0];
        let per_rank: Vec<u64> = counts["per_rank"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_u64().unwrap())
            .collect();
        assert_eq!(per_rank, vec![1500; 6]);
        let merged = run["latency"]
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["phase"] == counts["phase"] && l["op"] == counts["op"])
            .unwrap();
        assert_eq!(merged["count"], per_rank.iter().sum::<u64>());
        drop(disks);
        drop(hosts);
        assert_eq!(leftovers(&id), Vec::<String>::new());
    }

    #[test]
    fn a_host_killed_mid_run_is_named_and_the_other_hosts_work_is_kept() {
        let lab = Lab::new();
        let Some(hosts) = setup(2, &lab) else { return };
        let dir = lab.path("d");
        std::fs::create_dir(&dir).unwrap();
        // A create phase of some seconds per rank; host 1 dies in it.
        let child = mpirun(
            &hosts,
            &lab,
            2,
            &[
                "fsmark",
                "-d",
                dir.to_str().unwrap(),
                "-n",
                "40000",
                "-s",
                "0",
                "-L",
                "1",
            ],
        )
        .arg("--probes")
        .arg("none")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
        // Once every rank is making files (past the start's collectives:
        // a host lost in those ends the job before anything is measured),
        // host 1's processes are killed.
        let making = |r: usize| {
            let d = dir.join(format!("rank{r:04}"));
            let entries = |d: &Path| std::fs::read_dir(d).into_iter().flatten().flatten();
            entries(&d)
                .flat_map(|e| std::iter::once(e.path()).chain(entries(&e.path()).map(|f| f.path())))
                .take(2000)
                .count()
                >= 2000
        };
        let started = crate::support::wait_for(60, || (0..4).all(making));
        assert!(started, "the ranks never started");
        assert!(hosts.kill_processes(1) > 0, "host 1 had processes");
        let o = child.wait_with_output().unwrap();
        let (out, err) = (stdout(&o), stderr(&o));
        assert!(!o.status.success(), "{out}\n{err}");
        assert_ne!(o.status.code(), Some(124), "mpirun hung: {err}");
        let lost = format!(
            "host {} failed or disappeared (ranks 2, 3 sent no results)",
            hosts.hosts[1].name
        );
        assert!(
            err.contains(&format!("fslab: fsmark: stopped: {lost}")),
            "{out}\n{err}"
        );
        assert!(out.contains("rank 0: interrupted"), "{out}");
        assert!(
            out.contains(&format!(
                "rank 2: failed: lost: no results from rank 2 on host {}",
                hosts.hosts[1].name
            )),
            "{out}"
        );
        let run = export(&lab, 1);
        assert_eq!(run["run"]["status"], "failed");
        assert_eq!(run["run"]["error"], lost.as_str());
        // Host 0's ranks' files made before the signal are kept: more than
        // none, fewer than their 800 000.
        let create = &run["phases"][0];
        let ops = create["ops"].as_u64().unwrap();
        assert!(ops > 0 && ops < 800_000, "{create}");
        assert_eq!(create["complete"], false);
        assert_eq!(crate::support::loops(&run)[0].files, ops);
        let status: Vec<&str> = run["run"]["params"]["mpi"]["rank_status"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s[1].as_str().unwrap())
            .collect();
        assert_eq!(status, ["interrupted", "interrupted", "failed", "failed"]);
        // The spool beside the store is gone, and so are the hosts.
        let spools: Vec<_> = std::fs::read_dir(lab.tmp.path())
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().contains(".ranks-"))
            .collect();
        assert!(spools.is_empty(), "{spools:?}");
        let id = hosts.id.clone();
        drop(hosts);
        assert_eq!(leftovers(&id), Vec::<String>::new());
    }
}
