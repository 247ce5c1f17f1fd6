//! A kernel to boot: its image (checked by its bzImage header), release,
//! modules and config, found beside it the way a kernel package or
//! `make install` lays them out.

use std::io::Read;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::GuestError;

/// A kernel image fslab can boot, with what belongs to it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Kernel {
    /// As the experiment named it (`debian:6.1.0-50-cloud-amd64` or a path).
    pub name: String,
    /// The bzImage.
    pub image: PathBuf,
    /// `uname -r` of the kernel, from the image's header.
    pub release: String,
    /// The header's whole version string (`6.1.0-50-cloud-amd64
    /// (debian-kernel@...) #1 SMP ... Debian 6.1.176-1 (2026-07-02)`).
    pub version: String,
    /// `lib/modules/RELEASE` of the kernel, when it has one.
    pub modules: Option<PathBuf>,
    /// Its `config-RELEASE`, when there is one.
    pub config: Option<PathBuf>,
}

/// The setup header of a bzImage starts at 0x1f1; "HdrS" marks it at 0x202.
const HDR_MAGIC_AT: usize = 0x202;
/// The boot sector's 0xAA55 signature.
const BOOT_FLAG_AT: usize = 0x1fe;
/// The header's protocol version.
const VERSION_AT: usize = 0x206;
/// The offset (minus 0x200) of the kernel's version string.
const KERNEL_VERSION_AT: usize = 0x20e;
/// The header and the version string lie in the setup code, within the
/// first 64 KiB.
const HEADER_BYTES: usize = 0x10000;

impl Kernel {
    /// The kernel image at `path` (named `name` in the experiment), with its
    /// modules and config found beside it: `ROOT/boot/vmlinuz-R` has
    /// `ROOT/lib/modules/R` and `ROOT/boot/config-R`; any other place,
    /// `modules/` or `lib/modules/R` and `config-R` or `config` in its own
    /// directory.
    pub fn open(name: &str, path: &Path) -> Result<Kernel, GuestError> {
        let (release, version) = header(path)?;
        let dir = path.parent().unwrap_or(Path::new("."));
        let root = if dir.file_name().is_some_and(|n| n == "boot") {
            dir.parent().unwrap_or(Path::new("/"))
        } else {
            dir
        };
        let modules = [
            root.join("lib/modules").join(&release),
            root.join("usr/lib/modules").join(&release),
            dir.join("modules"),
        ]
        .into_iter()
        .find(|d| d.is_dir());
        let config = [
            dir.join(format!("config-{release}")),
            dir.join("config"),
            root.join("boot").join(format!("config-{release}")),
        ]
        .into_iter()
        .find(|f| f.is_file());
        Ok(Kernel {
            name: name.to_string(),
            image: path.to_path_buf(),
            release,
            version,
            modules,
            config,
        })
    }

    /// The kernel's configuration (`CONFIG_...` lines), if it came with one.
    pub fn config_text(&self) -> Option<String> {
        std::fs::read_to_string(self.config.as_ref()?).ok()
    }

    /// The value of `CONFIG_NAME` in the kernel's config (`y`, `m`, ...);
    /// None when it is not set or there is no config.
    pub fn config_value(&self, name: &str) -> Option<String> {
        config_value(&self.config_text()?, name)
    }
}

/// `CONFIG_NAME`'s value in a config file's text.
pub fn config_value(text: &str, name: &str) -> Option<String> {
    let key = format!("CONFIG_{name}=");
    text.lines()
        .find_map(|l| l.strip_prefix(&key))
        .map(|v| v.trim_matches('"').to_string())
}

/// The release and version string in a bzImage's setup header, or why the
/// file is not a kernel image.
pub fn header(path: &Path) -> Result<(String, String), GuestError> {
    let mut f = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(GuestError::NoImage(path.to_path_buf()))
        }
        Err(e) => return Err(GuestError::io(path, e)),
    };
    if f.metadata().map(|m| m.is_dir()).unwrap_or(false) {
        return Err(not_kernel(path, "a directory"));
    }
    let mut buf = vec![0u8; HEADER_BYTES];
    let mut n = 0;
    while n < buf.len() {
        match f.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) => return Err(GuestError::io(path, e)),
        }
    }
    buf.truncate(n);
    parse_header(&buf).map_err(|why| not_kernel(path, why))
}

fn not_kernel(path: &Path, why: &str) -> GuestError {
    GuestError::NotKernel {
        path: path.to_path_buf(),
        why: why.to_string(),
    }
}

