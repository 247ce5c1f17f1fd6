//! A workload's writes to the store, retried while its memory cgroup is
//! starved.
//!
//! `fslab run` puts a workload in a memory cgroup with the OOM killer off:
//! a page fault at the limit waits for reclaim, but a system call that needs
//! memory (a write(2) allocating page cache for the WAL) gets ENOMEM when
//! reclaim cannot free enough, and SQLite reports it as a disk I/O error.
//! Such a write is rolled back and tried again for a bounded time, when this
//! process's memory cgroup has hit its limit; any other error, or an I/O
//! error outside a starved cgroup, fails at once as before. Nothing is added
//! to a write that succeeds (the cgroup is read only after a failure).

use std::io::Write;
use std::time::{Duration, Instant};

use fslab_model::{RecordError, RecordResult};
use rusqlite::{Connection, ErrorCode};

/// How long one write waits in all for its cgroup's memory to be reclaimed
/// before its I/O error is reported.
pub(crate) const RECLAIM_WAIT: Duration = Duration::from_secs(60);

/// Why one try of a write failed.
pub(crate) enum Failed {
    Sql(rusqlite::Error),
    Other(RecordError),
}

impl From<rusqlite::Error> for Failed {
    fn from(e: rusqlite::Error) -> Self {
        Failed::Sql(e)
    }
}

impl From<RecordError> for Failed {
    fn from(e: RecordError) -> Self {
        Failed::Other(e)
    }
}

impl Failed {
    fn into_record(self) -> RecordError {
        match self {
            Failed::Sql(e) => RecordError::Storage(e.to_string()),
            Failed::Other(e) => e,
        }
    }

    /// An I/O error or out-of-memory from SQLite: what ENOMEM from a
    /// write(2) or mmap(2) of the database, its WAL or shm becomes.
    fn may_be_enomem(&self) -> bool {
        matches!(self, Failed::Sql(rusqlite::Error::SqliteFailure(e, _))
            if matches!(e.code, ErrorCode::SystemIoFailure | ErrorCode::OutOfMemory))
    }
}

/// This process's memory cgroup, when it looks starved: it has hit its
/// limit (`memory.failcnt`, or `max` in `memory.events`), or reading its
/// files got ENOMEM too (the kernel charges their buffers to the cgroup).
/// The text says which, for the message.
fn starved_cgroup() -> Option<String> {
    let enomem = |e: &std::io::Error| e.raw_os_error() == Some(12);
    let text = match std::fs::read_to_string("/proc/self/cgroup") {
        Ok(t) => t,
        Err(e) if enomem(&e) => return Some("this process's memory cgroup".into()),
        Err(_) => return None,
    };
    let cg = fslab_model::cgroup::memory_cgroup_in(&text, std::path::Path::new("/sys/fs/cgroup"))
        .ok()?;
    let refused = std::cell::Cell::new(false);
    let hits = cg.limit_hits_in(|f| match std::fs::read_to_string(cg.path.join(f)) {
        Ok(t) => Some(t),
        Err(e) => {
            refused.set(enomem(&e));
            None
        }
    });
    match hits {
        Some(n) if n > 0 => Some(format!(
            "memory cgroup {} ({n} limit hits)",
            cg.path.display()
        )),
        None if refused.get() => Some(format!("memory cgroup {}", cg.path.display())),
        _ => None,
    }
}

/// Runs `write` (one statement or one transaction) on `conn`; when it fails
/// with an I/O error while this process's memory cgroup is at its limit,
/// rolls back what is left of it, waits (10 ms, doubling to 1 s) and tries
/// again, for at most `budget` in all, saying on stderr that it waited.
pub(crate) fn with_reclaim<T>(
    conn: &mut Connection,
    budget: Duration,
    mut write: impl FnMut(&mut Connection) -> Result<T, Failed>,
) -> RecordResult<T> {
    let mut waited: Option<(Instant, u32)> = None;
    let mut pause = Duration::from_millis(10);
    loop {
        let failed = match write(conn) {
            Ok(v) => {
                if let Some((since, tries)) = waited {
                    let _ = writeln!(
                        std::io::stderr(),
                        "fslab: results store: the write landed after {tries} failed tries in {:.1} s",
                        since.elapsed().as_secs_f64()
                    );
                }
                return Ok(v);
            }
            Err(f) => f,
        };
        if !conn.is_autocommit() {
            let _ = conn.execute_batch("ROLLBACK");
        }
        if !failed.may_be_enomem() {
            return Err(failed.into_record());
        }
        let Some(cg) = starved_cgroup() else {
            return Err(failed.into_record());
        };
        let (since, tries) = waited.get_or_insert_with(|| {
            let why = match &failed {
                Failed::Sql(e) => e.to_string(),
                Failed::Other(e) => e.to_string(),
            };
            // Not eprintln!: a starved cgroup may refuse the pipe's page too.
            let _ = writeln!(
                std::io::stderr(),
                "fslab: results store: a write failed ({why}) while {cg} is at its limit: waiting up to {} s for reclaim",
                budget.as_secs()
            );
            (Instant::now(), 0)
        });
        *tries += 1;
        if since.elapsed() >= budget {
            let e = failed.into_record();
            return Err(RecordError::Storage(format!(
                "{e} (still, after waiting {} s for {cg} to reclaim)",
                budget.as_secs()
            )));
        }
        std::thread::sleep(pause.min(budget.saturating_sub(since.elapsed())));
        pause = (pause * 2).min(Duration::from_secs(1));
    }
}
