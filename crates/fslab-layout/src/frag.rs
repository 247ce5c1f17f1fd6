//! File fragmentation through FIEMAP: exact extent counts (the kernel's
//! records, never merged as filefrag merges them), filefrag-style output,
//! and the compact extent map kept for the backing image.

use std::fmt::Write as _;
use std::os::fd::AsFd;
use std::path::Path;

use fslab_sys::fiemap::{fiemap, Extent, EXTENT_DATA_INLINE, FLAG_SYNC, FLAG_XATTR};

/// The extents of `path` (written back first when `sync`).
pub fn extents(path: &Path, sync: bool) -> std::io::Result<Vec<Extent>> {
    let f = std::fs::File::open(path)?;
    let mut v = Vec::new();
    fiemap(f.as_fd(), if sync { FLAG_SYNC } else { 0 }, |e| v.push(*e))?;
    Ok(v)
}

/// The number of extents of `path`, without keeping them.
pub fn count(path: &Path) -> std::io::Result<u64> {
    let f = std::fs::File::open(path)?;
    fiemap(f.as_fd(), 0, |_| {})
}

/// The number of extents of `path`, and of those that start at or past
/// byte `offset` of the file.
pub fn count_past(path: &Path, offset: u64) -> std::io::Result<(u64, u64)> {
    let f = std::fs::File::open(path)?;
    let mut past = 0u64;
    let total = fiemap(f.as_fd(), 0, |e| {
        if e.logical >= offset {
            past += 1;
        }
    })?;
    Ok((total, past))
}

