//! The shape of fslab's JSON output: every document a command prints
//! (`--json`, `results export --format json`, `compare --format json`) is
//! one object whose first field, `fslab_schema`, says which version of the
//! shape it has. docs/store.md's "JSON output" section documents each shape.

use serde::{Deserialize, Serialize};

/// The version of the JSON shapes. It grows when a field is renamed,
/// removed or changes its unit; new fields do not change it. 2: a run has
/// one shape, whatever prints it (a workload's `--json` and `results
/// export`: `schema/run.schema.json`), and loop rows are metrics.
pub const SCHEMA_VERSION: u32 = 2;

/// A document with its schema version: `{"fslab_schema": 1, ...body's fields}`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Versioned<T> {
    pub fslab_schema: u32,
    #[serde(flatten)]
    pub body: T,
}

impl<T: Serialize> Versioned<T> {
    pub fn new(body: T) -> Self {
        Versioned {
            fslab_schema: SCHEMA_VERSION,
            body,
        }
    }

    /// The document, pretty-printed, with a final newline.
    pub fn to_pretty(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).unwrap_or_else(|e| {
            format!("{{\"fslab_schema\": {SCHEMA_VERSION}, \"error\": \"{e}\"}}")
        });
        s.push('\n');
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize, Deserialize, PartialEq, Debug)]
    struct Body {
        run_id: i64,
    }

    #[test]
    fn the_version_comes_first_beside_the_bodys_fields() {
        let s = Versioned::new(Body { run_id: 7 }).to_pretty();
        assert!(
            s.starts_with("{\n  \"fslab_schema\": 2,\n  \"run_id\": 7"),
            "{s}"
        );
        let back: Versioned<Body> = serde_json::from_str(&s).unwrap();
        assert_eq!(back.fslab_schema, SCHEMA_VERSION);
        assert_eq!(back.body, Body { run_id: 7 });
    }
}
