//! File fragmentation through FIEMAP: exact extent counts (the kernel's
//! records, never merged as filefrag merges them), filefrag-style output,
//! and the compact extent map kept for the backing image.

use std::fmt::Write as _;
use std::os::fd::AsFd;
use std::path::Path;

use fslab_sys::fiemap::{fiemap, Extent, FLAG_SYNC};

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

/// The smallest number of extents a file of `size` bytes could have on a
/// filesystem of statfs type `magic` (the "perfection would be" of
/// seed 002): ext2/3/4 cannot put more than one block group (32768
/// blocks) in an extent, btrfs 128 MiB, XFS 2^21 blocks.
pub fn perfect(size: u64, block: u64, magic: u32) -> u64 {
    let max = match magic {
        0xEF53 => 8 * block * block,
        0x9123_683E => 128 << 20,
        0x5846_5342 => (1 << 21) * block,
        _ => u64::MAX,
    };
    size.div_ceil(max.max(1)).max(1)
}

/// filefrag's report of one file, fslab style: the verbose table with
/// `-v`, and `FILE: N extents found, perfection would be M extents`.
pub fn report(path: &Path, verbose: bool) -> std::io::Result<String> {
    let meta = std::fs::metadata(path)?;
    let fs = rustix::fs::statfs(path).map_err(std::io::Error::from)?;
    let block = fs.f_bsize as u64;
    let magic = fs.f_type as u32;
    let ext = extents(path, true)?;
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
    let n = ext.len();
    let best = perfect(meta.len(), block, magic);
    let _ = writeln!(
        s,
        "{name}: {n} extent{} found, perfection would be {best} extent{}",
        if n == 1 { "" } else { "s" },
        if best == 1 { "" } else { "s" }
    );
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
    fn perfection_counts_block_groups_on_ext4() {
        assert_eq!(perfect(1 << 30, 4096, 0xEF53), 8);
        assert_eq!(perfect(100, 4096, 0xEF53), 1);
        assert_eq!(perfect(1 << 30, 4096, 0x0102_1994), 1);
    }
}
