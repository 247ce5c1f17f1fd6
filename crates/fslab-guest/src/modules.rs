//! The kernel modules a guest loads before it can reach the host: which
//! are built in (`modules.builtin`), where the others are, and what each
//! depends on (the `depends=` of its `.modinfo` section; a package holds
//! no `modules.dep`, which `depmod` makes when it is installed).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::{GuestError, Kernel};

/// A module to load, with its bytes (decompressed).
#[derive(Debug, Clone)]
pub struct Module {
    pub name: String,
    pub bytes: Vec<u8>,
}

/// What a guest needs: the modules named, each after the ones it depends
/// on; those built into the kernel are left out. `optional` ones that the
/// kernel has in neither form are left out too.
pub fn closure(
    kernel: &Kernel,
    required: &[&str],
    optional: &[&str],
) -> Result<Vec<Module>, GuestError> {
    let Some(dir) = &kernel.modules else {
        // A kernel with no modules: everything it has is built in.
        return Ok(Vec::new());
    };
    let builtin = builtin(dir);
    let index = index(dir)?;
    let mut walk = Walk {
        index: &index,
        builtin: &builtin,
        seen: BTreeSet::new(),
        out: Vec::new(),
    };
    for (names, needed) in [(required, true), (optional, false)] {
        for &n in names {
            let n = canonical(n);
            if builtin.contains(&n) {
                continue;
            }
            if !index.contains_key(&n) {
                if needed {
                    return Err(GuestError::NoModule {
                        release: kernel.release.clone(),
                        module: n,
                        dir: dir.clone(),
                    });
                }
                continue;
            }
            walk.visit(&n, 0)?;
        }
    }
    Ok(walk.out)
}

struct Walk<'a> {
    index: &'a BTreeMap<String, PathBuf>,
    builtin: &'a BTreeSet<String>,
    seen: BTreeSet<String>,
    out: Vec<Module>,
}

impl Walk<'_> {
    /// Adds `name` after its dependencies (depth-first).
    fn visit(&mut self, name: &str, depth: u32) -> Result<(), GuestError> {
        if depth > 64 || self.builtin.contains(name) || !self.seen.insert(name.to_string()) {
            return Ok(());
        }
        let Some(path) = self.index.get(name) else {
            // A dependency the kernel does not have as a module is built in.
            return Ok(());
        };
        let bytes = read_module(path)?;
        for dep in depends(&bytes) {
            self.visit(&canonical(&dep), depth + 1)?;
        }
        self.out.push(Module {
            name: name.to_string(),
            bytes,
        });
        Ok(())
    }
}

/// A module's name as the kernel compares them (`-` and `_` are one).
fn canonical(name: &str) -> String {
    name.replace('-', "_")
}

/// The module name of a file (`kernel/fs/xfs/xfs.ko.xz` -> `xfs`).
fn module_name(path: &Path) -> Option<String> {
    let f = path.file_name()?.to_str()?;
    let stem = [".ko", ".ko.xz", ".ko.zst", ".ko.gz"]
        .iter()
        .find_map(|s| f.strip_suffix(s))?;
    Some(canonical(stem))
}

/// The modules built into the kernel (`modules.builtin`).
fn builtin(dir: &Path) -> BTreeSet<String> {
    std::fs::read_to_string(dir.join("modules.builtin"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| module_name(Path::new(l.trim())))
        .collect()
}

/// Every module file under `dir`, by name.
fn index(dir: &Path) -> Result<BTreeMap<String, PathBuf>, GuestError> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let rd = std::fs::read_dir(&d).map_err(|e| GuestError::io(&d, e))?;
        for e in rd.filter_map(Result::ok) {
            let p = e.path();
            let ty = e.file_type().map_err(|err| GuestError::io(&p, err))?;
            if ty.is_dir() {
                stack.push(p);
            } else if let Some(n) = module_name(&p) {
                out.insert(n, p);
            }
        }
    }
    Ok(out)
}

