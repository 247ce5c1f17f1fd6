//! Block IO requests from the `block:block_rq_issue` and
//! `block:block_rq_complete` trace events: parsing, per-second reduction,
//! a compact binary record for keeping every completion, and blkparse's
//! completion-line format for showing them.

use crate::names;
use std::collections::HashMap;
use std::io::{Read, Write};

/// A completed request.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Completion {
    /// CLOCK_MONOTONIC, nanoseconds.
    pub t_ns: u64,
    pub cpu: u16,
    pub pid: u32,
    /// The kernel's dev_t (`major << 20 | minor`).
    pub dev: u32,
    pub sector: u64,
    pub nr_sector: u32,
    /// blkparse's RWBS letters, e.g. `WS`, `R`, `FF`.
    pub rwbs: [u8; 4],
    pub error: i32,
    /// Issue to completion, when the issue was seen.
    pub latency_ns: Option<u64>,
}

impl Completion {
    pub fn bytes(&self) -> u64 {
        self.nr_sector as u64 * 512
    }
    pub fn rwbs_str(&self) -> String {
        String::from_utf8_lossy(&self.rwbs)
            .trim_end_matches('\0')
            .to_string()
    }
    pub fn is_write(&self) -> bool {
        self.rwbs.contains(&b'W')
    }
}

/// A parsed trace_pipe line: (event name, cpu, pid, time in ns, body).
pub fn split_line(line: &str) -> Option<(&str, u16, u32, u64, &str)> {
    // "  task-123  [001] d..1.  4510.123456: block_rq_complete: 7,3 WS () 8 + 8 none,0,0 [0]"
    let cpu_open = line.find('[')?;
    let cpu_close = cpu_open + line[cpu_open..].find(']')?;
    let cpu: u16 = line[cpu_open + 1..cpu_close].trim().parse().ok()?;
    let task = line[..cpu_open].trim_end();
    let pid: u32 = task.rsplit('-').next()?.parse().unwrap_or(0);
    let rest = &line[cpu_close + 1..];
    let colon = rest.find(": ")?;
    let ts_str = rest[..colon].split_whitespace().last()?;
    let (secs, frac) = ts_str.split_once('.')?;
    let mut ns: u64 = secs.parse::<u64>().ok()? * 1_000_000_000;
    let mut digits = frac.to_string();
    digits.truncate(9);
    while digits.len() < 9 {
        digits.push('0');
    }
    ns += digits.parse::<u64>().ok()?;
    let after = &rest[colon + 2..];
    let ev_end = after.find(": ")?;
    Some((&after[..ev_end], cpu, pid, ns, &after[ev_end + 2..]))
}

fn dev_of(s: &str) -> Option<u32> {
    let (a, b) = s.split_once(',')?;
    Some((a.parse::<u32>().ok()? << 20) | b.parse::<u32>().ok()?)
}

fn rwbs(s: &str) -> [u8; 4] {
    let mut r = [0u8; 4];
    for (i, b) in s.bytes().take(4).enumerate() {
        r[i] = b;
    }
    r
}

/// The (dev, sector) of a `block_rq_issue` body.
pub fn parse_issue(body: &str) -> Option<(u32, u64)> {
    // "7,3 WS 4096 () 1822024 + 8 none,0,0 [comm]"
    let f: Vec<&str> = body.split_whitespace().collect();
    let plus = f.iter().position(|x| *x == "+")?;
    Some((dev_of(f[0])?, f[plus - 1].parse().ok()?))
}

/// A `block_rq_complete` body into a [`Completion`] (latency filled in later).
pub fn parse_complete(body: &str, t_ns: u64, cpu: u16, pid: u32) -> Option<Completion> {
    // "7,3 WS () 1822024 + 8 none,0,0 [0]"
    let f: Vec<&str> = body.split_whitespace().collect();
    let plus = f.iter().position(|x| *x == "+")?;
    let error = f
        .last()?
        .trim_matches(|c| c == '[' || c == ']')
        .parse()
        .unwrap_or(0);
    Some(Completion {
        t_ns,
        cpu,
        pid,
        dev: dev_of(f[0])?,
        sector: f[plus - 1].parse().ok()?,
        nr_sector: f.get(plus + 1)?.parse().ok()?,
        rwbs: rwbs(f[1]),
        error,
        latency_ns: None,
    })
}

/// Upper bounds of the IO size histogram, in bytes (the last bucket is open).
pub const SIZE_BUCKETS: [(u64, &str); 6] = [
    (4096, "size_le_4k"),
    (16384, "size_le_16k"),
    (65536, "size_le_64k"),
    (262144, "size_le_256k"),
    (1 << 20, "size_le_1m"),
    (u64::MAX, "size_gt_1m"),
];

