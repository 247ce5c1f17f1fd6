//! Copying a run from another store into this one: what a guest (a cell
//! on another kernel, see `fslab-guest`) recorded in its own store comes
//! into the host's as any run does, under a new id.

use std::path::Path;

use fslab_model::{RecordError, RecordResult};
use rusqlite::params;

use crate::{rec_err, Store};

/// The tables of an experiment, not of a run: never copied with one.
const NOT_OF_A_RUN: [&str; 5] = ["runs", "experiments", "cells", "cell_runs", "findings"];

impl Store {
    /// Copies run `run` of the store at `from` (written by this fslab's
    /// schema) into this store: its row and every row of a table keyed by
    /// `run_id`. Returns the run's id here.
    pub fn import_run(&mut self, from: &Path, run: i64) -> RecordResult<i64> {
        let c = self.conn();
        c.execute(
            "ATTACH DATABASE ?1 AS guest",
            params![from.display().to_string()],
        )
        .map_err(rec_err)?;
        let r = copy(c, run);
        let _ = c.execute("DETACH DATABASE guest", []);
        r
    }
}

fn copy(c: &rusqlite::Connection, run: i64) -> RecordResult<i64> {
    let version = |db: &str| -> RecordResult<i64> {
        c.query_row(&format!("PRAGMA {db}.user_version"), [], |r| r.get(0))
            .map_err(rec_err)
    };
    let (ours, theirs) = (version("main")?, version("guest")?);
    if ours != theirs {
        return Err(RecordError::Storage(format!(
            "cannot import a run of schema version {theirs} into a store of version {ours}"
        )));
    }
    let tx = c.unchecked_transaction().map_err(rec_err)?;
    let cols = columns(c, "runs")?
        .into_iter()
        .filter(|n| n != "id")
        .collect::<Vec<_>>()
        .join(", ");
    let n = c
        .execute(
            &format!("INSERT INTO main.runs ({cols}) SELECT {cols} FROM guest.runs WHERE id = ?1"),
            [run],
        )
        .map_err(rec_err)?;
    if n == 0 {
        return Err(RecordError::Storage(format!(
            "the guest's store has no run {run}"
        )));
    }
    let id = c.last_insert_rowid();
    for table in run_tables(c)? {
        let cols: Vec<String> = columns(c, &table)?
            .into_iter()
            .filter(|n| n != "run_id")
            .collect();
        let list = cols.join(", ");
        c.execute(
            &format!(
                "INSERT INTO main.{table} (run_id, {list}) SELECT ?1, {list} FROM guest.{table} WHERE run_id = ?2"
            ),
            params![id, run],
        )
        .map_err(rec_err)?;
    }
    tx.commit().map_err(rec_err)?;
    Ok(id)
}

/// The column names of `table` in this store.
fn columns(c: &rusqlite::Connection, table: &str) -> RecordResult<Vec<String>> {
    let mut st = c
        .prepare(&format!("PRAGMA main.table_info({table})"))
        .map_err(rec_err)?;
    let names = st
        .query_map([], |r| r.get::<_, String>(1))
        .map_err(rec_err)?
        .collect::<Result<Vec<_>, _>>()
        .map_err(rec_err)?;
    Ok(names)
}

/// The tables of a run's rows (those with a `run_id` column).
fn run_tables(c: &rusqlite::Connection) -> RecordResult<Vec<String>> {
    let mut st = c
        .prepare("SELECT name FROM main.sqlite_master WHERE type = 'table'")
        .map_err(rec_err)?;
    let tables = st
        .query_map([], |r| r.get::<_, String>(0))
        .map_err(rec_err)?
        .collect::<Result<Vec<_>, _>>()
        .map_err(rec_err)?;
    let mut out = Vec::new();
    for t in tables {
        if NOT_OF_A_RUN.contains(&t.as_str()) || t.starts_with("sqlite_") {
            continue;
        }
        if columns(c, &t)?.iter().any(|n| n == "run_id") {
            out.push(t);
        }
    }
    Ok(out)
}