/// A module file's bytes, decompressed with `xz` or `zstd` when it is.
fn read_module(path: &Path) -> Result<Vec<u8>, GuestError> {
    let name = path.to_string_lossy();
    let tool = if name.ends_with(".xz") {
        Some("xz")
    } else if name.ends_with(".zst") {
        Some("zstd")
    } else if name.ends_with(".gz") {
        Some("gzip")
    } else {
        None
    };
    let Some(tool) = tool else {
        return std::fs::read(path).map_err(|e| GuestError::io(path, e));
    };
    let out = std::process::Command::new(tool)
        .arg("-dc")
        .arg(path)
        .output()
        .map_err(|e| GuestError::NoTool {
            tool: tool.into(),
            hint: format!("{} is compressed ({e})", path.display()),
        })?;
    if !out.status.success() {
        return Err(GuestError::Command {
            command: format!("{tool} -dc {}", path.display()),
            why: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    Ok(out.stdout)
}

/// The `depends=` list of a module's `.modinfo` section (ELF64,
/// little-endian); empty when there is none.
pub fn depends(elf: &[u8]) -> Vec<String> {
    modinfo(elf)
        .and_then(|info| {
            info.split(|&b| b == 0)
                .find_map(|kv| kv.strip_prefix(b"depends="))
                .map(|d| {
                    String::from_utf8_lossy(d)
                        .split(',')
                        .filter(|s| !s.is_empty())
                        .map(String::from)
                        .collect()
                })
        })
        .unwrap_or_default()
}

/// The bytes of an ELF64 file's `.modinfo` section.
fn modinfo(elf: &[u8]) -> Option<&[u8]> {
    if elf.get(..4)? != b"\x7fELF" || *elf.get(4)? != 2 || *elf.get(5)? != 1 {
        return None;
    }
    let u16_at = |at: usize| Some(u16::from_le_bytes(elf.get(at..at + 2)?.try_into().ok()?));
    let u32_at = |at: usize| Some(u32::from_le_bytes(elf.get(at..at + 4)?.try_into().ok()?));
    let u64_at = |at: usize| Some(u64::from_le_bytes(elf.get(at..at + 8)?.try_into().ok()?));
    let shoff = usize::try_from(u64_at(0x28)?).ok()?;
    let shentsize = usize::from(u16_at(0x3a)?);
    let shnum = usize::from(u16_at(0x3c)?);
    let shstrndx = usize::from(u16_at(0x3e)?);
    let section = |i: usize| -> Option<(u32, usize, usize)> {
        let h = shoff + i * shentsize;
        let off = usize::try_from(u64_at(h + 0x18)?).ok()?;
        let size = usize::try_from(u64_at(h + 0x20)?).ok()?;
        Some((u32_at(h)?, off, size))
    };
    let (_, stroff, strsize) = section(shstrndx)?;
    let names = elf.get(stroff..stroff + strsize)?;
    (0..shnum).find_map(|i| {
        let (name, off, size) = section(i)?;
        let n = names.get(name as usize..)?;
        let n = &n[..n.iter().position(|&b| b == 0)?];
        (n == b".modinfo")
            .then(|| elf.get(off..off + size))
            .flatten()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A minimal ELF64 with a section-name table and a `.modinfo`.
    pub(crate) fn fake_module(modinfo: &[u8]) -> Vec<u8> {
        let names = b"\0.shstrtab\0.modinfo\0";
        let mut f = vec![0u8; 0x40];
        f[..6].copy_from_slice(b"\x7fELF\x02\x01");
        let names_at = f.len();
        f.extend_from_slice(names);
        let info_at = f.len();
        f.extend_from_slice(modinfo);
        while !f.len().is_multiple_of(8) {
            f.push(0);
        }
        let shoff = f.len();
        let mut sh = |name: u32, off: usize, size: usize| {
            let mut h = vec![0u8; 0x40];
            h[..4].copy_from_slice(&name.to_le_bytes());
            h[0x18..0x20].copy_from_slice(&(off as u64).to_le_bytes());
            h[0x20..0x28].copy_from_slice(&(size as u64).to_le_bytes());
            f.extend_from_slice(&h);
        };
        sh(0, 0, 0);
        sh(1, names_at, names.len());
        sh(11, info_at, modinfo.len());
        f[0x28..0x30].copy_from_slice(&(shoff as u64).to_le_bytes());
        f[0x3a..0x3c].copy_from_slice(&0x40u16.to_le_bytes());
        f[0x3c..0x3e].copy_from_slice(&3u16.to_le_bytes());
        f[0x3e..0x40].copy_from_slice(&1u16.to_le_bytes());
        f
    }

    #[test]
    fn depends_reads_the_modinfo_section() {
        let m = fake_module(b"license=GPL\0depends=virtio_ring,virtio\0name=virtio_blk\0");
        assert_eq!(depends(&m), ["virtio_ring", "virtio"]);
        assert!(depends(&fake_module(b"depends=\0name=virtio\0")).is_empty());
        assert!(depends(b"not an elf file at all").is_empty());
    }

    #[test]
    fn the_closure_loads_dependencies_first_and_skips_builtins() {
        let d = tempfile::tempdir().unwrap();
        let m = d.path().join("lib/modules/6.1.0-9");
        let k = m.join("kernel");
        std::fs::create_dir_all(k.join("fs")).unwrap();
        let put =
            |name: &str, info: &[u8]| std::fs::write(k.join(name), fake_module(info)).unwrap();
        put("virtiofs.ko", b"depends=fuse,virtio_ring,virtio\0");
        put("fuse.ko", b"depends=\0");
        put("virtio_ring.ko", b"depends=\0");
        put("virtio.ko", b"depends=\0");
        put("fs/xfs.ko", b"depends=libcrc32c\0");
        std::fs::write(
            m.join("modules.builtin"),
            "kernel/lib/libcrc32c.ko\nkernel/fs/ext4/ext4.ko\n",
        )
        .unwrap();
        let kernel = Kernel {
            name: "k".into(),
            image: d.path().join("vmlinuz"),
            release: "6.1.0-9".into(),
            version: String::new(),
            modules: Some(m.clone()),
            config: None,
        };
        let got = closure(&kernel, &["virtiofs", "ext4"], &["xfs", "btrfs"]).unwrap();
        let names: Vec<&str> = got.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["fuse", "virtio_ring", "virtio", "virtiofs", "xfs"]);
        let e = closure(&kernel, &["virtio_blk"], &[])
            .unwrap_err()
            .to_string();
        assert!(e.contains("virtio_blk") && e.contains("6.1.0-9"), "{e}");
    }
}
