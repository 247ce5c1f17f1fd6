//! One spelling of machine output for every command that prints results
//! (`results list | experiments | show | export`, `history`, `compare`):
//! `--format text|json|csv|markdown`, and `--output FILE` to write that
//! format to a file while the text stays on the terminal. A table is a
//! [`Sheet`], written in each format the same way.

use fslab_model::json::Versioned;
use fslab_model::table::{Align, Table};
use serde_json::Value;

/// A format of machine (or human) output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Text,
    Json,
    Csv,
    Markdown,
}

impl Format {
    /// Every format, `--format`'s default first.
    pub const ALL: [Format; 4] = [Format::Text, Format::Json, Format::Csv, Format::Markdown];

    /// Its name, as `--format` takes it.
    pub fn name(self) -> &'static str {
        match self {
            Format::Text => "text",
            Format::Json => "json",
            Format::Csv => "csv",
            Format::Markdown => "markdown",
        }
    }

    /// The format named `name` (`md` too).
    pub fn of(name: &str) -> Option<Format> {
        let n = name.to_ascii_lowercase();
        Format::ALL
            .into_iter()
            .find(|f| f.name() == n)
            .or((n == "md").then_some(Format::Markdown))
    }

    /// The format a file's extension names (`runs.csv`: CSV; `.txt`: text).
    pub fn of_path(path: &std::path::Path) -> Option<Format> {
        let ext = path.extension()?.to_str()?;
        if ext.eq_ignore_ascii_case("txt") {
            return Some(Format::Text);
        }
        Format::of(ext)
    }
}

/// A table with typed cells: the text table, CSV, a Markdown table, or
/// JSON (an array of objects, one a row, keyed by column).
#[derive(Debug, Clone, Default)]
pub struct Sheet {
    pub columns: Vec<(String, Align)>,
    pub rows: Vec<Vec<Value>>,
}

/// A cell as text: strings bare, null as `-`.
fn cell(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "-".into(),
        v => v.to_string(),
    }
}

impl Sheet {
    /// A sheet with these columns.
    pub fn new(columns: &[(&str, Align)]) -> Sheet {
        Sheet {
            columns: columns.iter().map(|(c, a)| (c.to_string(), *a)).collect(),
            rows: Vec::new(),
        }
    }

    /// Adds a row.
    pub fn row(&mut self, cells: Vec<Value>) {
        self.rows.push(cells);
    }

    /// The text table (nothing when there is no row).
    pub fn text(&self) -> String {
        if self.rows.is_empty() {
            return String::new();
        }
        let cols: Vec<(&str, Align)> = self.columns.iter().map(|(c, a)| (c.as_str(), *a)).collect();
        let mut t = Table::new(&cols);
        for r in &self.rows {
            t.row(r.iter().map(cell));
        }
        t.render()
    }

    /// CSV with a header line (empty cells for null).
    pub fn csv(&self) -> String {
        let mut w = csv::Writer::from_writer(Vec::new());
        let _ = w.write_record(self.columns.iter().map(|(c, _)| c));
        for r in &self.rows {
            let _ = w.write_record(r.iter().map(|v| match v {
                Value::Null => String::new(),
                v => cell(v),
            }));
        }
        String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
    }

    /// A Markdown table (`|` in a cell escaped).
    pub fn markdown(&self) -> String {
        let mut s = format!(
            "| {} |\n|{}\n",
            self.columns
                .iter()
                .map(|(c, _)| c.as_str())
                .collect::<Vec<_>>()
                .join(" | "),
            self.columns
                .iter()
                .map(|(_, a)| if *a == Align::Right { "---:|" } else { "---|" })
                .collect::<String>()
        );
        for r in &self.rows {
            let cells: Vec<String> = r.iter().map(|v| cell(v).replace('|', "\\|")).collect();
            s.push_str(&format!("| {} |\n", cells.join(" | ")));
        }
        s
    }

    /// The rows as JSON objects, under `key`, with fslab's schema version.
    pub fn json(&self, key: &str) -> String {
        let rows: Vec<serde_json::Map<String, Value>> = self
            .rows
            .iter()
            .map(|r| {
                self.columns
                    .iter()
                    .map(|(c, _)| c.clone())
                    .zip(r.iter().cloned())
                    .collect()
            })
            .collect();
        let mut doc = serde_json::Map::new();
        doc.insert(
            key.to_string(),
            Value::Array(rows.into_iter().map(Value::Object).collect()),
        );
        Versioned::new(doc).to_pretty()
    }

    /// The sheet in `format` (JSON rows under `key`).
    pub fn render(&self, format: Format, key: &str) -> String {
        match format {
            Format::Text => self.text(),
            Format::Json => self.json(key),
            Format::Csv => self.csv(),
            Format::Markdown => self.markdown(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sheet() -> Sheet {
        let mut s = Sheet::new(&[("id", Align::Left), ("rate (ops/s)", Align::Right)]);
        s.row(vec![json!(7), json!(1234.5)]);
        s.row(vec![json!(8), Value::Null]);
        s
    }

    #[test]
    fn a_sheet_is_the_same_table_in_every_format() {
        let s = sheet();
        assert_eq!(
            s.text(),
            "id  rate (ops/s)\n7         1234.5\n8              -\n"
        );
        assert_eq!(s.csv(), "id,rate (ops/s)\n7,1234.5\n8,\n");
        assert_eq!(
            s.markdown(),
            "| id | rate (ops/s) |\n|---|---:|\n| 7 | 1234.5 |\n| 8 | - |\n"
        );
        let j: Value = serde_json::from_str(&s.json("runs")).unwrap();
        assert_eq!(j["runs"][0]["rate (ops/s)"], 1234.5);
        assert_eq!(j["runs"][1]["rate (ops/s)"], Value::Null);
        assert!(j["fslab_schema"].is_u64(), "{j}");
    }

    #[test]
    fn a_format_is_named_or_taken_from_a_files_extension() {
        assert_eq!(Format::of("JSON"), Some(Format::Json));
        assert_eq!(Format::of("md"), Some(Format::Markdown));
        assert_eq!(Format::of("xml"), None);
        let p = |s: &str| Format::of_path(std::path::Path::new(s));
        assert_eq!(p("runs.csv"), Some(Format::Csv));
        assert_eq!(p("notes.txt"), Some(Format::Text));
        assert_eq!(p("runs"), None);
    }
}
