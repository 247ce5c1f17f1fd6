//! `[cluster]`: the hosts a cell's workload runs on, through mpirun.
//!
//! ```toml
//! [cluster]
//! hosts = ["node1", "node2"]       # or hostfile = "nodes" (Open MPI's format),
//!                                  # or hosts_from = "slurm" (the job's SLURM_JOB_NODELIST)
//! ranks_per_host = 2               # ranks on every host (>= 1; default: the hostfile's
//!                                  # slots, Slurm's SLURM_NTASKS_PER_NODE, else 1)
//! launch = "mpirun"                # or "srun" (Slurm starts the ranks)
//! launcher = ["--mca", "plm_rsh_agent", "ssh"]   # more mpirun (or srun) options
//! shared_dir = "/mnt/lustre/fslab" # optional: no filesystem is made
//! ```

use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use super::{Cell, Ctx, Device, ImageHost, Machine, SpecError};

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ClusterSpec {
    hosts: Option<Spanned<Vec<String>>>,
    hostfile: Option<Spanned<String>>,
    hosts_from: Option<Spanned<String>>,
    launch: Option<Spanned<String>>,
    ranks_per_host: Option<Spanned<i64>>,
    #[serde(default)]
    launcher: Vec<String>,
    shared_dir: Option<Spanned<String>>,
}

/// The hosts every cell's workload runs on (`[cluster]`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Cluster {
    /// The hosts by name (or address), in the order ranks are placed.
    pub hosts: Vec<String>,
    /// The hostfile they were read from, if any.
    pub hostfile: Option<PathBuf>,
    /// Where else they came from (`slurm`: the job's SLURM_JOB_NODELIST).
    pub hosts_from: Option<String>,
    /// MPI ranks on every host.
    pub ranks_per_host: u32,
    /// What starts the ranks: Open MPI's mpirun, or Slurm's srun.
    pub launch: Launch,
    /// The launcher's further options, as written (`--mca plm_rsh_agent SCRIPT`).
    pub launcher: Vec<String>,
    /// A directory every host sees (a parallel filesystem's): no
    /// filesystem is made; each run works in a fresh subdirectory of it.
    pub shared_dir: Option<PathBuf>,
}

/// What starts a cluster's ranks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Launch {
    /// Open MPI's mpirun (over ssh, or its `plm_rsh_agent`).
    #[default]
    Mpirun,
    /// Slurm's srun, inside the job whose hosts they are.
    Srun,
}

impl Cluster {
    /// All ranks: hosts x ranks per host.
    pub fn ranks(&self) -> u32 {
        self.hosts.len() as u32 * self.ranks_per_host
    }

    /// mpirun with `per_host` processes on every host, mapped
    /// `ppr:per_host:node`, the launcher's options last (the program
    /// follows).
    pub fn mpirun(&self, per_host: u32) -> Vec<String> {
        if self.launch == Launch::Srun {
            return self.srun(per_host);
        }
        let slots: Vec<String> = self
            .hosts
            .iter()
            .map(|h| format!("{h}:{per_host}"))
            .collect();
        let mut a: Vec<String> = ["mpirun", "--allow-run-as-root", "--oversubscribe", "-H"]
            .map(String::from)
            .to_vec();
        a.push(slots.join(","));
        a.push("-np".into());
        a.push((self.hosts.len() as u32 * per_host).to_string());
        a.push("--map-by".into());
        a.push(format!("ppr:{per_host}:node"));
        a.extend(self.launcher.iter().cloned());
        a
    }

    /// srun with `per_host` tasks on every host (a job step on exactly
    /// the cluster's hosts; every task ended if one fails), the launcher's
    /// options last (`--mpi=pmix` for Open MPI's direct launch).
    fn srun(&self, per_host: u32) -> Vec<String> {
        let mut a: Vec<String> = vec![
            "srun".into(),
            format!("--nodes={}", self.hosts.len()),
            format!("--ntasks={}", self.hosts.len() as u32 * per_host),
            format!("--ntasks-per-node={per_host}"),
            format!("--nodelist={}", self.hosts.join(",")),
            "--kill-on-bad-exit=1".into(),
        ];
        a.extend(self.launcher.iter().cloned());
        a
    }

    /// The launcher in front of a cell's workload: `ranks_per_host` ranks
    /// on every host.
    pub fn workload_mpirun(&self) -> Vec<String> {
        self.mpirun(self.ranks_per_host)
    }

    /// The launcher's words for the directory every rank starts in.
    pub fn working_dir(&self, dir: &Path) -> Vec<String> {
        match self.launch {
            Launch::Mpirun => vec!["-wdir".into(), dir.display().to_string()],
            Launch::Srun => vec![format!("--chdir={}", dir.display())],
        }
    }
}

