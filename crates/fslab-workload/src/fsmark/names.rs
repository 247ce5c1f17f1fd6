//! fs_mark file names, made without fs_mark's costs and without its collisions.
//!
//! Layout, as in fs_mark 3.3: `name_len - rand_len` characters of the current
//! time in seconds as lowercase hex (its last digits when the part is shorter,
//! padded with `~` when longer), then `rand_len` characters from `[0-9A-Z]`.
//!
//! Differences from fs_mark, on purpose:
//! - fs_mark draws each random character with a rejection loop over
//!   `random()` (about 85 calls for 24 characters) and keeps every name in
//!   memory (about 200 bytes a file). fslab derives the random part from a
//!   per-thread sequence number put through a bijective 64-bit mixer, so a
//!   name costs a few multiplications and can be made again from its number:
//!   nothing is stored per file.
//! - With 13 or more random characters the first 13 (the mixed value's
//!   first base-36 digits as a fraction of 2^64) tell any two values apart
//!   (36^13 > 2^64), so names within a run never repeat. With fewer,
//!   a repeat is possible; fslab creates files with `O_EXCL`, so an existing
//!   file is never truncated (fs_mark opens with `O_TRUNC` and silently
//!   rewrites it), and draws another name instead.

use std::collections::BTreeMap;
use std::ffi::CStr;

const ALPHABET: &[u8; 36] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";

/// A bijection on u64 (the splitmix64 finaliser: each step is invertible).
#[inline]
fn mix(mut x: u64) -> u64 {
    x ^= x >> 30;
    x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x ^= x >> 27;
    x = x.wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// Sequence numbers at or above this are redraws after a name collision.
pub const REDRAW_BASE: u64 = 1 << 47;

/// Makes the names of one worker thread.
pub struct NameGen {
    seq_len: usize,
    rand_len: usize,
    key: u64,
    thread: u64,
    /// Name bytes followed by a NUL.
    buf: Vec<u8>,
    secs_cached: Option<u64>,
    /// `--seed`'s time part, written once in place of the clock's seconds.
    fixed: bool,
}

impl NameGen {
    pub fn new(name_len: u32, rand_len: u32, run_seed: u64, thread: u32) -> Self {
        NameGen {
            seq_len: (name_len - rand_len) as usize,
            rand_len: rand_len as usize,
            key: run_seed,
            thread: thread as u64,
            buf: vec![0; name_len as usize + 1],
            secs_cached: None,
            fixed: false,
        }
    }

    /// Names that are the same every run (`--seed`): the random part
    /// keyed by `seed` and `rank`, the time part `seed` in hex.
    pub fn seeded(name_len: u32, rand_len: u32, seed: u64, rank: u32, thread: u32) -> Self {
        let mut g = NameGen::new(
            name_len,
            rand_len,
            mix(seed ^ (u64::from(rank) << 32)),
            thread,
        );
        g.write_time(seed);
        g.fixed = true;
        g
    }

    /// The name of file `seq` created in second `secs` (Unix time).
    pub fn name(&mut self, secs: u64, seq: u64) -> &CStr {
        if !self.fixed && self.secs_cached != Some(secs) {
            self.write_time(secs);
            self.secs_cached = Some(secs);
        }
        let mut v = mix(((self.thread << 48) | (seq & ((1 << 48) - 1))) ^ self.key);
        let tail = &mut self.buf[self.seq_len..self.seq_len + self.rand_len];
        // The digits of v / 2^64 in base 36, most significant first: each
        // one multiplication (a division and a remainder by 36 an item were
        // 700 instructions a 24-character name under callgrind). The first
        // 13 tell any two values apart (36^13 > 2^64); then a fresh value.
        for chunk in tail.chunks_mut(13) {
            let mut f = v;
            for c in chunk {
                let t = u128::from(f) * 36;
                *c = ALPHABET[(t >> 64) as usize];
                f = t as u64;
            }
            v = mix(v ^ 0x9e37_79b9_7f4a_7c15);
        }
        CStr::from_bytes_with_nul(&self.buf).expect("names hold no NUL")
    }

    fn write_time(&mut self, secs: u64) {
        let hex = format!("{secs:x}");
        let hex = hex.as_bytes();
        let head = &mut self.buf[..self.seq_len];
        if hex.len() >= head.len() {
            head.copy_from_slice(&hex[hex.len() - head.len()..]);
        } else {
            head[..hex.len()].copy_from_slice(hex);
            head[hex.len()..].fill(b'~');
        }
    }

    /// Whether a directory entry has the shape of a name this generator makes
    /// (used so the stat and unlink phases touch nothing else).
    pub fn matches(name_len: u32, rand_len: u32, name: &[u8]) -> bool {
        let seq_len = (name_len - rand_len) as usize;
        name.len() == name_len as usize
            && name[..seq_len]
                .iter()
                .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase() || *c == b'~')
            && name[seq_len..]
                .iter()
                .all(|c| c.is_ascii_digit() || c.is_ascii_uppercase())
    }
}

