//! A workload's records survive a starved memory cgroup.
//!
//! `fslab run` puts a workload in a cgroup v1 memory cgroup with the OOM
//! killer off; at its limit, with nothing left to reclaim, a write(2) of the
//! store's WAL gets ENOMEM, which SQLite reports as a disk I/O error. This
//! test makes that happen: a child (this binary again) opens a store and
//! moves into a 32 MiB cgroup, a `dd` in the same cgroup fills it with a
//! tmpfs file (shmem: unreclaimable without swap), the child writes its
//! records, and the file is removed 2 s later. The child must say it waited
//! and every record must be there.
//!
//! Own main (no libtest harness), so that the child can be this binary.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use fslab_model::{Recorder, RunInfo, RunStatus, SeriesPoint, TargetInfo};
use fslab_store::Store;

const CHILD: &str = "FSLAB_TEST_STARVED_CGROUP";
const POINTS: u32 = 300;
const LIMIT: u64 = 32 << 20;

fn main() {
    if let Ok(spec) = std::env::var(CHILD) {
        let mut it = spec.split('\n').map(Path::new);
        let (cg, db, fill) = (it.next().unwrap(), it.next().unwrap(), it.next().unwrap());
        std::process::exit(child(cg, db, fill));
    }
    let name = "a_workload_s_records_survive_a_starved_memory_cgroup";
    // libtest's arguments: run when no filter is given or one matches,
    // and no --skip matches; the values of --test-threads and the like are
    // not filters.
    let mut args = std::env::args().skip(1);
    let (mut filters, mut skips) = (Vec::new(), Vec::new());
    while let Some(a) = args.next() {
        match a.as_str() {
            "--list" => {
                println!("{name}: test");
                return;
            }
            "--skip" => skips.extend(args.next()),
            "--test-threads" | "--format" | "--color" | "--logfile" | "-Z" => {
                args.next();
            }
            a if a.starts_with('-') => {}
            _ => filters.push(a),
        }
    }
    let wanted = (filters.is_empty() || filters.iter().any(|f| name.contains(f.as_str())))
        && !skips.iter().any(|s| name.contains(s.as_str()));
    if !wanted {
        println!("running 0 tests");
        return;
    }
    println!("running 1 test");
    a_workload_s_records_survive_a_starved_memory_cgroup();
    println!("test {name} ... ok");
    println!("\ntest result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out");
}

fn info() -> RunInfo {
    RunInfo {
        workload: "fsmark".into(),
        command_line: vec!["fslab".into(), "fsmark".into()],
        fslab_version: "0.1.0".into(),
        kernel: "6.18".into(),
        hostname: "h".into(),
        started_at: "2026-11-25T00:00:00Z".into(),
        target: TargetInfo {
            path: "/x".into(),
            fs_type: "tmpfs".into(),
            ..Default::default()
        },
        params: serde_json::json!({}),
    }
}

/// The writer: opens the store, moves into the cgroup, fills it with a
/// tmpfs file (its write(2) gets ENOMEM at the limit, leaving the file's
/// pages charged: shmem cannot be reclaimed without swap), then writes its
/// records one commit each, as a workload does.
fn child(cg: &Path, db: &Path, fill: &Path) -> i32 {
    let run = || -> Result<(), String> {
        let mut s = Store::open(db).map_err(|e| e.to_string())?;
        let id = s.begin_run(&info()).map_err(|e| e.to_string())?;
        std::fs::write(cg.join("cgroup.procs"), std::process::id().to_string())
            .map_err(|e| e.to_string())?;
        // A first write gives stderr's pipe a page before the cgroup fills.
        eprintln!("child: filling the cgroup");
        let buf = vec![1u8; 64 << 10];
        let mut f = std::fs::File::create(fill).map_err(|e| e.to_string())?;
        loop {
            match f.write(&buf) {
                Ok(_) => {}
                Err(e) if e.raw_os_error() == Some(12) => break,
                Err(e) => return Err(format!("filling: {e}")),
            }
        }
        // Closed, so that removing it frees its pages.
        drop(f);
        for i in 0..POINTS {
            let p = SeriesPoint {
                phase_index: 0,
                t_s: f64::from(i),
                ops: 1000,
                total_ops: 1000 * u64::from(i + 1),
            };
            s.record_series(id, &p).map_err(|e| e.to_string())?;
        }
        s.finish_run(id, RunStatus::Complete, None)
            .map_err(|e| e.to_string())
    };
    match run() {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("child: {e}");
            1
        }
    }
}

