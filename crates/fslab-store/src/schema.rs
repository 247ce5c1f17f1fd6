//! Numbered schema migrations. Append new ones; never edit a shipped one.

/// Migration `i` brings the database from `user_version` i to i + 1.
pub const MIGRATIONS: &[&str] = &[
    // 1: runs of workloads, with loop rows (until 9), phases, latency and per-second series.
    r#"
    CREATE TABLE runs (
        id            INTEGER PRIMARY KEY,
        workload      TEXT NOT NULL,
        command_line  TEXT NOT NULL,          -- JSON array of argv
        fslab_version TEXT NOT NULL,
        kernel        TEXT NOT NULL,
        hostname      TEXT NOT NULL,
        started_at    TEXT NOT NULL,          -- RFC 3339, UTC
        finished_at   TEXT,
        status        TEXT NOT NULL,          -- running | complete | interrupted | failed
        error         TEXT,
        target_path   TEXT NOT NULL,
        fs_type       TEXT NOT NULL,
        mount_source  TEXT NOT NULL,
        mount_point   TEXT NOT NULL,
        mount_options TEXT NOT NULL,
        params        TEXT NOT NULL           -- JSON of the workload's options
    );
    CREATE TABLE loops (
        run_id             INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        idx                INTEGER NOT NULL,
        fs_use_pct         INTEGER NOT NULL,
        count              INTEGER NOT NULL,
        files              INTEGER NOT NULL,
        file_size          INTEGER NOT NULL,
        files_per_sec      REAL NOT NULL,
        wall_files_per_sec REAL NOT NULL,
        wall_s             REAL NOT NULL,
        app_overhead_us    INTEGER NOT NULL,
        calls              TEXT NOT NULL,     -- JSON [[name, {min_us, avg_us, max_us}], ...]
        complete           INTEGER NOT NULL,
        PRIMARY KEY (run_id, idx)
    );
    CREATE TABLE phases (
        run_id     INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        seq        INTEGER NOT NULL,          -- order within the run; series.phase_index
        phase      TEXT NOT NULL,
        ops        INTEGER NOT NULL,
        elapsed_s  REAL NOT NULL,
        ops_per_s  REAL NOT NULL,
        usr_cpu_s  REAL NOT NULL,
        sys_cpu_s  REAL NOT NULL,
        bytes      INTEGER NOT NULL,
        complete   INTEGER NOT NULL,
        PRIMARY KEY (run_id, seq)
    );
    CREATE TABLE latency (
        run_id  INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        phase   TEXT NOT NULL,
        op      TEXT NOT NULL,
        count   INTEGER NOT NULL,
        min_ns  INTEGER NOT NULL,
        mean_ns REAL NOT NULL,
        p50_ns  INTEGER NOT NULL,
        p90_ns  INTEGER NOT NULL,
        p99_ns  INTEGER NOT NULL,
        p999_ns INTEGER NOT NULL,
        max_ns  INTEGER NOT NULL,
        sum_ns  INTEGER NOT NULL,
        hdr     BLOB NOT NULL,                -- HdrHistogram V2 serialisation
        PRIMARY KEY (run_id, phase, op)
    );
    CREATE TABLE series (
        run_id      INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        phase_index INTEGER NOT NULL,
        t_s         REAL NOT NULL,            -- seconds since the phase started
        ops         INTEGER NOT NULL,
        total_ops   INTEGER NOT NULL
    );
    CREATE INDEX series_run ON series(run_id, phase_index, t_s);
    "#,
    // 2: experiments (fslab run): their cells and each repetition of a cell.
    r#"
    CREATE TABLE experiments (
        id            INTEGER PRIMARY KEY,
        name          TEXT NOT NULL,
        file          TEXT NOT NULL,
        text          TEXT NOT NULL,          -- the experiment file as run
        scale         REAL NOT NULL,
        repetitions   INTEGER NOT NULL,
        command_line  TEXT NOT NULL,
        fslab_version TEXT NOT NULL,
        kernel        TEXT NOT NULL,
        hostname      TEXT NOT NULL,
        started_at    TEXT NOT NULL,
        finished_at   TEXT,
        status        TEXT NOT NULL
    );
    CREATE TABLE cells (
        experiment_id INTEGER NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,
        idx           INTEGER NOT NULL,
        label         TEXT NOT NULL,
        fs_type       TEXT NOT NULL,
        info          TEXT NOT NULL,          -- JSON CellInfo: mkfs argv and version, mount options, sysctls, ...
        PRIMARY KEY (experiment_id, idx)
    );
    CREATE TABLE cell_runs (
        experiment_id INTEGER NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,
        cell          INTEGER NOT NULL,
        repetition    INTEGER NOT NULL,
        run_id        INTEGER REFERENCES runs(id),
        status        TEXT NOT NULL,
        error         TEXT,
        unmount_s     REAL,
        remount_s     REAL,
        info          TEXT NOT NULL,          -- JSON CellRunInfo: devices, commands, kernel mount options, ...
        PRIMARY KEY (experiment_id, cell, repetition)
    );
    "#,
    // 3: probes: per-second points (long format) and per-phase / per-run notes.
    r#"
    CREATE TABLE probe_points (
        run_id      INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        phase_index INTEGER NOT NULL,
        t_s         REAL NOT NULL,
        probe       TEXT NOT NULL,
        metric      TEXT NOT NULL,
        value       REAL NOT NULL
    );
    CREATE INDEX probe_points_run ON probe_points(run_id, probe, metric, phase_index, t_s);
    CREATE TABLE probe_notes (
        run_id      INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        phase_index INTEGER,                  -- NULL: about the whole run
        probe       TEXT NOT NULL,
        key         TEXT NOT NULL,
        value       TEXT NOT NULL,            -- JSON
        blob        BLOB                      -- e.g. deflate-compressed raw block IO events
    );
    CREATE INDEX probe_notes_run ON probe_notes(run_id, probe, key);
    "#,
    // 4: which process keeps a row running (pid and start time, see
    // fslab_model::process), so rows of a killed process are found and
    // marked interrupted instead of staying "running" forever.
    r#"
    ALTER TABLE runs ADD COLUMN pid INTEGER;
    ALTER TABLE runs ADD COLUMN pid_start INTEGER;
    ALTER TABLE experiments ADD COLUMN pid INTEGER;
    ALTER TABLE experiments ADD COLUMN pid_start INTEGER;
    "#,
    // 5: the numbers each tool reports, typed (fslab_model::Metric).
    r#"
    CREATE TABLE metrics (
        run_id  INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        source  TEXT NOT NULL,              -- workload or probe
        phase   TEXT,                       -- phase or item, if any
        name    TEXT NOT NULL,              -- the tool's name for it
        value   REAL NOT NULL,
        unit    TEXT NOT NULL,              -- fslab_model::Unit, snake_case
        better  TEXT NOT NULL,              -- higher | lower | neither
        detail  INTEGER NOT NULL DEFAULT 0  -- a breakdown row (an operation, a loop)
    );
    CREATE INDEX metrics_run ON metrics(run_id);
    "#,
    // 6: an experiment's stated findings as evaluated (fslab_model::FindingResult).
    r#"
    CREATE TABLE findings (
        experiment_id INTEGER NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,
        seq           INTEGER NOT NULL,
        says          TEXT NOT NULL,
        outcome       TEXT NOT NULL,        -- reproduced | not_reproduced | not_evaluated
        result        TEXT NOT NULL,        -- the whole FindingResult, JSON
        PRIMARY KEY (experiment_id, seq)
    );
    "#,
    // 7: A/A calibrations (`fslab run --calibrate CELL`): a cell run against
    // itself, interleaved; per metric the noise between the two copies, for
    // `fslab compare` to take its noise threshold from.
    r#"
    CREATE TABLE calibrations (
        experiment_id INTEGER NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,
        created_at    TEXT NOT NULL,
        hostname      TEXT NOT NULL,        -- the machine
        fs_type       TEXT NOT NULL,        -- the filesystem
        workload      TEXT NOT NULL,        -- the workload's registered name (fslab_workload::WorkloadRef)
        options       TEXT NOT NULL,        -- the workload's options, paths aside (name = value; ...)
        metric        TEXT NOT NULL,        -- as compare names it
        n             INTEGER NOT NULL,     -- runs per copy
        sd_log        REAL NOT NULL,        -- pooled sd of the runs' logs
        ratio         REAL NOT NULL,        -- copy 2 over copy 1 (geometric means)
        delta_pct     REAL NOT NULL,        -- the noise threshold it gives, percent
        PRIMARY KEY (experiment_id, metric)
    );
    "#,
    // 8: a count exact by construction (fslab_model::Metric::exact): the
    // workload's options fix it, so `compare` judges it from one run a side.
    r#"
    ALTER TABLE metrics ADD COLUMN exact INTEGER NOT NULL DEFAULT 0;
    "#,
    // 9: loop rows are ordinary metrics (fslab_model::loop_metrics): each
    // stored loop becomes detail metrics of phase `loop N`, named as
    // `LoopRow::metrics` names them, from the run's workload; the loops'
    // older metrics (Files/sec and App Overhead alone) give way to them, and
    // the loops table goes.
    r#"
    DELETE FROM metrics WHERE detail = 1 AND phase LIKE 'loop %'
        AND run_id IN (SELECT run_id FROM loops);
    INSERT INTO metrics (run_id, source, phase, name, value, unit, better, detail, exact)
    SELECT run_id, source, phase, name, value, unit, better, 1, 0 FROM (
        SELECT l.run_id, r.workload AS source, 'loop ' || l.idx AS phase, l.idx AS idx,
               c.k AS k, 0 AS sub, c.name AS name,
               CASE c.k WHEN 0 THEN l.fs_use_pct WHEN 1 THEN l.count WHEN 2 THEN l.files
                        WHEN 3 THEN l.file_size WHEN 4 THEN l.files_per_sec
                        WHEN 5 THEN l.wall_files_per_sec WHEN 6 THEN l.wall_s
                        WHEN 7 THEN l.app_overhead_us ELSE l.complete END AS value,
               c.unit AS unit, c.better AS better
        FROM loops l JOIN runs r ON r.id = l.run_id
        CROSS JOIN (
                      SELECT 0 AS k, 'FSUse%' AS name, 'percent' AS unit, 'lower' AS better
            UNION ALL SELECT 1, 'Count', 'count', 'neither'
            UNION ALL SELECT 2, 'files', 'count', 'neither'
            UNION ALL SELECT 3, 'Size', 'bytes', 'neither'
            UNION ALL SELECT 4, 'Files/sec', 'files_per_sec', 'higher'
            UNION ALL SELECT 5, 'wall Files/sec', 'files_per_sec', 'higher'
            UNION ALL SELECT 6, 'wall time', 'seconds', 'lower'
            UNION ALL SELECT 7, 'App Overhead', 'microseconds', 'lower'
            UNION ALL SELECT 8, 'complete', 'count', 'neither'
        ) c
        UNION ALL
        SELECT l.run_id, r.workload, 'loop ' || l.idx, l.idx, 9 + CAST(j.key AS INTEGER), s.n,
               json_extract(j.value, '$[0]') || ' ' || s.stat,
               COALESCE(json_extract(j.value, '$[1].' || s.stat || '_us'), 0),
               'microseconds', 'lower'
        FROM loops l JOIN runs r ON r.id = l.run_id, json_each(l.calls) j
        CROSS JOIN (
                      SELECT 0 AS n, 'min' AS stat
            UNION ALL SELECT 1, 'avg'
            UNION ALL SELECT 2, 'max'
        ) s
    ) ORDER BY run_id, idx, k, sub;
    DROP TABLE loops;
    "#,
    // 10: phases a tool reported after it ran (fslab_model::PhaseResult::
    // reported: a job of fio's, a phase of IO500's) and phases nothing
    // counted (PhaseResult::counted: a program timed alone), and what a program
    // fslab ran printed (`fslab exec`, `kind = "command"`), kept with its run.
    r#"
    ALTER TABLE phases ADD COLUMN reported INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE phases ADD COLUMN counted INTEGER NOT NULL DEFAULT 1;
    CREATE TABLE outputs (
        run_id  INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        stream  TEXT NOT NULL,              -- stdout | stderr | a file the program wrote
        bytes   BLOB NOT NULL,              -- as the program wrote them
        PRIMARY KEY (run_id, stream)
    );
    "#,
    // 11: the machine each run ran on (fslab_model::facts): one row per
    // fact and host, in the order read; value NULL when it could not be
    // read (source then says why).
    r#"
    CREATE TABLE facts (
        run_id  INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        host    TEXT NOT NULL,
        seq     INTEGER NOT NULL,           -- order within the host's facts
        name    TEXT NOT NULL,
        value   TEXT,                       -- NULL: unknown
        source  TEXT NOT NULL,              -- where it was read, or why unknown
        PRIMARY KEY (run_id, host, seq)
    );
    "#,
];
