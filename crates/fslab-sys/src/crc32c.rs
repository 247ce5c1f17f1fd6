//! The SSE4.2 `crc32` instruction (Castagnoli polynomial), when the CPU has it.

/// CRC32C of `data` continuing from `crc` (pre- and post-inverted, as
/// iSCSI and the kernel's crc32c() with ~0 seed use it), with the SSE4.2
/// instruction; None when the CPU lacks SSE4.2.
pub fn hw(crc: u32, data: &[u8]) -> Option<u32> {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("sse4.2") {
            // SAFETY: the CPU supports SSE4.2 (checked just above).
            return Some(unsafe { hw_sse42(crc, data) });
        }
    }
    let _ = (crc, data);
    None
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse4.2")]
unsafe fn hw_sse42(crc: u32, data: &[u8]) -> u32 {
    use std::arch::x86_64::{_mm_crc32_u64, _mm_crc32_u8};
    let mut c = !crc as u64;
    let mut chunks = data.chunks_exact(8);
    for ch in &mut chunks {
        c = _mm_crc32_u64(c, u64::from_le_bytes(ch.try_into().expect("8 bytes")));
    }
    let mut c = c as u32;
    for &b in chunks.remainder() {
        c = _mm_crc32_u8(c, b);
    }
    !c
}
