//! The guest's initramfs: a static busybox, the modules the guest needs
//! to reach the host, and an `/init` that mounts the host's root read-only
//! over virtiofs, gives it the writable places a run needs (tmpfs on
//! `/run`, `/tmp`; proc, sysfs, devtmpfs, tracefs and a
//! memory cgroup), runs one command in it (chrooted) and powers off.
//! Written as a `newc` cpio archive, which the kernel unpacks itself.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::modules::Module;
use crate::GuestError;

/// The virtiofs tag of the host's root.
pub const HOST_TAG: &str = "fslab-host";
/// What `/init` prints on the console first, and just before the command.
pub const INIT_MARK: &str = "fslab-guest: init";
pub const RUN_MARK: &str = "fslab-guest: running";
/// What `/init` prints when the command has ended (`... exit N`).
pub const EXIT_MARK: &str = "fslab-guest: exit";

/// What `/init` does.
#[derive(Debug, Clone)]
pub struct Init {
    /// The command run in the host's root (chrooted), and its environment.
    pub command: Vec<String>,
    pub env: Vec<(String, String)>,
    /// Files the command finds in [`FILES_DIR`] (name, bytes): carried in
    /// the initramfs, so the host's directory they come from need not be
    /// visible in the guest.
    pub files: Vec<(String, Vec<u8>)>,
}

/// Where the guest's command finds [`Init::files`] (on its tmpfs).
pub const FILES_DIR: &str = "/run/fslab-guest";

/// The static busybox the initramfs runs: `$FSLAB_BUSYBOX`, else the first
/// of /usr/bin/busybox and /bin/busybox that is statically linked.
pub fn find_busybox() -> Result<PathBuf, GuestError> {
    let from_env = std::env::var_os("FSLAB_BUSYBOX").map(PathBuf::from);
    let candidates = from_env
        .into_iter()
        .chain(["/usr/bin/busybox", "/bin/busybox"].map(PathBuf::from));
    for c in candidates {
        if let Ok(bytes) = std::fs::read(&c) {
            if is_static_elf(&bytes) {
                return Ok(c);
            }
        }
    }
    Err(GuestError::NoTool {
        tool: "a static busybox".into(),
        hint: "the guest's init runs one: apt-get install busybox-static".into(),
    })
}

/// An ELF64 executable with no program interpreter (statically linked).
fn is_static_elf(elf: &[u8]) -> bool {
    if elf.get(..4) != Some(b"\x7fELF") || elf.get(4) != Some(&2) {
        return false;
    }
    let num = |at: usize, n: usize| -> Option<u64> {
        let b = elf.get(at..at + n)?;
        Some(b.iter().rev().fold(0u64, |v, &x| (v << 8) | u64::from(x)))
    };
    let (Some(phoff), Some(phentsize), Some(phnum)) = (num(0x20, 8), num(0x36, 2), num(0x38, 2))
    else {
        return false;
    };
    // PT_INTERP is program header type 3.
    !(0..phnum).any(|i| num((phoff + i * phentsize) as usize, 4) == Some(3))
}

/// Single quotes for the shell.
fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// The `/init` script.
pub fn init_script(modules: &[Module], init: &Init) -> String {
    let mods: Vec<&str> = modules.iter().map(|m| m.name.as_str()).collect();
    let env: Vec<String> = init
        .env
        .iter()
        .map(|(k, v)| quote(&format!("{k}={v}")))
        .collect();
    let cmd: Vec<String> = init.command.iter().map(|a| quote(a)).collect();
    format!(
        r#"#!/bin/busybox sh
# fslab's guest init: reach the host's root, run one command in it, power off.
B=/bin/busybox
$B mkdir -p /proc /sys /dev /host
$B mount -t proc proc /proc
$B mount -t sysfs sys /sys
$B mount -t devtmpfs dev /dev
exec </dev/console >/dev/console 2>&1
echo "{INIT_MARK}"
fail() {{ echo "fslab-guest: $*"; $B sync; $B poweroff -f; }}
for m in {mods}; do
  $B insmod /lib/modules/$m.ko || fail "cannot load module $m"
done
$B mount -t virtiofs -o ro {HOST_TAG} /host || fail "cannot mount the host's root (virtiofs)"
$B mount -t proc proc /host/proc || fail "cannot mount proc"
$B mount -t sysfs sys /host/sys || fail "cannot mount sysfs"
$B mount -t devtmpfs dev /host/dev || fail "cannot mount devtmpfs"
for d in /run /tmp; do
  $B mount -t tmpfs -o mode=1777 tmpfs /host$d || fail "cannot mount a tmpfs on $d"
done
$B mkdir -p /host{FILES_DIR} && $B cp -a /files/. /host{FILES_DIR}/ || fail "cannot copy the job's files"
$B mount -t tracefs tracefs /host/sys/kernel/tracing 2>/dev/null
$B mount -t debugfs debugfs /host/sys/kernel/debug 2>/dev/null
if $B mount -t tmpfs -o mode=755 cgroup /host/sys/fs/cgroup 2>/dev/null; then
  $B mkdir -p /host/sys/fs/cgroup/memory
  $B mount -t cgroup -o memory memory /host/sys/fs/cgroup/memory 2>/dev/null
fi
echo "{RUN_MARK}"
$B chroot /host /usr/bin/env -i {env} {cmd}
echo "{EXIT_MARK} $?"
$B sync
$B poweroff -f
"#,
        mods = mods.join(" "),
        env = env.join(" "),
        cmd = cmd.join(" "),
    )
}

