//! The analysis written out: one [`Exporter`] a format, each in its own
//! file, registered in [`BUILT_IN`] (a new format is a file and a line;
//! a test adds one of its own with [`register`]). `fslab compare --format
//! NAME` takes any registered name; `fslab report` is the `html` one.

pub mod csv;
pub mod html;
pub mod json;
pub mod markdown;
pub mod text;

use std::sync::{Mutex, OnceLock};

use fslab_analysis::Analysis;
use fslab_store::Store;

use crate::Result;

/// A format an analysis can be written in.
pub trait Exporter: Send + Sync + 'static {
    /// Its name, as `--format` takes it (`csv`).
    fn name(&self) -> &'static str;
    /// The analysis in this format; `store` holds what a format shows
    /// beyond the analysis (the report's per-cell charts).
    fn export(&self, a: &Analysis, store: &Store) -> Result<String>;
}

/// The built-in formats, `--format`'s default first.
static BUILT_IN: [&dyn Exporter; 5] = [
    &text::Text,
    &markdown::Markdown,
    &csv::Csv,
    &json::Json,
    &html::Html,
];

fn extra() -> &'static Mutex<Vec<&'static dyn Exporter>> {
    static EXTRA: OnceLock<Mutex<Vec<&'static dyn Exporter>>> = OnceLock::new();
    EXTRA.get_or_init(|| Mutex::new(Vec::new()))
}

/// A format's name taken already: refused by [`register`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("format {0:?} is registered already")]
pub struct NameTaken(pub &'static str);

/// Adds a format (a test's own) after the built-in ones; an error when its
/// name is taken.
pub fn register(e: &'static dyn Exporter) -> std::result::Result<(), NameTaken> {
    if of(e.name()).is_some() {
        return Err(NameTaken(e.name()));
    }
    extra()
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .push(e);
    Ok(())
}

/// Every registered format, the built-in ones first.
pub fn all() -> Vec<&'static dyn Exporter> {
    let extra = extra()
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clone();
    BUILT_IN.iter().copied().chain(extra).collect()
}

/// The format registered as `name`.
pub fn of(name: &str) -> Option<&'static dyn Exporter> {
    all().into_iter().find(|e| e.name() == name)
}

/// Every registered format's name.
pub fn names() -> Vec<&'static str> {
    all().into_iter().map(|e| e.name()).collect()
}

/// Whether the format `name` is one for people (text, markdown), which
/// the groups' kernels lead when they differ.
pub fn for_people(name: &str) -> bool {
    matches!(name, "text" | "markdown")
}

/// The analysis in the format registered as `name` (bad input naming the
/// formats when there is none), led by the lines of `kernels` in a format
/// for people ([`for_people`]).
pub fn export_as(name: &str, a: &Analysis, store: &Store, kernels: &[String]) -> Result<String> {
    let exporter = of(name).ok_or_else(|| {
        crate::Error::Selection(format!(
            "--format {name}: no such format (formats: {})",
            names().join(", ")
        ))
    })?;
    let text = exporter.export(a, store)?;
    Ok(match for_people(name) {
        true => {
            kernels
                .iter()
                .map(|l| format!("{l}\n\n"))
                .collect::<String>()
                + &text
        }
        false => text,
    })
}
