//! fslab's results store: SQLite, one row per measurement, committed as it
//! is made. See `schema.rs` for the tables.

mod calibration;
mod evidence;
mod experiment;
mod facts;
mod histograms;
mod import;
mod read;
mod retry;
mod schema;

use std::path::{Path, PathBuf};

use fslab_model::process::ProcessId;
use fslab_model::{
    LatencyHistogram, PhaseResult, ProbeNote, ProbePoint, RecordError, RecordResult, Recorder,
    RunInfo, RunStatus, SeriesPoint,
};
use rusqlite::{params, Connection};

/// This host's name, as runs record it (uname's nodename).
fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .unwrap_or_default()
        .trim()
        .to_string()
}

pub use calibration::Calibration;
pub use evidence::OpTotal;
pub use experiment::{ExperimentRecord, ExperimentRow, RunOrigin};
pub use histograms::{ExportedHistogram, Percentile, RunDocument, DEFAULT_PERCENTILES};
pub use read::{
    ProbeSummary, RunRecord, RunRow, StoredHistogram, StoredLatency, StoredNote, StoredOutput,
    StoredPhase, StoredPoint,
};

/// A store error, with the database path in its message.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{path}: {source}")]
    Sqlite {
        path: PathBuf,
        source: rusqlite::Error,
    },
    #[error("{path}: cannot create its directory: {source}")]
    Dir {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: written by a newer fslab (schema version {found}, this fslab knows {known})")]
    TooNew {
        path: PathBuf,
        found: i64,
        known: i64,
    },
    /// The schema version says one thing and the tables another (a version
    /// set back by hand or by another tool): the migration to the next
    /// version failed, and the store is left as it was.
    #[error("{}: its schema version {found} does not match its tables ({why} when bringing it to version {}); left as it was", .path.display(), .found + 1)]
    Inconsistent {
        path: PathBuf,
        found: i64,
        why: String,
    },
    #[error("no results store at {} (run a workload first, or give --db)", .0.display())]
    Missing(PathBuf),
    #[error("{}: not an fslab results store (it has no fslab tables)", .0.display())]
    NotAStore(PathBuf),
    #[error("no run with id {0} in the results store")]
    NoSuchRun(i64),
    #[error("no experiment with id {0} in the results store")]
    NoSuchExperiment(i64),
    /// `--db PATH` names a directory, or a file in a directory that does
    /// not exist (fslab makes its default store's directories only).
    #[error("--db {}: {why}", .path.display())]
    Path { path: PathBuf, why: String },
}

impl StoreError {
    /// Bad input (a store that is not one, or not there, a path that
    /// cannot be one) or a failure.
    pub fn kind(&self) -> fslab_model::ErrorKind {
        match self {
            StoreError::Inconsistent { .. }
            | StoreError::Missing(_)
            | StoreError::NotAStore(_)
            | StoreError::NoSuchRun(_)
            | StoreError::NoSuchExperiment(_)
            | StoreError::Path { .. } => fslab_model::ErrorKind::Usage,
            _ => fslab_model::ErrorKind::Failed,
        }
    }
}

/// `db` can be a store's file as `--db` names it: a file in an existing
/// directory, never a directory (fslab makes its default store's
/// directories only, never ones a typo names).
pub fn check_path(db: &Path) -> Result<(), StoreError> {
    let bad = |why: String| {
        Err(StoreError::Path {
            path: db.to_path_buf(),
            why,
        })
    };
    match db.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(d) if !d.is_dir() => bad(format!("directory {} does not exist", d.display())),
        _ if db.is_dir() => bad("is a directory; give a file (results.sqlite)".into()),
        _ => Ok(()),
    }
}

/// What SQLite said about a failed statement, without the statement.
fn sql_reason(e: &rusqlite::Error) -> String {
    match e {
        rusqlite::Error::SqlInputError { msg, .. } => msg.clone(),
        e => e.to_string().lines().next().unwrap_or_default().to_string(),
    }
}

/// The schema version this fslab writes (the number of migrations).
pub const SCHEMA_VERSION: i64 = schema::MIGRATIONS.len() as i64;

/// The SQL of migration `n` (1-based), for tests that build old databases.
pub fn migration_sql(n: usize) -> Option<&'static str> {
    schema::MIGRATIONS.get(n.checked_sub(1)?).copied()
}

