//! The machine's facts (see [`fslab_model::facts`]), read where the
//! instruments read the machine: through a [`Source`], so that every fact
//! and every way it can be missing is tested with a fake. Read once at a
//! run's start, in well under a millisecond but for the kernel's
//! configuration (a few milliseconds to inflate /proc/config.gz).
//!
//! A fact that cannot be read is recorded unknown, with the file that was
//! missing: nothing is guessed from a neighbour.

use std::io::Read as _;
use std::path::{Path, PathBuf};

use fslab_model::facts::names;
use fslab_model::mountinfo;
use fslab_model::{Fact, MachineFacts};

use crate::devices::Targets;
use crate::source::Source;

/// The kernel configuration options that make a kernel slower than the
/// one it is compared with (debugging, sanitizers, checking).
pub const DEBUG_OPTIONS: [&str; 21] = [
    "LOCKDEP",
    "PROVE_LOCKING",
    "DEBUG_LOCK_ALLOC",
    "LOCK_STAT",
    "DEBUG_SPINLOCK",
    "DEBUG_MUTEXES",
    "DEBUG_ATOMIC_SLEEP",
    "KASAN",
    "KCSAN",
    "KMSAN",
    "UBSAN",
    "DEBUG_PAGEALLOC",
    "SLUB_DEBUG_ON",
    "DEBUG_OBJECTS",
    "DEBUG_VM",
    "KMEMLEAK",
    "XFS_DEBUG",
    "XFS_WARN",
    "BTRFS_DEBUG",
    "BTRFS_ASSERT",
    "EXT4_DEBUG",
];

/// Every fact of this host about a workload watching `targets`.
pub fn machine(source: &dyn Source, targets: &Targets) -> MachineFacts {
    let host = read_trim(source, "/proc/sys/kernel/hostname").unwrap_or_default();
    let mut facts = cpu(source);
    facts.extend(kernel(source));
    facts.extend(mitigations(source));
    facts.push(crc32c(source));
    facts.extend(device(source, targets));
    facts.extend(vm(source));
    MachineFacts { host, facts }
}

fn read_trim(source: &dyn Source, path: &str) -> Option<String> {
    source.read(Path::new(path)).map(|s| s.trim().to_string())
}

/// A fact read from one file, trimmed; unknown (naming the file) when it
/// is not there.
fn file_fact(source: &dyn Source, name: &str, path: &str) -> Fact {
    match read_trim(source, path) {
        Some(v) if !v.is_empty() => Fact::known(name, v, path),
        Some(_) => Fact::unknown(name, format!("{path} is empty")),
        None => Fact::unknown(name, format!("{path} cannot be read")),
    }
}

fn cpu(source: &dyn Source) -> Vec<Fact> {
    const CPUINFO: &str = "/proc/cpuinfo";
    let info = source.read(Path::new(CPUINFO));
    let field = |line: &str, key: &str| {
        let (k, v) = line.split_once(':')?;
        (k.trim() == key).then(|| v.trim().to_string())
    };
    let model = info
        .as_deref()
        .and_then(|t| t.lines().find_map(|l| field(l, "model name")));
    let count = info.as_deref().map(|t| {
        t.lines()
            .filter(|l| field(l, "processor").is_some())
            .count()
    });
    let governor = "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor";
    let mut v = vec![
        match model {
            Some(m) => Fact::known(names::CPU_MODEL, m, CPUINFO),
            None => Fact::unknown(names::CPU_MODEL, format!("no model name in {CPUINFO}")),
        },
        match count {
            Some(n) if n > 0 => Fact::known(names::CPUS, n.to_string(), CPUINFO),
            _ => Fact::unknown(names::CPUS, format!("no processor lines in {CPUINFO}")),
        },
        file_fact(source, names::CPUS_ONLINE, "/sys/devices/system/cpu/online"),
    ];
    v.push(match read_trim(source, governor) {
        Some(g) => Fact::known(names::GOVERNOR, g, governor),
        None => Fact::unknown(
            names::GOVERNOR,
            "no cpufreq driver (/sys/devices/system/cpu/cpu0/cpufreq is absent): the clock is the platform's",
        ),
    });
    v.push(
        match source
            .read(Path::new("/proc/meminfo"))
            .as_deref()
            .and_then(|m| meminfo_kib(m, "MemTotal"))
        {
            Some(kib) => Fact::known(
                names::MEMORY,
                fslab_model::units::human_bytes(kib * 1024),
                "/proc/meminfo MemTotal",
            ),
            None => Fact::unknown(names::MEMORY, "no MemTotal in /proc/meminfo"),
        },
    );
    v
}