/// One device's requests in the current second, and in the whole phase.
#[derive(Debug, Default, Clone)]
pub struct DevAcc {
    pub reads: u64,
    pub writes: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub sequential: u64,
    pub lat_sum_ns: u64,
    pub lat_n: u64,
    pub lat_max_ns: u64,
    pub sizes: [u64; 6],
    /// Integral of requests in flight over time (ns), for the mean queue depth.
    pub inflight_ns: u128,
}

/// How many streams per direction a device's IO is followed in.
const STREAMS: usize = 16;

/// Recent sequential streams of one direction: where each ended, and when
/// it was last continued. An IO is sequential when it starts where one of
/// them ended (it continues that stream); otherwise it starts a stream in
/// the place of the one least recently continued. So interleaved streams,
/// such as btrfs's two copies of DUP metadata written turn about, each count
/// as sequential, where comparing with the previous IO alone says 0%.
#[derive(Debug, Default)]
pub struct Streams {
    ends: Vec<(u64, u64)>,
    clock: u64,
}

impl Streams {
    /// Follows an IO of `sectors` at `sector`; returns whether it continued a stream.
    pub fn follow(&mut self, sector: u64, sectors: u64) -> bool {
        self.clock += 1;
        let end = sector + sectors;
        if let Some(s) = self.ends.iter_mut().find(|s| s.0 == sector) {
            *s = (end, self.clock);
            return true;
        }
        if self.ends.len() < STREAMS {
            self.ends.push((end, self.clock));
        } else if let Some(lru) = self.ends.iter_mut().min_by_key(|s| s.1) {
            *lru = (end, self.clock);
        }
        false
    }
}

/// Follows one device: in-flight requests, sequentiality, accumulators.
#[derive(Debug, Default)]
pub struct DevTracker {
    pending: HashMap<u64, u64>,
    /// Sequential streams of reads (0) and of writes (1).
    streams: [Streams; 2],
    last_change_ns: u64,
    pub second: DevAcc,
    pub phase: DevAcc,
    pub total: DevAcc,
}

impl DevTracker {
    fn advance(&mut self, t_ns: u64) {
        if self.last_change_ns != 0 && t_ns > self.last_change_ns {
            let area = self.pending.len() as u128 * (t_ns - self.last_change_ns) as u128;
            self.second.inflight_ns += area;
            self.phase.inflight_ns += area;
        }
        self.last_change_ns = t_ns.max(self.last_change_ns);
    }

    pub fn issue(&mut self, sector: u64, t_ns: u64) {
        self.advance(t_ns);
        self.pending.insert(sector, t_ns);
    }

    /// Accounts a completion; fills in its latency.
    pub fn complete(&mut self, c: &mut Completion) {
        self.advance(c.t_ns);
        if let Some(t0) = self.pending.remove(&c.sector) {
            c.latency_ns = Some(c.t_ns.saturating_sub(t0));
        }
        if c.nr_sector == 0 {
            return; // a flush: no data
        }
        let w = c.is_write();
        let seq = self.streams[usize::from(w)].follow(c.sector, c.nr_sector as u64);
        for acc in [&mut self.second, &mut self.phase, &mut self.total] {
            if w {
                acc.writes += 1;
                acc.write_bytes += c.bytes();
            } else {
                acc.reads += 1;
                acc.read_bytes += c.bytes();
            }
            if seq {
                acc.sequential += 1;
            }
            if let Some(l) = c.latency_ns {
                acc.lat_sum_ns += l;
                acc.lat_n += 1;
                acc.lat_max_ns = acc.lat_max_ns.max(l);
            }
            let b = SIZE_BUCKETS
                .iter()
                .position(|(max, _)| c.bytes() <= *max)
                .unwrap_or(5);
            acc.sizes[b] += 1;
        }
    }

    /// The current second's metrics over `dt` seconds; starts a new second.
    pub fn take_second(&mut self, t_ns: u64, dt: f64) -> Vec<(String, f64)> {
        metrics(&self.take_second_acc(t_ns), dt)
    }

    /// The current second's requests; starts a new second.
    pub fn take_second_acc(&mut self, t_ns: u64) -> DevAcc {
        self.advance(t_ns);
        std::mem::take(&mut self.second)
    }
}

