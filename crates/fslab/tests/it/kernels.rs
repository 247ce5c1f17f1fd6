//! Cells on other kernels, in guests fslab boots under QEMU (TCG here):
//! the running kernel's cell beside a Debian 6.1 kernel's, compare naming
//! the kernels, a bisection finding a planted difference, and nothing
//! left behind after a guest is killed. Each guest is Debian's 6.1 cloud
//! kernel (fetched into fslab's cache by the first test that boots it)
//! with a few seconds of work; they need root, QEMU, virtiofsd and a
//! static busybox (scripts/install-deps.sh) and fail under CI=true
//! without them.

use std::time::{Duration, Instant};

use crate::support::{privileged, stderr, stdout, Lab};

const KERNEL: &str = "debian:6.1.0-50-cloud-amd64";
const RELEASE: &str = "6.1.0-50-cloud-amd64";

/// Whether guests can run here (root and the tools); under CI they must.
fn guests(what: &str) -> bool {
    if !privileged(what) {
        return false;
    }
    if let Some(e) = fslab_guest::missing_tool() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "{what} needs guests, and CI=true: {e}"
        );
        eprintln!("skipping {what}: {e}");
        return false;
    }
    true
}

/// Seed 004's createmany at a small scale, on ext4 with 1 KiB blocks (a
/// 2-level htree at 10,000 names) and a 4 MiB journal (whose transactions
/// fill, so it commits during the run however fast it is), on the running
/// kernel and on Debian 6.1.
const CREATEMANY: &str = r#"
name = "kernels-createmany"
repetitions = 1
time_limit = "4m"
[device]
kind = "image"
size = "512M"
image_dir = "IMAGES"
[workload]
kind = "createmany"
args = ["-m", "{dir}/f", "10000"]
[guest]
memory = "512M"
cpus = 1
[[target]]
fs = "ext4"
label = "ext4"
mkfs_options = ["-b 1024 -I 256 -J size=4"]
kernel = ["running", "KERNEL"]
"#;

#[test]
fn a_debian_kernels_cell_beside_the_running_kernels_records_the_same_counts_and_compare_names_both()
{
    if !guests("a guest cell") {
        return;
    }
    let lab = Lab::new();
    let exp = lab.experiment("k.toml", &CREATEMANY.replace("KERNEL", KERNEL));
    let t = Instant::now();
    let o = lab.run_cmd().arg("run").arg(&exp).output().unwrap();
    eprintln!(
        "two cells, one in a guest: {:.1} s",
        t.elapsed().as_secs_f64()
    );
    assert!(o.status.success(), "{}\n{}", stdout(&o), stderr(&o));
    assert!(
        stdout(&o).contains(&format!(
            "kernel: \"ext4 on {RELEASE}\" ran in a guest on {KERNEL} under "
        )),
        "{}",
        stdout(&o)
    );
    let store = fslab_store::Store::open_read(&lab.db()).unwrap();
    let e = store.experiment(lab.latest_experiment()).unwrap();
    assert_eq!(e.cells[1].label, format!("ext4 on {RELEASE}"));
    let host_kernel = rustix::system::uname()
        .release()
        .to_string_lossy()
        .into_owned();
    for (i, cr) in e.cell_runs.iter().enumerate() {
        let run = cr.run_id.expect("a run");
        let kernel = store.run(run).unwrap().run.kernel;
        assert_eq!(
            kernel,
            if i == 0 {
                host_kernel.as_str()
            } else {
                RELEASE
            }
        );
        let levels = store
            .metrics(run)
            .unwrap()
            .into_iter()
            .find(|m| m.source == "htree" && m.name == "levels")
            .map(|m| m.value);
        assert_eq!(levels, Some(2.0), "cell {i}: htree levels");
        assert!(
            cr.image_extents.is_some_and(|x| x > 0),
            "cell {i}: image extents"
        );
        let commits: usize = store
            .probe_notes(run)
            .unwrap()
            .iter()
            .filter(|n| n.probe == "journal" && n.key == "jbd2_run_stats")
            .map(|n| n.value.as_array().map_or(0, Vec::len))
            .sum();
        assert!(commits > 0, "cell {i}: journal commits");
    }
    let g = e.cell_runs[1].guest.as_ref().expect("the guest's facts");
    assert!(e.cell_runs[0].guest.is_none());
    assert_eq!(g.release, RELEASE);
    assert!(
        g.config.contains("CONFIG_EXT4_FS=y"),
        "the kernel's config is kept"
    );
    assert!(
        g.dmesg.contains("Linux version 6.1.0-50"),
        "{}",
        &g.dmesg[..g.dmesg.len().min(300)]
    );
    assert!(g.console.contains("fslab-guest: exit 0"), "{}", g.console);
    assert!(["tcg", "kvm"].contains(&g.accel.as_str()), "{}", g.accel);
    let show = stdout(&lab.run(&[
        "results",
        "show",
        &e.cell_runs[1].run_id.unwrap().to_string(),
    ]));
    assert!(
        show.contains(&format!("  guest:       {RELEASE} ({KERNEL})")),
        "{show}"
    );
    assert!(show.contains("ended powered off"), "{show}");
    let c = lab.run(&["compare"]);
    let text = stdout(&c);
    assert!(c.status.success(), "{text}{}", stderr(&c));
    assert!(
        text.contains(&format!(
            "kernel: the groups differ in kernel: \"ext4\" ran on {host_kernel}; \"ext4 on {RELEASE}\" ran on {RELEASE} (in a guest, {})",
            g.accel.to_uppercase()
        )),
        "{text}"
    );
    assert_eq!(
        text.contains("ran under TCG (QEMU's software emulation): its times, rates and CPU figures are emulated"),
        g.emulated(),
        "{text}"
    );
    assert!(lab.leftovers().is_empty(), "{:?}", lab.leftovers());
    assert!(fslab_guest::processes_using(&lab.images()).is_empty());
}

