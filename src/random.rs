//! Random numbers exactly as sysbench 1.0 draws them: xoroshiro128+ per client and the
//! `--rand-type` distributions with sysbench's formulas (src/sb_rand.c, tag 1.0.20).
//!
//! Every client owns one [`Rng`]; nothing here is shared except [`UniqueSequence`], which
//! sysbench also shares between threads (an atomic counter).

use std::sync::atomic::{AtomicU32, Ordering};

/// xoroshiro128+, the generator sysbench uses per thread.
#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 2],
}

impl Rng {
    /// Seeds both words through splitmix64 so that nearby seeds give unrelated streams.
    pub fn seeded(seed: u64) -> Self {
        let mut x = seed;
        let mut next = || {
            x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        };
        let s = [next(), next()];
        // The all-zero state is the one state xoroshiro cannot leave.
        Rng { s: if s == [0, 0] { [1, 0] } else { s } }
    }

    /// The stream of client `client` under run seed `seed`.
    pub fn for_client(seed: u64, client: u64) -> Self {
        Rng::seeded(seed ^ client.wrapping_mul(0xA076_1D64_78BD_642F))
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let s0 = self.s[0];
        let mut s1 = self.s[1];
        let result = s0.wrapping_add(s1);
        s1 ^= s0;
        self.s[0] = s0.rotate_left(55) ^ s1 ^ (s1 << 14);
        self.s[1] = s1.rotate_left(36);
        result
    }

    /// A double in [0, 1), built from the top 52 bits as sysbench does.
    #[inline]
    pub fn next_f64(&mut self) -> f64 {
        let x = self.next_u64();
        f64::from_bits((0x3FFu64 << 52) | (x >> 12)) - 1.0
    }

    /// sysbench.rand.uniform(a, b): `a + u * (b - a + 1)`, truncated.
    #[inline]
    pub fn uniform(&mut self, a: u32, b: u32) -> u32 {
        a.wrapping_add((self.next_f64() * (b as f64 - a as f64 + 1.0)) as u32)
    }

    /// sysbench.rand.string: every `#` of the template becomes a random digit.
    pub fn fill_digits(&mut self, template: &[u8], out: &mut Vec<u8>) {
        out.clear();
        for &ch in template {
            out.push(if ch == b'#' { self.uniform(b'0' as u32, b'9' as u32) as u8 } else { ch });
        }
    }
}

/// The `--rand-type` choices.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DistributionKind {
    Uniform,
    Gaussian,
    Special,
    Pareto,
    Zipfian,
}

impl DistributionKind {
    pub const ALL: [DistributionKind; 5] = [
        DistributionKind::Uniform,
        DistributionKind::Gaussian,
        DistributionKind::Special,
        DistributionKind::Pareto,
        DistributionKind::Zipfian,
    ];

    pub fn name(self) -> &'static str {
        match self {
            DistributionKind::Uniform => "uniform",
            DistributionKind::Gaussian => "gaussian",
            DistributionKind::Special => "special",
            DistributionKind::Pareto => "pareto",
            DistributionKind::Zipfian => "zipfian",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|d| d.name() == s)
    }
}

/// The distribution parameters of a run (sysbench's `--rand-*` options).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct DistributionSpec {
    pub kind: DistributionKind,
    pub spec_iter: u32,
    pub spec_pct: u32,
    pub spec_res: u32,
    pub pareto_h: f64,
    pub zipfian_exp: f64,
}

impl Default for DistributionSpec {
    fn default() -> Self {
        DistributionSpec {
            kind: DistributionKind::Uniform,
            spec_iter: 12,
            spec_pct: 1,
            spec_res: 75,
            pareto_h: 0.2,
            zipfian_exp: 0.8,
        }
    }
}

/// A distribution parameter the formulas cannot take.
#[derive(Debug, thiserror::Error)]
pub enum DistributionError {
    #[error("--rand-spec-iter must be at least 1")]
    SpecIter,
    #[error("--rand-spec-pct must be between 0 and 100")]
    SpecPct,
    #[error("--rand-spec-res must be between 0 and 99")]
    SpecRes,
    #[error("--rand-pareto-h must be between 0 and 1 (exclusive)")]
    ParetoH,
    #[error("--rand-zipfian-exp must be a finite number >= 0")]
    ZipfianExp,
}

impl DistributionSpec {
    /// Checks the parameters the formulas cannot take.
    pub fn validate(&self) -> Result<(), DistributionError> {
        if self.spec_iter == 0 {
            return Err(DistributionError::SpecIter);
        }
        if self.spec_pct > 100 {
            return Err(DistributionError::SpecPct);
        }
        if self.spec_res >= 100 {
            return Err(DistributionError::SpecRes);
        }
        if self.pareto_h.is_nan() || self.pareto_h <= 0.0 || self.pareto_h >= 1.0 {
            return Err(DistributionError::ParetoH);
        }
        if !self.zipfian_exp.is_finite() || self.zipfian_exp < 0.0 {
            return Err(DistributionError::ZipfianExp);
        }
        Ok(())
    }