/// Remembers where each file of one loop went, in O(seconds + subdirectory
/// changes) memory instead of one entry per file.
#[derive(Debug, Default)]
pub struct NameLog {
    /// (first file index, subdirectory, second): a new segment whenever either changes.
    segments: Vec<(u64, Option<u32>, u64)>,
    /// Files whose name was redrawn after a collision: index -> sequence number.
    redraws: BTreeMap<u64, u64>,
    /// Sequence number of file 0 of the loop.
    base_seq: u64,
    len: u64,
}

impl NameLog {
    pub fn new(base_seq: u64) -> Self {
        NameLog {
            base_seq,
            ..Default::default()
        }
    }

    /// Notes that file `index` (the next one) is in `subdir` at second `secs`.
    pub fn push(&mut self, index: u64, subdir: Option<u32>, secs: u64) {
        debug_assert_eq!(index, self.len);
        match self.segments.last() {
            Some(&(_, d, s)) if d == subdir && s == secs => {}
            _ => self.segments.push((index, subdir, secs)),
        }
        self.len = index + 1;
    }

    /// Notes that file `index` got sequence number `seq` instead of its own.
    pub fn redraw(&mut self, index: u64, seq: u64) {
        self.redraws.insert(index, seq);
    }

    /// Forgets the last file (its create failed).
    pub fn pop(&mut self) {
        if self.len == 0 {
            return;
        }
        self.len -= 1;
        self.redraws.remove(&self.len);
        if self.segments.last().is_some_and(|s| s.0 == self.len) {
            self.segments.pop();
        }
    }

    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// (subdirectory, second, sequence number) of file `index`.
    pub fn at(&self, index: u64) -> (Option<u32>, u64, u64) {
        let seg = match self.segments.binary_search_by(|s| s.0.cmp(&index)) {
            Ok(i) => i,
            Err(i) => i - 1,
        };
        let (_, subdir, secs) = self.segments[seg];
        let seq = self
            .redraws
            .get(&index)
            .copied()
            .unwrap_or(self.base_seq + index);
        (subdir, secs, seq)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn layout_matches_fs_mark() {
        let mut g = NameGen::new(40, 24, 7, 0);
        let n = g.name(0x5183_a2b1, 0).to_str().unwrap().to_string();
        assert_eq!(n.len(), 40);
        assert_eq!(&n[..16], "5183a2b1~~~~~~~~");
        assert!(n[16..]
            .bytes()
            .all(|c| c.is_ascii_digit() || c.is_ascii_uppercase()));
        assert!(NameGen::matches(40, 24, n.as_bytes()));
        assert!(!NameGen::matches(40, 24, b"notes.txt"));
        let mut short = NameGen::new(6, 2, 7, 0);
        assert_eq!(&short.name(0x5183_a2b1, 0).to_bytes()[..4], b"a2b1");
    }

    #[test]
    fn seeded_names_are_the_same_every_run_and_apart_between_ranks() {
        let names = |rank, secs| {
            let mut g = NameGen::seeded(40, 24, 0x5eed, rank, 1);
            (0..100)
                .map(|seq| g.name(secs + seq / 10, seq).to_bytes().to_vec())
                .collect::<Vec<_>>()
        };
        let a = names(0, 1_700_000_000);
        assert_eq!(a, names(0, 1_800_000_000), "the clock changed the names");
        assert_eq!(&a[0][..16], b"5eed~~~~~~~~~~~~");
        assert!(NameGen::matches(40, 24, &a[0]));
        let other: HashSet<_> = names(1, 1_700_000_000).into_iter().collect();
        assert!(
            a.iter().all(|n| !other.contains(n)),
            "two ranks made one name"
        );
        let mut unseeded = NameGen::new(40, 24, 0x5eed, 1);
        assert_ne!(unseeded.name(1_700_000_000, 0).to_bytes(), &a[0][..]);
    }

    #[test]
    fn names_never_repeat_across_threads_and_files() {
        let mut seen = HashSet::new();
        for t in 0..4 {
            let mut g = NameGen::new(20, 13, 99, t);
            for seq in 0..50_000 {
                assert!(seen.insert(g.name(1, seq).to_bytes().to_vec()));
            }
        }
    }

    #[test]
    fn log_regenerates_every_name() {
        let mut g = NameGen::new(30, 20, 5, 1);
        let mut log = NameLog::new(1000);
        let mut made = Vec::new();
        for i in 0..100u64 {
            let subdir = Some((i / 30) as u32);
            let secs = 50 + i / 7;
            let seq = if i == 42 { REDRAW_BASE + 3 } else { 1000 + i };
            log.push(i, subdir, secs);
            if i == 42 {
                log.redraw(i, seq);
            }
            made.push((subdir, g.name(secs, seq).to_bytes().to_vec()));
        }
        log.push(100, None, 99);
        log.pop();
        assert_eq!(log.len(), 100);
        for (i, (subdir, name)) in made.iter().enumerate() {
            let (d, secs, seq) = log.at(i as u64);
            assert_eq!(&d, subdir);
            assert_eq!(g.name(secs, seq).to_bytes(), &name[..]);
        }
    }
}
