//! What compilebench does to a tree, call for call: make it from a dataset
//! (`run_directory`), remove a dataset's files (`clean_directory`), remove
//! it (`rmrf`), read it (`read_dirtree`) and stat it (`stat_dirtree`),
//! each walking directories in the filesystem's own (readdir) order as
//! Python's `os.walk` does, and each ending with a sync when syncs are on.

use std::collections::HashSet;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use super::dataset::Dataset;

/// What one operation measured.
#[derive(Debug, Clone, Copy, Default)]
pub struct Took {
    /// Bytes written, removed or read (by the dataset's sizes, or as read).
    pub bytes: u64,
    pub seconds: f64,
    pub usr_s: f64,
    pub sys_s: f64,
}

impl Took {
    /// compilebench's MB/s: MiB over the operation's wall time.
    pub fn mb_per_s(&self) -> f64 {
        self.bytes as f64 / (1u64 << 20) as f64 / self.seconds.max(1e-9)
    }
}

/// Times `f` (wall and this thread's CPU), then syncs when `sync` is set,
/// inside the time, as compilebench's `maybe_sync` is.
pub fn timed(sync: bool, f: impl FnOnce() -> crate::Result<u64>) -> crate::Result<Took> {
    let cpu = fslab_sys::rusage(fslab_sys::Who::Thread).unwrap_or_default();
    let t = Instant::now();
    let bytes = f()?;
    if sync {
        rustix::fs::sync();
    }
    let seconds = t.elapsed().as_secs_f64();
    let used = fslab_sys::rusage(fslab_sys::Who::Thread)
        .unwrap_or_default()
        .since(&cpu);
    Ok(Took {
        bytes,
        seconds,
        usr_s: used.user.as_secs_f64(),
        sys_s: used.system.as_secs_f64(),
    })
}

fn io(what: &str, p: &Path, e: std::io::Error) -> crate::Error {
    crate::Error::io(format!("{what} {}", p.display()), e)
}

/// compilebench's `run_directory`: makes `dir` and, for every file of the
/// dataset in order, its directories (once), then (with `unlink`) removes
/// the file, opens it for appending (`open(..., 'a+')`), with `readfirst`
/// reads it whole and truncates it, and writes its size in `buf`-sized
/// writes. Returns the bytes written.
pub fn run_directory(
    d: &Dataset,
    dir: &Path,
    buf: &[u8],
    unlink: bool,
    readfirst: bool,
) -> crate::Result<u64> {
    let _ = std::fs::create_dir(dir);
    let mut seen: HashSet<&str> = HashSet::new();
    let mut scratch = vec![0u8; buf.len()];
    let mut total = 0;
    for (rel, size) in &d.0 {
        let parent = Path::new(rel)
            .parent()
            .and_then(|p| p.to_str())
            .unwrap_or("");
        if !parent.is_empty() && !seen.contains(parent) {
            let _ = std::fs::create_dir_all(dir.join(parent));
            let mut p = Some(Path::new(parent));
            while let Some(q) = p.and_then(|q| q.to_str()).filter(|q| !q.is_empty()) {
                seen.insert(q);
                p = Path::new(q).parent();
            }
        }
        let path = dir.join(rel);
        if unlink {
            let _ = std::fs::remove_file(&path);
        }
        let mut f = std::fs::OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(&path)
            .map_err(|e| io("open", &path, e))?;
        if readfirst {
            while f.read(&mut scratch).map_err(|e| io("read", &path, e))? > 0 {}
            f.set_len(0).map_err(|e| io("truncate", &path, e))?;
        }
        f.seek(SeekFrom::Start(0))
            .map_err(|e| io("seek", &path, e))?;
        let mut left = *size;
        while left > 0 {
            let n = left.min(buf.len() as u64) as usize;
            f.write_all(&buf[..n]).map_err(|e| io("write", &path, e))?;
            left -= n as u64;
        }
        total += size;
    }
    Ok(total)
}

/// compilebench's `clean_directory`: unlinks every file of the dataset
/// from `dir`; returns their bytes by the dataset.
pub fn clean_directory(d: &Dataset, dir: &Path) -> crate::Result<u64> {
    for (rel, _) in &d.0 {
        let p = dir.join(rel);
        std::fs::remove_file(&p).map_err(|e| io("unlink", &p, e))?;
    }
    Ok(d.bytes())
}

/// Python's `os.walk`: for each directory, its subdirectories and files in
/// readdir order; `top_down` visits a directory before its
/// subdirectories, otherwise after them.
/// What [`walk`] calls for each directory: (the directory, its
/// subdirectories, its other entries).
pub type Visit<'a> = dyn FnMut(&Path, &[PathBuf], &[PathBuf]) -> crate::Result<()> + 'a;

