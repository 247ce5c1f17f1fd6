//! `[cluster]`: the hosts a cell's workload runs on, through mpirun.
//!
//! ```toml
//! [cluster]
//! hosts = ["node1", "node2"]       # or hostfile = "nodes" (Open MPI's format)
//! ranks_per_host = 2               # ranks on every host (>= 1)
//! launcher = ["--mca", "plm_rsh_agent", "ssh"]   # more mpirun options
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
    /// MPI ranks on every host.
    pub ranks_per_host: u32,
    /// mpirun's further options, as written (`--mca plm_rsh_agent SCRIPT`).
    pub launcher: Vec<String>,
    /// A directory every host sees (a parallel filesystem's): no
    /// filesystem is made; each run works in a fresh subdirectory of it.
    pub shared_dir: Option<PathBuf>,
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

    /// The launcher in front of a cell's workload: `ranks_per_host` ranks
    /// on every host.
    pub fn workload_mpirun(&self) -> Vec<String> {
        self.mpirun(self.ranks_per_host)
    }
}

/// Reads an Open MPI hostfile's text: one host a line, `name [slots=N]
/// [max_slots=N]`, `#` comments and blank lines ignored. Errors name the
/// line.
pub fn parse_hostfile(text: &str) -> Result<Vec<String>, (usize, String)> {
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
        for w in words {
            let ok = match w.split_once('=') {
                Some(("slots" | "max_slots" | "max-slots", n)) => {
                    n.parse::<u32>().is_ok_and(|n| n >= 1)
                }
                _ => false,
            };
            if !ok {
                return Err((
                    i + 1,
                    format!("{w:?} is not slots=N or max_slots=N (N >= 1)"),
                ));
            }
        }
        hosts.push(name.to_string());
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
pub(super) fn cluster(
    ctx: &Ctx,
    c: &ClusterSpec,
    base: &Path,
) -> Result<Option<Cluster>, SpecError> {
    let (hosts, hostfile) = match (&c.hosts, &c.hostfile) {
        (None, None) if c.ranks_per_host.is_none() && c.shared_dir.is_none() => {
            return Ok(None);
        }
        (Some(_), Some(f)) => {
            return ctx.err(
                f.span(),
                "cluster.hostfile",
                "give hosts or a hostfile, not both",
            )
        }
        (None, None) => {
            return ctx.err(
                0..0,
                "cluster",
                "name the hosts: hosts = [\"a\", \"b\"] or hostfile = \"PATH\"",
            )
        }
        (Some(h), None) => {
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
            (h.get_ref().clone(), None)
        }
        (None, Some(f)) => {
            let path = base.join(f.get_ref());
            let text = match std::fs::read_to_string(&path) {
                Ok(t) => t,
                Err(e) => {
                    return ctx.err(
                        f.span(),
                        "cluster.hostfile",
                        format!("{}: {e}", path.display()),
                    )
                }
            };
            match parse_hostfile(&text) {
                Ok(h) => (h, Some(path)),
                Err((line, m)) => {
                    return ctx.err(
                        f.span(),
                        "cluster.hostfile",
                        format!("{} line {line}: {m}", path.display()),
                    )
                }
            }
        }
    };
    let span = c
        .hosts
        .as_ref()
        .map(|h| h.span())
        .or_else(|| c.hostfile.as_ref().map(|f| f.span()))
        .unwrap_or(0..0);
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
        None => 1,
        Some(r) if *r.get_ref() < 1 || *r.get_ref() > 1024 => {
            return ctx.err(
                r.span(),
                "cluster.ranks_per_host",
                format!("{} is not from 1 to 1024", r.get_ref()),
            )
        }
        Some(r) => *r.get_ref() as u32,
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
        ranks_per_host,
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
    kind: fslab_workload::Kind,
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
            ranks_per_host: 2,
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
    }
}
