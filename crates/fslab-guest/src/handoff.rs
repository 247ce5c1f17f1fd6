//! The guest's results, handed back on a raw virtual disk of their own:
//! the guest writes a few named files one after another onto the whole
//! device (`FSLABOUT`, a count, then per file its name and bytes), and the
//! host reads them from the disk's image once the guest is gone.
//!
//! Why a raw disk: the host mounts nothing and shares nothing writable
//! with the guest (a results store written over virtiofs would share
//! SQLite's locks across the VM boundary), the size is bounded by the
//! disk, and a guest that dies before it writes leaves a disk of zeros,
//! which reads as "nothing handed back" rather than half a store.

use std::io::{Read, Write};
use std::path::Path;

use crate::GuestError;

const MAGIC: &[u8; 8] = b"FSLABOUT";

/// The files handed back: (name, bytes), in the order written.
pub type Files = Vec<(String, Vec<u8>)>;

/// Writes `files` (name, bytes) onto `dev` from its first byte.
pub fn write(dev: &Path, files: &[(&str, &[u8])]) -> Result<(), GuestError> {
    let mut buf = Vec::new();
    buf.extend_from_slice(MAGIC);
    buf.extend_from_slice(&(files.len() as u32).to_le_bytes());
    for (name, bytes) in files {
        buf.extend_from_slice(&(name.len() as u32).to_le_bytes());
        buf.extend_from_slice(name.as_bytes());
        buf.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
        buf.extend_from_slice(bytes);
    }
    // Whole sectors, so a block device takes the last write.
    buf.resize(buf.len().div_ceil(4096) * 4096, 0);
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .open(dev)
        .map_err(|e| GuestError::io(dev, e))?;
    let cap = f
        .seek(std::io::SeekFrom::End(0))
        .map_err(|e| GuestError::io(dev, e))?;
    if cap > 0 && buf.len() as u64 > cap {
        return Err(GuestError::Handoff(format!(
            "{} bytes of results do not fit on {} ({cap} bytes)",
            buf.len(),
            dev.display()
        )));
    }
    f.seek(std::io::SeekFrom::Start(0))
        .and_then(|_| f.write_all(&buf))
        .and_then(|()| f.sync_all())
        .map_err(|e| GuestError::io(dev, e))
}

use std::io::Seek;

/// The files on the disk image `path`; None when the guest wrote nothing.
pub fn read(path: &Path) -> Result<Option<Files>, GuestError> {
    let mut f = std::fs::File::open(path).map_err(|e| GuestError::io(path, e))?;
    let mut head = [0u8; 12];
    if f.read_exact(&mut head).is_err() || &head[..8] != MAGIC {
        return Ok(None);
    }
    let bad = |what: &str| GuestError::Handoff(format!("{}: {what}", path.display()));
    let count = u32::from_le_bytes(head[8..12].try_into().expect("4 bytes"));
    let len = f.metadata().map_err(|e| GuestError::io(path, e))?.len();
    let mut out = Vec::new();
    for _ in 0..count {
        let mut n = [0u8; 4];
        f.read_exact(&mut n).map_err(|_| bad("cut short"))?;
        let n = u32::from_le_bytes(n) as usize;
        if n > 4096 {
            return Err(bad("a file name longer than 4096 bytes"));
        }
        let mut name = vec![0u8; n];
        f.read_exact(&mut name).map_err(|_| bad("cut short"))?;
        let mut size = [0u8; 8];
        f.read_exact(&mut size).map_err(|_| bad("cut short"))?;
        let size = u64::from_le_bytes(size);
        if size > len {
            return Err(bad("a file larger than the disk"));
        }
        let mut bytes = vec![0u8; size as usize];
        f.read_exact(&mut bytes).map_err(|_| bad("cut short"))?;
        out.push((String::from_utf8_lossy(&name).into_owned(), bytes));
    }
    Ok(Some(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_written_to_a_disk_read_back_and_zeros_are_nothing() {
        let d = tempfile::tempdir().unwrap();
        let disk = d.path().join("out.img");
        std::fs::File::create(&disk)
            .unwrap()
            .set_len(1 << 20)
            .unwrap();
        assert!(read(&disk).unwrap().is_none(), "a fresh disk holds nothing");
        write(&disk, &[("store", b"SQLite"), ("dmesg", b"[0.0] Linux")]).unwrap();
        let got = read(&disk).unwrap().unwrap();
        assert_eq!(got[0], ("store".to_string(), b"SQLite".to_vec()));
        assert_eq!(got[1].0, "dmesg");
        let big = vec![1u8; 2 << 20];
        let e = write(&disk, &[("store", &big)]).unwrap_err().to_string();
        assert!(e.contains("do not fit"), "{e}");
    }

    #[test]
    fn a_cut_record_is_an_error_not_a_short_file() {
        let d = tempfile::tempdir().unwrap();
        let disk = d.path().join("out.img");
        let mut b = MAGIC.to_vec();
        b.extend_from_slice(&1u32.to_le_bytes());
        b.extend_from_slice(&5u32.to_le_bytes());
        b.extend_from_slice(b"sto");
        std::fs::write(&disk, b).unwrap();
        assert!(read(&disk).is_err());
    }
}
