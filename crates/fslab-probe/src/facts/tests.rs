use std::io::Write as _;

use super::*;
use crate::devices::Device;
use crate::source::{FakeSource, Machine};

fn gz(text: &str) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(text.as_bytes()).unwrap();
    e.finish().unwrap()
}

/// An ELF note section: a `Linux` note, then the GNU build id.
fn notes(id: &[u8]) -> Vec<u8> {
    let mut v = Vec::new();
    for (name, kind, desc) in [
        (&b"Linux\0"[..], 6u32, &[1u8, 2, 3, 4][..]),
        (b"GNU\0", 3, id),
    ] {
        v.extend((name.len() as u32).to_ne_bytes());
        v.extend((desc.len() as u32).to_ne_bytes());
        v.extend(kind.to_ne_bytes());
        v.extend(name);
        v.resize((v.len() + 3) & !3, 0);
        v.extend(desc);
        v.resize((v.len() + 3) & !3, 0);
    }
    v
}

fn loop_targets() -> Targets {
    Targets {
        device: Some(Device {
            major: 7,
            minor: 3,
            name: "loop3".into(),
        }),
        image: Some("/var/tmp/fslab/img".into()),
        host: None,
        fs_type: "ext4".into(),
    }
}

/// A machine with every file the facts are read from.
fn full_machine() -> FakeSource {
    let f = FakeSource::new();
    f.set("/proc/sys/kernel/hostname", "lab1\n");
    f.set(
        "/proc/cpuinfo",
        "processor\t: 0\nmodel name\t: AMD EPYC 7B13\ncpu MHz\t\t: 2596.152\n\nprocessor\t: 1\nmodel name\t: AMD EPYC 7B13\n",
    );
    f.set("/sys/devices/system/cpu/online", "0-1\n");
    f.set(
        "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor",
        "performance\n",
    );
    f.set(
        "/proc/meminfo",
        "MemTotal:       24563412 kB\nCached: 10 kB\n",
    );
    f.set("/proc/sys/kernel/osrelease", "6.18.44\n");
    f.set("/proc/sys/kernel/version", "#1 SMP PREEMPT_DYNAMIC\n");
    f.set_bytes("/sys/kernel/notes", notes(&[0xe4, 0xf1, 0x8d, 0x9d]));
    f.set("/proc/cmdline", "console=ttyS0 preempt=voluntary\n");
    f.set_bytes(
        "/proc/config.gz",
        gz("CONFIG_PREEMPT_NONE=y\nCONFIG_PREEMPT_DYNAMIC=y\nCONFIG_EXT4_DEBUG=y\n# CONFIG_KASAN is not set\nCONFIG_LOCKDEP_SUPPORT=y\nCONFIG_LSM=\"landlock,yama\"\n"),
    );
    f.set(
        "/sys/devices/system/cpu/vulnerabilities/spectre_v2",
        "Mitigation: Retpolines\n",
    );
    f.set(
        "/sys/devices/system/cpu/vulnerabilities/meltdown",
        "Not affected\n",
    );
    f.set(
        "/proc/crypto",
        "name         : crc32c\ndriver       : crc32c-generic\npriority     : 100\n\nname         : crc32\ndriver       : crc32-pclmul\npriority     : 200\n\nname         : crc32c\ndriver       : crc32c-intel\npriority     : 200\n",
    );
    f.set("/sys/class/block/loop3/queue/rotational", "0\n");
    f.set(
        "/sys/class/block/loop3/queue/scheduler",
        "[none] mq-deadline\n",
    );
    f.set("/sys/class/block/loop3/queue/nr_requests", "128\n");
    f.set("/sys/class/block/loop3/queue/max_sectors_kb", "1280\n");
    f.set("/sys/block/loop3/loop/backing_file", "/var/tmp/fslab/img\n");
    f.set("/sys/block/loop3/loop/dio", "1\n");
    f.set(
        "/proc/self/mountinfo",
        "22 1 254:1 / / rw,relatime - ext4 /dev/vda1 rw\n30 22 0:40 / /var/tmp rw - xfs /dev/loop9 rw\n",
    );
    for (k, v) in [
        ("vm/dirty_ratio", "20"),
        ("vm/dirty_background_ratio", "10"),
        ("vm/dirty_bytes", "0"),
        ("vm/dirty_background_bytes", "0"),
        ("vm/dirty_expire_centisecs", "3000"),
        ("vm/swappiness", "60"),
        ("vm/nr_hugepages", "0"),
    ] {
        f.set(format!("/proc/sys/{k}"), format!("{v}\n"));
    }
    f.set(
        "/sys/kernel/mm/transparent_hugepage/enabled",
        "always [madvise] never\n",
    );
    f
}