/// fs_mark writing 300 files of 16 KiB: with the kernel's background
/// writeback threshold at 64 KiB (`sysctl.vm.dirty_background_bytes` on
/// its command line) the flusher writes during the create phase; without
/// it nothing is written until the end. Every guest has periodic
/// writeback off (`dirty_writeback_centisecs=0`): on a busy host a TCG
/// guest's create phase can outlast the 30 s after which it writes old
/// dirty pages anyway (seen: 4.7 MiB written by a good kernel at load 40).
const PLANTED: &str = r#"
name = "kernels-planted"
time_limit = "4m"
[device]
kind = "image"
size = "512M"
image_dir = "IMAGES"
[workload]
kind = "fsmark"
args = ["-S0", "-s", "16384", "-n", "300", "-t", "1", "-L", "1", "-k"]
probes = ["mem"]
[guest]
memory = "512M"
cpus = 1
append = "sysctl.vm.dirty_writeback_centisecs=0"
[[target]]
fs = "ext4"
kernel = [
  { image = "KERNEL", label = "k1" },
  { image = "KERNEL", label = "k2", append = "PLANT2" },
  { image = "KERNEL", label = "k3", append = "sysctl.vm.dirty_background_bytes=65536" },
]
"#;

#[test]
fn bisect_finds_the_first_kernel_with_a_planted_command_line_difference() {
    if !guests("a bisection over guests") {
        return;
    }
    let lab = Lab::new();
    let exp = lab.experiment(
        "b.toml",
        &PLANTED
            .replace("KERNEL", KERNEL)
            .replace("PLANT2", "sysctl.vm.dirty_background_bytes=65536"),
    );
    let t = Instant::now();
    let o = lab
        .run_cmd()
        .args([
            "bisect",
            exp.to_str().unwrap(),
            "--good",
            "k1",
            "--bad",
            "k3",
        ])
        .args([
            "--metric",
            "mem create dirty written (MiB)",
            "--repetitions",
            "2",
        ])
        .output()
        .unwrap();
    eprintln!("bisect over 3 kernels: {:.1} s", t.elapsed().as_secs_f64());
    let text = stdout(&o);
    assert!(o.status.success(), "{text}\n{}", stderr(&o));
    assert!(
        text.contains(&format!("first bad kernel: k2 ({KERNEL})")),
        "{text}"
    );
    assert!(
        text.contains(&format!("its good neighbour k1 ({KERNEL}): mean 0.0000")),
        "{text}"
    );
    assert!(text.contains("step 3: k2"), "{text}");
    assert!(lab.leftovers().is_empty(), "{:?}", lab.leftovers());
}

