//! dbench 4 loadfiles: parsing (with line numbers in every error) and
//! fslab's own loadfile, generated from a documented model.
//!
//! A loadfile line is an operation, its arguments and the NT status the
//! operation returned when it was recorded, e.g.
//! `NTCreateX "\clients\client1\~dmtmp\WORD\CHAP10.DOC" 0x1 0x2 9938 NT_STATUS_OK`.
//! A leading timestamp (timed loadfiles) is skipped; `#` starts a comment.

use std::fmt::Write as _;

/// A loadfile path, prepared when the loadfile is read: backslashes made
/// slashes, the leading one dropped, and split where the recording client's
/// directory name `client1` stood. Placing it under a client's directory
/// while the clock runs then only copies bytes into a reused buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadPath {
    parts: Vec<String>,
}

impl LoadPath {
    pub fn new(recorded: &str) -> Self {
        let p = recorded.replace('\\', "/");
        LoadPath {
            parts: p
                .trim_start_matches('/')
                .split("client1")
                .map(String::from)
                .collect(),
        }
    }

    /// Writes `DIR/PATH` into `out`, with `client` (e.g. `client7`) where
    /// the recording client's name stood.
    pub fn place(&self, dir: &std::ffi::OsStr, client: &str, out: &mut std::ffi::OsString) {
        out.clear();
        out.push(dir);
        out.push("/");
        for (i, part) in self.parts.iter().enumerate() {
            if i > 0 {
                out.push(client);
            }
            out.push(part);
        }
    }
}

/// One operation of a loadfile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    NtCreateX {
        path: LoadPath,
        options: u32,
        disposition: u32,
        fnum: u32,
    },
    Close {
        fnum: u32,
    },
    Rename {
        from: LoadPath,
        to: LoadPath,
    },
    Unlink {
        path: LoadPath,
    },
    Deltree {
        path: LoadPath,
    },
    Rmdir {
        path: LoadPath,
    },
    Mkdir {
        path: LoadPath,
    },
    QueryPath {
        path: LoadPath,
    },
    QueryFile {
        fnum: u32,
    },
    QueryFs,
    SetFileInfo {
        fnum: u32,
    },
    FindFirst {
        pattern: LoadPath,
        /// The most entries to return (dbench reads at most this many).
        max: u64,
    },
    WriteX {
        fnum: u32,
        offset: u64,
        size: u64,
    },
    ReadX {
        fnum: u32,
        offset: u64,
        size: u64,
    },
    LockX {
        fnum: u32,
        offset: u64,
        size: u64,
    },
    UnlockX {
        fnum: u32,
        offset: u64,
        size: u64,
    },
    Flush {
        fnum: u32,
    },
}

impl Op {
    /// Whether dbench's fileio backend compares this operation's result with
    /// the loadfile's status (it does for opens, unlinks, rmdirs and renames;
    /// the others' results it ignores).
    pub fn checks_status(&self) -> bool {
        matches!(
            self,
            Op::NtCreateX { .. } | Op::Unlink { .. } | Op::Rmdir { .. } | Op::Rename { .. }
        )
    }

    /// The name dbench's table uses.
    pub fn name(&self) -> &'static str {
        match self {
            Op::NtCreateX { .. } => "NTCreateX",
            Op::Close { .. } => "Close",
            Op::Rename { .. } => "Rename",
            Op::Unlink { .. } => "Unlink",
            Op::Deltree { .. } => "Deltree",
            Op::Rmdir { .. } => "Rmdir",
            Op::Mkdir { .. } => "Mkdir",
            Op::QueryPath { .. } => "Qpathinfo",
            Op::QueryFile { .. } => "Qfileinfo",
            Op::QueryFs => "Qfsinfo",
            Op::SetFileInfo { .. } => "Sfileinfo",
            Op::FindFirst { .. } => "Find",
            Op::WriteX { .. } => "WriteX",
            Op::ReadX { .. } => "ReadX",
            Op::LockX { .. } => "LockX",
            Op::UnlockX { .. } => "UnlockX",
            Op::Flush { .. } => "Flush",
        }
    }
}

/// A parsed line: the operation and the status it must return.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    pub number: usize,
    pub op: Op,
    pub status: String,
}

fn tokens(line: &str) -> Result<Vec<String>, WordError> {
    let mut out = Vec::new();
    let mut chars = line.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
        } else if c == '"' {
            chars.next();
            let mut s = String::new();
            loop {
                match chars.next() {
                    Some('"') => break,
                    Some(ch) => s.push(ch),
                    None => return Err(WordError::NotClosed),
                }
            }
            out.push(s);
        } else {
            let mut s = String::new();
            while let Some(&ch) = chars.peek() {
                if ch.is_whitespace() {
                    break;
                }
                s.push(ch);
                chars.next();
            }
            out.push(s);
        }
    }
    Ok(out)
}

