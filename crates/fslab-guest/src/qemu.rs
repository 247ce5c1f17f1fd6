//! Booting a guest: virtiofsd sharing the host's root, QEMU with the
//! kernel, its initramfs, its disks and its console in a file; watched
//! until it powers off, dies or passes its time limit, when both are
//! killed. Everything it makes is in the guest's own directory.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::initramfs::{self, Init, EXIT_MARK, HOST_TAG, INIT_MARK};
use crate::{Accel, GuestError, Kernel};

/// A disk of the guest (`/dev/vda`, `/dev/vdb`, ... in order).
#[derive(Debug, Clone)]
pub struct Disk {
    pub image: PathBuf,
    /// O_DIRECT to the image (QEMU's `cache=none`), as a loop device's
    /// direct IO.
    pub direct: bool,
}

/// One guest to boot.
#[derive(Debug, Clone)]
pub struct GuestSpec {
    pub kernel: Kernel,
    pub accel: Accel,
    pub memory_bytes: u64,
    pub cpus: u32,
    /// Added to fslab's kernel command line.
    pub append: String,
    pub disks: Vec<Disk>,
    /// Filesystem modules to load when the kernel has them as modules.
    pub fs_modules: Vec<String>,
    pub init: Init,
    /// Killed past it.
    pub limit: Duration,
    /// The guest's own directory (initramfs, socket, console, logs).
    pub dir: PathBuf,
}

/// How a guest ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum End {
    /// Its init powered it off (its command's exit status is in `exit`).
    PoweredOff,
    /// It passed its time limit and was killed.
    TimeLimit,
    /// fslab was told to stop at once and killed it.
    Stopped,
    /// QEMU ended without the guest powering off (a panic, QEMU's error).
    Died,
}

/// What a guest run gave.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GuestRun {
    pub accel: Accel,
    pub qemu_argv: Vec<String>,
    pub end: End,
    /// The exit status of the init's command, when it said.
    pub exit: Option<i32>,
    /// From QEMU's start to the init's first line.
    pub boot_s: Option<f64>,
    pub wall_s: f64,
    /// Everything the guest wrote on its console.
    pub console: String,
}

impl GuestRun {
    /// The console's last `n` non-empty lines.
    pub fn last_lines(&self, n: usize) -> String {
        last_lines(&self.console, n)
    }
}

/// `text`'s last `n` non-empty lines, joined with " | ".
pub fn last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text
        .lines()
        .map(|l| l.trim_matches(|c: char| c.is_whitespace() || c.is_control()))
        .filter(|l| !l.is_empty())
        .collect();
    lines[lines.len().saturating_sub(n)..].join(" | ")
}

/// QEMU: `$FSLAB_QEMU`, else `qemu-system-x86_64` on the PATH.
pub fn find_qemu() -> Result<PathBuf, GuestError> {
    find_tool(
        "FSLAB_QEMU",
        &["qemu-system-x86_64"],
        &[],
        "QEMU (qemu-system-x86_64)",
        "guests need it: apt-get install qemu-system-x86",
    )
}

/// virtiofsd: `$FSLAB_VIRTIOFSD`, else QEMU's own or one on the PATH.
pub fn find_virtiofsd() -> Result<PathBuf, GuestError> {
    find_tool(
        "FSLAB_VIRTIOFSD",
        &["virtiofsd"],
        &["/usr/lib/qemu/virtiofsd", "/usr/libexec/virtiofsd"],
        "virtiofsd",
        "guests reach the host's root through it: apt-get install qemu-system-common (or virtiofsd)",
    )
}

fn find_tool(
    env: &str,
    names: &[&str],
    paths: &[&str],
    tool: &str,
    hint: &str,
) -> Result<PathBuf, GuestError> {
    if let Some(p) = std::env::var_os(env).filter(|p| !p.is_empty()) {
        let p = PathBuf::from(p);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(GuestError::NoTool {
                tool: format!("{tool} ({env}={})", p.display()),
                hint: "no such file".into(),
            })
        };
    }
    let on_path = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default();
    names
        .iter()
        .flat_map(|n| on_path.iter().map(move |d| d.join(n)))
        .chain(paths.iter().map(PathBuf::from))
        .find(|p| p.is_file())
        .ok_or_else(|| GuestError::NoTool {
            tool: tool.into(),
            hint: hint.into(),
        })
}

/// Refuses a guest memory size this host cannot give now.
pub fn check_memory(bytes: u64) -> Result<(), GuestError> {
    let asked = format!("{} MiB", bytes >> 20);
    if bytes < 128 << 20 {
        return Err(GuestError::Memory {
            asked,
            why: "a guest needs at least 128 MiB".into(),
        });
    }
    let avail = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines()
                .find_map(|l| l.strip_prefix("MemAvailable:"))
                .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        })
        .map(|kib| kib * 1024);
    match avail {
        Some(a) if a < bytes => Err(GuestError::Memory {
            asked,
            why: format!("the host has {} MiB available", a >> 20),
        }),
        _ => Ok(()),
    }
}