    /// Precomputes the constants sysbench computes once at start-up.
    pub fn sampler(&self) -> Distribution {
        let e = self.zipfian_exp;
        Distribution {
            kind: self.kind,
            iter: self.spec_iter,
            iter_mult: 1.0 / self.spec_iter as f64,
            pct_mult: self.spec_pct as f64 / 100.0,
            pct_2_mult: self.spec_pct as f64 / 200.0,
            res_mult: 100.0 / (100.0 - self.spec_res as f64),
            pareto_power: self.pareto_h.ln() / (1.0 - self.pareto_h).ln(),
            zipf_exp: e,
            zipf_s: 2.0 - h_integral_inverse(h_integral(2.5, e) - h(2.0, e), e),
            zipf_h_integral_x1: h_integral(1.5, e) - 1.0,
        }
    }

    /// One line for reports, e.g. `special (pct=1, res=75, iter=12)`.
    pub fn describe(&self) -> String {
        match self.kind {
            DistributionKind::Uniform => "uniform".into(),
            DistributionKind::Gaussian => format!("gaussian (iter={})", self.spec_iter),
            DistributionKind::Special => format!(
                "special (pct={}, res={}, iter={}; sysbench 1.0.20's default)",
                self.spec_pct, self.spec_res, self.spec_iter
            ),
            DistributionKind::Pareto => format!("pareto (h={})", self.pareto_h),
            DistributionKind::Zipfian => format!("zipfian (exp={})", self.zipfian_exp),
        }
    }
}

/// A ready-to-draw distribution: `sample(rng, a, b)` is sysbench's `sb_rand_default(a, b)`.
#[derive(Clone, Debug)]
pub struct Distribution {
    kind: DistributionKind,
    iter: u32,
    iter_mult: f64,
    pct_mult: f64,
    pct_2_mult: f64,
    res_mult: f64,
    pareto_power: f64,
    zipf_exp: f64,
    zipf_s: f64,
    zipf_h_integral_x1: f64,
}

impl Distribution {
    #[inline]
    pub fn sample(&self, rng: &mut Rng, a: u32, b: u32) -> u32 {
        match self.kind {
            DistributionKind::Uniform => rng.uniform(a, b),
            DistributionKind::Gaussian => self.gaussian(rng, a, b),
            DistributionKind::Special => self.special(rng, a, b),
            DistributionKind::Pareto => {
                let t = b as f64 - a as f64 + 1.0;
                a.wrapping_add((t * rng.next_f64().powf(self.pareto_power)) as u32)
            }
            DistributionKind::Zipfian => a.wrapping_add(self.zipfian_int(rng, b - a + 1)).wrapping_sub(1),
        }
    }

    /// sb_rand_gaussian (1.0.20; master always returns `a` here).
    fn gaussian(&self, rng: &mut Rng, a: u32, b: u32) -> u32 {
        let t = b as f64 - a as f64 + 1.0;
        let mut sum = 0.0;
        for _ in 0..self.iter {
            sum += rng.next_f64() * t;
        }
        a.wrapping_add((sum * self.iter_mult) as u32)
    }

    /// sb_rand_special: a gaussian part and a hot spot of `pct`% of the range in the middle.
    fn special(&self, rng: &mut Rng, a: u32, b: u32) -> u32 {
        let t = b as f64 - a as f64;
        let range_size = t * self.res_mult;
        let rnd = rng.next_f64();
        let res = rnd * range_size;
        if res < t {
            let mut sum = 0.0;
            for _ in 0..self.iter {
                sum += rng.next_f64();
            }
            return (a as f64 + sum * t * self.iter_mult) as u32;
        }
        let d = t * self.pct_mult;
        let res = rnd * (d + 1.0) + t / 2.0 - t * self.pct_2_mult;
        a.wrapping_add(res as u32)
    }

    /// Rejection-inversion Zipf sampler (Hörmann & Derflinger 1996) as in sysbench master:
    /// returns k in [1, n] with P(k) proportional to 1/k^exp.
    fn zipfian_int(&self, rng: &mut Rng, n: u32) -> u32 {
        let e = self.zipf_exp;
        let h_n = h_integral(n as f64 + 0.5, e);
        loop {
            let u = h_n + rng.next_f64() * (self.zipf_h_integral_x1 - h_n);
            let x = h_integral_inverse(u, e);
            let k = ((x + 0.5) as u32).clamp(1, n);
            if k as f64 - x <= self.zipf_s || u >= h_integral(k as f64 + 0.5, e) - h(k as f64, e) {
                return k;
            }
        }
    }
}