pub fn walk(dir: &Path, top_down: bool, f: &mut Visit) -> crate::Result<()> {
    let (mut dirs, mut files) = (Vec::new(), Vec::new());
    for e in std::fs::read_dir(dir).map_err(|e| io("readdir", dir, e))? {
        let e = e.map_err(|e| io("readdir", dir, e))?;
        let is_dir = e.file_type().map(|t| t.is_dir()).unwrap_or(false);
        if is_dir { &mut dirs } else { &mut files }.push(e.path());
    }
    if top_down {
        f(dir, &dirs, &files)?;
    }
    for d in &dirs {
        walk(d, top_down, f)?;
    }
    if !top_down {
        f(dir, &dirs, &files)?;
    }
    Ok(())
}

/// compilebench's `rmrf`: bottom up, unlink the files and rmdir the
/// subdirectories of every directory; `dir` itself stays, as in
/// compilebench.
pub fn rmrf(dir: &Path) -> crate::Result<u64> {
    walk(dir, false, &mut |_, dirs, files| {
        for f in files {
            std::fs::remove_file(f).map_err(|e| io("unlink", f, e))?;
        }
        for d in dirs {
            std::fs::remove_dir(d).map_err(|e| io("rmdir", d, e))?;
        }
        Ok(())
    })?;
    Ok(0)
}

/// compilebench's `read_dirtree`: top down, every file read whole in
/// `buf_len` reads; returns the bytes read.
pub fn read_dirtree(dir: &Path, buf_len: usize) -> crate::Result<u64> {
    let mut buf = vec![0u8; buf_len];
    let mut total = 0u64;
    walk(dir, true, &mut |_, _, files| {
        for p in files {
            let mut f = std::fs::File::open(p).map_err(|e| io("open", p, e))?;
            loop {
                let n = f.read(&mut buf).map_err(|e| io("read", p, e))?;
                if n == 0 {
                    break;
                }
                total += n as u64;
            }
        }
        Ok(())
    })?;
    Ok(total)
}

/// compilebench's `stat_dirtree`: bottom up, `stat` every file, then every
/// subdirectory.
pub fn stat_dirtree(dir: &Path) -> crate::Result<u64> {
    walk(dir, false, &mut |_, dirs, files| {
        for p in files.iter().chain(dirs) {
            std::fs::metadata(p).map_err(|e| io("stat", p, e))?;
        }
        Ok(())
    })?;
    Ok(0)
}

/// compilebench's `native_order`: the dataset's files in the order the
/// filesystem lists them. It makes the tree in `native-N` (the first
/// free N) in sorted path order, walks it top down, and removes it. The
/// files are made empty: the order depends on names only (compilebench
/// writes their data too).
pub fn native_order(d: &Dataset, bench: &Path) -> crate::Result<Dataset> {
    let mut i = 0;
    let mut root = bench.join("native-0");
    while root.exists() {
        i += 1;
        root = bench.join(format!("native-{i}"));
    }
    let mut sorted = d.clone();
    sorted.0.sort();
    let empty = Dataset(sorted.0.iter().map(|(p, _)| (p.clone(), 0)).collect());
    run_directory(&empty, &root, &[0u8; 1], false, false)?;
    let sizes: std::collections::HashMap<&str, u64> =
        d.0.iter().map(|(p, s)| (p.as_str(), *s)).collect();
    let mut out = Vec::with_capacity(d.0.len());
    walk(&root, true, &mut |_, _, files| {
        for f in files {
            let rel = f
                .strip_prefix(&root)
                .ok()
                .and_then(|r| r.to_str())
                .unwrap_or_default();
            if let Some(s) = sizes.get(rel) {
                out.push((rel.to_string(), *s));
            }
        }
        Ok(())
    })?;
    rmrf(&root)?;
    std::fs::remove_dir(&root).map_err(|e| io("rmdir", &root, e))?;
    Ok(Dataset(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tree_is_made_read_cleaned_and_removed_as_compilebench_does() {
        let t = tempfile::tempdir().unwrap();
        let d = Dataset::parse("t", "a/b/x.c 5000\na/y.h 10\nz 0\n").unwrap();
        let root = t.path().join("kernel-0");
        assert_eq!(
            run_directory(&d, &root, &[b'a'; 4096], false, false).unwrap(),
            5010
        );
        assert_eq!(std::fs::metadata(root.join("a/b/x.c")).unwrap().len(), 5000);
        // A patch reads, truncates and rewrites at the new size.
        let p = Dataset::parse("t", "a/b/x.c 100\n").unwrap();
        run_directory(&p, &root, &[b'a'; 4096], true, true).unwrap();
        assert_eq!(std::fs::metadata(root.join("a/b/x.c")).unwrap().len(), 100);
        assert_eq!(read_dirtree(&root, 4096).unwrap(), 110);
        stat_dirtree(&root).unwrap();
        let native = native_order(&d, t.path()).unwrap();
        assert_eq!(native.0.len(), 3);
        assert!(!t.path().join("native-0").exists());
        clean_directory(&Dataset::parse("t", "a/y.h 10\n").unwrap(), &root).unwrap();
        rmrf(&root).unwrap();
        assert!(
            root.exists(),
            "compilebench's rmrf leaves the top directory"
        );
        assert_eq!(std::fs::read_dir(&root).unwrap().count(), 0);
    }
}
