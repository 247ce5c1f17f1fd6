//! What findings read beside the runs' metrics: the machine the runs ran
//! on (the kernel's symbols that kernel-path mechanisms name, read from
//! /proc/kallsyms; its crc32c driver from /proc/crypto and whether the CPU
//! computes crc32c itself; its CPUs) and each cell's setup, from which the
//! stand-ins for the author's setup are named wherever a verdict is
//! printed: hardware crc32c for the software table, the ext4 driver for
//! ext3, a memory cgroup for a machine's RAM, a loop device for a disk,
//! more threads than CPUs.

use crate::spec::{Device, Experiment};

/// The machine the runs ran on, as findings need it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MachineFacts {
    /// The kernel release (uname -r).
    pub kernel: String,
    /// CPUs online.
    pub cpus: u32,
    /// Whether /proc/kallsyms could be read.
    pub kallsyms: bool,
    /// Each symbol asked about, and whether the running kernel has it.
    pub symbols: Vec<(String, bool)>,
    /// The crc32c driver the kernel's crypto API uses (/proc/crypto's
    /// highest-priority `crc32c`), if it could be read.
    pub crc32c_driver: Option<String>,
    /// Whether the CPU has the crc32 instruction (x86 `sse4_2` in
    /// /proc/cpuinfo), if it could be read.
    pub cpu_crc32: Option<bool>,
}

impl MachineFacts {
    /// This machine, asked about `symbols` (and ext3's driver).
    pub fn read(symbols: &[String]) -> MachineFacts {
        let text = |p: &str| std::fs::read_to_string(p).ok();
        let kallsyms = text("/proc/kallsyms");
        MachineFacts::from_texts(
            &Texts {
                kallsyms: kallsyms.as_deref(),
                crypto: text("/proc/crypto").as_deref(),
                cpuinfo: text("/proc/cpuinfo").as_deref(),
                kernel: text("/proc/sys/kernel/osrelease")
                    .unwrap_or_default()
                    .trim()
                    .to_string(),
                cpus: std::thread::available_parallelism()
                    .map(|n| n.get() as u32)
                    .unwrap_or(1),
            },
            symbols,
        )
    }

    /// From the files' texts (`None`: unreadable).
    pub fn from_texts(t: &Texts, symbols: &[String]) -> MachineFacts {
        let mut wanted: Vec<String> = symbols.to_vec();
        wanted.push(EXT3_DRIVER.into());
        wanted.sort();
        wanted.dedup();
        MachineFacts {
            kernel: t.kernel.clone(),
            cpus: t.cpus,
            kallsyms: t.kallsyms.is_some(),
            symbols: match t.kallsyms {
                Some(k) => {
                    let names = symbol_names(k);
                    wanted
                        .into_iter()
                        .map(|w| {
                            let has = names.iter().any(|n| {
                                *n == w
                                    || n.strip_prefix(w.as_str())
                                        .is_some_and(|r| r.starts_with('.'))
                            });
                            (w, has)
                        })
                        .collect()
                }
                None => Vec::new(),
            },
            crc32c_driver: t.crypto.and_then(crc32c_driver),
            cpu_crc32: t.cpuinfo.map(|c| {
                c.lines()
                    .any(|l| l.starts_with("flags") && l.split_whitespace().any(|f| f == "sse4_2"))
            }),
        }
    }

    /// Whether the running kernel has `symbol` (None: its symbols unread,
    /// or not asked about).
    pub fn has(&self, symbol: &str) -> Option<bool> {
        self.symbols
            .iter()
            .find(|(s, _)| s == symbol)
            .map(|(_, h)| *h)
    }
}

/// The texts [`MachineFacts::from_texts`] reads.
#[derive(Debug, Clone, Default)]
pub struct Texts<'a> {
    pub kallsyms: Option<&'a str>,
    pub crypto: Option<&'a str>,
    pub cpuinfo: Option<&'a str>,
    pub kernel: String,
    pub cpus: u32,
}

/// ext3's own driver (gone since Linux 4.3, when ext4 took ext3 over).
pub const EXT3_DRIVER: &str = "ext3_fill_super";

/// The symbol names of /proc/kallsyms (its third column).
fn symbol_names(k: &str) -> Vec<&str> {
    k.lines()
        .filter_map(|l| l.split_whitespace().nth(2))
        .collect()
}

