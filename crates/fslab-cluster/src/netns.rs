//! Hosts made of Linux namespaces, for testing multi-host runs on one
//! machine: each host is a network namespace (a veth pair on a private
//! bridge, one address in 10.251.X.0/24), with a mount and UTS namespace of
//! its own (its own mounts, its own hostname), held open by a process that
//! sleeps in them. Open MPI's mpirun launches into them through its remote
//! agent hook (`plm_rsh_agent`), a script that enters the host's namespaces
//! instead of ssh-ing to it; on a real cluster the same mpirun options run
//! over ssh.
//!
//! Names carry an id unique to the process and instance, so parallel tests
//! and other users never collide; everything is torn down when the
//! [`NsHosts`] is dropped (on every ending of a test, panics included), and
//! [`leftovers`] lists whatever of an id is still there.

use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// How long a host's holder process lives at most: a test killed outright
/// (SIGKILL, no Drop) leaves it for no longer than this.
const HOLD_S: u32 = 1800;

#[derive(Debug, thiserror::Error)]
pub enum NetnsError {
    #[error("{0}: {1}")]
    Spawn(String, std::io::Error),
    #[error("`{cmd}` failed: {stderr}")]
    Command { cmd: String, stderr: String },
    #[error("host {0}'s namespaces did not come up within 10 s")]
    NotUp(String),
    #[error("between 1 and 200 hosts, not {0}")]
    Count(usize),
}

/// One namespace host.
pub struct NsHost {
    /// Its network namespace's name, which is also its hostname.
    pub name: String,
    pub addr: Ipv4Addr,
    /// Its veth's end on the bridge.
    veth: String,
    holder: Child,
}

impl NsHost {
    /// The pid of the process holding its namespaces open.
    pub fn holder_pid(&self) -> u32 {
        self.holder.id()
    }

    /// `PROGRAM` run in this host's network, mount and UTS namespaces.
    pub fn command(&self, program: &str) -> Command {
        let mut c = Command::new("nsenter");
        c.args([
            "-t",
            &self.holder.id().to_string(),
            "-n",
            "-m",
            "-u",
            program,
        ]);
        c
    }
}

/// N namespace hosts on one bridge, torn down on drop.
pub struct NsHosts {
    pub id: String,
    pub bridge: String,
    /// `10.251.X.0/24`.
    pub cidr: String,
    pub hosts: Vec<NsHost>,
    /// The head node mpirun runs on, with no ranks of its own (a login
    /// node): a host's loss then reaches every other host's daemon at once.
    pub head: Option<NsHost>,
    /// The `plm_rsh_agent` script.
    pub agent: PathBuf,
}