/// Reads an Open MPI hostfile's text: one host a line, `name [slots=N]
/// [max_slots=N]`, `#` comments and blank lines ignored. Errors name the
/// line. The hosts' names; [`hostfile_slots`] gives their slots.
pub fn parse_hostfile(text: &str) -> Result<Vec<String>, (usize, String)> {
    Ok(hostfile_slots(text)?.into_iter().map(|(h, _)| h).collect())
}

/// A hostfile's host and its `slots=N`, where given (as Open MPI reads it:
/// the ranks it places on the host).
pub type Slotted = (String, Option<u32>);

/// A hostfile's hosts with their slots.
pub fn hostfile_slots(text: &str) -> Result<Vec<Slotted>, (usize, String)> {
    let mut hosts = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or_default().trim();
        if line.is_empty() {
            continue;
        }
        let mut words = line.split_whitespace();
        let name = words.next().unwrap_or_default();
        if name.contains('=') {
            return Err((i + 1, format!("{line:?} does not start with a host name")));
        }
        let mut slots = None;
        for w in words {
            let n = match w.split_once('=') {
                Some((k @ ("slots" | "max_slots" | "max-slots"), n)) => {
                    n.parse::<u32>().ok().filter(|&n| n >= 1).map(|n| (k, n))
                }
                _ => None,
            };
            match n {
                Some(("slots", n)) => slots = Some(n),
                Some(_) => {}
                None => {
                    return Err((
                        i + 1,
                        format!("{w:?} is not slots=N or max_slots=N (N >= 1)"),
                    ))
                }
            }
        }
        hosts.push((name.to_string(), slots));
    }
    if hosts.is_empty() {
        return Err((1, "names no host".into()));
    }
    Ok(hosts)
}

/// Whether `host` resolves to an address (a name or an address).
fn resolves(host: &str) -> bool {
    use std::net::ToSocketAddrs;
    (host, 0u16)
        .to_socket_addrs()
        .is_ok_and(|mut a| a.next().is_some())
}

/// `[cluster]`; `base` is the experiment file's directory (a relative
/// hostfile is read from there).
/// The hosts `[cluster]` names, where from, and the slots its hostfile
/// gives every host (when it gives them all the same).
struct Named {
    hosts: Vec<String>,
    hostfile: Option<PathBuf>,
    slots: Option<u32>,
    span: std::ops::Range<usize>,
}

/// `hosts`, `hostfile` or `hosts_from`: exactly one of them.
fn named(ctx: &Ctx, c: &ClusterSpec, base: &Path) -> Result<Option<Named>, SpecError> {
    let given = [
        c.hosts.is_some(),
        c.hostfile.is_some(),
        c.hosts_from.is_some(),
    ];
    match given.iter().filter(|g| **g).count() {
        0 if c.ranks_per_host.is_none() && c.shared_dir.is_none() && c.launch.is_none() => {
            return Ok(None)
        }
        0 => return ctx.err(
            0..0,
            "cluster",
            "name the hosts: hosts = [\"a\", \"b\"], hostfile = \"PATH\" or hosts_from = \"slurm\"",
        ),
        1 => {}
        _ => {
            return ctx.err(
                0..0,
                "cluster",
                "give one of hosts, hostfile and hosts_from",
            )
        }
    }
    if let Some(h) = &c.hosts {
        if h.get_ref().is_empty() {
            return ctx.err(h.span(), "cluster.hosts", "names no host");
        }
        if let Some(bad) = h
            .get_ref()
            .iter()
            .find(|n| n.is_empty() || n.contains([' ', ',', ':']))
        {
            return ctx.err(
                h.span(),
                "cluster.hosts",
                format!("{bad:?} is not a host name"),
            );
        }
        let (hosts, span) = (h.get_ref().clone(), h.span());
        return Ok(Some(Named {
            hosts,
            hostfile: None,
            slots: None,
            span,
        }));
    }
    if let Some(f) = &c.hostfile {
        let path = base.join(f.get_ref());
        let text = std::fs::read_to_string(&path);
        let text = match text {
            Ok(t) => t,
            Err(e) => {
                return ctx.err(
                    f.span(),
                    "cluster.hostfile",
                    format!("{}: {e}", path.display()),
                )
            }
        };
        let listed = match hostfile_slots(&text) {
            Ok(h) => h,
            Err((line, m)) => {
                let m = format!("{} line {line}: {m}", path.display());
                return ctx.err(f.span(), "cluster.hostfile", m);
            }
        };
        let mut slots: Vec<Option<u32>> = listed.iter().map(|(_, s)| *s).collect();
        slots.dedup();
        let slots = match slots.as_slice() {
            [one] => *one,
            _ => None,
        };
        let hosts = listed.into_iter().map(|(h, _)| h).collect();
        return Ok(Some(Named {
            hosts,
            hostfile: Some(path),
            slots,
            span: f.span(),
        }));
    }
    let from = c.hosts_from.as_ref().expect("one of the three");
    if from.get_ref() != "slurm" {
        let m = format!(
            "{:?}: the hosts come from \"slurm\" (a Slurm job's SLURM_JOB_NODELIST)",
            from.get_ref()
        );
        return ctx.err(from.span(), "cluster.hosts_from", m);
    }
    match fslab_cluster::slurm::job_hosts() {
        Ok(hosts) => {
            let slots = fslab_cluster::slurm::tasks_per_node();
            Ok(Some(Named {
                hosts,
                hostfile: None,
                slots,
                span: from.span(),
            }))
        }
        Err(e) => ctx.err(from.span(), "cluster.hosts_from", e.to_string()),
    }
}

