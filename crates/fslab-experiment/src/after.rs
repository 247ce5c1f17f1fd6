//! What `fslab run` measures on a cell's filesystem after its workload,
//! still mounted, when the experiment's findings read it (a walk of the
//! workload's tree costs time, so it is made only then):
//! - `xattrs in blocks`, `xattrs inline`: the workload's files with
//!   extended attributes, by where ext4 keeps them (FIEMAP's
//!   `FIEMAP_FLAG_XATTR`: in the inode, or in a block of their own); seed
//!   001's dbench claim rests on it;
//! - `htree directory size`: the size (bytes) of the directory the workload
//!   filled (its leaf and index blocks); seed 004's bytes per name.

use std::path::Path;

use fslab_model::{Better, Metric, Unit};

use crate::spec::Experiment;

/// The source and names of the xattr counts.
pub const XATTRS: &str = "xattrs";
pub const IN_BLOCKS: &str = "in blocks";
pub const INLINE: &str = "inline";
/// The filled directory's size (bytes), under the htree source.
pub const DIRECTORY_BYTES: &str = "directory size";

/// The metrics the experiment's findings read, measured in `mnt` (and in
/// `filled`, the directory the workload filled, if it has one).
pub fn measured(exp: &Experiment, filled: Option<&Path>, mnt: &Path) -> Vec<Metric> {
    let reads = |name: &str| exp.findings.iter().any(|f| f.reads(name));
    let mut out = Vec::new();
    if reads(XATTRS) {
        let (block, inline) = xattr_places(mnt);
        let m = |name: &str, n: u64| {
            Metric::new(XATTRS, None, name, n as f64, Unit::Count, Better::Neither)
        };
        out.push(m(IN_BLOCKS, block));
        out.push(m(INLINE, inline));
    }
    if reads(DIRECTORY_BYTES) {
        if let Some(dir) = filled {
            if let Ok(md) = std::fs::metadata(dir) {
                out.push(Metric::new(
                    crate::backend::HTREE_SOURCE,
                    None,
                    DIRECTORY_BYTES,
                    md.len() as f64,
                    Unit::Bytes,
                    Better::Neither,
                ));
            }
        }
    }
    out
}

/// How many regular files under `dir` keep their extended attributes in a
/// block of their own, and how many in the inode.
pub fn xattr_places(dir: &Path) -> (u64, u64) {
    let (mut block, mut inline) = (0, 0);
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let Ok(t) = e.file_type() else { continue };
            if t.is_dir() {
                stack.push(e.path());
            } else if t.is_file() {
                match fslab_probe::frag::xattrs_in_block(&e.path()) {
                    Ok(Some(true)) => block += 1,
                    Ok(Some(false)) => inline += 1,
                    _ => {}
                }
            }
        }
    }
    (block, inline)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ext4 with 128-byte inodes has no room in the inode for an xattr: it
    /// goes to a block of its own; with 256-byte inodes dbench's 44-byte
    /// DosAttrib stays inline. Needs root (mkfs and mount).
    #[test]
    fn an_xattr_is_found_inline_or_in_a_block_as_the_inode_size_leaves_room() {
        if !rustix::process::geteuid().is_root() {
            assert_ne!(
                std::env::var("CI").as_deref(),
                Ok("true"),
                "needs root under CI"
            );
            return;
        }
        for (isize, want) in [("128", (3, 0)), ("256", (0, 3))] {
            let dir = tempfile::tempdir().unwrap();
            let img = dir.path().join("img");
            std::fs::File::create(&img)
                .unwrap()
                .set_len(64 << 20)
                .unwrap();
            let ok = std::process::Command::new("mkfs.ext4")
                .args(["-q", "-F", "-I", isize])
                .arg(&img)
                .status()
                .unwrap();
            assert!(ok.success());
            let mnt = dir.path().join("mnt");
            std::fs::create_dir(&mnt).unwrap();
            let lo = fslab_lab::loopdev::LoopDevice::attach(&img, false).unwrap();
            let m = fslab_lab::mount::Mount::mount(lo.path(), &mnt, "ext4", "").unwrap();
            for i in 0..3 {
                let f = mnt.join(format!("f{i}"));
                std::fs::write(&f, b"x").unwrap();
                // dbench's user.DosAttrib: 44 bytes.
                let py = format!(
                    "import os; os.setxattr({:?}, 'user.DosAttrib', b'x' * 44)",
                    f.display().to_string()
                );
                let ok = std::process::Command::new("python3")
                    .args(["-c", &py])
                    .status()
                    .unwrap();
                assert!(ok.success());
            }
            std::fs::write(mnt.join("plain"), b"no xattr").unwrap();
            assert_eq!(xattr_places(&mnt), want, "-I {isize}");
            m.unmount().unwrap();
            lo.detach().unwrap();
        }
    }
}