/// A /proc/meminfo field, KiB.
pub fn meminfo_kib(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k == key).then(|| v.split_whitespace().next()?.parse().ok())?
    })
}

fn kernel(source: &dyn Source) -> Vec<Fact> {
    let release = read_trim(source, "/proc/sys/kernel/osrelease");
    let mut v = vec![
        file_fact(source, names::KERNEL, "/proc/sys/kernel/osrelease"),
        file_fact(source, names::KERNEL_VERSION, "/proc/sys/kernel/version"),
        match source
            .read_bytes(Path::new("/sys/kernel/notes"))
            .and_then(|n| build_id(&n))
        {
            Some(id) => Fact::known(names::KERNEL_BUILD_ID, id, "/sys/kernel/notes"),
            None => Fact::unknown(
                names::KERNEL_BUILD_ID,
                "no GNU build-id note in /sys/kernel/notes",
            ),
        },
        file_fact(source, names::KERNEL_CMDLINE, "/proc/cmdline"),
    ];
    let cmdline = read_trim(source, "/proc/cmdline").unwrap_or_default();
    let config = kernel_config(source, release.as_deref());
    v.push(match &config {
        Some((text, from)) => {
            let set: Vec<&str> = DEBUG_OPTIONS
                .iter()
                .copied()
                .filter(|o| config_value(text, o).is_some_and(|v| v == "y"))
                .collect();
            Fact::known(
                names::DEBUG_OPTIONS,
                if set.is_empty() {
                    "none".to_string()
                } else {
                    set.join(",")
                },
                from,
            )
        }
        None => Fact::unknown(
            names::DEBUG_OPTIONS,
            "the kernel's configuration cannot be read (no /proc/config.gz or /boot/config-RELEASE)",
        ),
    });
    v.push(preemption(config.as_ref(), &cmdline));
    v.push(lsm(source, config.as_ref(), &cmdline));
    v
}

/// The hex build id of the kernel's `GNU` note (type 3,
/// `NT_GNU_BUILD_ID`) in the ELF notes of /sys/kernel/notes.
pub fn build_id(notes: &[u8]) -> Option<String> {
    let u32_at = |i: usize| -> Option<u32> {
        Some(u32::from_ne_bytes(notes.get(i..i + 4)?.try_into().ok()?))
    };
    let pad = |n: usize| (n + 3) & !3;
    let mut i = 0;
    while i + 12 <= notes.len() {
        let (namesz, descsz, kind) = (u32_at(i)? as usize, u32_at(i + 4)? as usize, u32_at(i + 8)?);
        let name = notes.get(i + 12..i + 12 + namesz)?;
        let desc_at = i + 12 + pad(namesz);
        let desc = notes.get(desc_at..desc_at + descsz)?;
        if kind == 3 && name.starts_with(b"GNU") {
            return Some(desc.iter().map(|b| format!("{b:02x}")).collect());
        }
        i = desc_at + pad(descsz);
    }
    None
}

/// The kernel's configuration text and where it was read.
fn kernel_config(source: &dyn Source, release: Option<&str>) -> Option<(String, String)> {
    if let Some(gz) = source.read_bytes(Path::new("/proc/config.gz")) {
        let mut text = String::new();
        if flate2::read::GzDecoder::new(gz.as_slice())
            .read_to_string(&mut text)
            .is_ok()
        {
            return Some((text, "/proc/config.gz".into()));
        }
    }
    let boot = format!("/boot/config-{}", release?);
    source.read(Path::new(&boot)).map(|t| (t, boot))
}

/// `CONFIG_NAME`'s value in a kernel configuration (`y`, `m`, a string),
/// None when it is not set.
pub fn config_value<'a>(config: &'a str, name: &str) -> Option<&'a str> {
    let key = format!("CONFIG_{name}=");
    config
        .lines()
        .find_map(|l| l.strip_prefix(key.as_str()))
        .map(|v| v.trim_matches('"'))
}