/// Metrics of an accumulator over `dt` seconds.
pub fn metrics(a: &DevAcc, dt: f64) -> Vec<(String, f64)> {
    let n = a.reads + a.writes;
    let mut v = vec![
        (names::IOPS.to_string(), n as f64 / dt),
        (names::READ_IOPS.into(), a.reads as f64 / dt),
        (names::WRITE_IOPS.into(), a.writes as f64 / dt),
        (names::READ_MB_S.into(), a.read_bytes as f64 / dt / 1e6),
        (names::WRITE_MB_S.into(), a.write_bytes as f64 / dt / 1e6),
        (
            names::AVG_IO_KB.into(),
            if n > 0 {
                (a.read_bytes + a.write_bytes) as f64 / n as f64 / 1024.0
            } else {
                0.0
            },
        ),
        (
            names::SEQUENTIAL_PCT.into(),
            if n > 0 {
                a.sequential as f64 * 100.0 / n as f64
            } else {
                0.0
            },
        ),
        (
            names::LATENCY_AVG_US.into(),
            if a.lat_n > 0 {
                a.lat_sum_ns as f64 / a.lat_n as f64 / 1e3
            } else {
                0.0
            },
        ),
        (names::LATENCY_MAX_US.into(), a.lat_max_ns as f64 / 1e3),
        (names::QUEUE_DEPTH.into(), a.inflight_ns as f64 / (dt * 1e9)),
    ];
    for (i, (_, name)) in SIZE_BUCKETS.iter().enumerate() {
        v.push((name.to_string(), a.sizes[i] as f64));
    }
    v
}

/// Size of one stored completion.
pub const RECORD: usize = 44;

/// Appends the binary form of `c` (little endian; latency u64::MAX when unknown).
pub fn encode(c: &Completion, out: &mut Vec<u8>) {
    out.extend_from_slice(&c.t_ns.to_le_bytes());
    out.extend_from_slice(&c.cpu.to_le_bytes());
    out.extend_from_slice(&c.pid.to_le_bytes());
    out.extend_from_slice(&c.dev.to_le_bytes());
    out.extend_from_slice(&c.sector.to_le_bytes());
    out.extend_from_slice(&c.nr_sector.to_le_bytes());
    out.extend_from_slice(&c.rwbs);
    out.extend_from_slice(&(c.error as i16).to_le_bytes());
    out.extend_from_slice(&c.latency_ns.unwrap_or(u64::MAX).to_le_bytes());
}

/// Reads back what [`encode`] wrote, all at once (tests: readers go one
/// completion at a time with [`each_completion`]).
#[cfg(test)]
pub fn decode(b: &[u8]) -> Vec<Completion> {
    b.chunks_exact(RECORD).map(decode_one).collect()
}

fn decode_one(r: &[u8]) -> Completion {
    let u64at = |o: usize| u64::from_le_bytes(r[o..o + 8].try_into().expect("8 bytes"));
    let u32at = |o: usize| u32::from_le_bytes(r[o..o + 4].try_into().expect("4 bytes"));
    let lat = u64at(36);
    Completion {
        t_ns: u64at(0),
        cpu: u16::from_le_bytes([r[8], r[9]]),
        pid: u32at(10),
        dev: u32at(14),
        sector: u64at(18),
        nr_sector: u32at(26),
        rwbs: [r[30], r[31], r[32], r[33]],
        error: i16::from_le_bytes([r[34], r[35]]) as i32,
        latency_ns: (lat != u64::MAX).then_some(lat),
    }
}