/// `[cluster]`; `base` is the experiment file's directory (a relative
/// hostfile is read from there).
pub(super) fn cluster(
    ctx: &Ctx,
    c: &ClusterSpec,
    base: &Path,
) -> Result<Option<Cluster>, SpecError> {
    let Some(Named {
        hosts,
        hostfile,
        slots,
        span,
    }) = named(ctx, c, base)?
    else {
        return Ok(None);
    };
    let mut seen = std::collections::BTreeSet::new();
    for h in &hosts {
        if !seen.insert(h) {
            return ctx.err(
                span.clone(),
                "cluster.hosts",
                format!("{h:?} is named twice"),
            );
        }
        if !resolves(h) {
            return ctx.err(
                span.clone(),
                "cluster.hosts",
                format!("unknown host {h:?}: the name does not resolve"),
            );
        }
    }
    let ranks_per_host = match &c.ranks_per_host {
        None => slots.unwrap_or(1),
        Some(r) if *r.get_ref() < 1 || *r.get_ref() > 1024 => {
            return ctx.err(
                r.span(),
                "cluster.ranks_per_host",
                format!("{} is not from 1 to 1024", r.get_ref()),
            )
        }
        Some(r) => *r.get_ref() as u32,
    };
    let launch = match c.launch.as_ref().map(|l| (l.get_ref().as_str(), l.span())) {
        None | Some(("mpirun", _)) => Launch::Mpirun,
        Some(("srun", _)) => Launch::Srun,
        Some((other, span)) => {
            return ctx.err(
                span,
                "cluster.launch",
                format!("{other:?}: give mpirun or srun"),
            )
        }
    };
    let shared_dir = match &c.shared_dir {
        None => None,
        Some(d) if !Path::new(d.get_ref()).is_absolute() => {
            return ctx.err(
                d.span(),
                "cluster.shared_dir",
                format!("{:?} is not an absolute path", d.get_ref()),
            )
        }
        Some(d) => Some(PathBuf::from(d.get_ref())),
    };
    Ok(Some(Cluster {
        hosts,
        hostfile,
        hosts_from: c.hosts_from.as_ref().map(|f| f.get_ref().clone()),
        ranks_per_host,
        launch,
        launcher: c.launcher.clone(),
        shared_dir,
    }))
}

/// What `[cluster]` cannot go with: `[workload] ranks` (ranks_per_host
/// says it), a device other than an image (each host's own) or the shared
/// directory, an image host, a memory limit (a cgroup on the head alone).
pub(super) fn fits(
    ctx: &Ctx,
    c: &Cluster,
    ranks: &Option<Spanned<i64>>,
    device: &Device,
    machine: &Machine,
) -> Result<(), SpecError> {
    if let Some(r) = ranks {
        return ctx.err(
            r.span(),
            "workload.ranks",
            "not with [cluster]: give cluster.ranks_per_host instead",
        );
    }
    match device {
        Device::Directory { .. } if c.shared_dir.is_some() => {}
        Device::Image { host, .. } if *host == ImageHost::None => {}
        Device::Image { .. } => {
            return ctx.err(
                0..0,
                "device.image_host",
                "not with [cluster]: each host makes its image in image_dir",
            )
        }
        _ => {
            return ctx.err(
                0..0,
                "device.kind",
                "with [cluster] fslab makes an image on every host, or give cluster.shared_dir",
            )
        }
    }
    if machine.memory_limit.is_some() {
        return ctx.err(
            0..0,
            "machine.memory_limit",
            "not with [cluster]: a memory cgroup would hold the head node's processes alone",
        );
    }
    if !machine.sysctl.is_empty() {
        return ctx.err(
            0..0,
            "machine.sysctl",
            "not with [cluster]: fslab would set it on the head node alone",
        );
    }
    Ok(())
}

