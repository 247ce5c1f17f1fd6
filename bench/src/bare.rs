//! Bare loops: per operation exactly the filesystem calls a workload makes
//! (the same files, flags, sizes and threads, as the parity tests pin
//! them), and nothing else: no clock read, no histogram, no progress, no
//! results store. Each returns the seconds of its loop (threads started to
//! threads joined). `originals` runs them in a process of their own, so
//! that all three sides (original, fslab, bare) are timed the same way;
//! the `*_overhead` benches call them in-process.

use std::ffi::CStr;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use fslab_sys::mmap::SharedMap;
use rustix::fs::{FileType, Mode, OFlags, SeekFrom, CWD};

/// fs_mark's create loop with `-s 0` and no sync, `threads` threads, thread
/// `t` creating `files` files in `dirs[t % dirs.len()]`: per file `mkdir`
/// of the directory (EEXIST), `openat(dirfd, NAME, O_CREAT|O_EXCL|O_RDWR)`
/// of a 40-character name made in a reused buffer (as fs_mark makes its
/// names), a `write` of zero bytes and `close`.
pub fn fsmark_create(dirs: &[PathBuf], threads: usize, files: usize) -> f64 {
    let start = Instant::now();
    std::thread::scope(|s| {
        for t in 0..threads {
            let dir = &dirs[t % dirs.len()];
            s.spawn(move || {
                let dfd = rustix::fs::open(
                    dir,
                    OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
                    Mode::empty(),
                )
                .expect("bare: open dir");
                let mut buf: Vec<u8> = Vec::with_capacity(48);
                let _ = write!(buf, "{:08x}~~~~~~~~{t:02x}", 0x6b08_85bbu32);
                let stem = buf.len();
                for i in 0..files {
                    match rustix::fs::mkdirat(CWD, dir, Mode::from_bits_truncate(0o777)) {
                        Ok(()) | Err(rustix::io::Errno::EXIST) => {}
                        Err(e) => panic!("bare mkdir: {e}"),
                    }
                    buf.truncate(stem);
                    crate::push_digits(&mut buf, i as u64, 22);
                    buf.push(0);
                    let name = CStr::from_bytes_with_nul(&buf).expect("no NUL");
                    let fd = rustix::fs::openat(
                        &dfd,
                        name,
                        OFlags::CREATE | OFlags::EXCL | OFlags::RDWR | OFlags::CLOEXEC,
                        Mode::from_bits_truncate(0o666),
                    )
                    .expect("bare create");
                    rustix::io::write(&fd, &[]).expect("bare write");
                    fslab_sys::fd::close(fd);
                }
            });
        }
    });
    start.elapsed().as_secs_f64()
}

/// createmany `-m` (`mknod(S_IFREG|0444)`) or `-o` (`open(O_CREAT|O_RDWR,
/// 0644)` and `close`) of `PREFIX0` .. `PREFIX{n-1}`, each name written
/// into one reused buffer, as createmany's sprintf does.
pub fn createmany(prefix: &str, n: usize, open: bool) -> f64 {
    let mut buf: Vec<u8> = Vec::with_capacity(prefix.len() + 24);
    let start = Instant::now();
    for i in 0..n {
        buf.clear();
        buf.extend_from_slice(prefix.as_bytes());
        crate::push_digits(&mut buf, i as u64, 0);
        buf.push(0);
        let name = CStr::from_bytes_with_nul(&buf).expect("no NUL");
        if open {
            let fd = rustix::fs::openat(
                CWD,
                name,
                OFlags::CREATE | OFlags::RDWR | OFlags::CLOEXEC,
                Mode::from_bits_truncate(0o644),
            )
            .expect("bare open");
            fslab_sys::fd::close(fd);
        } else {
            rustix::fs::mknodat(
                CWD,
                name,
                FileType::RegularFile,
                Mode::from_bits_truncate(0o444),
                0,
            )
            .expect("bare mknod");
        }
    }
    start.elapsed().as_secs_f64()
}