fn h_integral(x: f64, e: f64) -> f64 {
    let log_x = x.ln();
    helper2((1.0 - e) * log_x) * log_x
}

fn h(x: f64, e: f64) -> f64 {
    (-e * x.ln()).exp()
}

fn h_integral_inverse(x: f64, e: f64) -> f64 {
    let t = (x * (1.0 - e)).max(-1.0);
    (helper1(t) * x).exp()
}

/// log(1 + x) / x, with a Taylor series near 0.
fn helper1(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.ln_1p() / x
    } else {
        1.0 - x * (0.5 - x * ((1.0 / 3.0) - 0.25 * x))
    }
}

/// (exp(x) - 1) / x, with a Taylor series near 0.
fn helper2(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.exp_m1() / x
    } else {
        1.0 + x * 0.5 * (1.0 + x * (1.0 / 3.0) * (1.0 + 0.25 * x))
    }
}

/// sysbench.rand.unique(): a permutation of u32 by quadratic residues modulo the largest
/// 32-bit prime (Preshing's RandomSequence), shared by all clients of a run.
#[derive(Debug)]
pub struct UniqueSequence {
    index: AtomicU32,
    offset: u32,
}

impl UniqueSequence {
    pub fn new(seed: u64) -> Self {
        let (index, offset) = (seed as u32, (seed >> 32) as u32);
        UniqueSequence {
            index: AtomicU32::new(permute(permute(index).wrapping_add(0x682f_0161))),
            offset: permute(permute(offset).wrapping_add(0x4679_0905)),
        }
    }

    /// Part `index` of `count` of the sequence (a shard's): it starts `index / count` of the
    /// way through the 2^32 values, so parts never collide until one draws 2^32 / count.
    pub fn part(seed: u64, index: u32, count: u32) -> Self {
        let s = UniqueSequence::new(seed);
        let stride = ((1u64 << 32) / count.max(1) as u64) as u32;
        let start = s.index.load(Ordering::Relaxed).wrapping_add(stride.wrapping_mul(index));
        UniqueSequence { index: AtomicU32::new(start), offset: s.offset }
    }

    pub fn next(&self) -> u32 {
        let index = self.index.fetch_add(1, Ordering::Relaxed);
        permute((permute(index).wrapping_add(self.offset)) ^ 0x5bf0_3635)
    }
}

fn permute(x: u32) -> u32 {
    const PRIME: u32 = 4_294_967_291;
    if x >= PRIME {
        return x;
    }
    let residue = ((x as u64 * x as u64) % PRIME as u64) as u32;
    if x <= PRIME / 2 {
        residue
    } else {
        PRIME - residue
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_of_the_unique_sequence_do_not_collide() {
        let whole = UniqueSequence::new(7);
        let parts: Vec<UniqueSequence> = (0..3).map(|i| UniqueSequence::part(7, i, 3)).collect();
        assert_eq!(parts[0].next(), whole.next(), "part 0 is the sequence itself");
        let mut seen = std::collections::HashSet::new();
        for p in &parts {
            for _ in 0..10_000 {
                assert!(seen.insert(p.next()), "a value drawn by two parts");
            }
        }
    }

    #[test]
    fn xoroshiro_matches_reference_vector() {
        // Reference: xoroshiro128+ (Blackman & Vigna, 2016 constants 55/14/36) from state [1, 2].
        let mut r = Rng { s: [1, 2] };
        assert_eq!(r.next_u64(), 3);
        let second = r.next_u64();
        // s0' = rotl(1,55) ^ 3 ^ (3<<14), s1' = rotl(3,36)
        let s0 = 1u64.rotate_left(55) ^ 3 ^ (3 << 14);
        let s1 = 3u64.rotate_left(36);
        assert_eq!(second, s0.wrapping_add(s1));
    }

    #[test]
    fn doubles_are_in_unit_interval() {
        let mut r = Rng::seeded(7);
        for _ in 0..100_000 {
            let u = r.next_f64();
            assert!((0.0..1.0).contains(&u));
        }
    }

    #[test]
    fn unique_sequence_does_not_repeat() {
        let seq = UniqueSequence::new(42);
        let mut seen = std::collections::HashSet::new();
        for _ in 0..100_000 {
            assert!(seen.insert(seq.next()));
        }
    }

    #[test]
    fn same_seed_same_stream_other_client_other_stream() {
        let mut a = Rng::for_client(5, 1);
        let mut b = Rng::for_client(5, 1);
        let mut c = Rng::for_client(5, 2);
        let va: Vec<u64> = (0..8).map(|_| a.next_u64()).collect();
        let vb: Vec<u64> = (0..8).map(|_| b.next_u64()).collect();
        let vc: Vec<u64> = (0..8).map(|_| c.next_u64()).collect();
        assert_eq!(va, vb);
        assert_ne!(va, vc);
    }
}