/// Where a file keeps its extended attributes, as FIEMAP's
/// `FIEMAP_FLAG_XATTR` maps them (ext4): in the inode, or in a block of
/// their own. None when it has none (or the filesystem does not say).
pub fn xattrs_in_block(path: &Path) -> std::io::Result<Option<bool>> {
    let f = std::fs::File::open(path)?;
    let mut place = None;
    match fiemap(f.as_fd(), FLAG_XATTR, |e| {
        let block = e.flags & EXTENT_DATA_INLINE == 0;
        place = Some(place.unwrap_or(false) || block);
    }) {
        Ok(_) => Ok(place),
        // No extended attributes, or a filesystem that cannot map them.
        Err(e)
            if e.kind() == std::io::ErrorKind::NotFound
                || e.raw_os_error() == Some(rustix::io::Errno::BADR.raw_os_error()) =>
        {
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// How many extents filefrag (e2fsprogs 1.47) reports for these FIEMAP
/// records: a record starts a new extent unless it continues the previous
/// one physically, either right after it or where the previous one's
/// logical-to-physical offset puts it (a hole between them); the first
/// record (logical 0) never counts twice.
pub fn filefrag_count(ext: &[Extent]) -> u64 {
    let mut total = 0u64;
    let mut last: Option<&Extent> = None;
    for e in ext {
        let continues = last.is_some_and(|l| {
            e.physical == l.physical + l.length
                || e.physical == (l.physical + e.logical).wrapping_sub(l.logical)
        });
        if e.logical != 0 && !continues {
            total += 1;
        } else if total == 0 {
            total = 1;
        }
        last = Some(e);
    }
    total
}

/// The "perfection would be" of filefrag before FIEMAP (e2fsprogs up to
/// 1.41, seed 002's): on ext2/3/4, a file of `blocks` blocks needs one
/// extent per block group's worth of data blocks, a group holding
/// `8 * block_size` blocks less what filefrag takes for its inode table
/// (`inodes per group / 8` blocks) and 3 more:
/// `blocks / (8 * bs - files / 8 / groups - 3) + 1`, where groups is
/// `ceil(fs_blocks / (8 * bs))`. None on other filesystems. (A 1 GiB file
/// on a 4 KiB-block ext3: 9, as in the seed.)
pub fn perfection(
    blocks: u64,
    block_size: u64,
    fs_blocks: u64,
    fs_files: u64,
    magic: u32,
) -> Option<u64> {
    if !matches!(magic, 0xEF51..=0xEF53) || block_size == 0 {
        return None;
    }
    let per_group = 8 * block_size;
    let groups = fs_blocks.div_ceil(per_group).max(1);
    let usable = per_group.checked_sub(fs_files / 8 / groups + 3)?.max(1);
    Some(blocks / usable + 1)
}

/// A file's fragmentation, three ways.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frag {
    /// What filefrag prints ("N extents found"): records merged where
    /// they continue each other physically.
    pub extents: u64,
    /// The kernel's FIEMAP records, exactly.
    pub records: u64,
    /// The seed-era filefrag's "perfection would be" (ext2/3/4 only).
    pub perfection: Option<u64>,
}

impl Frag {
    /// filefrag's line, then fslab's line with the exact record count and
    /// the perfection figure.
    pub fn lines(&self, name: &str) -> String {
        let plural = |n: u64| if n == 1 { "" } else { "s" };
        let mut s = format!(
            "{name}: {} extent{} found\n{name}: {} FIEMAP record{}",
            self.extents,
            plural(self.extents),
            self.records,
            plural(self.records)
        );
        if let Some(p) = self.perfection {
            let _ = write!(s, ", perfection would be {p} extent{}", plural(p));
        }
        s.push('\n');
        s
    }
}

/// The fragmentation of `path`, written back first.
pub fn analyse(path: &Path) -> std::io::Result<(Frag, Vec<Extent>)> {
    let meta = std::fs::metadata(path)?;
    let fs = rustix::fs::statfs(path).map_err(std::io::Error::from)?;
    let block = fs.f_bsize as u64;
    let ext = extents(path, true)?;
    let frag = Frag {
        extents: filefrag_count(&ext),
        records: ext.len() as u64,
        perfection: perfection(
            meta.len().div_ceil(block.max(1)),
            block,
            fs.f_blocks as u64,
            fs.f_files as u64,
            fs.f_type as u32,
        ),
    };
    Ok((frag, ext))
}

/// filefrag's report of one file: the verbose table with `-v`, then
/// filefrag's `FILE: N extents found` and fslab's line with the FIEMAP
/// records and the seed's "perfection would be" (see [`Frag::lines`]).
pub fn report(path: &Path, verbose: bool) -> std::io::Result<String> {
    let meta = std::fs::metadata(path)?;
    let fs = rustix::fs::statfs(path).map_err(std::io::Error::from)?;
    let block = fs.f_bsize as u64;
    let magic = fs.f_type as u32;
    let (frag, ext) = analyse(path)?;
    let mut s = String::new();
    let name = path.display();
    if verbose {
        let _ = writeln!(s, "Filesystem type is: {magic:x}");
        let _ = writeln!(
            s,
            "File size of {name} is {} ({} blocks of {block} bytes)",
            meta.len(),
            meta.len().div_ceil(block)
        );
        let _ = writeln!(
            s,
            " ext:     logical_offset:        physical_offset: length:   expected: flags:"
        );
        let mut expected: Option<u64> = None;
        for (i, e) in ext.iter().enumerate() {
            let (l, p, n) = (
                e.logical / block,
                e.physical / block,
                e.length.div_ceil(block),
            );
            let exp = match expected {
                Some(x) if x != p => format!("{x:>10}:"),
                _ => " ".repeat(11),
            };
            let _ = writeln!(
                s,
                "{i:4}: {l:>10}..{:>10}: {p:>10}..{:>10}: {n:>6}: {exp} {}",
                l + n.saturating_sub(1),
                p + n.saturating_sub(1),
                flag_names(e.flags)
            );
            expected = Some(p + n);
        }
    }
    s.push_str(&frag.lines(&name.to_string()));
    Ok(s)
}

fn flag_names(f: u32) -> String {
    let names = [
        (1, "last"),
        (2, "unknown_loc"),
        (4, "delalloc"),
        (8, "encoded"),
        (0x80, "encrypted"),
        (0x100, "not_aligned"),
        (0x200, "inline"),
        (0x400, "tail"),
        (0x800, "unwritten"),
        (0x1000, "merged"),
        (0x2000, "shared"),
    ];
    let mut v: Vec<&str> = names
        .iter()
        .filter(|(b, _)| f & b != 0)
        .map(|(_, n)| *n)
        .collect();
    if f & 1 != 0 {
        v.push("eof");
    }
    v.join(",")
}

/// A compact extent map: (logical, physical, length) triples, little endian.
pub fn encode_map(ext: &[Extent]) -> Vec<u8> {
    let mut out = Vec::with_capacity(ext.len() * 24);
    for e in ext {
        out.extend_from_slice(&e.logical.to_le_bytes());
        out.extend_from_slice(&e.physical.to_le_bytes());
        out.extend_from_slice(&e.length.to_le_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perfection_is_the_seed_eras_filefrag_figure() {
        // Seed 002: a 1 GiB file on a 4 KiB-block ext3 (8192 inodes per
        // 128 MiB group): "perfection would be 9 extents".
        let groups = 64u64;
        assert_eq!(
            perfection(262_144, 4096, groups * 32768, groups * 8192, 0xEF53),
            Some(9)
        );
        assert_eq!(perfection(1, 4096, 32768, 8192, 0xEF53), Some(1));
        assert_eq!(
            perfection(262_144, 4096, 1 << 21, 1 << 16, 0x5846_5342),
            None,
            "xfs"
        );
    }

    fn ext(logical: u64, physical: u64, length: u64) -> Extent {
        Extent {
            logical,
            physical,
            length,
            flags: 0,
        }
    }

    #[test]
    fn filefrag_merges_records_that_continue_each_other() {
        assert_eq!(filefrag_count(&[]), 0);
        assert_eq!(filefrag_count(&[ext(0, 1000, 10)]), 1);
        // Physically contiguous: one extent (ext4 splits at 128 MiB).
        assert_eq!(filefrag_count(&[ext(0, 1000, 10), ext(10, 1010, 5)]), 1);
        // After a hole, where the offset puts it: still one.
        assert_eq!(filefrag_count(&[ext(0, 1000, 10), ext(20, 1020, 5)]), 1);
        // Elsewhere: two, then three.
        assert_eq!(
            filefrag_count(&[ext(0, 1000, 10), ext(10, 5000, 5), ext(15, 9000, 1)]),
            3
        );
    }
}