/// Calls `f` with each completion of compressed records `z`, one at a time
/// (a long trace is never all in memory), until it returns false.
pub fn each_completion(z: &[u8], mut f: impl FnMut(&Completion) -> bool) -> std::io::Result<()> {
    let mut d = std::io::BufReader::with_capacity(1 << 16, flate2::read::DeflateDecoder::new(z));
    let mut r = [0u8; RECORD];
    loop {
        match d.read_exact(&mut r) {
            Ok(()) => {
                if !f(&decode_one(&r)) {
                    return Ok(());
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(()),
            Err(e) => return Err(e),
        }
    }
}

/// Deflate-compresses stored records.
pub fn compress(raw: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::fast());
    let _ = e.write_all(raw);
    e.finish().unwrap_or_default()
}

pub fn decompress(z: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::new();
    flate2::read::DeflateDecoder::new(z).read_to_end(&mut out)?;
    Ok(out)
}

/// blkparse's default line for a completion, times relative to `t0_ns`:
/// `  7,3    1       12     0.001234567  4321  C  WS 1822024 + 8 [0]`.
pub fn blkparse_line(c: &Completion, seq: u64, t0_ns: u64) -> String {
    let t = c.t_ns.saturating_sub(t0_ns);
    format!(
        "{:3},{:<3} {:2} {:8} {:5}.{:09} {:5}  C {:>3} {} + {} [{}]",
        c.dev >> 20,
        c.dev & 0xfffff,
        c.cpu,
        seq,
        t / 1_000_000_000,
        t % 1_000_000_000,
        c.pid,
        c.rwbs_str(),
        c.sector,
        c.nr_sector,
        c.error
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trace_lines_parse() {
        let l = "     kworker/u8:2-123     [001] d..1.  4510.123456: block_rq_complete: 7,3 WS () 1822024 + 8 none,0,0 [0]";
        let (ev, cpu, pid, t, body) = split_line(l).unwrap();
        assert_eq!(
            (ev, cpu, pid, t),
            ("block_rq_complete", 1, 123, 4_510_123_456_000)
        );
        let c = parse_complete(body, t, cpu, pid).unwrap();
        assert_eq!(
            (c.dev, c.sector, c.nr_sector, c.rwbs_str().as_str(), c.error),
            ((7 << 20) | 3, 1822024, 8, "WS", 0)
        );
        let i = "fslab-9 [000] ..... 4510.000001: block_rq_issue: 7,3 WS 4096 () 1822024 + 8 none,0,0 [fslab]";
        let (ev, _, _, _, body) = split_line(i).unwrap();
        assert_eq!(ev, "block_rq_issue");
        assert_eq!(parse_issue(body), Some(((7 << 20) | 3, 1822024)));
    }

    #[test]
    fn interleaved_streams_each_count_as_sequential() {
        let mut s = Streams::default();
        // Two streams written turn about (btrfs DUP metadata): after each
        // stream's first IO, every IO continues its stream.
        let mut seq = 0;
        for i in 0..10u64 {
            seq += u64::from(s.follow(1000 + 8 * i, 8));
            seq += u64::from(s.follow(900_000 + 8 * i, 8));
        }
        assert_eq!(seq, 18);
        // Random IO is not.
        let mut r = Streams::default();
        let n: u64 = (0..20u64)
            .map(|i| u64::from(r.follow(i * 7919 * 64, 8)))
            .sum();
        assert_eq!(n, 0);
    }

    #[test]
    fn tracker_measures_latency_sequence_and_depth() {
        let mut d = DevTracker::default();
        let mk = |t, sector, n| Completion {
            t_ns: t,
            cpu: 0,
            pid: 0,
            dev: 1,
            sector,
            nr_sector: n,
            rwbs: rwbs("W"),
            error: 0,
            latency_ns: None,
        };
        d.issue(0, 1_000);
        d.issue(8, 1_000);
        let mut a = mk(3_000, 0, 8);
        d.complete(&mut a);
        let mut b = mk(5_000, 8, 8);
        d.complete(&mut b);
        assert_eq!((a.latency_ns, b.latency_ns), (Some(2_000), Some(4_000)));
        let m = d.take_second(5_000, 1.0);
        let get = |k: &str| m.iter().find(|(n, _)| n == k).unwrap().1;
        assert_eq!(get("write_iops"), 2.0);
        assert_eq!(get("sequential_pct"), 50.0);
        assert_eq!(get("size_le_4k"), 2.0);
        // 2 in flight for 2 us, then 1 for 2 us: 6 us of request-time over 1 s.
        assert!((get("queue_depth") - 6e-6).abs() < 1e-12);
    }

    #[test]
    fn completions_stream_back_one_at_a_time() {
        let mut raw = Vec::new();
        for i in 0..1000u64 {
            let c = Completion {
                t_ns: i,
                sector: i * 8,
                nr_sector: 8,
                rwbs: *b"W\0\0\0",
                ..Default::default()
            };
            encode(&c, &mut raw);
        }
        let z = compress(&raw);
        let mut seen = Vec::new();
        each_completion(&z, |c| {
            seen.push(c.sector);
            seen.len() < 600
        })
        .unwrap();
        assert_eq!(seen.len(), 600);
        assert_eq!(seen[599], 599 * 8);
        let mut n = 0;
        each_completion(&z, |_| {
            n += 1;
            true
        })
        .unwrap();
        assert_eq!(n, 1000);
    }

    #[test]
    fn records_round_trip_and_print_like_blkparse() {
        let c = Completion {
            t_ns: 2_500_000_123,
            cpu: 3,
            pid: 42,
            dev: (253 << 20) | 32,
            sector: 103680,
            nr_sector: 1024,
            rwbs: rwbs("W"),
            error: 0,
            latency_ns: Some(77),
        };
        let mut raw = Vec::new();
        encode(&c, &mut raw);
        encode(
            &Completion {
                latency_ns: None,
                ..c
            },
            &mut raw,
        );
        let back = decode(&decompress(&compress(&raw)).unwrap());
        assert_eq!(back[0], c);
        assert_eq!(back[1].latency_ns, None);
        assert_eq!(
            blkparse_line(&c, 238, 500_000_000),
            "253,32   3      238     2.000000123    42  C   W 103680 + 1024 [0]"
        );
    }
}
