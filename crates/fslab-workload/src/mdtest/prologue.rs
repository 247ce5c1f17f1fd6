//! What an mdtest run does and prints before its iterations, on rank 0
//! mostly: mdtest's header, the -d directory made, the -x count read, the
//! Path and FS lines.

use std::io::Write;
use std::path::Path;

use fslab_cluster::Cluster;
use rustix::fs::{Access, Mode, CWD};

use super::options::Options;
use super::tree::read_count;

pub(super) fn timestamp() -> String {
    chrono::Local::now().format("%m/%d/%Y %T").to_string()
}

pub(super) fn mkdir(p: &Path) -> crate::Result<()> {
    rustix::fs::mkdirat(CWD, p, Mode::from_raw_mode(0o775)).map_err(|e| {
        crate::Error::Setup(format!(
            "cannot create {}: {}",
            p.display(),
            std::io::Error::from(e)
        ))
    })
}

/// mdtest's header, on rank 0.
fn header(o: &Options, argv: &[String], hosts: &[String], out: &mut dyn Write) {
    let nodes: std::collections::BTreeSet<&String> = hosts.iter().collect();
    let _ = writeln!(out, "-- started at {} --\n", timestamp());
    let _ = writeln!(
        out,
        "fslab-mdtest-{} was launched with {} total task(s) on {} node(s)",
        env!("CARGO_PKG_VERSION"),
        hosts.len(),
        nodes.len()
    );
    let quoted: Vec<String> = argv.iter().skip(1).map(|a| format!("'{a}'")).collect();
    let _ = writeln!(
        out,
        "Command line used: {} {}",
        argv.first().map_or("fslab", String::as_str),
        quoted.join(" ")
    );
    if o.read && o.read_bytes == 0 {
        let _ = writeln!(
            out,
            "WARNING: Read bytes is 0, thus, a read test will actually just open/close"
        );
    }
    if let Some(w) = unkept_stonewall(o) {
        let _ = writeln!(out, "WARNING: {w}");
    }
    let map: String = hosts
        .iter()
        .map(|h| if *h == hosts[0] { '1' } else { '0' })
        .collect();
    let _ = writeln!(out, "Nodemap: {map}");
}

/// A stonewalled create run alone (-W with -C, no stat, read or remove)
/// without -x: what a later run of the other phases will not know.
pub(crate) fn unkept_stonewall(o: &Options) -> Option<String> {
    (o.stonewall_s > 0 && o.create && !(o.stat || o.read || o.remove) && o.stonewall_file.is_none())
        .then(|| {
            format!(
                "-W {} with -C alone and no -x FILE: a later stat, read or remove run cannot know \
             how many items this one created (keep the agreed count with -x FILE)",
                o.stonewall_s
            )
        })
}

/// mdtest's "Path" and "FS" lines: the filesystem's size and use.
fn fs_lines(dir: &Path, out: &mut dyn Write) {
    let Ok(s) = rustix::fs::statfs(dir) else {
        return;
    };
    let total = s.f_blocks as f64 * s.f_bsize as f64;
    let free = s.f_bfree as f64 * s.f_bsize as f64;
    let (size, unit) = if total / f64::from(1u32 << 30) > 1024.0 {
        (total / (1u64 << 40) as f64, "TiB")
    } else {
        (total / f64::from(1u32 << 30), "GiB")
    };
    let used = (1.0 - free / total) * 100.0;
    let inodes = s.f_files as f64;
    let used_inodes = (1.0 - s.f_ffree as f64 / inodes) * 100.0;
    let _ = writeln!(out, "{:<20}: {}", "Path", dir.display());
    let _ = writeln!(
        out,
        "{:<20}: {size:.1} {unit}   Used FS: {used:2.1}%   Inodes: {:.1} Mi   Used Inodes: {used_inodes:2.1}%",
        "FS",
        inodes / f64::from(1u32 << 20)
    );
}

/// Every rank's host name, on rank 0 (rank order); empty elsewhere.
fn hosts(c: &dyn Cluster) -> Vec<String> {
    let (_, me) = fslab_model::host_facts();
    c.gather(me.as_bytes())
        .map(|all| {
            all.iter()
                .map(|h| String::from_utf8_lossy(h).into_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// The -x count for a run that does not create: rank 0 reads it and every
/// rank learns it (a maximum over ranks that add 0).
fn stonewall_count(o: &Options, c: &dyn Cluster) -> crate::Result<Option<u64>> {
    let Some(x) = o.stonewall_file.as_ref().filter(|_| !o.create) else {
        return Ok(None);
    };
    let mine = if c.rank() == 0 { read_count(x) } else { Ok(0) };
    let shared = c.max(mine.as_ref().map_or(0, |n| n + 1));
    match (shared, mine) {
        (0, Err(e)) => Err(e),
        (0, Ok(_)) => Err(crate::Error::Options(format!(
            "-x {}: rank 0 could not read it",
            x.display()
        ))),
        (n, _) => Ok(Some(n - 1)),
    }
}

/// What a run finds before it records anything: whether rank 0 made the
/// -d directory, and the items the phases work on (the -x count when the
/// run does not create).
pub(super) struct Prologue {
    pub made_root: bool,
    pub items: u64,
}

/// mdtest's header, -d made, the -x count read, the Path and FS lines.
pub(super) fn prologue(
    o: &Options,
    argv: &[String],
    c: &dyn Cluster,
    out: &mut dyn Write,
) -> crate::Result<Prologue> {
    let hosts = hosts(c);
    let rank0 = c.rank() == 0;
    if rank0 {
        header(o, argv, &hosts, out);
    }
    let made_root = rank0 && rustix::fs::access(&o.dir, Access::EXISTS).is_err();
    let root = if made_root { mkdir(&o.dir) } else { Ok(()) };
    // Every rank learns whether rank 0 could make the directory.
    if c.sum(u64::from(root.is_err())) > 0 {
        return Err(root.err().unwrap_or_else(|| {
            crate::Error::Setup(format!("rank 0 could not create {}", o.dir.display()))
        }));
    }
    let items = stonewall_count(o, c)?.unwrap_or(o.items);
    if rank0 {
        fs_lines(&o.dir, out);
        let all = c.size() as u64 * items;
        let what = match (o.files, o.dirs) {
            (true, true) => "files/directories",
            (true, false) => "files",
            _ => "directories",
        };
        let _ = writeln!(out, "{} tasks, {all} {what}", c.size());
    }
    Ok(Prologue { made_root, items })
}