/// What is wrong with a line's words (placed at its line by the caller).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum WordError {
    #[error("{0:?} is not a number")]
    NotANumber(String),
    #[error("a quoted name is not closed")]
    NotClosed,
    #[error("{op} takes {want} arguments before the status, not {got}")]
    Arity { op: String, want: usize, got: usize },
}

fn num(s: &str) -> Result<u64, WordError> {
    let r = if let Some(h) = s.strip_prefix("0x") {
        u64::from_str_radix(h, 16)
    } else {
        s.parse()
    };
    r.map_err(|_| WordError::NotANumber(s.to_string()))
}

/// A loadfile word as an error may show it: quoted when it looks like a
/// loadfile word, else only its length (a file named by mistake, such as
/// /etc/shadow, is not echoed).
fn shown(w: &str) -> String {
    let plain = w.len() <= 40
        && w.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'));
    if plain {
        format!("{w:?}")
    } else {
        format!("a word of {} bytes", w.len())
    }
}

/// Parses a loadfile; errors read `NAME:LINE: what is wrong`.
/// That the operation `t[0]` has `n` arguments.
fn arity(t: &[String], n: usize) -> Result<(), WordError> {
    if t.len() - 1 == n {
        return Ok(());
    }
    Err(WordError::Arity {
        op: t[0].clone(),
        want: n,
        got: t.len() - 1,
    })
}

/// One line's operation and its arguments (`t`: the tokens before the
/// status); `e` places a message at the line.
fn parse_op(t: &[String], e: &dyn Fn(String) -> crate::LineError) -> Result<Op, crate::LineError> {
    let want = |n: usize| arity(t, n).map_err(|w| e(w.to_string()));
    let n = |k: usize| num(&t[k]).map_err(|w| e(w.to_string()));
    // Handles, options and dispositions are 32-bit in SMB and in dbench.
    let n32 =
        |k: usize| u32::try_from(n(k)?).map_err(|_| e(format!("{} does not fit in 32 bits", t[k])));
    Ok(match t[0].as_str() {
        "NTCreateX" => {
            want(4)?;
            Op::NtCreateX {
                path: LoadPath::new(&t[1]),
                options: n32(2)?,
                disposition: n32(3)?,
                fnum: n32(4)?,
            }
        }
        "Close" => {
            want(1)?;
            Op::Close { fnum: n32(1)? }
        }
        "Rename" => {
            want(2)?;
            Op::Rename {
                from: LoadPath::new(&t[1]),
                to: LoadPath::new(&t[2]),
            }
        }
        "Unlink" => {
            want(2)?;
            Op::Unlink {
                path: LoadPath::new(&t[1]),
            }
        }
        "Deltree" => {
            want(1)?;
            Op::Deltree {
                path: LoadPath::new(&t[1]),
            }
        }
        "Rmdir" => {
            want(1)?;
            Op::Rmdir {
                path: LoadPath::new(&t[1]),
            }
        }
        "Mkdir" => {
            want(1)?;
            Op::Mkdir {
                path: LoadPath::new(&t[1]),
            }
        }
        "QUERY_PATH_INFORMATION" => {
            want(2)?;
            Op::QueryPath {
                path: LoadPath::new(&t[1]),
            }
        }
        "QUERY_FILE_INFORMATION" => {
            want(2)?;
            Op::QueryFile { fnum: n32(1)? }
        }
        "QUERY_FS_INFORMATION" => {
            want(1)?;
            Op::QueryFs
        }
        "SET_FILE_INFORMATION" => {
            want(2)?;
            Op::SetFileInfo { fnum: n32(1)? }
        }
        "FIND_FIRST" => {
            want(4)?;
            Op::FindFirst {
                pattern: LoadPath::new(&t[1]),
                max: n(3)?,
            }
        }
        "WriteX" => {
            want(4)?;
            Op::WriteX {
                fnum: n32(1)?,
                offset: n(2)?,
                size: n(3)?,
            }
        }
        "ReadX" => {
            want(4)?;
            Op::ReadX {
                fnum: n32(1)?,
                offset: n(2)?,
                size: n(3)?,
            }
        }
        "LockX" => {
            want(3)?;
            Op::LockX {
                fnum: n32(1)?,
                offset: n(2)?,
                size: n(3)?,
            }
        }
        "UnlockX" => {
            want(3)?;
            Op::UnlockX {
                fnum: n32(1)?,
                offset: n(2)?,
                size: n(3)?,
            }
        }
        "Flush" => {
            want(1)?;
            Op::Flush { fnum: n32(1)? }
        }
        other => return Err(e(format!("unknown operation {}", shown(other)))),
    })
}