fn preemption(config: Option<&(String, String)>, cmdline: &str) -> Fact {
    let over = cmdline
        .split_whitespace()
        .find_map(|w| w.strip_prefix("preempt="));
    let Some((text, from)) = config else {
        return match over {
            Some(p) => Fact::known(names::PREEMPTION, p, "/proc/cmdline preempt="),
            None => Fact::unknown(
                names::PREEMPTION,
                "the kernel's configuration cannot be read",
            ),
        };
    };
    let built = [
        "PREEMPT_RT",
        "PREEMPT_LAZY",
        "PREEMPT",
        "PREEMPT_VOLUNTARY",
        "PREEMPT_NONE",
    ]
    .into_iter()
    .find(|o| config_value(text, o) == Some("y"))
    .map(|o| o.trim_start_matches("PREEMPT_").to_lowercase());
    let dynamic = config_value(text, "PREEMPT_DYNAMIC") == Some("y");
    match (over, built) {
        (Some(p), _) if dynamic => Fact::known(
            names::PREEMPTION,
            p,
            &format!("/proc/cmdline preempt= (dynamic, {from})"),
        ),
        (_, Some(b)) => Fact::known(
            names::PREEMPTION,
            if b == "preempt" { "full".into() } else { b },
            from,
        ),
        (_, None) => Fact::unknown(names::PREEMPTION, format!("no PREEMPT model set in {from}")),
    }
}

fn lsm(source: &dyn Source, config: Option<&(String, String)>, cmdline: &str) -> Fact {
    const ACTIVE: &str = "/sys/kernel/security/lsm";
    if let Some(l) = read_trim(source, ACTIVE).filter(|l| !l.is_empty()) {
        return Fact::known(names::LSM, l, ACTIVE);
    }
    if let Some(l) = cmdline
        .split_whitespace()
        .find_map(|w| w.strip_prefix("lsm="))
    {
        return Fact::known(names::LSM, l, "/proc/cmdline lsm= (securityfs not mounted)");
    }
    match config.and_then(|(t, from)| Some((config_value(t, "LSM")?, from))) {
        Some((l, from)) => Fact::known(
            names::LSM,
            format!("configured: {l}"),
            &format!("CONFIG_LSM in {from} (securityfs is not mounted: the active list cannot be read)"),
        ),
        None => Fact::unknown(
            names::LSM,
            "securityfs is not mounted (no /sys/kernel/security/lsm) and the configuration cannot be read",
        ),
    }
}

fn mitigations(source: &dyn Source) -> Vec<Fact> {
    const DIR: &str = "/sys/devices/system/cpu/vulnerabilities";
    let mut names_in: Vec<String> = source.list(Path::new(DIR));
    names_in.sort();
    if names_in.is_empty() {
        return vec![Fact::unknown(
            names::MITIGATION_PREFIX.trim_end(),
            format!("{DIR} cannot be listed"),
        )];
    }
    names_in
        .into_iter()
        .map(|n| {
            let path = format!("{DIR}/{n}");
            file_fact(source, &format!("{}{n}", names::MITIGATION_PREFIX), &path)
        })
        .collect()
}

/// The driver the crypto API gives `crc32c` to: the highest priority of
/// its /proc/crypto entries.
fn crc32c(source: &dyn Source) -> Fact {
    const CRYPTO: &str = "/proc/crypto";
    let Some(text) = source.read(Path::new(CRYPTO)) else {
        return Fact::unknown(names::CRC32C, format!("{CRYPTO} cannot be read"));
    };
    match crypto_driver(&text, "crc32c") {
        Some((driver, prio)) => {
            Fact::known(names::CRC32C, format!("{driver} (priority {prio})"), CRYPTO)
        }
        None => Fact::unknown(names::CRC32C, format!("no crc32c entry in {CRYPTO}")),
    }
}

/// The highest-priority driver of algorithm `name` in /proc/crypto's text.
pub fn crypto_driver(text: &str, name: &str) -> Option<(String, i64)> {
    let mut best: Option<(String, i64)> = None;
    for block in text.split("\n\n") {
        let field = |key: &str| {
            block.lines().find_map(|l| {
                let (k, v) = l.split_once(':')?;
                (k.trim() == key).then(|| v.trim().to_string())
            })
        };
        if field("name").as_deref() != Some(name) {
            continue;
        }
        let (Some(d), Some(p)) = (field("driver"), field("priority")) else {
            continue;
        };
        let p: i64 = p.parse().unwrap_or(0);
        if best.as_ref().is_none_or(|(_, b)| p > *b) {
            best = Some((d, p));
        }
    }
    best
}

/// The sysfs queue file `file` of block device `dev` (a partition's is
/// its disk's).
fn queue_file(source: &dyn Source, dev: &str, file: &str) -> Option<(String, String)> {
    [
        format!("/sys/class/block/{dev}/queue/{file}"),
        format!("/sys/class/block/{dev}/../queue/{file}"),
    ]
    .into_iter()
    .find_map(|p| read_trim(source, &p).map(|v| (v, p)))
}