/// The release and version string of a bzImage's first bytes.
pub fn parse_header(buf: &[u8]) -> Result<(String, String), &'static str> {
    let u16_at = |at: usize| {
        buf.get(at..at + 2)
            .map(|b| u16::from_le_bytes([b[0], b[1]]))
    };
    if buf.len() < 0x240 {
        return Err("too short for a bzImage header");
    }
    if &buf[HDR_MAGIC_AT..HDR_MAGIC_AT + 4] != b"HdrS" || u16_at(BOOT_FLAG_AT) != Some(0xaa55) {
        return Err("no bzImage header: no HdrS at 0x202");
    }
    if u16_at(VERSION_AT).unwrap_or(0) < 0x0200 {
        return Err("boot protocol older than 2.00");
    }
    let off = usize::from(u16_at(KERNEL_VERSION_AT).unwrap_or(0));
    if off == 0 {
        return Err("no version string in its header");
    }
    let s = buf
        .get(off + 0x200..)
        .ok_or("its version string lies past the setup code's 64 KiB")?;
    let end = s.iter().position(|&b| b == 0).unwrap_or(s.len()).min(256);
    let version = String::from_utf8_lossy(&s[..end]).trim().to_string();
    let release = version
        .split_whitespace()
        .next()
        .filter(|r| r.bytes().all(|b| b.is_ascii_graphic()))
        .ok_or("an empty version string")?
        .to_string();
    Ok((release, version))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first bytes of a bzImage whose version string is `v`.
    fn image(v: &str) -> Vec<u8> {
        let mut b = vec![0u8; 0x1000];
        b[BOOT_FLAG_AT..BOOT_FLAG_AT + 2].copy_from_slice(&0xaa55u16.to_le_bytes());
        b[HDR_MAGIC_AT..HDR_MAGIC_AT + 4].copy_from_slice(b"HdrS");
        b[VERSION_AT..VERSION_AT + 2].copy_from_slice(&0x020fu16.to_le_bytes());
        b[KERNEL_VERSION_AT..KERNEL_VERSION_AT + 2].copy_from_slice(&0x0600u16.to_le_bytes());
        b[0x800..0x800 + v.len()].copy_from_slice(v.as_bytes());
        b
    }

    #[test]
    fn a_bzimage_header_gives_the_release_and_version() {
        let b = image("6.1.0-50-cloud-amd64 (debian-kernel@lists.debian.org) #1 SMP");
        let (r, v) = parse_header(&b).unwrap();
        assert_eq!(r, "6.1.0-50-cloud-amd64");
        assert!(v.ends_with("#1 SMP"), "{v}");
    }

    #[test]
    fn a_file_without_the_header_is_not_a_kernel() {
        let mut b = image("6.1.0");
        b[HDR_MAGIC_AT] = b'X';
        assert!(parse_header(&b).unwrap_err().contains("HdrS"));
        assert!(parse_header(b"#!/bin/sh\necho hi\n").is_err());
        let mut b = image("6.1.0");
        b[KERNEL_VERSION_AT..KERNEL_VERSION_AT + 2].copy_from_slice(&[0, 0]);
        assert!(parse_header(&b).unwrap_err().contains("version"));
    }

    #[test]
    fn open_names_a_missing_image_and_a_text_file() {
        let d = tempfile::tempdir().unwrap();
        let e = Kernel::open("x", &d.path().join("vmlinuz")).unwrap_err();
        assert!(matches!(e, GuestError::NoImage(_)), "{e}");
        let t = d.path().join("notes.txt");
        std::fs::write(&t, "not a kernel").unwrap();
        let e = Kernel::open("x", &t).unwrap_err().to_string();
        assert!(e.contains("not a kernel image"), "{e}");
        assert!(e.contains("notes.txt"), "{e}");
    }

    #[test]
    fn open_finds_modules_and_config_as_a_package_lays_them_out() {
        let d = tempfile::tempdir().unwrap();
        let boot = d.path().join("boot");
        std::fs::create_dir_all(&boot).unwrap();
        std::fs::create_dir_all(d.path().join("lib/modules/6.1.0-9")).unwrap();
        std::fs::write(boot.join("vmlinuz-6.1.0-9"), image("6.1.0-9 (x) #1")).unwrap();
        std::fs::write(boot.join("config-6.1.0-9"), "CONFIG_VIRTIO_FS=m\n").unwrap();
        let k = Kernel::open("k", &boot.join("vmlinuz-6.1.0-9")).unwrap();
        assert_eq!(k.release, "6.1.0-9");
        assert_eq!(k.modules, Some(d.path().join("lib/modules/6.1.0-9")));
        assert_eq!(k.config_value("VIRTIO_FS").as_deref(), Some("m"));
        assert_eq!(k.config_value("NET_9P"), None);
    }
}