/// The driver of /proc/crypto's highest-priority `crc32c`.
fn crc32c_driver(crypto: &str) -> Option<String> {
    let mut best: Option<(i64, String)> = None;
    for block in crypto.split("\n\n") {
        let field = |k: &str| {
            block.lines().find_map(|l| {
                let (a, b) = l.split_once(':')?;
                (a.trim() == k).then(|| b.trim().to_string())
            })
        };
        if field("name").as_deref() != Some("crc32c") {
            continue;
        }
        let (Some(driver), prio) = (field("driver"), field("priority")) else {
            continue;
        };
        let prio = prio.and_then(|p| p.parse().ok()).unwrap_or(0);
        if best.as_ref().is_none_or(|(p, _)| prio > *p) {
            best = Some((prio, driver));
        }
    }
    best.map(|(_, d)| d)
}

/// One cell's setup, as its stand-ins are named from it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CellFacts {
    /// The filesystem type (None on a directory device).
    pub fs: Option<String>,
    /// Whether it computes checksums with crc32c: ext4 with metadata_csum,
    /// xfs with CRCs, btrfs without nodatasum.
    pub crc32c: bool,
    /// A sparse image on a loop device.
    pub loop_image: bool,
    /// The memory cgroup's limit (bytes, as run at the experiment's scale).
    pub memory_limit: Option<u64>,
    /// The workload's threads (or client processes).
    pub threads: u32,
    /// The kernel it runs on in a guest (`[[target]] kernel`, as written),
    /// whose symbols and drivers are not this machine's.
    pub guest: Option<String>,
}

/// The machine and every cell: what findings name stand-ins from.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Facts {
    pub machine: MachineFacts,
    pub cells: Vec<CellFacts>,
}

impl Facts {
    /// The experiment's cells on `machine`.
    pub fn of(exp: &Experiment, machine: MachineFacts) -> Facts {
        let cells = exp
            .cells
            .iter()
            .map(|c| {
                let fs = c.fs.as_ref().map(|f| f.name().to_string());
                let mkfs = c.mkfs_options.join(" ");
                let crc32c = match fs.as_deref() {
                    Some("ext4") => {
                        mkfs.contains("metadata_csum") && !mkfs.contains("^metadata_csum")
                    }
                    Some("xfs") => !mkfs.contains("crc=0"),
                    Some("btrfs") => {
                        let o = &c.mount_options;
                        !(o.contains("nodatasum")
                            || o.contains("nodatacow")
                            || mkfs.contains("--csum")
                            || mkfs.contains("--checksum"))
                    }
                    _ => false,
                };
                CellFacts {
                    fs,
                    crc32c,
                    loop_image: matches!(exp.device, Device::Image { .. }),
                    memory_limit: exp.machine.memory_limit,
                    threads: crate::plan::cell_job(exp, c, std::path::Path::new("/mnt"))
                        .map_or(1, |j| j.threads())
                        * exp.workload.ranks.max(1),
                    guest: c.kernel.as_ref().map(|k| k.name.clone()),
                }
            })
            .collect();
        Facts { machine, cells }
    }