#[test]
fn a_guest_past_its_time_limit_is_killed_and_one_whose_fslab_is_killed_leaves_nothing() {
    if !guests("killing guests") {
        return;
    }
    let lab = Lab::new();
    // A workload far longer than the limit: the guest's fslab would stop it
    // 10 s after it starts (`-u`: it never fills the filesystem).
    let text = CREATEMANY
        .replace("KERNEL", KERNEL)
        .replace("\"running\", ", "")
        .replace("\"-m\", ", "\"-m\", \"-u\", ")
        .replace("\"10000\"", "\"2000000000\"")
        .replace("time_limit = \"4m\"", "time_limit = \"10s\"");
    // A guest that hangs (its init is `sleep 1000`, so its fslab never
    // starts) is killed 20 s after it boots; with KVM a guest that runs
    // boots and stops its workload well before that.
    let hung = text.replace(
        "cpus = 1",
        "cpus = 1\nappend = \"loglevel=7 rdinit=/bin/busybox -- sleep 1000\"",
    );
    let exp = lab.experiment("t.toml", &hung);
    let t = Instant::now();
    let o = lab.run_cmd().arg("run").arg(&exp).output().unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(t.elapsed() < Duration::from_secs(60), "{:?}", t.elapsed());
    let err = stderr(&o);
    assert!(
        err.contains("the guest killed past its time limit"),
        "{err}"
    );
    assert!(err.contains("its console's last lines: "), "{err}");
    assert!(
        fslab_guest::processes_using(&lab.images()).is_empty(),
        "{:?}",
        fslab_guest::processes_using(&lab.images())
    );
    assert!(lab.leftovers().is_empty(), "{:?}", lab.leftovers());
    let store = fslab_store::Store::open_read(&lab.db()).unwrap();
    let e = store.experiment(lab.latest_experiment()).unwrap();
    let g = e.cell_runs[0]
        .guest
        .as_ref()
        .expect("a killed guest's facts are kept");
    assert_eq!(g.end, "time_limit");
    assert!(
        g.console.contains("Run /bin/busybox as init process"),
        "{}",
        g.console
    );

    // fslab itself killed while its guest runs: QEMU and virtiofsd die
    // with it, and `fslab cleanup` removes the guest's files.
    let exp = lab.experiment(
        "k.toml",
        &text.replace("time_limit = \"10s\"", "time_limit = \"4m\""),
    );
    let mut child = lab.spawn_run(
        &exp,
        std::process::Stdio::null(),
        std::process::Stdio::null(),
    );
    let t = Instant::now();
    while fslab_guest::processes_using(&lab.images())
        .iter()
        .all(|p| !p.contains("qemu-system"))
    {
        assert!(t.elapsed() < Duration::from_secs(60), "no guest started");
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_secs(2));
    child.kill().unwrap();
    child.wait().unwrap();
    let t = Instant::now();
    while !fslab_guest::processes_using(&lab.images()).is_empty() {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "left running: {:?}",
            fslab_guest::processes_using(&lab.images())
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(
        !lab.leftovers().is_empty(),
        "the killed run left its journal"
    );
    let c = lab.run_cmd().arg("cleanup").output().unwrap();
    assert!(c.status.success(), "{}", stderr(&c));
    assert!(lab.leftovers().is_empty(), "{:?}", lab.leftovers());
}

#[test]
fn a_kernel_that_is_not_there_or_not_a_kernel_is_refused_in_one_line_before_anything_is_made() {
    if !privileged("guest preflight") {
        return;
    }
    let lab = Lab::new();
    let cases = [
        (
            "debian:6.1.0-999-cloud-amd64",
            "no package linux-image-6.1.0-999-cloud-amd64",
        ),
        (
            "/nonexistent/vmlinuz",
            "kernel /nonexistent/vmlinuz: no such file",
        ),
        ("/bin/sh", "not a kernel image (no bzImage header"),
    ];
    for (k, says) in cases {
        let exp = lab.experiment("bad.toml", &CREATEMANY.replace("KERNEL", k));
        for dry in [true, false] {
            let mut c = lab.run_cmd();
            c.arg("run").arg(&exp);
            if dry {
                c.arg("--dry-run");
            }
            let o = c.output().unwrap();
            let err = stderr(&o);
            assert_eq!(o.status.code(), Some(2), "{k}: {err}");
            assert_eq!(err.lines().count(), 1, "{err}");
            assert!(err.contains(says), "{k}: {err}");
        }
    }
    let exp = lab.experiment(
        "mem.toml",
        &CREATEMANY
            .replace("KERNEL", KERNEL)
            .replace("memory = \"512M\"", "memory = \"100T\""),
    );
    let o = lab.run_cmd().arg("run").arg(&exp).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("guest memory 104857600 MiB: the host has"),
        "{}",
        stderr(&o)
    );
    assert!(lab.leftovers().is_empty(), "{:?}", lab.leftovers());
}