/// How long a write waits for another process's write to the same store
/// (two experiments sharing one store; a cell's large output or blob
/// going in) before "database is locked". Writes come between timed
/// regions, so waiting costs no measurement; 10 s was too short on a
/// loaded machine (a cell of one of two experiments failed so).
pub const BUSY_WAIT: std::time::Duration = std::time::Duration::from_secs(300);

/// The results database.
pub struct Store {
    conn: Connection,
    path: PathBuf,
}

/// Where the store lives when `--db` is not given: `$FSLAB_DB`, else
/// `$XDG_DATA_HOME/fslab/results.sqlite`, else `~/.local/share/fslab/results.sqlite`,
/// where `~` is, under `sudo`, the home of the user who ran sudo (so their
/// runs as root and as themselves are in one store; see [`sudo_user`]).
pub fn default_path() -> PathBuf {
    if let Some(p) = std::env::var_os("FSLAB_DB").filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    let home = sudo_user()
        .map(|u| u.home)
        .or_else(|| std::env::var_os("HOME").map(PathBuf::from));
    let base = std::env::var_os("XDG_DATA_HOME")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .or_else(|| home.map(|h| h.join(".local/share")))
        .unwrap_or_else(|| PathBuf::from("/var/lib"));
    base.join("fslab").join("results.sqlite")
}

/// The user who ran `sudo fslab ...`: their home, uid and gid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SudoUser {
    pub home: PathBuf,
    pub uid: u32,
    pub gid: u32,
}

/// The user `sudo` ran this root process for, from `SUDO_USER`, `SUDO_UID`
/// and `SUDO_GID` and their home in /etc/passwd (None when not root, not
/// under sudo, or sudo was run by root). Looked up once per process.
pub fn sudo_user() -> Option<SudoUser> {
    static USER: std::sync::OnceLock<Option<SudoUser>> = std::sync::OnceLock::new();
    USER.get_or_init(look_up_sudo_user).clone()
}

fn look_up_sudo_user() -> Option<SudoUser> {
    let root = std::fs::read_to_string("/proc/self/status")
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|v| v.split_whitespace().nth(1).map(|e| e == "0"))?;
    if !root {
        return None;
    }
    let passwd = std::fs::read_to_string("/etc/passwd").ok()?;
    sudo_user_in(&|k| std::env::var(k).ok(), &passwd)
}

/// [`sudo_user`] from an environment and a passwd file's text. A user whose
/// home is not a directory of theirs (nobody's /nonexistent) has none.
pub fn sudo_user_in(env: &dyn Fn(&str) -> Option<String>, passwd: &str) -> Option<SudoUser> {
    let name = env("SUDO_USER").filter(|n| !n.is_empty() && n != "root")?;
    let uid: u32 = env("SUDO_UID")?.parse().ok()?;
    let gid: u32 = env("SUDO_GID")?.parse().ok()?;
    let home = passwd.lines().find_map(|l| {
        let f: Vec<&str> = l.split(':').collect();
        (f.len() >= 7 && f[0] == name && f[2].parse() == Ok(uid)).then(|| PathBuf::from(f[5]))
    })?;
    use std::os::unix::fs::MetadataExt;
    let owned = std::fs::metadata(&home).is_ok_and(|m| m.is_dir() && m.uid() == uid);
    owned.then_some(SudoUser { home, uid, gid })
}

/// Under sudo, gives the invoking user the store at `path` and the
/// directories made for it below their home, so that their own runs can
/// write to it.
pub fn give_to_sudo_user(path: &Path) {
    if let Some(u) = sudo_user() {
        give_to(path, &u);
    }
}

/// Gives user `u` the file `path` below their home and the directories
/// between (their home itself is left as it is).
pub fn give_to(path: &Path, u: &SudoUser) {
    if !path.starts_with(&u.home) {
        return;
    }
    let mut p = Some(path);
    while let Some(x) = p.filter(|x| *x != u.home) {
        let _ = std::os::unix::fs::chown(x, Some(u.uid), Some(u.gid));
        p = x.parent();
    }
}