fn device(source: &dyn Source, targets: &Targets) -> Vec<Fact> {
    let Some(dev) = &targets.device else {
        let why = format!(
            "the filesystem under test ({}) has no block device",
            if targets.fs_type.is_empty() {
                "not found"
            } else {
                &targets.fs_type
            }
        );
        return vec![Fact::unknown(names::DEVICE, why)];
    };
    let name = dev.name.as_str();
    let mut v = vec![Fact::known(
        names::DEVICE,
        name,
        "the filesystem's mount source",
    )];
    let loop_dir = format!("/sys/block/{name}/loop");
    let backing = read_trim(source, &format!("{loop_dir}/backing_file"));
    let model = format!("/sys/class/block/{name}/device/model");
    v.push(match (read_trim(source, &model), &backing) {
        (Some(m), _) if !m.is_empty() => Fact::known(names::DEVICE_MODEL, m, &model),
        (_, Some(_)) => Fact::known(names::DEVICE_MODEL, "loop device", &loop_dir),
        _ => Fact::unknown(names::DEVICE_MODEL, format!("{model} cannot be read")),
    });
    for (fact, file) in [
        (names::ROTATIONAL, "rotational"),
        (names::SCHEDULER, "scheduler"),
        (names::QUEUE_DEPTH, "nr_requests"),
        (names::MAX_REQUEST, "max_sectors_kb"),
    ] {
        v.push(match queue_file(source, name, file) {
            Some((val, path)) => {
                let val = match file {
                    "scheduler" => active_choice(&val),
                    "max_sectors_kb" => format!("{val} KiB"),
                    _ => val,
                };
                Fact::known(fact, val, &path)
            }
            None => Fact::unknown(
                fact,
                format!("/sys/class/block/{name}/queue/{file} cannot be read"),
            ),
        });
    }
    if let Some(file) = backing {
        v.extend(loop_backing(source, &loop_dir, &file));
    }
    v
}

/// The bracketed choice of a sysfs list (`none [mq-deadline]`), or the text.
pub fn active_choice(text: &str) -> String {
    text.split_whitespace()
        .find_map(|w| w.strip_prefix('[').and_then(|w| w.strip_suffix(']')))
        .unwrap_or(text)
        .to_string()
}

fn loop_backing(source: &dyn Source, loop_dir: &str, file: &str) -> Vec<Fact> {
    let mounts: Vec<mountinfo::MountEntry> = source
        .read(Path::new("/proc/self/mountinfo"))
        .map(|t| t.lines().filter_map(mountinfo::parse_line).collect())
        .unwrap_or_default();
    let path = PathBuf::from(file);
    let holder = mounts
        .iter()
        .filter(|m| path.starts_with(&m.mount_point))
        .max_by_key(|m| m.mount_point.len());
    let dio = format!("{loop_dir}/dio");
    vec![
        match holder {
            Some(m) => Fact::known(
                names::BACKING_FS,
                format!("{} ({})", m.fs_type, m.mount_point),
                "/proc/self/mountinfo",
            ),
            None => Fact::unknown(
                names::BACKING_FS,
                format!("no mount holds {file} in /proc/self/mountinfo"),
            ),
        },
        match holder {
            Some(m) => Fact::known(names::BACKING_DEVICE, &m.source, "/proc/self/mountinfo"),
            None => Fact::unknown(names::BACKING_DEVICE, format!("no mount holds {file}")),
        },
        match read_trim(source, &dio).as_deref() {
            Some("1") => Fact::known(names::DIRECT_IO, "on", &dio),
            Some("0") => Fact::known(names::DIRECT_IO, "off", &dio),
            _ => Fact::unknown(names::DIRECT_IO, format!("{dio} cannot be read")),
        },
    ]
}

fn vm(source: &dyn Source) -> Vec<Fact> {
    let mut v: Vec<Fact> = [
        names::DIRTY_RATIO,
        names::DIRTY_BACKGROUND_RATIO,
        names::DIRTY_BYTES,
        names::DIRTY_BACKGROUND_BYTES,
        names::DIRTY_EXPIRE,
        names::SWAPPINESS,
        names::HUGEPAGES,
    ]
    .into_iter()
    .map(|n| {
        let path = format!("/proc/sys/{}", n.replace('.', "/"));
        file_fact(source, n, &path)
    })
    .collect();
    const THP: &str = "/sys/kernel/mm/transparent_hugepage/enabled";
    v.push(match read_trim(source, THP) {
        Some(t) => Fact::known(names::THP, active_choice(&t), THP),
        None => Fact::unknown(names::THP, format!("{THP} cannot be read")),
    });
    v
}

#[cfg(test)]
mod tests;
