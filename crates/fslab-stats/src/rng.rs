//! Small seeded generators, so everything random in fslab (bootstrap
//! resamples, shuffled run orders, workload offsets and choices, generated
//! data) repeats exactly from its seed. Not for anything secret.

/// splitmix64 (Steele, Lea and Flood 2014): any seed, including 0, works.
#[derive(Debug, Clone)]
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A value in `0..n` (0 when n is 0).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
}

/// xorshift64 (Marsaglia 2003, shifts 13, 7, 17): the seed must not be 0.
#[derive(Debug, Clone)]
pub struct XorShift64(pub u64);

impl XorShift64 {
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A value in `0..n` (0 when n is 0).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix64_matches_its_reference_output() {
        // The first outputs of splitmix64 seeded with 0 (the published sequence).
        let mut r = SplitMix64(0);
        assert_eq!(r.next_u64(), 0xe220_a839_7b1d_cdaf);
        assert_eq!(r.next_u64(), 0x6e78_9e6a_a1b9_65f4);
    }

    #[test]
    fn xorshift64_steps_and_bounds() {
        let mut r = XorShift64(1);
        // 1 -> 1 ^ 1<<13 = 0x2001; ^ >>7 = 0x2041; ^ <<17 = 0x4082_2041.
        assert_eq!(r.next_u64(), 0x4082_2041);
        assert!((0..1000).all(|_| r.below(7) < 7));
        assert_eq!(r.below(0), 0);
    }
}