#[test]
fn every_fact_of_a_machine_that_has_them_all() {
    let m = machine(&full_machine(), &loop_targets());
    assert_eq!(m.host, "lab1");
    let v = |n: &str| m.value(n).unwrap_or_else(|| panic!("{n}: {:?}", m.get(n)));
    assert_eq!(v(names::CPU_MODEL), "AMD EPYC 7B13");
    assert_eq!(v(names::CPUS), "2");
    assert_eq!(v(names::CPUS_ONLINE), "0-1");
    assert_eq!(v(names::GOVERNOR), "performance");
    assert_eq!(v(names::MEMORY), "23.4 GiB");
    assert_eq!(v(names::KERNEL), "6.18.44");
    assert_eq!(v(names::KERNEL_BUILD_ID), "e4f18d9d");
    assert_eq!(v(names::DEBUG_OPTIONS), "EXT4_DEBUG");
    // preempt= on the command line decides on a dynamic kernel.
    assert_eq!(v(names::PREEMPTION), "voluntary");
    // securityfs not mounted: the configured list, said to be that.
    assert_eq!(v(names::LSM), "configured: landlock,yama");
    assert!(m.get(names::LSM).unwrap().source.contains("securityfs"));
    assert_eq!(v("mitigation spectre_v2"), "Mitigation: Retpolines");
    assert_eq!(v("mitigation meltdown"), "Not affected");
    // The highest priority crc32c, not crc32's.
    assert_eq!(v(names::CRC32C), "crc32c-intel (priority 200)");
    assert_eq!(v(names::DEVICE), "loop3");
    assert_eq!(v(names::DEVICE_MODEL), "loop device");
    assert_eq!(v(names::SCHEDULER), "none");
    assert_eq!(v(names::QUEUE_DEPTH), "128");
    assert_eq!(v(names::MAX_REQUEST), "1280 KiB");
    assert_eq!(v(names::ROTATIONAL), "0");
    assert_eq!(v(names::BACKING_FS), "xfs (/var/tmp)");
    assert_eq!(v(names::BACKING_DEVICE), "/dev/loop9");
    assert_eq!(v(names::DIRECT_IO), "on");
    assert_eq!(v(names::DIRTY_RATIO), "20");
    assert_eq!(v(names::SWAPPINESS), "60");
    assert_eq!(v(names::THP), "madvise");
    assert!(m.facts.iter().all(|f| f.value.is_some()), "{m:?}");
}

#[test]
fn a_machine_that_shows_nothing_has_every_fact_unknown_with_why() {
    let m = machine(&FakeSource::new(), &Targets::default());
    assert!(m.facts.len() >= 15, "{m:?}");
    for f in &m.facts {
        assert_eq!(f.value, None, "{f:?} was guessed");
        assert!(!f.source.is_empty(), "{f:?} does not say why");
    }
    assert!(m
        .get(names::DEVICE)
        .unwrap()
        .source
        .contains("no block device"));
    assert!(m.get(names::GOVERNOR).unwrap().source.contains("cpufreq"));
}

#[test]
fn a_partition_reads_its_disks_queue_and_active_choices_are_the_bracketed() {
    let f = FakeSource::new();
    f.set(
        "/sys/class/block/vda1/../queue/scheduler",
        "mq-deadline [bfq]",
    );
    let t = Targets {
        device: Some(Device {
            major: 254,
            minor: 1,
            name: "vda1".into(),
        }),
        ..Default::default()
    };
    let m = machine(&f, &t);
    assert_eq!(m.value(names::SCHEDULER), Some("bfq"));
    assert_eq!(m.value(names::QUEUE_DEPTH), None);
    assert_eq!(active_choice("plain"), "plain");
}

#[test]
fn the_real_machine_names_its_kernel_and_cpus() {
    let m = machine(&Machine, &Targets::default());
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
    assert_eq!(m.value(names::KERNEL), Some(release.trim()));
    let cpus: usize = m.value(names::CPUS).unwrap().parse().unwrap();
    assert!(cpus >= 1);
    // The kernel always has a build id note and a crc32c in its crypto API.
    assert!(m
        .value(names::KERNEL_BUILD_ID)
        .is_some_and(|b| b.len() >= 8));
    assert!(m.value(names::CRC32C).is_some(), "{m:?}");
}