    /// The stand-ins of the cells `cells`, in words, each named once.
    pub fn stand_ins(&self, cells: &[u32]) -> Vec<String> {
        let m = &self.machine;
        let of: Vec<&CellFacts> = cells
            .iter()
            .filter_map(|c| self.cells.get(*c as usize))
            .collect();
        let mut out = Vec::new();
        // What this machine's kernel says holds for the cells on it only.
        let (guests, host): (Vec<&CellFacts>, Vec<&CellFacts>) =
            of.iter().partition(|c| c.guest.is_some());
        let mut kernels: Vec<&str> = guests.iter().filter_map(|c| c.guest.as_deref()).collect();
        kernels.dedup();
        if !kernels.is_empty() {
            out.push(format!(
                "a QEMU guest on kernel {} for the author's machine: its drivers and code paths are that kernel's, which fslab does not read",
                kernels.join(", ")
            ));
        }
        if host.iter().any(|c| c.crc32c) {
            let hw = match m.cpu_crc32 {
                Some(true) => "on the CPU's crc32 instruction (SSE4.2)",
                Some(false) => "with no crc32 instruction in this CPU",
                None => "on a CPU whose flags were unread",
            };
            out.push(format!(
                "crc32c: the kernel's {} driver (/proc/crypto) {hw}, not the software table of the seeds' 2009-2013 kernels",
                m.crc32c_driver.as_deref().unwrap_or("(unread)")
            ));
        }
        if host.iter().any(|c| c.fs.as_deref() == Some("ext3")) && m.has(EXT3_DRIVER) == Some(false)
        {
            out.push(format!(
                "\"ext3\" is the ext4 driver mounting an ext3 filesystem: this kernel has no ext3 driver ({EXT3_DRIVER} not in /proc/kallsyms; ext3's own code left Linux in 4.3)"
            ));
        }
        if let Some(limit) = of.iter().find_map(|c| c.memory_limit) {
            out.push(format!(
                "a {} memory cgroup (v1, charging page cache and slab) for the author's machine's memory",
                fslab_lab::human_bytes(limit)
            ));
        }
        if of.iter().any(|c| c.loop_image) {
            out.push("a loop device on a sparse image for the author's disk".into());
        }
        if let Some(t) = of
            .iter()
            .map(|c| c.threads)
            .filter(|t| *t > m.cpus.max(1))
            .max()
        {
            out.push(format!(
                "{t} threads on {} CPUs for the author's {t} on as many: they take turns, so a rate or time measures work per operation, not scaling",
                m.cpus
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CRYPTO: &str = "name         : crc32c\ndriver       : crc32c-generic\nmodule       : kernel\npriority     : 100\n\nname         : crc32c\ndriver       : crc32c-intel\nmodule       : kernel\npriority     : 200\n\nname         : sha256\ndriver       : sha256-ni\npriority     : 250\n";

    #[test]
    fn the_kernels_symbols_its_crc32c_driver_and_the_cpu_are_read_from_their_files() {
        let kallsyms = "ffffffff81000000 T btree_writepages\nffffffff81000010 t do_get_write_access\nffffffff81000020 t do_get_write_access.cold\nffffffff81000030 t dx_probe.isra.0\n";
        let f = MachineFacts::from_texts(
            &Texts {
                kallsyms: Some(kallsyms),
                crypto: Some(CRYPTO),
                cpuinfo: Some("processor : 0\nflags\t\t: fpu sse4_2 avx\n"),
                kernel: "6.18.0".into(),
                cpus: 2,
            },
            &[
                "btree_writepage".into(),
                "dx_probe".into(),
                "do_get_write_access".into(),
            ],
        );
        assert_eq!(f.has("btree_writepage"), Some(false));
        assert_eq!(f.has("do_get_write_access"), Some(true));
        // A compiler's clone of a function is the function.
        assert_eq!(f.has("dx_probe"), Some(true));
        assert_eq!(f.has(EXT3_DRIVER), Some(false));
        assert_eq!(f.has("never_asked"), None);
        assert_eq!(f.crc32c_driver.as_deref(), Some("crc32c-intel"));
        assert_eq!(f.cpu_crc32, Some(true));
        // Unreadable: unknown, never guessed.
        let u = MachineFacts::from_texts(&Texts::default(), &["x".into()]);
        assert!(!u.kallsyms);
        assert_eq!(u.has("x"), None);
        assert_eq!(u.crc32c_driver, None);
    }

    #[test]
    fn each_stand_in_is_named_from_the_cells_and_the_machine() {
        let machine = MachineFacts {
            cpus: 2,
            kallsyms: true,
            symbols: vec![(EXT3_DRIVER.into(), false)],
            crc32c_driver: Some("crc32c-lib".into()),
            cpu_crc32: Some(true),
            ..Default::default()
        };
        let facts = Facts {
            machine,
            cells: vec![
                CellFacts {
                    fs: Some("ext3".into()),
                    loop_image: true,
                    memory_limit: Some(256 << 20),
                    threads: 8,
                    ..Default::default()
                },
                CellFacts {
                    fs: Some("ext4".into()),
                    crc32c: true,
                    threads: 1,
                    ..Default::default()
                },
            ],
        };
        let all = facts.stand_ins(&[0, 1]).join(" | ");
        for want in [
            "crc32c: the kernel's crc32c-lib driver (/proc/crypto) on the CPU's crc32 instruction",
            "\"ext3\" is the ext4 driver",
            "a 256 MiB memory cgroup",
            "a loop device on a sparse image",
            "8 threads on 2 CPUs",
        ] {
            assert!(all.contains(want), "{want:?} not in {all}");
        }
        // A cell alone names only its own.
        let one = facts.stand_ins(&[1]);
        assert_eq!(one.len(), 1, "{one:?}");
        // With ext3's driver in the kernel, ext3 is no stand-in.
        let mut f2 = facts.clone();
        f2.machine.symbols = vec![(EXT3_DRIVER.into(), true)];
        assert!(!f2.stand_ins(&[0]).join(" ").contains("ext4 driver"));
        // On a guest's kernel this machine's crc32c driver and missing ext3
        // say nothing: the guest is named instead.
        let mut f3 = facts.clone();
        for c in &mut f3.cells {
            c.guest = Some("debian:6.1.0-50-cloud-amd64".into());
        }
        let guest = f3.stand_ins(&[0, 1]).join(" | ");
        assert!(
            guest.contains(
                "a QEMU guest on kernel debian:6.1.0-50-cloud-amd64 for the author's machine"
            ),
            "{guest}"
        );
        assert!(!guest.contains("crc32c-lib"), "{guest}");
        assert!(!guest.contains("ext4 driver"), "{guest}");
    }
}
