//! Real guests under QEMU: Debian's 6.1 cloud kernel (fetched into the
//! cache by the first test that needs it) booted over the host's root.
//! Each guest is a few seconds under TCG. They need root, QEMU, virtiofsd
//! and a static busybox (scripts/install-deps.sh); without them they say
//! so and pass, except under CI=true, where they fail.

use std::path::{Path, PathBuf};
use std::time::Duration;

use fslab_guest::initramfs::Init;
use fslab_guest::{Accel, End, GuestSpec, Kernel};

/// The kernel the tests boot.
const KERNEL: &str = "debian:6.1.0-50-cloud-amd64";

/// The kernel, or None (with a note) where guests cannot run here.
fn kernel() -> Option<Kernel> {
    let missing = if !rustix::process::geteuid().is_root() {
        Some("not root".to_string())
    } else {
        fslab_guest::missing_tool().map(|e| e.to_string())
    };
    if let Some(why) = missing {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "guests cannot run under CI: {why}"
        );
        eprintln!("skipped: {why}");
        return None;
    }
    Some(fslab_guest::resolve(KERNEL, &fslab_guest::package::cache_dir()).unwrap())
}

fn spec(kernel: Kernel, dir: &Path, command: &[&str], limit: Duration) -> GuestSpec {
    GuestSpec {
        kernel,
        accel: Accel::tcg("tests"),
        memory_bytes: 256 << 20,
        cpus: 1,
        append: String::new(),
        disks: vec![],
        fs_modules: vec![],
        init: Init {
            command: command.iter().map(|s| s.to_string()).collect(),
            env: vec![("PATH".into(), "/usr/bin:/bin:/usr/sbin:/sbin".into())],
            files: vec![("note".into(), b"carried in".to_vec())],
        },
        limit,
        dir: dir.to_path_buf(),
    }
}

#[test]
fn a_guest_runs_a_command_in_the_hosts_root_on_its_own_kernel() {
    let Some(k) = kernel() else { return };
    let d = tempfile::tempdir().unwrap();
    let disk: PathBuf = d.path().join("out.img");
    std::fs::File::create(&disk)
        .unwrap()
        .set_len(1 << 20)
        .unwrap();
    let mut s = spec(
        k.clone(),
        d.path(),
        &["/bin/sh", "-c", "uname -r; cat /run/fslab-guest/note; echo; grep ' / ' /proc/mounts; touch /etc/fslab-guest-wrote-here || echo read-only; uname -r | dd of=/dev/vda status=none"],
        Duration::from_secs(120),
    );
    s.disks.push(fslab_guest::Disk {
        image: disk.clone(),
        direct: false,
    });
    let run = fslab_guest::qemu::run(&s, &|| false).unwrap();
    assert_eq!(run.end, End::PoweredOff, "{}", run.last_lines(10));
    assert_eq!(run.exit, Some(0), "{}", run.last_lines(10));
    assert!(run.console.contains(&k.release), "{}", run.last_lines(10));
    assert!(run.console.contains("virtiofs"), "{}", run.last_lines(10));
    assert!(run.console.contains("carried in"), "{}", run.last_lines(10));
    assert!(
        run.console.contains("read-only"),
        "the host's root is read-only: {}",
        run.last_lines(10)
    );
    assert!(!Path::new("/etc/fslab-guest-wrote-here").exists());
    let out = std::fs::read(&disk).unwrap();
    assert!(
        out.starts_with(k.release.as_bytes()),
        "the guest's disk is the image"
    );
    assert!(run.boot_s.is_some());
    assert!(
        fslab_guest::processes_using(d.path()).is_empty(),
        "{:?}",
        fslab_guest::processes_using(d.path())
    );
    eprintln!("guest: boot {:?} s, wall {:.1} s", run.boot_s, run.wall_s);
}

#[test]
fn a_panicking_guest_ends_with_its_console_and_a_hung_one_is_killed_at_its_limit() {
    let Some(k) = kernel() else { return };
    let d = tempfile::tempdir().unwrap();
    let mut s = spec(
        k.clone(),
        d.path(),
        &["/bin/true"],
        Duration::from_secs(120),
    );
    s.append = "rdinit=/no-such-init".into();
    let run = fslab_guest::qemu::run(&s, &|| false).unwrap();
    assert_eq!(run.end, End::Died, "{}", run.last_lines(5));
    assert!(
        run.last_lines(20).contains("Kernel panic"),
        "{}",
        run.last_lines(20)
    );
    assert!(fslab_guest::processes_using(d.path()).is_empty());

    let d = tempfile::tempdir().unwrap();
    let s = spec(k, d.path(), &["/bin/sleep", "600"], Duration::from_secs(3));
    let t = std::time::Instant::now();
    let run = fslab_guest::qemu::run(&s, &|| false).unwrap();
    assert_eq!(run.end, End::TimeLimit);
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    assert!(
        fslab_guest::processes_using(d.path()).is_empty(),
        "{:?}",
        fslab_guest::processes_using(d.path())
    );
    let left: Vec<_> = std::fs::read_dir(d.path())
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.file_name())
        .collect();
    assert!(!left.iter().any(|n| n == "virtiofsd.sock"), "{left:?}");
}
