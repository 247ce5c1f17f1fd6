//! Where a command's output goes: `--output FILE` in the format `--format`
//! names (else FILE's extension, else the command's default), and a run's
//! kept program output (`fslab results output`).

use std::path::{Path, PathBuf};

use fslab_store::Store;

use crate::{Error, Result};

/// Why `--output` or `--format` is refused, or the file not written.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    /// Bad input (exit 2): `--output FILE` in a directory that is not there.
    #[error("--output {}: no such directory {}", file.display(), dir.display())]
    NoDirectory { file: PathBuf, dir: PathBuf },
    /// Bad input (exit 2): a format this command does not write.
    #[error("--format {0}: not a format of this command (text, json, csv or markdown)")]
    NotAFormat(String),
    /// A failure (exit 1): the file could not be written.
    #[error("--output {}: {source}", file.display())]
    Write {
        file: PathBuf,
        source: std::io::Error,
    },
}

impl OutputError {
    /// Bad input rather than a failure.
    pub fn is_usage(&self) -> bool {
        !matches!(self, OutputError::Write { .. })
    }
}

/// Checks that `--output FILE`'s directory exists before anything is read.
pub fn check_dir(output: Option<&Path>) -> std::result::Result<(), OutputError> {
    let Some(file) = output else { return Ok(()) };
    match file.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(dir) if !dir.is_dir() => Err(OutputError::NoDirectory {
            file: file.to_path_buf(),
            dir: dir.to_path_buf(),
        }),
        _ => Ok(()),
    }
}

/// The format of `--output FILE`: `--format`'s, else FILE's extension
/// (`md` is markdown, `txt` text, `htm` html), else `default`.
pub fn chosen(format: Option<&str>, file: &Path, default: &str) -> String {
    let by_extension = || {
        let ext = file.extension()?.to_str()?.to_ascii_lowercase();
        Some(match ext.as_str() {
            "md" => "markdown".to_string(),
            "txt" => "text".to_string(),
            "htm" => "html".to_string(),
            _ => ext,
        })
    };
    format
        .map(str::to_string)
        .or_else(by_extension)
        .unwrap_or_else(|| default.to_string())
}

/// Writes `body` to `--output FILE`.
pub fn write(file: &Path, body: &str) -> std::result::Result<(), OutputError> {
    std::fs::write(file, body).map_err(|source| OutputError::Write {
        file: file.to_path_buf(),
        source,
    })
}

/// `--format NAME` as one of the four formats of a command's results; a
/// name taken from a file's extension may be none of them.
pub fn format_named(name: &str) -> std::result::Result<crate::format::Format, OutputError> {
    crate::format::Format::of(name).ok_or_else(|| OutputError::NotAFormat(name.to_string()))
}

/// `fslab results output ID STREAM`: the bytes run `id` kept of `stream`,
/// as the program wrote them; a run or stream with nothing kept is bad
/// input, naming what is.
pub fn kept(store: &Store, id: i64, stream: &str) -> Result<Vec<u8>> {
    let rec = store.run(id)?;
    match store.output(id, stream) {
        Ok(Some(bytes)) => Ok(bytes),
        Ok(None) if rec.outputs.is_empty() => Err(Error::Selection(format!(
            "results output {id}: run {id} ({}) kept no program output",
            rec.run.workload
        ))),
        Ok(None) => Err(Error::Selection(format!(
            "results output {id} {stream}: no such stream (kept: {})",
            rec.outputs
                .iter()
                .map(|o| o.stream.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
        Err(e) => Err(Error::Damaged(format!("results store: {e}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_format_is_the_asked_one_else_the_files_extension_else_the_default() {
        let f = Path::new("out/x.md");
        assert_eq!(chosen(Some("csv"), f, "text"), "csv");
        assert_eq!(chosen(None, f, "text"), "markdown");
        assert_eq!(chosen(None, Path::new("x.TXT"), "json"), "text");
        assert_eq!(chosen(None, Path::new("x.htm"), "text"), "html");
        assert_eq!(chosen(None, Path::new("x.xyz"), "text"), "xyz");
        assert_eq!(chosen(None, Path::new("x"), "json"), "json");
        let e = format_named("xyz").unwrap_err();
        assert!(e.is_usage());
        assert_eq!(
            e.to_string(),
            "--format xyz: not a format of this command (text, json, csv or markdown)"
        );
    }

    #[test]
    fn an_output_file_in_a_missing_directory_is_bad_input_and_a_bare_name_is_not() {
        assert!(check_dir(None).is_ok());
        assert!(check_dir(Some(Path::new("x.csv"))).is_ok());
        let e = check_dir(Some(Path::new("/nonexistent-fslab/x.csv"))).unwrap_err();
        assert!(e.is_usage());
        assert_eq!(
            e.to_string(),
            "--output /nonexistent-fslab/x.csv: no such directory /nonexistent-fslab"
        );
        let d = tempfile::tempdir().unwrap();
        let e = write(&d.path().join("no/x.csv"), "a").unwrap_err();
        assert!(
            !e.is_usage() && std::error::Error::source(&e).is_some(),
            "{e}"
        );
    }
}
