//! What a device or file already holds, so fslab refuses to format it.
//!
//! Checks the on-disk magic numbers of the filesystems and partition tables
//! fslab can meet, then, for anything else, whether the first MiB holds any
//! non-zero byte. `blkid -p` would know more types; this needs no tool.

use std::io::Read;
use std::path::Path;

/// (offset, magic, what it means)
const MAGICS: &[(u64, &[u8], &str)] = &[
    (1080, &[0x53, 0xEF], "an ext2/ext3/ext4 filesystem"),
    (0, b"XFSB", "an XFS filesystem"),
    (65600, b"_BHRfS_M", "a btrfs filesystem"),
    (512, b"EFI PART", "a GPT partition table"),
    (4086, b"SWAPSPACE2", "a swap area"),
    (4086, b"SWAP-SPACE", "a swap area"),
    (0, b"\x28\xb5\x2f\xfd", "zstd data"),
    (32769, b"CD001", "an ISO 9660 filesystem"),
    (1024, b"\x10\x20\xf5\xf2", "an F2FS filesystem"),
    (0, b"hsqs", "a squashfs filesystem"),
    (3, b"NTFS    ", "an NTFS filesystem"),
    (54, b"FAT1", "a FAT filesystem"),
    (82, b"FAT32   ", "a FAT filesystem"),
    (510, b"\x55\xAA", "a DOS partition table or boot sector"),
];

/// Describes what `path` holds, or None when its first 64 KiB + 1 MiB are
/// all zero (a fresh sparse image or a wiped device).
pub fn probe(path: &Path) -> std::io::Result<Option<String>> {
    let mut f = std::fs::File::open(path)?;
    let mut buf = vec![0u8; 1 << 20];
    let mut n = 0;
    while n < buf.len() {
        match f.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    let head = &buf[..n];
    for (off, magic, what) in MAGICS {
        let o = *off as usize;
        if head.len() >= o + magic.len() && &head[o..o + magic.len()] == *magic {
            return Ok(Some(what.to_string()));
        }
    }
    if let Some(i) = head.iter().position(|&b| b != 0) {
        return Ok(Some(format!("data (a non-zero byte at offset {i})")));
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zeros_are_empty_and_magics_are_named() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("img");
        std::fs::write(&p, vec![0u8; 70000]).unwrap();
        assert_eq!(probe(&p).unwrap(), None);
        let mut v = vec![0u8; 70000];
        v[1080] = 0x53;
        v[1081] = 0xEF;
        std::fs::write(&p, &v).unwrap();
        assert_eq!(probe(&p).unwrap().unwrap(), "an ext2/ext3/ext4 filesystem");
        v[1080] = 0;
        v[1081] = 0;
        v[12345] = 7;
        std::fs::write(&p, &v).unwrap();
        assert!(probe(&p).unwrap().unwrap().contains("12345"));
    }
}
