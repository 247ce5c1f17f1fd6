//! Helpers shared by the benchmark binaries (and, for [`trace`], the
//! parity tests).

pub mod bare;
pub mod bare_md;
pub mod callgrind;
pub mod phased;
pub mod reference;
pub mod trace;

use std::path::{Path, PathBuf};
use std::process::Command;

/// The release `fslab` binary next to this benchmark (or `$FSLAB_BIN`).
pub fn fslab_bin() -> PathBuf {
    if let Some(p) = std::env::var_os("FSLAB_BIN") {
        return PathBuf::from(p);
    }
    let me = std::env::current_exe().expect("current exe");
    let p = me.parent().expect("exe dir").join("fslab");
    assert!(
        p.exists(),
        "{} not found: run `cargo build --release --workspace` first",
        p.display()
    );
    // A bench built alone (`cargo build -p fslab-bench`) measures whatever
    // fslab was built last: say so, its figures are of older code. One
    // `cargo build --workspace` links the two within a few seconds of each
    // other (12 s apart here), in either order.
    let built = |f: &Path| std::fs::metadata(f).and_then(|m| m.modified()).ok();
    if let (Some(fslab), Some(bench)) = (built(&p), built(&me)) {
        let grace = std::time::Duration::from_secs(120);
        if fslab + grace < bench {
            eprintln!(
                "warning: {} is older than this benchmark: its figures are of the code it was built from (run `cargo build --release --workspace`)",
                p.display()
            );
        }
    }
    p
}

/// A fresh scratch directory on tmpfs, removed on drop.
pub struct Scratch(pub PathBuf);

impl Scratch {
    pub fn new(tag: &str) -> Scratch {
        let p = PathBuf::from(format!("/dev/shm/fslab-bench-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).expect("create scratch dir");
        Scratch(p)
    }

    /// Empties the directory (outside any timing), then lets the kernel
    /// finish freeing what was removed, so it does not bleed into the next run.
    pub fn clear(&self) {
        for e in std::fs::read_dir(&self.0).expect("read scratch").flatten() {
            let p = e.path();
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                let _ = std::fs::remove_dir_all(p);
            } else {
                let _ = std::fs::remove_file(p);
            }
        }
        rustix::fs::sync();
        std::thread::sleep(std::time::Duration::from_millis(300));
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The running kernel's release (`uname -r`), for recorded data.
pub fn kernel_release() -> String {
    std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// Appends `n` in decimal, zero-padded to `width` digits: the bare loops'
/// names, made as cheaply as a C loop makes them (a `write!` through
/// `core::fmt` costs some 300 instructions a name, more than fslab's whole
/// per-item bookkeeping, and would hide it).
#[inline(always)]
pub fn push_digits(buf: &mut Vec<u8>, mut n: u64, width: usize) {
    let mut d = [b'0'; 24];
    let mut k = d.len();
    loop {
        k -= 1;
        d[k] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    let k = k.min(d.len() - width.min(d.len()));
    buf.extend_from_slice(&d[k..]);
}

/// Prints "targets: all met" or each target missed; true when all were met.
pub fn print_targets(missed: &[String]) -> bool {
    if missed.is_empty() {
        println!("targets: all met");
    } else {
        println!("targets missed:");
        for m in missed {
            println!("  {m}");
        }
    }
    missed.is_empty()
}

/// Median of a sample.
pub fn median(v: &[f64]) -> f64 {
    fslab_stats::summarize(v).median
}

/// Runs `fslab` with `args`, stdout discarded; panics with its stderr on failure.
pub fn run_fslab(args: &[&str], cwd: &Path) {
    let out = Command::new(fslab_bin())
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("spawn fslab");
    assert!(
        out.status.success(),
        "fslab {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Runs `cmd` (stdout discarded) and returns its own peak RSS in KiB.
pub fn peak_rss_kib(cmd: &mut Command) -> u64 {
    let child = cmd
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("spawn");
    let (status, usage) = fslab_sys::wait4(child.id()).expect("wait4");
    assert_eq!(status, 0, "{cmd:?} failed");
    // The child is reaped: forget it so std does not wait for it again.
    std::mem::forget(child);
    usage.max_rss_kib
}