/// Writes the initramfs to `out`: `/init`, the busybox at `busybox`, the
/// modules under `/lib/modules`, and `/dev/console`.
pub fn write(
    out: &Path,
    busybox: &Path,
    modules: &[Module],
    init: &Init,
) -> Result<(), GuestError> {
    let bb = std::fs::read(busybox).map_err(|e| GuestError::io(busybox, e))?;
    let mut w = Cpio::default();
    for d in [
        "bin",
        "dev",
        "files",
        "lib",
        "lib/modules",
        "proc",
        "sys",
        "host",
    ] {
        w.entry(d, 0o040_755, &[], 0);
    }
    for (name, bytes) in &init.files {
        w.entry(&format!("files/{name}"), 0o100_644, bytes, 0);
    }
    // The console, before devtmpfs is mounted (character device 5:1).
    w.entry("dev/console", 0o020_600, &[], (5 << 8) | 1);
    w.entry("bin/busybox", 0o100_755, &bb, 0);
    w.entry("init", 0o100_755, init_script(modules, init).as_bytes(), 0);
    for m in modules {
        w.entry(
            &format!("lib/modules/{}.ko", m.name),
            0o100_644,
            &m.bytes,
            0,
        );
    }
    let bytes = w.finish();
    let mut f = std::fs::File::create(out).map_err(|e| GuestError::io(out, e))?;
    f.write_all(&bytes).map_err(|e| GuestError::io(out, e))
}

/// A `newc` cpio archive being written.
#[derive(Default)]
pub struct Cpio {
    buf: Vec<u8>,
    ino: u32,
}

impl Cpio {
    /// One entry; `rdev` is a device's `major << 8 | minor`.
    pub fn entry(&mut self, name: &str, mode: u32, data: &[u8], rdev: u32) {
        self.ino += 1;
        let nlink = if mode & 0o040_000 != 0 { 2 } else { 1 };
        let fields = [
            self.ino,
            mode,
            0,
            0,
            nlink,
            0,
            data.len() as u32,
            0,
            0,
            rdev >> 8,
            rdev & 0xff,
            name.len() as u32 + 1,
            0,
        ];
        self.buf.extend_from_slice(b"070701");
        for f in fields {
            self.buf.extend_from_slice(format!("{f:08X}").as_bytes());
        }
        self.buf.extend_from_slice(name.as_bytes());
        self.buf.push(0);
        self.pad();
        self.buf.extend_from_slice(data);
        self.pad();
    }

    fn pad(&mut self) {
        while !self.buf.len().is_multiple_of(4) {
            self.buf.push(0);
        }
    }

    /// The archive with its trailer.
    pub fn finish(mut self) -> Vec<u8> {
        self.entry("TRAILER!!!", 0, &[], 0);
        self.buf
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpio_entries_are_newc_and_four_byte_aligned() {
        let mut w = Cpio::default();
        w.entry("init", 0o100_755, b"#!/bin/sh\n", 0);
        w.entry("dev/console", 0o020_600, &[], (5 << 8) | 1);
        let a = w.finish();
        assert!(a.starts_with(b"070701"));
        assert_eq!(a.len() % 4, 0);
        // The first header: inode 1, mode 0100755, size 10, name length 5.
        let h = std::str::from_utf8(&a[..110]).unwrap();
        assert_eq!(&h[6..14], "00000001");
        assert_eq!(&h[14..22], "000081ED");
        assert_eq!(&h[54..62], "0000000A");
        assert_eq!(&h[94..102], "00000005");
        let console = a.windows(11).position(|w| w == b"dev/console").unwrap();
        let hdr = std::str::from_utf8(&a[console - 110..console]).unwrap();
        assert_eq!(&hdr[78..86], "00000005", "rdevmajor");
        assert_eq!(&hdr[86..94], "00000001", "rdevminor");
        assert!(a.windows(10).any(|w| w == b"TRAILER!!!"));
    }

    #[test]
    fn the_init_quotes_the_command_and_loads_modules_in_order() {
        let m = |n: &str| Module {
            name: n.into(),
            bytes: vec![],
        };
        let s = init_script(
            &[m("virtio"), m("virtiofs")],
            &Init {
                command: vec!["/x/fslab".into(), "it's".into()],
                env: vec![("PATH".into(), "/usr/bin".into())],
                files: vec![],
            },
        );
        assert!(s.contains("for m in virtio virtiofs; do"), "{s}");
        assert!(
            s.contains("/usr/bin/env -i 'PATH=/usr/bin' '/x/fslab' 'it'\\''s'"),
            "{s}"
        );
        assert!(s.contains(&format!("-o ro {HOST_TAG} /host")));
    }

    #[test]
    fn a_static_busybox_is_told_from_a_dynamic_program() {
        let sh = std::fs::read("/bin/sh").unwrap();
        assert!(!is_static_elf(&sh), "/bin/sh is dynamically linked");
        assert!(!is_static_elf(b"#!/bin/sh\n"));
    }
}
