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

    /// A uniform value in (0, 1): the top 53 bits, never 0.
    pub fn uniform(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    /// A standard normal value (Box-Muller), for simulations.
    pub fn normal(&mut self) -> f64 {
        let (u, v) = (self.uniform(), self.uniform());
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }

    /// Student's t with `df` degrees of freedom (a normal over the root of
    /// a chi-square of `df` normals), for heavy-tailed simulations.
    pub fn student_t(&mut self, df: u32) -> f64 {
        let chi2: f64 = (0..df).map(|_| self.normal().powi(2)).sum();
        self.normal() / (chi2 / f64::from(df)).sqrt()
    }

    /// A Fisher-Yates shuffle.
    pub fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = self.below(i as u64 + 1) as usize;
            v.swap(i, j);
        }
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

/// CPython's `random.Random(seed)` for an integer seed: the Mersenne
/// Twister seeded by `init_by_array` with the seed's 32-bit words, and
/// CPython's ways of drawing from it (`getrandbits`, `_randbelow`,
/// `choice`, `randint`, `shuffle`), so that a tool written in Python with
/// a fixed seed (compilebench's 555) makes the same choices here.
pub struct PyRandom(rand_mt::Mt);

impl PyRandom {
    pub fn new(seed: u64) -> PyRandom {
        let words: Vec<u32> = if seed >> 32 == 0 {
            vec![seed as u32]
        } else {
            vec![seed as u32, (seed >> 32) as u32]
        };
        PyRandom(rand_mt::Mt::new_with_key(words))
    }

    /// `getrandbits(k)` for `k <= 32`.
    pub fn getrandbits(&mut self, k: u32) -> u32 {
        if k == 0 {
            return 0;
        }
        self.0.next_u32() >> (32 - k.min(32))
    }

    /// `_randbelow(n)`: uniform in `0..n` by rejection (n at most 2^32).
    /// As in CPython, even `n == 1` draws (until it gets 0).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            return 0;
        }
        let k = 64 - n.leading_zeros();
        loop {
            let r = u64::from(self.getrandbits(k));
            if r < n {
                return r;
            }
        }
    }

    /// `choice(range(n))`, an index into a sequence of `n`.
    pub fn choice(&mut self, n: usize) -> usize {
        self.below(n as u64) as usize
    }

    /// `randint(a, b)`, both ends included.
    pub fn randint(&mut self, a: i64, b: i64) -> i64 {
        a + self.below((b - a + 1) as u64) as i64
    }

    /// `shuffle(v)`.
    pub fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = self.below(i as u64 + 1) as usize;
            v.swap(i, j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn py_random_draws_what_cpython_draws() {
        // python3: r = random.Random(555); [r.getrandbits(32) for _ in range(3)]
        let mut r = PyRandom::new(555);
        assert_eq!(
            [r.getrandbits(32), r.getrandbits(32), r.getrandbits(32)],
            [830411535, 1179161746, 691729750]
        );
        // [r.randint(100, 100000) for _ in range(3)], r.choice(range(7)), r.randint(0, 3)
        let mut r = PyRandom::new(555);
        let v: Vec<i64> = (0..3).map(|_| r.randint(100, 100000)).collect();
        assert_eq!(v, [25442, 36085, 21209]);
        assert_eq!((r.choice(7), r.randint(0, 3)), (1, 0));
        // x = list(range(10)); r.shuffle(x)
        let mut r = PyRandom::new(555);
        let mut x: Vec<u32> = (0..10).collect();
        r.shuffle(&mut x);
        assert_eq!(x, [5, 7, 9, 6, 0, 8, 1, 2, 4, 3]);
        let mut r = PyRandom::new(1);
        assert_eq!(
            [r.getrandbits(32), r.getrandbits(32)],
            [577090037, 2444712010]
        );
    }

    #[test]
    fn splitmix64_matches_its_reference_output() {
        // The first outputs of splitmix64 seeded with 0 (the published sequence).
        let mut r = SplitMix64(0);
        assert_eq!(r.next_u64(), 0xe220_a839_7b1d_cdaf);
        assert_eq!(r.next_u64(), 0x6e78_9e6a_a1b9_65f4);
    }

    #[test]
    fn normals_have_mean_0_and_sd_1() {
        let mut r = SplitMix64(3);
        let v: Vec<f64> = (0..20_000).map(|_| r.normal()).collect();
        let s = crate::summarize(&v);
        assert!(s.mean.abs() < 0.03 && (s.sd - 1.0).abs() < 0.03, "{s:?}");
        let t: Vec<f64> = (0..20_000).map(|_| r.student_t(3)).collect();
        // t(3) has heavy tails: beyond +-4.541 in 2% of draws (a normal: 6e-6).
        let far = t.iter().filter(|x| x.abs() > 4.541).count() as f64 / 20_000.0;
        assert!((0.016..0.024).contains(&far), "{far}");
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