pub fn parse(name: &str, text: &str) -> Result<Vec<Line>, crate::LineError> {
    let at = |line: usize, why: String| crate::LineError {
        file: name.into(),
        line,
        why,
    };
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let number = i + 1;
        let e = |m: String| at(number, m);
        let l = raw.trim();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        let mut t = tokens(l).map_err(|w| e(w.to_string()))?;
        if t.first().is_some_and(|f| f.parse::<f64>().is_ok()) {
            t.remove(0); // a timed loadfile's timestamp
        }
        if t.len() < 2 {
            return Err(e("not an operation followed by its status".into()));
        }
        let status = t.pop().expect("two or more");
        if !status.starts_with("NT_STATUS_") {
            return Err(e(format!(
                "{} is not an NT status (like NT_STATUS_OK)",
                shown(&status)
            )));
        }
        let op = parse_op(&t, &e)?;
        out.push(Line { number, op, status });
    }
    if out.is_empty() {
        return Err(at(0, "no operations".into()));
    }
    Ok(out)
}

/// fslab's default loadfile, from a model of a file-server session (fixed
/// seed, so it is the same everywhere):
///
/// 1. the client clears and makes its directory tree (`~dmtmp\PROJ0..7`);
/// 2. 24 documents are written: created (`NTCreateX` open-if), written in
///    64 KiB `WriteX` calls up to a size drawn from an office-document
///    distribution (4 KiB to 2 MiB, mostly small), queried and closed;
/// 3. 40 working sessions each open a document, read it in 4 KiB `ReadX`
///    calls, look it up (`QUERY_PATH_INFORMATION`, `FIND_FIRST` of its
///    directory, a miss for a backup name), lock and unlock a range, then
///    save it the way office programs do: write a temporary file, flush it,
///    rename the document to a backup name, rename the temporary over the
///    document, unlink the backup;
/// 4. the client removes its tree (`Deltree`).
///
/// Every expected status follows from the model's own namespace.
pub fn model() -> String {
    let mut s = String::from("# fslab's file-server model loadfile (see fslab dbench --help)\n");
    let mut rng = fslab_stats::rng::XorShift64(0x5eed);
    let mut next = |m: u64| rng.below(m);
    let base = r"\clients\client1";
    let _ = writeln!(s, r#"Deltree "{base}" NT_STATUS_OK"#);
    let _ = writeln!(s, r#"Mkdir "\clients" NT_STATUS_OK"#);
    let mut fnum = 1000u32;
    let mkdir = |s: &mut String, path: &str, fnum: &mut u32| {
        let _ = writeln!(s, r#"NTCreateX "{path}" 0x1 0x2 {fnum} NT_STATUS_OK"#);
        let _ = writeln!(s, "Close {fnum} NT_STATUS_OK");
        *fnum += 1;
    };
    mkdir(&mut s, base, &mut fnum);
    mkdir(&mut s, &format!(r"{base}\~dmtmp"), &mut fnum);
    for p in 0..8 {
        mkdir(&mut s, &format!(r"{base}\~dmtmp\PROJ{p}"), &mut fnum);
    }
    let _ = writeln!(s, "QUERY_FS_INFORMATION 1 NT_STATUS_OK");
    // Office document sizes: mostly small, some large.
    let sizes = [
        4096u64, 8192, 16384, 24576, 40960, 65536, 98304, 131072, 262144, 524288, 1048576, 2097152,
    ];
    let mut docs = Vec::new();
    for d in 0..24 {
        let path = format!(r"{base}\~dmtmp\PROJ{}\DOC{d:03}.DOC", d % 8);
        let size = sizes[(next(100) * next(100) / 1000) as usize % sizes.len()];
        let f = fnum;
        fnum += 1;
        let _ = writeln!(s, r#"NTCreateX "{path}" 0x40 0x5 {f} NT_STATUS_OK"#);
        let mut off = 0;
        while off < size {
            let n = (size - off).min(65536);
            let _ = writeln!(s, "WriteX {f} {off} {n} {n} NT_STATUS_OK");
            off += n;
        }
        let _ = writeln!(s, "QUERY_FILE_INFORMATION {f} 1004 NT_STATUS_OK");
        let _ = writeln!(s, "Close {f} NT_STATUS_OK");
        docs.push((path, size));
    }
    for k in 0..40 {
        let (path, size) = docs[next(docs.len() as u64) as usize].clone();
        let dir = &path[..path.rfind('\\').expect("has a directory")];
        let f = fnum;
        fnum += 1;
        let _ = writeln!(s, r#"QUERY_PATH_INFORMATION "{path}" 1004 NT_STATUS_OK"#);
        let _ = writeln!(s, r#"FIND_FIRST "{dir}\*" 260 1366 0 NT_STATUS_OK"#);
        let _ = writeln!(
            s,
            r#"QUERY_PATH_INFORMATION "{path}.BAK" 1004 NT_STATUS_OBJECT_NAME_NOT_FOUND"#
        );
        let _ = writeln!(s, r#"NTCreateX "{path}" 0x40 0x1 {f} NT_STATUS_OK"#);
        let _ = writeln!(s, "LockX {f} 2147483538 1 NT_STATUS_OK");
        let mut off = 0;
        while off < size {
            let _ = writeln!(s, "ReadX {f} {off} 4096 4096 NT_STATUS_OK");
            off += 4096;
        }
        let _ = writeln!(s, "UnlockX {f} 2147483538 1 NT_STATUS_OK");
        let _ = writeln!(s, "Close {f} NT_STATUS_OK");
        let tmp = format!(r"{dir}\~WRL{k:04}.TMP");
        let t = fnum;
        fnum += 1;
        let _ = writeln!(s, r#"NTCreateX "{tmp}" 0x40 0x2 {t} NT_STATUS_OK"#);
        let mut off = 0;
        while off < size {
            let n = (size - off).min(65536);
            let _ = writeln!(s, "WriteX {t} {off} {n} {n} NT_STATUS_OK");
            off += n;
        }
        let _ = writeln!(s, "Flush {t} NT_STATUS_OK");
        let _ = writeln!(s, "SET_FILE_INFORMATION {t} 1004 NT_STATUS_OK");
        let _ = writeln!(s, "Close {t} NT_STATUS_OK");
        let _ = writeln!(s, r#"Rename "{path}" "{path}.BAK" NT_STATUS_OK"#);
        let _ = writeln!(s, r#"Rename "{tmp}" "{path}" NT_STATUS_OK"#);
        let _ = writeln!(s, r#"Unlink "{path}.BAK" 0x6 NT_STATUS_OK"#);
        let _ = writeln!(s, r#"Unlink "{tmp}" 0x6 NT_STATUS_OBJECT_NAME_NOT_FOUND"#);
    }
    let _ = writeln!(
        s,
        r#"FIND_FIRST "{base}\~dmtmp\PROJ0\*.XYZ" 260 1366 0 NT_STATUS_NO_SUCH_FILE"#
    );
    let _ = writeln!(s, r#"Deltree "{base}" NT_STATUS_OK"#);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_is_placed_under_a_clients_directory() {
        let p = LoadPath::new(r"\clients\client1\~dmtmp\WORD\CHAP10.DOC");
        let mut out = std::ffi::OsString::from("left over");
        p.place(std::ffi::OsStr::new("/mnt/t"), "client12", &mut out);
        assert_eq!(out, "/mnt/t/clients/client12/~dmtmp/WORD/CHAP10.DOC");
        LoadPath::new(r"\clients\client1").place(std::ffi::OsStr::new("d"), "client3", &mut out);
        assert_eq!(out, "d/clients/client3");
        LoadPath::new(r"\x.txt").place(std::ffi::OsStr::new("d"), "client3", &mut out);
        assert_eq!(out, "d/x.txt");
    }

    #[test]
    fn the_model_parses_and_covers_the_common_operations() {
        let l = parse("model", &model()).unwrap();
        assert!(l.len() > 1000);
        for name in [
            "NTCreateX",
            "Close",
            "Rename",
            "Unlink",
            "Deltree",
            "Qpathinfo",
            "Qfileinfo",
            "Qfsinfo",
            "Sfileinfo",
            "Find",
            "WriteX",
            "ReadX",
            "LockX",
            "UnlockX",
            "Flush",
        ] {
            assert!(l.iter().any(|x| x.op.name() == name), "{name}");
        }
    }

    #[test]
    fn errors_name_the_line() {
        let frob = parse("f", "Close 1 NT_STATUS_OK\nFrob 1 NT_STATUS_OK\n").unwrap_err();
        assert_eq!(frob.to_string(), "f:2: unknown operation \"Frob\"");
        assert_eq!((frob.file.as_str(), frob.line), ("f", 2));
        assert!(parse("f", "Close NT_STATUS_OK\n")
            .unwrap_err()
            .to_string()
            .starts_with("f:1: Close takes 1 arguments"));
        assert!(parse("f", "Close 1 OK\n")
            .unwrap_err()
            .to_string()
            .contains("not an NT status"));
        assert_eq!(
            parse("f", "Close 0x100000001 NT_STATUS_OK\n")
                .unwrap_err()
                .to_string(),
            "f:1: 0x100000001 does not fit in 32 bits",
            "a handle is never silently truncated"
        );
        assert!(parse("f", "NTCreateX \"a 0x1 0x2 3 NT_STATUS_OK\n")
            .unwrap_err()
            .to_string()
            .contains("not closed"));
        assert_eq!(
            parse("f", "0.5 Close 7 NT_STATUS_OK\n").unwrap()[0].op,
            Op::Close { fnum: 7 }
        );
    }
}