/// A workload whose ranks share one tree (mdtest) needs, on more than one
/// host, a directory every host sees: each host's own filesystem would
/// hide rank 0's top directory from the others.
pub(super) fn fits_workload(
    ctx: &Ctx,
    c: &Cluster,
    kind: fslab_workload::WorkloadRef,
) -> Result<(), SpecError> {
    if kind.one_tree() && c.shared_dir.is_none() && c.hosts.len() > 1 {
        return ctx.err(
            0..0,
            "cluster.shared_dir",
            format!(
                "{}'s ranks work in one directory tree: on {} hosts it needs a directory every \
                 host sees (give cluster.shared_dir); each host's own filesystem would hide \
                 rank 0's tree from the others",
                kind.name(),
                c.hosts.len()
            ),
        );
    }
    Ok(())
}

/// No cell sets sysctls with `[cluster]` (fslab would set them on the
/// head node alone).
pub(super) fn fits_cells(ctx: &Ctx, _c: &Cluster, cells: &[Cell]) -> Result<(), SpecError> {
    match cells.iter().find(|c| !c.sysctl.is_empty()) {
        Some(c) => ctx.err(
            0..0,
            "sysctl",
            format!(
                "cell {:?} sets sysctls: with [cluster] fslab sets none (they would change the \
                 head node alone)",
                c.label
            ),
        ),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hostfile_gives_its_names_and_says_which_line_does_not_parse() {
        let text = "# nodes\nnode1 slots=4\n\n  node2   # the second\nnode3 max_slots=2 slots=1\n";
        assert_eq!(
            parse_hostfile(text).unwrap(),
            vec!["node1", "node2", "node3"]
        );
        assert_eq!(
            parse_hostfile("node1\nnode2 slots=zero\n").unwrap_err(),
            (
                2,
                "\"slots=zero\" is not slots=N or max_slots=N (N >= 1)".into()
            )
        );
        assert_eq!(
            parse_hostfile("a\nb\nslots=2\n").unwrap_err().0,
            3,
            "a line without a name"
        );
        assert_eq!(parse_hostfile("# none\n").unwrap_err().0, 1);
    }

    #[test]
    fn mpirun_places_the_same_ranks_on_every_host_and_keeps_the_launchers_options_last() {
        let c = Cluster {
            hosts: vec!["a".into(), "b".into(), "c".into()],
            hostfile: None,
            hosts_from: None,
            ranks_per_host: 2,
            launch: Launch::Mpirun,
            launcher: vec!["--mca".into(), "plm_rsh_agent".into(), "/x".into()],
            shared_dir: None,
        };
        assert_eq!(
            c.workload_mpirun().join(" "),
            "mpirun --allow-run-as-root --oversubscribe -H a:2,b:2,c:2 -np 6 --map-by ppr:2:node \
             --mca plm_rsh_agent /x"
        );
        assert_eq!(c.mpirun(1)[3..7].join(" "), "-H a:1,b:1,c:1 -np 3");
        assert_eq!(c.ranks(), 6);
        assert_eq!(c.working_dir(Path::new("/m/0")), ["-wdir", "/m/0"]);
        let srun = Cluster {
            launch: Launch::Srun,
            launcher: vec!["--mpi=pmix".into()],
            ..c
        };
        assert_eq!(
            srun.workload_mpirun().join(" "),
            "srun --nodes=3 --ntasks=6 --ntasks-per-node=2 --nodelist=a,b,c --kill-on-bad-exit=1 \
             --mpi=pmix"
        );
        assert_eq!(
            srun.mpirun(1)[1..4].join(" "),
            "--nodes=3 --ntasks=3 --ntasks-per-node=1"
        );
        assert_eq!(srun.working_dir(Path::new("/m/0")), ["--chdir=/m/0"]);
    }

    #[test]
    fn a_hostfile_s_slots_are_the_ranks_on_each_host_as_open_mpi_places_them() {
        let h = hostfile_slots("a slots=4\nb slots=4 max_slots=8\nc\n").unwrap();
        assert_eq!(
            h,
            [
                ("a".to_string(), Some(4)),
                ("b".to_string(), Some(4)),
                ("c".to_string(), None)
            ]
        );
    }
}
