//! `fslab crc32c`: the "crc32c: tests passed, N bytes in U usec" self-test
//! of seed 001 (xfsprogs'), for the software algorithm (slicing-by-8 tables)
//! and the SSE4.2 instruction: both are checked against the standard test
//! vectors (RFC 3720 B.4 and "123456789"), then timed on small chunks of
//! random data at random offsets, and must agree on every chunk.

use std::time::Instant;

const POLY: u32 = 0x82F6_3B78; // Castagnoli, reflected

fn tables() -> [[u32; 256]; 8] {
    let mut t = [[0u32; 256]; 8];
    for i in 0..256u32 {
        let mut c = i;
        for _ in 0..8 {
            c = if c & 1 != 0 { (c >> 1) ^ POLY } else { c >> 1 };
        }
        t[0][i as usize] = c;
    }
    for i in 0..256 {
        for k in 1..8 {
            t[k][i] = (t[k - 1][i] >> 8) ^ t[0][(t[k - 1][i] & 0xff) as usize];
        }
    }
    t
}

/// Software CRC32C, slicing by 8.
pub struct Soft {
    t: [[u32; 256]; 8],
}

impl Default for Soft {
    fn default() -> Self {
        Soft { t: tables() }
    }
}

impl Soft {
    pub fn crc(&self, crc: u32, data: &[u8]) -> u32 {
        let t = &self.t;
        let mut c = !crc;
        let mut chunks = data.chunks_exact(8);
        for ch in &mut chunks {
            let lo = u32::from_le_bytes([ch[0], ch[1], ch[2], ch[3]]) ^ c;
            let hi = u32::from_le_bytes([ch[4], ch[5], ch[6], ch[7]]);
            c = t[7][(lo & 0xff) as usize]
                ^ t[6][((lo >> 8) & 0xff) as usize]
                ^ t[5][((lo >> 16) & 0xff) as usize]
                ^ t[4][(lo >> 24) as usize]
                ^ t[3][(hi & 0xff) as usize]
                ^ t[2][((hi >> 8) & 0xff) as usize]
                ^ t[1][((hi >> 16) & 0xff) as usize]
                ^ t[0][(hi >> 24) as usize];
        }
        for &b in chunks.remainder() {
            c = (c >> 8) ^ t[0][((c ^ b as u32) & 0xff) as usize];
        }
        !c
    }
}

/// The standard vectors: (data, CRC32C).
pub fn vectors() -> Vec<(Vec<u8>, u32)> {
    vec![
        (b"123456789".to_vec(), 0xE306_9283),
        (vec![0u8; 32], 0x8A91_36AA),
        (vec![0xffu8; 32], 0x62A8_AB43),
        ((0u8..32).collect(), 0x46DD_794E),
        ((0u8..32).rev().collect(), 0x113F_DB5C),
        (Vec::new(), 0),
    ]
}

/// One implementation's self-test result.
#[derive(Debug, Clone, serde::Serialize)]
pub struct SelfTest {
    pub name: String,
    pub bytes: u64,
    pub usec: f64,
    pub mb_per_s: f64,
}

/// A crc32c that is not what it should be.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Mismatch {
    /// An implementation's crc32c of a known vector.
    #[error(
        "{implementation} crc32c of a {bytes}-byte vector is {got:#010x}, expected {want:#010x}"
    )]
    Vector {
        implementation: &'static str,
        bytes: usize,
        got: u32,
        want: u32,
    },
    /// The two implementations on a random chunk.
    #[error("SSE4.2 and software crc32c disagree on chunk {0}")]
    Disagree(usize),
}

/// Why `fslab crc32c` printed no throughput.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SelfTestError {
    #[error("crc32c: --chunks 0: must be at least 1")]
    NoChunks,
    #[error("crc32c: tests FAILED: {0}")]
    Failed(#[from] Mismatch),
}

impl SelfTestError {
    pub fn kind(&self) -> crate::ErrorKind {
        match self {
            SelfTestError::NoChunks => crate::ErrorKind::Usage,
            SelfTestError::Failed(_) => crate::ErrorKind::Failed,
        }
    }
}

