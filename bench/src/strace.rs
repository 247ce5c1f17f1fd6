//! Reading `strace -f -y -qq` logs: the filesystem calls a tool made, by
//! name or by kind, for the parity benchmark and the parity tests.

use std::collections::BTreeMap;

/// How calls are counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum By {
    /// By system call name, as strace prints it.
    Name,
    /// By kind ([`kind`]): the `*at` spellings and the stat family as one,
    /// as the filesystem sees them.
    Kind,
}

/// A system call's kind: `newfstatat`, `statx` and the rest are `stat`;
/// `unlinkat` is `rmdir` with `AT_REMOVEDIR`, else `unlink`; `mkdirat` is
/// `mkdir`, `renameat2` `rename`, `creat` and `open` are `openat`.
pub fn kind<'a>(name: &'a str, line: &str) -> &'a str {
    match name {
        "newfstatat" | "fstat" | "statx" | "stat" | "lstat" => "stat",
        "mkdirat" => "mkdir",
        "unlinkat" if line.contains("AT_REMOVEDIR") => "rmdir",
        "unlinkat" => "unlink",
        "renameat" | "renameat2" => "rename",
        "creat" | "open" => "openat",
        other => other,
    }
}

/// The call a line of the log records ("PID  name(args..."; a call strace
/// shows `<unfinished ...>` starts the same way), or None for anything else
/// (resumptions, signals, exits).
pub fn call_of(line: &str) -> Option<&str> {
    let rest = line
        .split_once(char::is_whitespace)
        .map(|x| x.1)
        .unwrap_or(line)
        .trim_start();
    let (name, _) = rest.split_once('(')?;
    (!name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'))
        .then_some(name)
}

/// What a log holds: per name or kind, the calls whose line mentions
/// `marker` (a path: `-y` prints each descriptor's path, so a tool's own
/// bookkeeping elsewhere is left out); and the number of `kill` calls
/// wherever they went (dbench checks its parent once per loadfile line).
/// `fcntl(F_GETFD)` is left out: a debug build's check on closing a
/// descriptor, the descriptor table's call, not the filesystem's.
pub fn count(log: &str, marker: &str, by: By) -> (BTreeMap<String, u64>, u64) {
    let (mut counts, mut kills) = (BTreeMap::new(), 0);
    for line in log.lines() {
        let Some(name) = call_of(line) else {
            continue;
        };
        if name == "kill" {
            kills += 1;
        } else if line.contains(marker) && !(name == "fcntl" && line.contains("F_GETFD")) {
            let key = match by {
                By::Name => name,
                By::Kind => kind(name, line),
            };
            *counts.entry(key.to_string()).or_insert(0) += 1;
        }
    }
    (counts, kills)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_are_counted_under_the_marker_by_name_or_kind() {
        let log = "\
123   openat(AT_FDCWD</w>, \"/w/f\", O_RDWR|O_CREAT, 0644) = 3</w/f>
123   newfstatat(3</w/f>, \"\", {st_mode=S_IFREG}, AT_EMPTY_PATH) = 0
124   unlinkat(AT_FDCWD</w>, \"/w/d\", AT_REMOVEDIR) = 0
124   unlinkat(AT_FDCWD</w>, \"/w/f\", 0) = 0
124   kill(122, 0) = 0
124   fcntl(3</w/f>, F_GETFD) = 0x1 (flags FD_CLOEXEC)
123   openat(AT_FDCWD</db>, \"/db/results.sqlite\", O_RDWR) = 4</db/results.sqlite>
123   +++ exited with 0 +++
124   <... write resumed>) = 4096
";
        let (names, kills) = count(log, "/w", By::Name);
        assert_eq!(kills, 1);
        assert_eq!(
            names.into_iter().collect::<Vec<_>>(),
            [
                ("newfstatat".to_string(), 1),
                ("openat".to_string(), 1),
                ("unlinkat".to_string(), 2)
            ]
        );
        let (kinds, _) = count(log, "/w", By::Kind);
        assert_eq!(
            kinds.into_iter().collect::<Vec<_>>(),
            [
                ("openat".to_string(), 1),
                ("rmdir".to_string(), 1),
                ("stat".to_string(), 1),
                ("unlink".to_string(), 1)
            ]
        );
    }
}