/// What the test made, undone even when it fails half-way.
struct Scratch {
    cg: PathBuf,
    tmpfs: PathBuf,
    mounted: bool,
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if self.mounted {
            let _ = Command::new("umount").arg(&self.tmpfs).status();
        }
        if let (Ok(procs), Some(parent)) = (
            std::fs::read_to_string(self.cg.join("cgroup.procs")),
            self.cg.parent(),
        ) {
            for pid in procs.split_whitespace() {
                let _ = std::fs::write(parent.join("cgroup.procs"), pid);
            }
        }
        for _ in 0..50 {
            if std::fs::remove_dir(&self.cg).is_ok() || !self.cg.exists() {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

fn a_workload_s_records_survive_a_starved_memory_cgroup() {
    if !rustix::process::geteuid().is_root() {
        assert_ne!(
            std::env::var("CI").as_deref(),
            Ok("true"),
            "a memory cgroup needs root, and CI=true: failing instead of skipping"
        );
        eprintln!("skipping: a memory cgroup needs root");
        return;
    }
    let own = fslab_model::cgroup::own_memory_cgroup().expect("this process's memory cgroup");
    if own.v2 {
        // Under v2, fslab leaves the OOM killer on: there is no starved wait.
        assert_ne!(
            std::env::var("CI").as_deref(),
            Ok("true"),
            "needs a cgroup v1 memory controller, and CI=true: failing instead of skipping"
        );
        eprintln!("skipping: needs a cgroup v1 memory controller");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut scratch = Scratch {
        cg: own
            .path
            .join(format!("fslab-test-starved-{}", std::process::id())),
        tmpfs: dir.path().join("tmpfs"),
        mounted: false,
    };
    std::fs::create_dir(&scratch.cg).unwrap();
    std::fs::write(scratch.cg.join("memory.limit_in_bytes"), LIMIT.to_string()).unwrap();
    std::fs::write(scratch.cg.join("memory.oom_control"), "1").unwrap();
    std::fs::create_dir(&scratch.tmpfs).unwrap();
    let ok = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=256m", "fslab-test"])
        .arg(&scratch.tmpfs)
        .status()
        .unwrap();
    assert!(ok.success(), "mount tmpfs");
    scratch.mounted = true;
    let db = dir.path().join("results.sqlite");

    let fill = scratch.tmpfs.join("fill");
    let mut writer = Command::new(std::env::current_exe().unwrap())
        .env(
            CHILD,
            format!(
                "{}\n{}\n{}",
                scratch.cg.display(),
                db.display(),
                fill.display()
            ),
        )
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = writer.stderr.take().unwrap();
    let said = std::thread::spawn(move || {
        let mut err = String::new();
        let _ = std::io::Read::read_to_string(&mut stderr, &mut err);
        err
    });
    // Free the cgroup 2 s after the fill stops growing.
    let start = Instant::now();
    let mut last = (0, Instant::now());
    while last.1.elapsed() < Duration::from_secs(2) {
        let len = std::fs::metadata(&fill).map(|m| m.len()).unwrap_or(0);
        if len != last.0 {
            last = (len, Instant::now());
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "the writer did not fill the cgroup in 30 s"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        last.0 > LIMIT - (4 << 20),
        "the writer filled {} bytes of a {LIMIT}-byte cgroup",
        last.0
    );
    std::fs::remove_file(&fill).unwrap();

    let start = Instant::now();
    let status = loop {
        if let Some(s) = writer.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > Duration::from_secs(90) {
            let _ = writer.kill();
            panic!("the writer did not finish within 90 s of the cgroup being freed");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let err = said.join().unwrap();
    eprint!("the writer said:\n{err}");
    assert!(status.success(), "the writer failed ({status}): {err}");
    assert!(
        err.contains("is at its limit") && err.contains("waiting up to"),
        "the writer never met ENOMEM (the cgroup was not starved): {err}"
    );
    assert!(err.contains("the write landed after"), "{err}");

    let conn = rusqlite::Connection::open(&db).unwrap();
    let (n, status): (i64, String) = conn
        .query_row(
            "SELECT (SELECT COUNT(*) FROM series), status FROM runs",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(n, i64::from(POINTS), "every per-second point is stored");
    assert_eq!(status, "complete");
    drop(scratch);
}