/// `fslab crc32c`: the self-test line of each implementation.
pub fn report(chunks: usize) -> Result<String, SelfTestError> {
    if chunks == 0 {
        return Err(SelfTestError::NoChunks);
    }
    Ok(selftest(chunks)?
        .iter()
        .map(|r| {
            format!(
                "crc32c: tests passed, {} bytes in {:.0} usec ({}: {:.0} MB/s)\n",
                r.bytes, r.usec, r.name, r.mb_per_s
            )
        })
        .collect())
}

/// Runs the self-test: vectors, then `chunks` random chunks (up to 4 KiB at
/// random offsets of a 64 KiB random buffer, seed fixed), timed per
/// implementation. Err names the first mismatch.
pub fn selftest(chunks: usize) -> Result<Vec<SelfTest>, Mismatch> {
    let soft = Soft::default();
    for (data, want) in vectors() {
        let got = soft.crc(0, &data);
        if got != want {
            return Err(Mismatch::Vector {
                implementation: "software",
                bytes: data.len(),
                got,
                want,
            });
        }
        if let Some(h) = fslab_sys::crc32c::hw(0, &data) {
            if h != want {
                return Err(Mismatch::Vector {
                    implementation: "SSE4.2",
                    bytes: data.len(),
                    got: h,
                    want,
                });
            }
        }
    }
    let mut rng = fslab_stats::rng::XorShift64(0x2545_f491_4f6c_dd1d);
    let mut next = || rng.next_u64();
    let buf: Vec<u8> = (0..65536).map(|_| next() as u8).collect();
    let pieces: Vec<(usize, usize)> = (0..chunks)
        .map(|_| {
            let len = (next() % 4096) as usize + 1;
            let off = (next() % (buf.len() - len) as u64) as usize;
            (off, len)
        })
        .collect();
    let bytes: u64 = pieces.iter().map(|p| p.1 as u64).sum();
    let mut out = Vec::new();
    let t = Instant::now();
    let sw: Vec<u32> = pieces
        .iter()
        .map(|&(o, l)| soft.crc(0, &buf[o..o + l]))
        .collect();
    let us = t.elapsed().as_secs_f64() * 1e6;
    out.push(SelfTest {
        name: "software (slicing-by-8)".into(),
        bytes,
        usec: us,
        mb_per_s: bytes as f64 / us,
    });
    if fslab_sys::crc32c::hw(0, b"").is_some() {
        let t = Instant::now();
        let hw: Vec<u32> = pieces
            .iter()
            .map(|&(o, l)| fslab_sys::crc32c::hw(0, &buf[o..o + l]).unwrap_or(0))
            .collect();
        let us = t.elapsed().as_secs_f64() * 1e6;
        if let Some(i) = (0..hw.len()).find(|&i| hw[i] != sw[i]) {
            return Err(Mismatch::Disagree(i));
        }
        out.push(SelfTest {
            name: "hardware (SSE4.2)".into(),
            bytes,
            usec: us,
            mb_per_s: bytes as f64 / us,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectors_hold_for_both_implementations() {
        let soft = Soft::default();
        for (d, want) in vectors() {
            assert_eq!(soft.crc(0, &d), want, "{d:?}");
            if let Some(h) = fslab_sys::crc32c::hw(0, &d) {
                assert_eq!(h, want);
            }
        }
        // Continuing a CRC over a split buffer gives the same answer.
        let a = soft.crc(0, b"12345");
        assert_eq!(soft.crc(a, b"6789"), 0xE306_9283);
        assert!(selftest(1000).unwrap()[0].bytes > 1000);
    }

    #[test]
    fn the_report_has_a_line_per_implementation_and_refuses_no_chunks() {
        let text = report(10).unwrap();
        assert!(text.starts_with("crc32c: tests passed, "), "{text}");
        assert!(
            text.lines().count() >= 1 && text.contains("software"),
            "{text}"
        );
        let e = report(0).unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::Usage);
        let failed = SelfTestError::from(Mismatch::Disagree(3));
        assert_eq!(failed.kind(), crate::ErrorKind::Failed);
        assert_eq!(
            failed.to_string(),
            "crc32c: tests FAILED: SSE4.2 and software crc32c disagree on chunk 3"
        );
    }
}