/// The kernel command line fslab boots a guest with. `no_timer_check`:
/// under TCG on a busy host the kernel's check that the IO-APIC timer
/// ticks can fail and panic the guest at boot (seen at a load of 40 on
/// 2 CPUs).
fn cmdline(append: &str) -> String {
    let mut c = "console=ttyS0 panic=-1 loglevel=4 no_timer_check".to_string();
    if !append.trim().is_empty() {
        c.push(' ');
        c.push_str(append.trim());
    }
    c
}

/// QEMU's argv for `spec`, its initramfs at `initrd`, virtiofsd's socket
/// at `sock`, the console to `console`.
pub fn qemu_argv(
    qemu: &Path,
    spec: &GuestSpec,
    initrd: &Path,
    sock: &Path,
    console: &Path,
) -> Vec<String> {
    let mib = spec.memory_bytes >> 20;
    let mut a: Vec<String> = vec![qemu.display().to_string()];
    let mut push = |xs: &[&str]| a.extend(xs.iter().map(|s| s.to_string()));
    push(&["-accel", &spec.accel.name, "-nodefaults", "-no-user-config"]);
    push(&["-display", "none", "-no-reboot"]);
    push(&["-m", &format!("{mib}M"), "-smp", &spec.cpus.to_string()]);
    push(&["-kernel", &spec.kernel.image.display().to_string()]);
    push(&["-initrd", &initrd.display().to_string()]);
    push(&["-append", &cmdline(&spec.append)]);
    push(&["-serial", &format!("file:{}", console.display())]);
    // virtiofs needs the guest's memory shared with virtiofsd.
    push(&[
        "-object",
        &format!("memory-backend-memfd,id=mem,size={mib}M,share=on"),
        "-numa",
        "node,memdev=mem",
    ]);
    push(&["-chardev", &format!("socket,id=fs,path={}", sock.display())]);
    push(&[
        "-device",
        &format!("vhost-user-fs-pci,chardev=fs,tag={HOST_TAG}"),
    ]);
    for d in &spec.disks {
        let cache = if d.direct { "none" } else { "writeback" };
        push(&[
            "-drive",
            &format!(
                "file={},format=raw,if=virtio,cache={cache}",
                d.image.display()
            ),
        ]);
    }
    a
}

/// The modules every guest loads: virtio's PCI transport and disks, and
/// virtiofs for the host's root.
pub const REQUIRED_MODULES: [&str; 3] = ["virtio_pci", "virtio_blk", "virtiofs"];