/// tiotest's four tests (0.3.5 without mmap), `threads` threads, each on
/// its own file `DIR/_tiotest_pidPID.thrT` of `mib` MiB in `block`-byte
/// blocks, one thread per file per test:
/// write: `open(O_RDWR|O_CREAT|O_TRUNC)`, `lseek(0)`, a `write` per block,
/// `fsync`, `close`; random write: `open(O_WRONLY)`, `lseek(0)`, per
/// operation `lseek` to a random block (never the last) and `write`,
/// `fsync`, `close`; read and random read: the same with `O_RDONLY`, `read`
/// and no `fsync`. The files are removed at the end. `tests` picks which
/// of the four run (tiotest's `-k` skips). Returns each test's seconds.
pub fn tiotest(
    dir: &Path,
    threads: usize,
    mib: u64,
    block: usize,
    random_ops: u64,
    tests: [bool; 4],
) -> [f64; 4] {
    let pid = std::process::id();
    let files: Vec<PathBuf> = (0..threads)
        .map(|t| dir.join(format!("_tiotest_pid{pid}.thr{t}")))
        .collect();
    let blocks = (mib << 20) / block as u64;
    let mut secs = [0.0; 4];
    for (test, on) in tests.iter().enumerate() {
        if !on {
            continue;
        }
        let start = Instant::now();
        std::thread::scope(|s| {
            for (t, f) in files.iter().enumerate() {
                s.spawn(move || tiotest_thread(f, t, test, blocks, block, random_ops));
            }
        });
        secs[test] = start.elapsed().as_secs_f64();
    }
    for f in &files {
        let _ = std::fs::remove_file(f);
    }
    secs
}

fn tiotest_thread(f: &Path, t: usize, test: usize, blocks: u64, block: usize, random_ops: u64) {
    let write = test < 2;
    let flags = match test {
        0 => OFlags::RDWR | OFlags::CREATE | OFlags::TRUNC,
        1 => OFlags::WRONLY,
        _ => OFlags::RDONLY,
    } | OFlags::CLOEXEC;
    let fd = rustix::fs::open(f, flags, Mode::from_bits_truncate(0o600)).expect("bare open");
    rustix::fs::seek(&fd, SeekFrom::Start(0)).expect("bare lseek");
    let mut v = vec![0x5au8; block + 4096];
    let off = v.as_ptr().align_offset(4096);
    let buf = &mut v[off..off + block];
    if test.is_multiple_of(2) {
        for _ in 0..blocks {
            transfer(&fd, buf, write);
        }
    } else {
        let choices = blocks.saturating_sub(1).max(1);
        let mut rng = fslab_stats::rng::XorShift64(
            0x9e37_79b9_7f4a_7c15u64 ^ ((t as u64 + 1) * 0x2545_f491_4f6c_dd1d) ^ test as u64,
        );
        for _ in 0..random_ops {
            let at = rng.below(choices) * block as u64;
            rustix::fs::seek(&fd, SeekFrom::Start(at)).expect("bare lseek");
            transfer(&fd, buf, write);
        }
    }
    if write {
        rustix::fs::fsync(&fd).expect("bare fsync");
    }
    drop(fd);
}

/// One `write` or `read` of the whole of `buf` at the file position.
#[inline]
fn transfer(fd: &rustix::fd::OwnedFd, buf: &mut [u8], write: bool) {
    let len = buf.len();
    let n = if write {
        rustix::io::write(fd, &*buf)
    } else {
        rustix::io::read(fd, buf)
    }
    .expect("bare transfer");
    assert_eq!(n, len, "bare: short transfer");
}

/// The seed's alloctest (random writes, no `-t`/`-w`/`-d`): `open(O_CREAT|
/// O_EXCL|O_RDWR)`, `ftruncate(len)`, a shared `mmap`, one u32 read and
/// written at the start of every page in the seed's order (page
/// `(i + 23) * 1000000007 % pages`), `msync(MS_SYNC)`, `munmap`, `close`.
/// Returns the seconds from the first touch to msync's return (fslab's
/// `touch` and `msync` phases).
pub fn alloctest(file: &Path, len: u64) -> f64 {
    let page = fslab_sys::page_size() as u64;
    let pages = len / page;
    let fd = rustix::fs::open(
        file,
        OFlags::RDWR | OFlags::CREATE | OFlags::EXCL | OFlags::CLOEXEC,
        Mode::from_bits_truncate(0o644),
    )
    .expect("bare open");
    rustix::fs::ftruncate(&fd, len).expect("bare ftruncate");
    let mut map = SharedMap::new(std::os::fd::AsFd::as_fd(&fd), len as usize).expect("bare mmap");
    let mut hits = 0u64;
    let start = Instant::now();
    for i in 0..pages {
        let off = (page * fslab_workload::alloctest::seed_page(i, pages)) as usize;
        hits += u64::from(map.read_u32(off) != 0);
        map.write_u32(off, i as u32);
    }
    assert_eq!(hits, 0, "bare: a page was touched twice");
    map.msync().expect("bare msync");
    let secs = start.elapsed().as_secs_f64();
    map.unmap().expect("bare munmap");
    drop(fd);
    secs
}