/// Runs `f` again while SQLite says the database is busy or locked where
/// its busy handler does not wait (a journal-mode switch, a lock upgrade),
/// for up to 10 s.
fn retry_busy<T>(mut f: impl FnMut() -> rusqlite::Result<T>) -> rusqlite::Result<T> {
    let until = std::time::Instant::now() + std::time::Duration::from_secs(300);
    loop {
        match f() {
            Err(rusqlite::Error::SqliteFailure(e, m))
                if matches!(
                    e.code,
                    rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked
                ) =>
            {
                if std::time::Instant::now() >= until {
                    return Err(rusqlite::Error::SqliteFailure(e, m));
                }
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            r => return r,
        }
    }
}

impl Store {
    /// Opens (creating if needed) the store at `path` and brings its schema
    /// up to date; marks runs and experiments of processes that died while
    /// running them as interrupted. Safe when several fslab processes open
    /// a new store at once: one migrates, the others wait and find it done.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| StoreError::Dir {
                path: path.into(),
                source,
            })?;
        }
        let conn = Connection::open(path).map_err(|source| StoreError::Sqlite {
            path: path.into(),
            source,
        })?;
        let mut store = Store {
            conn,
            path: path.into(),
        };
        store.init().map_err(|source| StoreError::Sqlite {
            path: path.into(),
            source,
        })?;
        store.migrate()?;
        store.mark_dead_running().map_err(|e| store.err(e))?;
        if path == default_path() {
            give_to_sudo_user(path);
        }
        Ok(store)
    }

    /// Opens an existing store for reading only: it writes nothing (no
    /// schema into an empty file, no journal files), and works on a
    /// read-only file or filesystem. A store of an older schema is brought
    /// up to date first when it can be written.
    pub fn open_read(path: &Path) -> Result<Store, StoreError> {
        use rusqlite::OpenFlags;
        let sqlite = |source| StoreError::Sqlite {
            path: path.into(),
            source,
        };
        if !path.is_file() {
            return Err(StoreError::Missing(path.into()));
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_URI;
        let uri = |extra: &str| {
            format!(
                "file:{}?mode=ro{extra}",
                path.display()
                    .to_string()
                    .replace('%', "%25")
                    .replace('?', "%3f")
                    .replace('#', "%23")
            )
        };
        let conn = Connection::open_with_flags(uri(""), flags).map_err(sqlite)?;
        conn.busy_timeout(BUSY_WAIT).map_err(sqlite)?;
        // A WAL store on a read-only filesystem cannot make its shared
        // memory file: read it as immutable then.
        let conn = match conn.pragma_query_value(None, "user_version", |r| r.get::<_, i64>(0)) {
            Ok(_) => conn,
            Err(_) => Connection::open_with_flags(uri("&immutable=1"), flags).map_err(sqlite)?,
        };
        let found: i64 = conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .map_err(sqlite)?;
        let known = schema::MIGRATIONS.len() as i64;
        if found == 0 {
            return Err(StoreError::NotAStore(path.into()));
        }
        if found > known {
            return Err(StoreError::TooNew {
                path: path.into(),
                found,
                known,
            });
        }
        if found < known {
            drop(conn);
            return Store::open(path);
        }
        Ok(Store {
            conn,
            path: path.into(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn init(&mut self) -> rusqlite::Result<()> {
        self.conn.busy_timeout(BUSY_WAIT)?;
        // Switching a new database to WAL needs it to itself: SQLite
        // answers BUSY at once, without its busy handler, while another
        // opener holds it (four processes opening a new store at once).
        retry_busy(|| self.conn.pragma_update(None, "journal_mode", "WAL"))?;
        self.conn.pragma_update(None, "synchronous", "NORMAL")?;
        self.conn.pragma_update(None, "foreign_keys", "ON")?;
        Ok(())
    }

    /// Current schema version (number of migrations applied).
    pub fn schema_version(&self) -> i64 {
        self.conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .unwrap_or(0)
    }

    /// Applies the migrations this store lacks, each in a transaction that
    /// takes the write lock first (BEGIN IMMEDIATE) and reads the version
    /// again under it, so concurrent openers never apply one twice.
    fn migrate(&mut self) -> Result<(), StoreError> {
        let known = schema::MIGRATIONS.len() as i64;
        loop {
            let path = self.path.clone();
            let sqlite = |source| StoreError::Sqlite {
                path: path.clone(),
                source,
            };
            let tx = self
                .conn
                .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
                .map_err(sqlite)?;
            let found: i64 = tx
                .pragma_query_value(None, "user_version", |r| r.get(0))
                .map_err(sqlite)?;
            if found > known {
                return Err(StoreError::TooNew {
                    path: self.path.clone(),
                    found,
                    known,
                });
            }
            if found == known {
                return Ok(());
            }
            tx.execute_batch(schema::MIGRATIONS[found as usize])
                .map_err(|e| StoreError::Inconsistent {
                    path: self.path.clone(),
                    found,
                    why: sql_reason(&e),
                })?;
            tx.pragma_update(None, "user_version", found + 1)
                .map_err(sqlite)?;
            tx.commit().map_err(sqlite)?;
        }
    }

    /// Runs and experiments still marked running by a process of this host
    /// that is gone (killed with SIGKILL, say) become interrupted.
    fn mark_dead_running(&mut self) -> rusqlite::Result<()> {
        let host = host_name();
        for table in ["runs", "experiments"] {
            let rows: Vec<(i64, u32, i64)> = {
                let mut st = self.conn.prepare(&format!(
                    "SELECT id, pid, COALESCE(pid_start, 0) FROM {table}
                     WHERE status = 'running' AND pid IS NOT NULL AND hostname = ?1"
                ))?;
                let it = st.query_map(params![host], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
                it.collect::<rusqlite::Result<_>>()?
            };
            for (id, pid, start) in rows {
                if (ProcessId {
                    pid,
                    start: start as u64,
                })
                .is_alive()
                {
                    continue;
                }
                let err = format!(
                    "the fslab process that ran it (pid {pid}) ended without finishing it (killed?)"
                );
                let sql = if table == "runs" {
                    "UPDATE runs SET status = 'interrupted', error = COALESCE(error, ?2) WHERE id = ?1"
                } else {
                    "UPDATE experiments SET status = 'interrupted' WHERE id = ?1 AND ?2 IS NOT NULL"
                };
                self.conn.execute(sql, params![id, err])?;
            }
        }
        Ok(())
    }

    pub(crate) fn err(&self, source: rusqlite::Error) -> StoreError {
        StoreError::Sqlite {
            path: self.path.clone(),
            source,
        }
    }

    pub(crate) fn conn(&self) -> &Connection {
        &self.conn
    }
}

fn rec_err(e: rusqlite::Error) -> RecordError {
    RecordError::Storage(e.to_string())
}

/// A unit-like enum's serde name (`mib_per_sec`).
fn enum_text<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_value(v)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_default()
}

fn json<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_else(|_| "null".into())
}

impl Store {
    /// One write of a workload's records, retried while this process's
    /// memory cgroup is starved (see `retry.rs`).
    fn write<T>(
        &mut self,
        write: impl FnMut(&mut Connection) -> Result<T, retry::Failed>,
    ) -> RecordResult<T> {
        retry::with_reclaim(&mut self.conn, retry::RECLAIM_WAIT, write)
    }
}

impl Recorder for Store {
    fn begin_run(&mut self, info: &RunInfo) -> RecordResult<i64> {
        let me = ProcessId::current();
        self.write(|conn| {
            conn.execute(
                "INSERT INTO runs (workload, command_line, fslab_version, kernel, hostname, started_at,
                    status, target_path, fs_type, mount_source, mount_point, mount_options, params,
                    pid, pid_start)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'running', ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
                params![
                    info.workload,
                    json(&info.command_line),
                    info.fslab_version,
                    info.kernel,
                    info.hostname,
                    info.started_at,
                    info.target.path,
                    info.target.fs_type,
                    info.target.source,
                    info.target.mount_point,
                    info.target.mount_options,
                    json(&info.params),
                    me.pid,
                    me.start as i64,
                ],
            )?;
            Ok(conn.last_insert_rowid())
        })
    }

    fn record_series(&mut self, run: i64, p: &SeriesPoint) -> RecordResult<()> {
        self.write(|conn| {
            conn.prepare_cached("INSERT INTO series VALUES (?1, ?2, ?3, ?4, ?5)")?
                .execute(params![
                    run,
                    p.phase_index,
                    p.t_s,
                    p.ops as i64,
                    p.total_ops as i64
                ])?;
            Ok(())
        })
    }

    fn record_phase(&mut self, run: i64, p: &PhaseResult) -> RecordResult<()> {
        self.write(|conn| {
            conn.execute(
                "INSERT INTO phases VALUES (?1, (SELECT COUNT(*) FROM phases WHERE run_id = ?1),
                    ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
                params![
                    run,
                    p.phase,
                    p.ops as i64,
                    p.elapsed_s,
                    p.ops_per_s,
                    p.usr_cpu_s,
                    p.sys_cpu_s,
                    p.bytes as i64,
                    p.complete,
                    p.reported,
                    p.counted
                ],
            )?;
            Ok(())
        })
    }

    fn record_latency(
        &mut self,
        run: i64,
        phase: &str,
        op: &str,
        h: &LatencyHistogram,
    ) -> RecordResult<()> {
        let s = h.summary();
        let bytes = h.to_v2_bytes();
        self.write(|conn| {
            conn.execute(
                "INSERT OR REPLACE INTO latency VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
                params![
                    run,
                    phase,
                    op,
                    s.count as i64,
                    s.min_ns as i64,
                    s.mean_ns,
                    s.p50_ns as i64,
                    s.p90_ns as i64,
                    s.p99_ns as i64,
                    s.p999_ns as i64,
                    s.max_ns as i64,
                    h.sum_ns().min(i64::MAX as u128) as i64,
                    bytes,
                ],
            )?;
            Ok(())
        })
    }

    fn record_probe_points(&mut self, run: i64, points: &[ProbePoint]) -> RecordResult<()> {
        if points.is_empty() {
            return Ok(());
        }
        self.write(|conn| {
            let tx = conn.transaction()?;
            {
                let mut st =
                    tx.prepare_cached("INSERT INTO probe_points VALUES (?1, ?2, ?3, ?4, ?5, ?6)")?;
                for p in points {
                    st.execute(params![
                        run,
                        p.phase_index,
                        p.t_s,
                        p.probe,
                        p.metric,
                        p.value
                    ])?;
                }
            }
            Ok(tx.commit()?)
        })
    }

    fn record_probe_note(&mut self, run: i64, n: &ProbeNote) -> RecordResult<()> {
        self.write(|conn| {
            let tx = conn.transaction()?;
            let insert = |blob: &dyn rusqlite::ToSql| {
                tx.execute(
                    "INSERT INTO probe_notes VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                    params![run, n.phase_index, n.probe, n.key, json(&n.value), blob],
                )
            };
            match &n.blob {
                None => insert(&None::<Vec<u8>>)?,
                Some(fslab_model::Blob::Bytes(b)) => insert(b)?,
                // A spooled blob goes in a piece at a time: never all in memory.
                Some(blob) => {
                    insert(&rusqlite::blob::ZeroBlob(blob.len()))?;
                    let row = tx.last_insert_rowid();
                    let mut b =
                        tx.blob_open(rusqlite::MAIN_DB, "probe_notes", "blob", row, false)?;
                    blob.copy_to(&mut b).map_err(|source| RecordError::Blob {
                        what: format!("{} {}", n.probe, n.key),
                        source,
                    })?;
                    0
                }
            };
            Ok(tx.commit()?)
        })
    }

    fn record_facts(&mut self, run: i64, facts: &fslab_model::MachineFacts) -> RecordResult<()> {
        self.write(|conn| {
            let tx = conn.transaction()?;
            {
                let mut st = tx.prepare(
                    "INSERT OR REPLACE INTO facts (run_id, host, seq, name, value, source)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                )?;
                for (i, f) in facts.facts.iter().enumerate() {
                    st.execute(params![
                        run, facts.host, i as i64, f.name, f.value, f.source
                    ])?;
                }
            }
            Ok(tx.commit()?)
        })
    }

    fn record_metrics(&mut self, run: i64, metrics: &[fslab_model::Metric]) -> RecordResult<()> {
        self.write(|conn| {
            let tx = conn.transaction()?;
            {
                let mut st = tx.prepare(
                    "INSERT INTO metrics (run_id, source, phase, name, value, unit, better, detail, exact)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                )?;
                for m in metrics {
                    st.execute(params![
                        run,
                        m.source,
                        m.phase,
                        m.name,
                        m.value,
                        enum_text(&m.unit),
                        enum_text(&m.better),
                        m.detail,
                        m.exact
                    ])?;
                }
            }
            Ok(tx.commit()?)
        })
    }

    fn record_output(&mut self, run: i64, stream: &str, bytes: &[u8]) -> RecordResult<()> {
        self.write(|conn| {
            conn.execute(
                "INSERT OR REPLACE INTO outputs VALUES (?1, ?2, ?3)",
                params![run, stream, bytes],
            )?;
            Ok(())
        })
    }

    fn finish_run(&mut self, run: i64, status: RunStatus, error: Option<&str>) -> RecordResult<()> {
        self.write(|conn| {
            conn.execute(
                "UPDATE runs SET status = ?2, error = ?3,
                    finished_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE id = ?1",
                params![run, status.as_str(), error],
            )?;
            Ok(())
        })
    }
}