/// Boots `spec` and waits for it to power off, die or pass its limit;
/// `hurry` says fslab must stop at once (the guest is killed).
pub fn run(spec: &GuestSpec, hurry: &dyn Fn() -> bool) -> Result<GuestRun, GuestError> {
    let qemu = find_qemu()?;
    let virtiofsd = find_virtiofsd()?;
    let busybox = initramfs::find_busybox()?;
    let fs: Vec<&str> = spec.fs_modules.iter().map(String::as_str).collect();
    let modules = crate::modules::closure(&spec.kernel, &REQUIRED_MODULES, &fs)?;
    let initrd = spec.dir.join("initramfs.cpio");
    initramfs::write(&initrd, &busybox, &modules, &spec.init)?;
    let sock = spec.dir.join("virtiofsd.sock");
    let console = spec.dir.join("console.log");
    let argv = qemu_argv(&qemu, spec, &initrd, &sock, &console);
    let mut vfs = Spawned::start(
        Command::new(&virtiofsd)
            .arg(format!("--socket-path={}", sock.display()))
            .args(["-o", "source=/", "-o", "cache=auto", "-o", "sandbox=chroot"]),
        &spec.dir.join("virtiofsd.log"),
    )?;
    let t0 = Instant::now();
    while !sock.exists() {
        if t0.elapsed() > Duration::from_secs(10) || vfs.exited() {
            vfs.kill();
            let log = std::fs::read_to_string(spec.dir.join("virtiofsd.log")).unwrap_or_default();
            return Err(GuestError::Command {
                command: virtiofsd.display().to_string(),
                why: format!("no socket after 10 s: {}", last_lines(&log, 2)),
            });
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let qemu_log = spec.dir.join("qemu.log");
    let started = Spawned::start(Command::new(&argv[0]).args(&argv[1..]), &qemu_log);
    let mut q = match started {
        Ok(q) => q,
        Err(e) => {
            vfs.kill();
            return Err(e);
        }
    };
    let (end, boot_s) = watch(&mut q, &console, spec.limit, hurry);
    q.kill();
    vfs.kill();
    let _ = std::fs::remove_file(&sock);
    let mut text =
        String::from_utf8_lossy(&std::fs::read(&console).unwrap_or_default()).into_owned();
    if end == End::Died {
        // QEMU's own complaint (it cannot start, a bad option).
        let q = std::fs::read_to_string(&qemu_log).unwrap_or_default();
        if !q.trim().is_empty() {
            text.push_str(&format!("\n[qemu] {}", q.trim()));
        }
    }
    let exit = text
        .lines()
        .rev()
        .find_map(|l| l.trim().strip_prefix(EXIT_MARK))
        .and_then(|c| c.trim().parse().ok());
    let end = match (end, exit) {
        // The init reports its command before it powers off.
        (End::Died, Some(_)) => End::PoweredOff,
        (e, _) => e,
    };
    Ok(GuestRun {
        accel: spec.accel.clone(),
        qemu_argv: argv,
        end,
        exit,
        boot_s,
        wall_s: t0.elapsed().as_secs_f64(),
        console: text,
    })
}

/// Waits for QEMU: how it ended, and when the init's first line came.
fn watch(
    q: &mut Spawned,
    console: &Path,
    limit: Duration,
    hurry: &dyn Fn() -> bool,
) -> (End, Option<f64>) {
    let t0 = Instant::now();
    let mut boot_s = None;
    loop {
        if q.exited() {
            return (End::Died, boot_s);
        }
        if boot_s.is_none() && file_contains(console, INIT_MARK) {
            boot_s = Some(t0.elapsed().as_secs_f64());
        }
        if t0.elapsed() > limit {
            return (End::TimeLimit, boot_s);
        }
        if hurry() {
            return (End::Stopped, boot_s);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn file_contains(path: &Path, needle: &str) -> bool {
    let mut s = String::new();
    std::fs::File::open(path)
        .and_then(|mut f| f.read_to_string(&mut s))
        .is_ok()
        && s.contains(needle)
}

/// A process of the guest's (QEMU, virtiofsd): in a process group of its
/// own, killed with fslab if fslab dies, killed and reaped when dropped.
struct Spawned {
    child: Option<Child>,
}

impl Spawned {
    fn start(cmd: &mut Command, log: &Path) -> Result<Spawned, GuestError> {
        let out = std::fs::File::create(log).map_err(|e| GuestError::io(log, e))?;
        let err = out.try_clone().map_err(|e| GuestError::io(log, e))?;
        cmd.stdin(Stdio::null()).stdout(out).stderr(err);
        std::os::unix::process::CommandExt::process_group(cmd, 0);
        fslab_sys::die_with_parent(cmd);
        let program = cmd.get_program().to_string_lossy().into_owned();
        let child = cmd.spawn().map_err(|e| GuestError::Command {
            command: program,
            why: e.to_string(),
        })?;
        Ok(Spawned { child: Some(child) })
    }

    fn exited(&mut self) -> bool {
        !matches!(self.child.as_mut().map(Child::try_wait), Some(Ok(None)))
    }

    /// SIGKILL to its process group, then reaped.
    fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = rustix::process::kill_process_group(
                rustix::process::Pid::from_child(&c),
                rustix::process::Signal::KILL,
            );
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for Spawned {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Whether KVM brings `kernel` to a tiny init within `limit` (the
/// initramfs: busybox printing the init mark and powering off).
pub fn probe_kvm(kernel: &Kernel, scratch: &Path, limit: Duration) -> Result<bool, GuestError> {
    let dir = scratch.join(format!("kvm-probe-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| GuestError::io(&dir, e))?;
    let res = probe_in(kernel, &dir, limit);
    let _ = std::fs::remove_dir_all(&dir);
    res
}

fn probe_in(kernel: &Kernel, dir: &Path, limit: Duration) -> Result<bool, GuestError> {
    let qemu = find_qemu()?;
    let busybox = initramfs::find_busybox()?;
    let bb = std::fs::read(&busybox).map_err(|e| GuestError::io(&busybox, e))?;
    let mut w = initramfs::Cpio::default();
    w.entry("bin", 0o040_755, &[], 0);
    w.entry("dev", 0o040_755, &[], 0);
    w.entry("dev/console", 0o020_600, &[], (5 << 8) | 1);
    w.entry("bin/busybox", 0o100_755, &bb, 0);
    let init = format!("#!/bin/busybox sh\necho \"{INIT_MARK}\"\n/bin/busybox poweroff -f\n");
    w.entry("init", 0o100_755, init.as_bytes(), 0);
    let initrd = dir.join("probe.cpio");
    std::fs::write(&initrd, w.finish()).map_err(|e| GuestError::io(&initrd, e))?;
    let console = dir.join("console.log");
    let mut q = Spawned::start(
        Command::new(&qemu).args([
            "-accel",
            "kvm",
            "-nodefaults",
            "-no-user-config",
            "-display",
            "none",
            "-no-reboot",
            "-m",
            "256M",
            "-kernel",
            &kernel.image.display().to_string(),
            "-initrd",
            &initrd.display().to_string(),
            "-append",
            &cmdline(""),
            "-serial",
            &format!("file:{}", console.display()),
        ]),
        &dir.join("qemu.log"),
    )?;
    let (_, boot) = watch(&mut q, &console, limit, &|| false);
    q.kill();
    Ok(boot.is_some())
}