fn run(cmd: &mut Command) -> Result<String, NetnsError> {
    let shown = format!("{cmd:?}").replace('"', "");
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .map_err(|e| NetnsError::Spawn(shown.clone(), e))?;
    if !out.status.success() {
        return Err(NetnsError::Command {
            cmd: shown,
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn ip(args: &[&str]) -> Result<String, NetnsError> {
    run(Command::new("ip").args(args))
}

/// The pids in network namespace `ns`.
fn pids(ns: &str) -> Vec<u32> {
    ip(&["netns", "pids", ns])
        .map(|s| {
            s.split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

fn kill(pid: u32) {
    let _ = Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .stderr(Stdio::null())
        .status();
}

/// The network namespaces, links and bridges of instance `id` still
/// present on this machine (empty after a clean teardown).
pub fn leftovers(id: &str) -> Vec<String> {
    let mut out: Vec<String> = ip(&["netns", "list"])
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| n.contains(id))
        .map(|n| format!("netns {n}"))
        .collect();
    out.extend(
        ip(&["-br", "link"])
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.split_whitespace().next())
            .filter(|n| n.contains(id))
            .map(|n| format!("link {n}")),
    );
    out.extend(
        session_dirs(id)
            .into_iter()
            .map(|d| format!("mpi session {}", d.display())),
    );
    out
}

/// The session directories Open MPI's daemons made in the (shared) /tmp
/// for the hosts of instance `id`: `/tmp/ompi.HOSTNAME.UID`, the hostnames
/// being the hosts' own.
fn session_dirs(id: &str) -> Vec<PathBuf> {
    let prefix = format!("ompi.fslab-{id}-");
    std::fs::read_dir(std::env::temp_dir())
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .map(|e| e.path())
        .collect()
}

impl NsHosts {
    /// Makes `n` hosts; the agent script is written into `dir`.
    pub fn new(n: usize, dir: &Path) -> Result<NsHosts, NetnsError> {
        if n == 0 || n > 200 {
            return Err(NetnsError::Count(n));
        }
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let k = NEXT.fetch_add(1, Ordering::Relaxed);
        // 6 hex digits: interface names stay within 15 characters.
        let id = format!("{:06x}", (std::process::id() * 64 + k) & 0xff_ffff);
        let net = ((std::process::id() + k) % 250) as u8;
        let mut me = NsHosts {
            bridge: format!("fsbr{id}"),
            cidr: format!("10.251.{net}.0/24"),
            hosts: Vec::new(),
            head: None,
            agent: dir.join(format!("ns-agent-{id}")),
            id,
        };
        // On any error `me` is dropped, and what was made is torn down.
        ip(&["link", "add", &me.bridge, "type", "bridge"])?;
        ip(&["link", "set", &me.bridge, "up"])?;
        for i in 0..n {
            let h = me.add_host(&format!("h{i}"), i as u8 + 1, net)?;
            me.hosts.push(h);
        }
        me.head = Some(me.add_host("head", 254, net)?);
        me.write_agent()?;
        Ok(me)
    }

    /// Makes one host; on an error, removes what it had made of it.
    fn add_host(&self, role: &str, last: u8, net: u8) -> Result<NsHost, NetnsError> {
        let name = format!("fslab-{}-{role}", self.id);
        let veth = format!("fsv{}-{last}", self.id);
        let addr = Ipv4Addr::new(10, 251, net, last);
        self.make_host(name.clone(), veth.clone(), addr)
            .inspect_err(|_| {
                for p in pids(&name) {
                    kill(p);
                }
                let _ = ip(&["link", "del", &veth]);
                let _ = ip(&["netns", "del", &name]);
            })
    }

    fn make_host(&self, name: String, veth: String, addr: Ipv4Addr) -> Result<NsHost, NetnsError> {
        ip(&["netns", "add", &name])?;
        ip(&[
            "link", "add", &veth, "type", "veth", "peer", "name", "eth0", "netns", &name,
        ])?;
        ip(&["link", "set", &veth, "master", &self.bridge, "up"])?;
        ip(&[
            "-n",
            &name,
            "addr",
            "add",
            &format!("{addr}/24"),
            "dev",
            "eth0",
        ])?;
        ip(&["-n", &name, "link", "set", "eth0", "up"])?;
        ip(&["-n", &name, "link", "set", "lo", "up"])?;
        // The holder: enters the network namespace, makes its own mount
        // (receiving the machine's mounts, keeping its own) and UTS
        // namespaces, names itself and sleeps.
        let holder = Command::new("ip")
            .args([
                "netns",
                "exec",
                &name,
                "unshare",
                "-m",
                "-u",
                "--propagation",
                "slave",
            ])
            .args([
                "sh",
                "-c",
                &format!("hostname {name} && exec sleep {HOLD_S}"),
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
            .map_err(|e| NetnsError::Spawn(format!("ip netns exec {name}"), e))?;
        let host = NsHost {
            name,
            addr,
            veth,
            holder,
        };
        // Up once the holder has become `sleep` (its hostname set).
        let t = Instant::now();
        let comm = format!("/proc/{}/comm", host.holder.id());
        while std::fs::read_to_string(&comm).unwrap_or_default().trim() != "sleep" {
            if t.elapsed() > Duration::from_secs(10) {
                return Err(NetnsError::NotUp(host.name.clone()));
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        Ok(host)
    }

    fn write_agent(&self) -> Result<(), NetnsError> {
        let mut s = String::from(
            "#!/bin/sh\n# Open MPI's plm_rsh_agent, called as AGENT HOST CMD...: runs CMD in\n\
             # HOST's namespaces (an fslab test's namespace host) instead of over ssh.\n\
             h=$1; shift\ncase \"$h\" in\n",
        );
        for h in &self.hosts {
            s += &format!("  {}|{}) p={};;\n", h.addr, h.name, h.holder.id());
        }
        s += "  *) echo \"ns-agent: no such namespace host: $h\" >&2; exit 255;;\nesac\n\
              exec nsenter -t \"$p\" -n -m -u sh -c \"$*\"\n";
        let err = |e| NetnsError::Spawn(format!("writing {}", self.agent.display()), e);
        std::fs::write(&self.agent, s).map_err(err)?;
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&self.agent, std::fs::Permissions::from_mode(0o755)).map_err(err)
    }

    /// The head node, where mpirun runs.
    pub fn head(&self) -> &NsHost {
        self.head.as_ref().expect("made with the hosts")
    }

    /// mpirun started on the head node with the options that launch
    /// `per_host` ranks on every host through the agent, TCP only on the
    /// hosts' network; the program and its arguments follow.
    pub fn mpirun(&self, per_host: usize) -> Command {
        let hosts: Vec<String> = self.hosts.iter().map(|h| h.addr.to_string()).collect();
        let mut c = self.head().command("mpirun");
        c.args(mpirun_args(
            &hosts,
            per_host,
            Some(&self.agent),
            Some(&self.cidr),
        ));
        c
    }

    /// The mpirun options (after the hosts and ranks) that launch into
    /// these hosts: what an experiment's `[cluster] launcher` gives.
    pub fn launcher(&self) -> Vec<String> {
        let all = mpirun_args(&[], 0, Some(&self.agent), Some(&self.cidr));
        // Without the leading --allow-run-as-root --oversubscribe and the
        // trailing -np 0 -H "".
        all[2..all.len() - 4].to_vec()
    }

    /// Kills every process of host `i` but its holder: the host's ranks
    /// and daemon die as on a node that fails.
    pub fn kill_processes(&self, i: usize) -> usize {
        let h = &self.hosts[i];
        let victims: Vec<u32> = pids(&h.name)
            .into_iter()
            .filter(|&p| p != h.holder.id())
            .collect();
        victims.iter().for_each(|&p| kill(p));
        victims.len()
    }

    fn teardown(&mut self) {
        for h in self.hosts.iter_mut().chain(self.head.as_mut()) {
            // Bounded: a process that outlives three sweeps is left to the
            // namespace's deletion.
            for _ in 0..3 {
                let left = pids(&h.name);
                if left.is_empty() {
                    break;
                }
                left.into_iter().for_each(kill);
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = h.holder.kill();
            let _ = h.holder.wait();
            // Deleting the pair's outer end deletes both at once; the
            // namespace's own deletion frees them only once nothing holds
            // it (a dying process may, for a while).
            let _ = ip(&["link", "del", &h.veth]);
            let _ = ip(&["netns", "del", &h.name]);
        }
        let _ = ip(&["link", "del", &self.bridge]);
        let _ = std::fs::remove_file(&self.agent);
        // A daemon killed with its host leaves its session directory.
        for d in session_dirs(&self.id) {
            let _ = std::fs::remove_dir_all(d);
        }
    }
}

impl Drop for NsHosts {
    fn drop(&mut self) {
        self.teardown();
    }
}

/// mpirun's options for `per_host` ranks on each of `hosts`: as root, the
/// launch agent (ssh when None), no tree spawn (the agent reaches each
/// host from the head node), and TCP on `cidr` only when given.
pub fn mpirun_args(
    hosts: &[String],
    per_host: usize,
    agent: Option<&Path>,
    cidr: Option<&str>,
) -> Vec<String> {
    let mut a: Vec<String> = vec!["--allow-run-as-root".into(), "--oversubscribe".into()];
    let mut mca = |k: &str, v: &str| a.extend(["--mca".into(), k.into(), v.into()]);
    // When a host is lost, each daemon sends its ranks SIGCONT, waits this
    // long, sends SIGTERM, waits as long again, then SIGKILL: time for the
    // ranks to keep what they measured (the default, 1 s, is too short).
    mca("odls_base_sigkill_timeout", "6");
    if let Some(agent) = agent {
        mca("plm_rsh_agent", &agent.display().to_string());
        mca("plm_rsh_no_tree_spawn", "1");
    }
    if let Some(cidr) = cidr {
        mca("btl", "self,tcp");
        mca("btl_tcp_if_include", cidr);
        mca("oob_tcp_if_include", cidr);
    }
    let slots: Vec<String> = hosts.iter().map(|h| format!("{h}:{per_host}")).collect();
    a.extend(["-np".into(), (hosts.len() * per_host).to_string()]);
    a.extend(["-H".into(), slots.join(",")]);
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mpirun_gets_the_agent_the_network_and_the_slots() {
        let a = mpirun_args(
            &["10.251.3.1".into(), "10.251.3.2".into()],
            2,
            Some(Path::new("/t/agent")),
            Some("10.251.3.0/24"),
        );
        assert_eq!(
            a.join(" "),
            "--allow-run-as-root --oversubscribe --mca odls_base_sigkill_timeout 6 \
             --mca plm_rsh_agent /t/agent \
             --mca plm_rsh_no_tree_spawn 1 --mca btl self,tcp --mca btl_tcp_if_include \
             10.251.3.0/24 --mca oob_tcp_if_include 10.251.3.0/24 -np 4 -H 10.251.3.1:2,10.251.3.2:2"
        );
        let ssh = mpirun_args(&["node1".into()], 3, None, None);
        assert_eq!(
            ssh.join(" "),
            "--allow-run-as-root --oversubscribe --mca odls_base_sigkill_timeout 6 -np 3 -H node1:3"
        );
    }

    #[test]
    fn no_hosts_or_too_many_is_refused_before_anything_is_made() {
        let dir = std::env::temp_dir();
        for n in [0, 201] {
            let e = NsHosts::new(n, &dir).err().unwrap();
            assert_eq!(e.to_string(), format!("between 1 and 200 hosts, not {n}"));
        }
    }
}
