//! The path of a timed loop's item, made in one buffer that is reused item
//! after item: a stem (the directory and the fixed start of the name) set
//! when the directory changes, then per item a number or a name written
//! after it and a NUL, handed to the system call as a `&CStr`, which rustix
//! passes to the kernel as it is (a `&Path` is copied into a C string
//! first, by a function of its own).
//!
//! Why: mdtest's stat loop made each item's path as a `PathBuf` (a
//! `format!` for the name, a `format!` and `join`s for the directories):
//! 3,900 instructions an item under callgrind, against 3,200 for all of
//! hpc/ior's mdtest's own loop and about 1 us for the `stat` itself on
//! tmpfs. Made here, a numbered item's path costs the copy of its digits;
//! a `CStr::from_bytes_with_nul` over the whole path (95 instructions an
//! item) is not needed either, since every byte that enters the buffer is
//! checked for NUL as it enters (stems once, names as they are added;
//! digits cannot be NUL), which is why this lives in the crate allowed
//! `unsafe`.

use std::ffi::{CStr, OsStr};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// One reused path buffer: `stem` bytes that stay, then the item's part.
/// Invariant: no byte of `buf` before the last is NUL.
#[derive(Debug, Clone, Default)]
pub struct ItemPath {
    buf: Vec<u8>,
    /// Where the item's part starts.
    stem: usize,
}

impl ItemPath {
    pub fn new() -> ItemPath {
        ItemPath {
            buf: Vec::with_capacity(256),
            stem: 0,
        }
    }

    /// Starts a new stem: `dir` and a `/` (nothing for an empty `dir`).
    pub fn stem(&mut self, dir: &Path) -> &mut Self {
        self.buf.clear();
        self.stem = 0;
        self.dir(dir.as_os_str().as_bytes())
    }

    /// Adds directories to the stem: `rel` and a `/` (nothing when empty).
    /// A NUL byte in `rel` ends it there (no path can hold one).
    pub fn dir(&mut self, rel: &[u8]) -> &mut Self {
        self.buf.truncate(self.stem);
        let rel = before_nul(rel);
        if !rel.is_empty() {
            self.buf.extend_from_slice(rel);
            if !rel.ends_with(b"/") {
                self.buf.push(b'/');
            }
        }
        self.stem = self.buf.len();
        self
    }

    /// Adds the fixed start of the items' names to the stem (up to a NUL
    /// byte, if `t` has one).
    pub fn text(&mut self, t: &[u8]) -> &mut Self {
        self.buf.truncate(self.stem);
        self.buf.extend_from_slice(before_nul(t));
        self.stem = self.buf.len();
        self
    }

    /// Adds a number (decimal) to the stem.
    pub fn number(&mut self, n: u64) -> &mut Self {
        self.buf.truncate(self.stem);
        push_decimal(&mut self.buf, n);
        self.stem = self.buf.len();
        self
    }

    /// The stem followed by `n` in decimal, as a C string.
    #[inline(always)]
    pub fn numbered(&mut self, n: u64) -> &CStr {
        self.buf.truncate(self.stem);
        push_decimal(&mut self.buf, n);
        self.finish()
    }

    /// The stem followed by `name` (up to a NUL byte, if it has one), as a
    /// C string.
    #[inline(always)]
    pub fn named(&mut self, name: &[u8]) -> &CStr {
        self.buf.truncate(self.stem);
        self.buf.extend_from_slice(before_nul(name));
        self.finish()
    }

    #[inline(always)]
    fn finish(&mut self) -> &CStr {
        self.buf.push(0);
        // SAFETY: the buffer ends with the NUL just pushed, and no byte
        // before it is NUL: stems and names are cut at their first NUL as
        // they enter (`before_nul`), and decimal digits are never 0.
        unsafe { CStr::from_bytes_with_nul_unchecked(&self.buf) }
    }

    /// The path last made (for messages), without its NUL.
    pub fn last(&self) -> &Path {
        let b = self.buf.strip_suffix(&[0]).unwrap_or(&self.buf);
        Path::new(OsStr::from_bytes(b))
    }
}

/// `b` up to its first NUL byte (all of it when it has none).
fn before_nul(b: &[u8]) -> &[u8] {
    b.iter().position(|&c| c == 0).map_or(b, |i| &b[..i])
}

/// Appends `n` in decimal.
#[inline(always)]
pub fn push_decimal(buf: &mut Vec<u8>, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut k = digits.len();
    loop {
        k -= 1;
        digits[k] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    buf.extend_from_slice(&digits[k..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stem_and_numbers_make_the_paths_a_format_would() {
        let mut p = ItemPath::new();
        p.stem(Path::new("/m/test-dir.0-0"))
            .dir(b"mdtest_tree.0")
            .text(b"file.mdtest.")
            .number(3)
            .text(b".");
        for n in [0u64, 7, 10, 99, 12345, u64::MAX] {
            let want = format!("/m/test-dir.0-0/mdtest_tree.0/file.mdtest.3.{n}");
            assert_eq!(p.numbered(n).to_str().unwrap(), want);
            assert_eq!(p.last(), Path::new(&want));
        }
        assert_eq!(
            p.named(b"x").to_bytes(),
            b"/m/test-dir.0-0/mdtest_tree.0/file.mdtest.3.x"
        );
        // A new stem forgets the old one; empty parts add nothing.
        p.stem(Path::new("")).dir(b"").text(b"f");
        assert_eq!(p.numbered(1).to_bytes(), b"f1");
        p.stem(Path::new("/a/")).dir(b"b/c");
        assert_eq!(p.named(b"d").to_bytes(), b"/a/b/c/d");
    }

    #[test]
    fn a_nul_byte_ends_a_part_and_never_enters_the_path() {
        let mut p = ItemPath::new();
        p.stem(Path::new("/d")).text(b"a\0b");
        assert_eq!(p.named(b"x\0y").to_bytes_with_nul(), b"/d/ax\0");
        assert_eq!(p.numbered(0).to_bytes_with_nul(), b"/d/a0\0");
    }

    #[test]
    fn a_stem_changed_in_the_middle_drops_the_items_part() {
        let mut p = ItemPath::new();
        p.stem(Path::new("/d")).text(b"dir.");
        let _ = p.numbered(42);
        p.text(b"x.");
        assert_eq!(p.numbered(1).to_bytes(), b"/d/dir.x.1");
    }
}
