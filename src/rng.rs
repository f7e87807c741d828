//! Counter-based random numbers: Philox4x32-10 and the draws gravel makes
//! from it.
//!
//! # Why counter-based
//!
//! gravel must give the same trajectory to the last bit on any number of
//! ranks and threads and across restarts. A generator with state cannot do
//! that cheaply: whoever evaluates a contact would have to own and advance
//! the right state in the right order. A counter-based generator is a pure
//! function `bits = philox(counter, key)`, so every random number is named by
//! *what it is for* (seed, stream, step, particle ids) rather than by *when*
//! it was drawn. Two ranks that both evaluate the same contact draw the same
//! bits without talking to each other, and a restart only needs the seed and
//! the step number.
//!
//! # Philox4x32-10
//!
//! Salmon, Moraes, Dror, Shaw, "Parallel random numbers: as easy as 1, 2, 3",
//! SC'11 (doi:10.1145/2063384.2063405). A 128-bit counter (four `u32`) and a
//! 64-bit key (two `u32`) go through ten rounds; each round multiplies two
//! counter words by fixed constants, swaps and mixes the high and low halves
//! with the other two words and the round key, and the key is bumped by two
//! Weyl constants between rounds. [`philox4x32_10`] is tested against the
//! Random123 known-answer vectors.
//!
//! # Streams, keys and counters
//!
//! Every use of randomness in gravel gets its own [`Stream`] id. The Philox
//! key is derived from `(seed, stream)` ([`stream_key`]); the counter from
//! what the numbers are for: `(step, min id, max id)` for a pair
//! ([`pair_counter`]), `(counter, id)` for one particle
//! ([`particle_counter`]). The lowest two bits of the last counter word say
//! which kind of draw it is (0–2: the three blocks of a pair draw, 3: a
//! particle draw), so pair and particle draws never share a counter, even
//! under the same stream.
//!
//! # Floating-point conversion
//!
//! [`u01_open`] turns two words into a uniform variate in the *open*
//! interval (0, 1); [`box_muller`] turns two uniforms into two independent
//! standard normal variates, deterministically and without state. Both use
//! only `sqrt`, `ln`, `sin` and `cos` of `std`, so the bits are the same on
//! every rank and thread of one build on one platform; bitwise agreement
//! *across* platforms would additionally need the same `ln`/`sin`/`cos`
//! implementation there.

/// First Philox multiplier (applied to counter word 0).
const PHILOX_M0: u32 = 0xD251_1F53;
/// Second Philox multiplier (applied to counter word 2).
const PHILOX_M1: u32 = 0xCD9E_8D57;
/// Weyl increment of key word 0 between rounds (golden ratio, 32 bits).
const PHILOX_W0: u32 = 0x9E37_79B9;
/// Weyl increment of key word 1 between rounds (sqrt(3) − 1, 32 bits).
const PHILOX_W1: u32 = 0xBB67_AE85;

/// `2^-52`, the grid spacing of [`u01_open`].
const TWO_POW_M52: f64 = 1.0 / 4_503_599_627_370_496.0;

/// Odd 64-bit constant that spreads the stream id over the key
/// (`2^64 / golden ratio`, rounded to odd).
const STREAM_SPREAD: u64 = 0x9E37_79B9_7F4A_7C15;

/// Odd multipliers that fold the high words of a pair's `(step, min, max)`
/// into 30 bits of the counter (see [`pair_counter`]).
const FOLD_MIN: u32 = 0x2545_F491;
/// See [`FOLD_MIN`].
const FOLD_MAX: u32 = 0x6C8E_9CF5;

/// Mask of the 30 bits that hold folded high words in a pair counter.
const MASK_30: u32 = (1 << 30) - 1;
/// Mask of the 29 bits that hold the high word of a particle counter.
const MASK_29: u32 = (1 << 29) - 1;

/// Tag (lowest two bits of counter word 3) of a per-particle draw; pair
/// draws use 0, 1, 2.
const PARTICLE_TAG: u32 = 3;

/// Random stream ids: every use of randomness in gravel gets its own.
///
/// The id goes into the Philox key ([`stream_key`]), so two uses with
/// different ids draw independent numbers even when their counters coincide
/// (for instance the same step and the same particle id). Add a variant, with
/// a new explicit value, for every new use; never reuse or renumber a value,
/// as that would change the trajectories of existing runs. The compiler
/// rejects two variants with the same value (E0081), and a unit test checks
/// [`Stream::ALL`] as well.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Stream {
    /// Noise of the Markovian stochastic friction (one draw per contact and step).
    StochasticFriction = 1,
    /// Positions and properties of randomly inserted particles.
    RandomInsertion = 2,
    /// Particles poured into the domain.
    Pour = 3,
}

impl Stream {
    /// Every stream, in id order (keep in sync with the enum).
    pub const ALL: [Stream; 3] = [
        Stream::StochasticFriction,
        Stream::RandomInsertion,
        Stream::Pour,
    ];

    /// The numeric id that enters the Philox key.
    #[inline]
    pub const fn id(self) -> u32 {
        self as u32
    }
}

/// High and low 32-bit halves of the 64-bit product `a · b`.
#[inline(always)]
fn mul_hi_lo(a: u32, b: u32) -> (u32, u32) {
    let p = u64::from(a) * u64::from(b);
    ((p >> 32) as u32, p as u32)
}

/// The Philox4x32-10 block function of Salmon et al. (SC'11).
///
/// Ten rounds of `(x0, x1, x2, x3) ← (hi(M1·x2) ⊕ x1 ⊕ k0, lo(M1·x2),
/// hi(M0·x0) ⊕ x3 ⊕ k1, lo(M0·x0))`, with `M0 = 0xD2511F53`,
/// `M1 = 0xCD9E8D57` and the key bumped by `(0x9E3779B9, 0xBB67AE85)`
/// (mod 2^32) before every round but the first. A pure function: the same
/// counter and key always give the same 128 bits, and distinct counters under
/// one key give distinct outputs (it is a bijection of the counter).
///
/// ```
/// # use gravel::rng::philox4x32_10;
/// assert_eq!(
///     philox4x32_10([0; 4], [0; 2]),
///     [0x6627_e8d5, 0xe169_c58d, 0xbc57_ac4c, 0x9b00_dbd8]
/// );
/// ```
#[inline]
pub fn philox4x32_10(ctr: [u32; 4], key: [u32; 2]) -> [u32; 4] {
    let mut x = ctr;
    let mut k = key;
    for round in 0..10 {
        if round > 0 {
            k[0] = k[0].wrapping_add(PHILOX_W0);
            k[1] = k[1].wrapping_add(PHILOX_W1);
        }
        let (hi0, lo0) = mul_hi_lo(PHILOX_M0, x[0]);
        let (hi1, lo1) = mul_hi_lo(PHILOX_M1, x[2]);
        x = [hi1 ^ x[1] ^ k[0], lo1, hi0 ^ x[3] ^ k[1], lo0];
    }
    x
}

/// A uniform variate in the open interval (0, 1) from two random words.
///
/// The top 52 bits of `(hi, lo)` form an integer `k` in `[0, 2^52)`, and the
/// result is `(k + 1/2) · 2^-52`: the midpoints of 2^52 equal cells. Every
/// value is exact, the smallest is `2^-53` and the largest `1 − 2^-53`, the
/// set is symmetric under `u → 1 − u` and its mean is exactly 1/2. (A grid of
/// 2^53 midpoints is not representable in `f64` above 1/2, and a 53-bit grid
/// without the half offset contains 0; 52 bits with the offset is the finest
/// open, symmetric grid.) Safe for `ln(u)` and `ln(1 − u)`.
#[inline]
pub fn u01_open(hi: u32, lo: u32) -> f64 {
    let k = (u64::from(hi) << 20) | u64::from(lo >> 12);
    (k as f64 + 0.5) * TWO_POW_M52
}

/// Two independent standard normal variates from two uniforms in (0, 1)
/// (Box–Muller transform).
///
/// `r = sqrt(−2 ln u1)`, `θ = 2π u2`, result `(r cos θ, r sin θ)`. No state
/// and no rejection, so the same inputs always give the same pair. With the
/// grid of [`u01_open`] the largest possible magnitude is
/// `sqrt(2 · 53 ln 2) ≈ 8.57`.
#[inline]
pub fn box_muller(u1: f64, u2: f64) -> [f64; 2] {
    let r = (-2.0 * u1.ln()).sqrt();
    let (s, c) = (std::f64::consts::TAU * u2).sin_cos();
    [r * c, r * s]
}

/// Two standard normal variates from one Philox output block (words 0–1
/// give `u1`, words 2–3 give `u2`).
#[inline]
pub fn normals_from_block(block: [u32; 4]) -> [f64; 2] {
    box_muller(u01_open(block[0], block[1]), u01_open(block[2], block[3]))
}

/// Bijective 64-bit mixing function (the "splitmix64" finalizer: xor-shifts
/// and odd multiplications), used to spread a seed over the key.
#[inline]
fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The Philox key of a `(seed, stream)` pair.
///
/// `k = mix(seed) ⊕ (stream id · C)` with a bijective mixer and an odd `C`,
/// split into two words (low first). For a fixed seed distinct streams give
/// distinct keys, and for a fixed stream distinct seeds give distinct keys.
/// (96 bits cannot map one-to-one onto 64; two different seeds *and*
/// streams can share a key only if the seeds differ by a specific
/// pseudo-random 64-bit pattern, which no sensible choice of seeds hits.)
#[inline]
pub fn stream_key(seed: u64, stream: Stream) -> [u32; 2] {
    let k = mix64(seed) ^ u64::from(stream.id()).wrapping_mul(STREAM_SPREAD);
    [k as u32, (k >> 32) as u32]
}

/// The Philox counter of block `block` (0, 1 or 2) of the draw for the
/// unordered pair `{id_a, id_b}` at step `step`.
///
/// Layout (word: content): 0: low 32 bits of `step`; 1: low 32 bits of
/// `min(id_a, id_b)`; 2: low 32 bits of `max(id_a, id_b)`; 3: `block` in bits
/// 0–1 and, in bits 2–31, the fold `(step_hi + FOLD_MIN · min_hi + FOLD_MAX ·
/// max_hi) mod 2^30` of the three high words, with odd multipliers.
///
/// Guarantees:
/// - symmetric: `(a, b)` and `(b, a)` give the same counter;
/// - collision-free (distinct `(step, min, max)` give distinct counters) when
///   both ids are below 2^32 and `step < 2^62`: then the fold is just
///   `step_hi mod 2^30`;
/// - more generally, two tuples whose low words agree collide only if their
///   high words satisfy `Δstep_hi + FOLD_MIN Δmin_hi + FOLD_MAX Δmax_hi ≡ 0
///   (mod 2^30)`; in particular tuples whose high words differ in one value
///   only, by less than 2^30, never collide (for instance wall ids taken from
///   the top of the `u64` range, all sharing the high word `0xFFFF_FFFF`,
///   next to particle ids below 2^32).
///
/// Beyond these limits (ids of 2^32 and more mixed freely) a collision is
/// possible in principle and would make two pairs share their noise at one
/// step; it needs the linear relation above to hold exactly.
#[inline]
pub fn pair_counter(step: u64, id_a: u64, id_b: u64, block: u32) -> [u32; 4] {
    debug_assert!(block < PARTICLE_TAG, "pair blocks are 0, 1, 2");
    let (lo_id, hi_id) = if id_a <= id_b {
        (id_a, id_b)
    } else {
        (id_b, id_a)
    };
    let step_hi = (step >> 32) as u32;
    let min_hi = (lo_id >> 32) as u32;
    let max_hi = (hi_id >> 32) as u32;
    let fold = step_hi
        .wrapping_add(FOLD_MIN.wrapping_mul(min_hi))
        .wrapping_add(FOLD_MAX.wrapping_mul(max_hi))
        & MASK_30;
    [step as u32, lo_id as u32, hi_id as u32, block | (fold << 2)]
}

/// The Philox counter of block `block` (0 or 1) of the draw for particle
/// `id` at `counter` (a step number or any other per-use counter).
///
/// Layout: 0: low 32 bits of `counter`; 1–2: `id` (low, high); 3: the tag 3
/// in bits 0–1 (never used by [`pair_counter`]), `block` in bit 2 and bits
/// 32–60 of `counter` in bits 3–31. Collision-free for every `id` and every
/// `counter < 2^61`; at and beyond 2^61 the counter wraps modulo 2^61.
#[inline]
pub fn particle_counter(counter: u64, id: u64, block: u32) -> [u32; 4] {
    debug_assert!(block < 2, "particle blocks are 0, 1");
    let c_hi = ((counter >> 32) as u32) & MASK_29;
    [
        counter as u32,
        id as u32,
        (id >> 32) as u32,
        PARTICLE_TAG | (block << 2) | (c_hi << 3),
    ]
}

/// Random draws of one stream under one seed: the key is computed once.
///
/// ```
/// # use gravel::rng::{PairNoise, Stream};
/// let noise = PairNoise::new(42, Stream::StochasticFriction);
/// let g = noise.pair_normals(7, 3, 11);
/// assert_eq!(g, noise.pair_normals(7, 11, 3)); // symmetric in the ids
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PairNoise {
    key: [u32; 2],
}

impl PairNoise {
    /// The draws of `stream` under `seed`.
    #[inline]
    pub fn new(seed: u64, stream: Stream) -> Self {
        Self {
            key: stream_key(seed, stream),
        }
    }

    /// The Philox key in use ([`stream_key`]).
    #[inline]
    pub fn key(&self) -> [u32; 2] {
        self.key
    }

    /// Six independent standard normal variates for the unordered pair
    /// `{id_a, id_b}` at `step` (see [`pair_normals`]).
    #[inline]
    pub fn pair_normals(&self, step: u64, id_a: u64, id_b: u64) -> [f64; 6] {
        let mut out = [0.0; 6];
        for (block, pair) in out.chunks_exact_mut(2).enumerate() {
            let ctr = pair_counter(step, id_a, id_b, block as u32);
            pair.copy_from_slice(&normals_from_block(philox4x32_10(ctr, self.key)));
        }
        out
    }

    /// Four independent uniform variates in (0, 1) for particle `id` at
    /// `counter` (see [`particle_uniforms`]).
    #[inline]
    pub fn particle_uniforms(&self, counter: u64, id: u64) -> [f64; 4] {
        let mut out = [0.0; 4];
        for (block, pair) in out.chunks_exact_mut(2).enumerate() {
            let w = philox4x32_10(particle_counter(counter, id, block as u32), self.key);
            pair[0] = u01_open(w[0], w[1]);
            pair[1] = u01_open(w[2], w[3]);
        }
        out
    }
}

/// Six independent standard normal variates for the unordered pair
/// `{id_a, id_b}` at one step.
///
/// Key from `(seed, stream)` ([`stream_key`]); three Philox blocks with the
/// counters [`pair_counter`]`(step, id_a, id_b, 0..3)`; each block gives two
/// uniforms ([`u01_open`]) and two normals ([`box_muller`]). The result does
/// not depend on the order of `id_a` and `id_b`, so a caller that evaluates
/// the pair in canonical orientation (lower id first) assigns the numbers the
/// same way on every rank and thread; see [`pair_counter`] for the ranges of
/// ids and steps over which distinct pairs are guaranteed distinct numbers.
#[inline]
pub fn pair_normals(seed: u64, step: u64, stream: Stream, id_a: u64, id_b: u64) -> [f64; 6] {
    PairNoise::new(seed, stream).pair_normals(step, id_a, id_b)
}

/// Four independent uniform variates in (0, 1) for particle `id`.
///
/// `step_or_counter` names the draw (the step, or an insertion attempt
/// number, ...); key from `(seed, stream)`, two Philox blocks with the
/// counters [`particle_counter`]`(step_or_counter, id, 0..2)`. Distinct
/// `(step_or_counter, id)` with `step_or_counter < 2^61` give distinct
/// counters, and none of them equals a pair counter.
#[inline]
pub fn particle_uniforms(seed: u64, step_or_counter: u64, stream: Stream, id: u64) -> [f64; 4] {
    PairNoise::new(seed, stream).particle_uniforms(step_or_counter, id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    /// Random123 known-answer vectors for Philox4x32-10 (kat_vectors).
    #[test]
    fn philox_known_answers() {
        assert_eq!(
            philox4x32_10([0, 0, 0, 0], [0, 0]),
            [0x6627_e8d5, 0xe169_c58d, 0xbc57_ac4c, 0x9b00_dbd8]
        );
        assert_eq!(
            philox4x32_10([u32::MAX; 4], [u32::MAX; 2]),
            [0x408f_276d, 0x41c8_3b0e, 0xa20b_c7c6, 0x6d54_51fd]
        );
        assert_eq!(
            philox4x32_10(
                [0x243f_6a88, 0x85a3_08d3, 0x1319_8a2e, 0x0370_7344],
                [0xa409_3822, 0x299f_31d0]
            ),
            [0xd16c_fe09, 0x94fd_cceb, 0x5001_e420, 0x2412_6ea1]
        );
    }

    #[test]
    fn stream_ids_are_distinct() {
        let ids: HashSet<u32> = Stream::ALL.iter().map(|s| s.id()).collect();
        assert_eq!(ids.len(), Stream::ALL.len());
        // Explicit values: changing one changes every run's trajectory.
        assert_eq!(Stream::StochasticFriction.id(), 1);
        assert_eq!(Stream::RandomInsertion.id(), 2);
        assert_eq!(Stream::Pour.id(), 3);
        // ALL lists every variant: this match stops compiling when one is added.
        for s in Stream::ALL {
            match s {
                Stream::StochasticFriction | Stream::RandomInsertion | Stream::Pour => {}
            }
        }
        // Distinct streams give distinct keys under one seed.
        for seed in [0, 1, 42, u64::MAX] {
            let keys: HashSet<[u32; 2]> =
                Stream::ALL.iter().map(|&s| stream_key(seed, s)).collect();
            assert_eq!(keys.len(), Stream::ALL.len());
        }
    }

    #[test]
    fn uniform_grid_is_open_and_symmetric() {
        let lo = u01_open(0, 0);
        let hi = u01_open(u32::MAX, u32::MAX);
        assert_eq!(lo, 2f64.powi(-53));
        assert_eq!(hi, 1.0 - 2f64.powi(-53));
        assert!(lo > 0.0 && hi < 1.0);
        assert_eq!(lo + hi, 1.0);
        // The 12 lowest bits of `lo` are not used.
        assert_eq!(u01_open(5, 0xfff), u01_open(5, 0));
        assert_ne!(u01_open(5, 0x1000), u01_open(5, 0));
        // Extremes of Box–Muller stay finite.
        for [a, b] in [[lo, lo], [lo, hi], [hi, lo], [hi, hi]] {
            assert!(box_muller(a, b)
                .iter()
                .all(|z| z.is_finite() && z.abs() < 8.6));
        }
    }

    #[test]
    fn pair_draws_are_symmetric_and_deterministic() {
        let noise = PairNoise::new(2025, Stream::StochasticFriction);
        for (a, b) in [(0, 1), (17, 4), (u64::MAX, 3), (1 << 40, 1 << 33)] {
            let g = noise.pair_normals(99, a, b);
            assert_eq!(g, noise.pair_normals(99, b, a));
            assert_eq!(g, pair_normals(2025, 99, Stream::StochasticFriction, a, b));
            assert!(g.iter().all(|z| z.is_finite()));
        }
        // Different step, stream, seed or pair: different numbers.
        let g = pair_normals(1, 10, Stream::StochasticFriction, 3, 4);
        assert_ne!(g, pair_normals(1, 11, Stream::StochasticFriction, 3, 4));
        assert_ne!(g, pair_normals(1, 10, Stream::Pour, 3, 4));
        assert_ne!(g, pair_normals(2, 10, Stream::StochasticFriction, 3, 4));
        assert_ne!(g, pair_normals(1, 10, Stream::StochasticFriction, 3, 5));
        let u = particle_uniforms(1, 10, Stream::RandomInsertion, 3);
        assert_eq!(u, particle_uniforms(1, 10, Stream::RandomInsertion, 3));
        assert_ne!(u, particle_uniforms(1, 10, Stream::RandomInsertion, 4));
        assert_ne!(u, particle_uniforms(1, 11, Stream::RandomInsertion, 3));
        assert!(u.iter().all(|&x| x > 0.0 && x < 1.0));
    }

    #[test]
    fn counters_are_distinct() {
        let steps = [
            0u64,
            1,
            2,
            1 << 31,
            (1 << 32) - 1,
            1 << 32,
            (1 << 32) + 1,
            1 << 45,
        ];
        let ids = [
            0u64,
            1,
            2,
            77,
            (1 << 31) + 5,
            (1 << 32) - 1,
            u64::MAX,
            u64::MAX - 1,
            u64::MAX - 5,
        ];
        let mut seen = HashSet::new();
        let mut n = 0;
        for &s in &steps {
            for (ia, &a) in ids.iter().enumerate() {
                for &b in &ids[ia..] {
                    for block in 0..3 {
                        assert!(
                            seen.insert(pair_counter(s, a, b, block)),
                            "{s} {a} {b} {block}"
                        );
                        assert_eq!(pair_counter(s, a, b, block), pair_counter(s, b, a, block));
                        n += 1;
                    }
                }
            }
        }
        // Particle counters are disjoint from pair counters and among themselves.
        for &c in &steps {
            for &id in &ids {
                for block in 0..2 {
                    assert!(seen.insert(particle_counter(c, id, block)));
                    n += 1;
                }
            }
        }
        assert_eq!(seen.len(), n);
        // Dense small range: every (step, min, max) with ids < 64.
        let mut dense = HashSet::new();
        for s in 0..8u64 {
            for a in 0..64u64 {
                for b in a..64 {
                    assert!(dense.insert(pair_counter(s, a, b, 0)));
                }
            }
        }
    }

    /// Moments of 10^6 normals from the pair draw (all six components).
    /// Tolerances are 5 standard errors: mean 5/sqrt(N), variance
    /// 5 sqrt(2/N), kurtosis 5 sqrt(96/N) (fourth moment of a normal: 3,
    /// variance of its estimator (105 − 9)/N).
    #[test]
    fn normal_moments() {
        let noise = PairNoise::new(12345, Stream::StochasticFriction);
        let n_pairs = 1_000_000 / 6 + 1;
        let mut sum = [0.0f64; 4];
        let mut n = 0usize;
        // Lag-one products between neighbouring components, and the same
        // component of two consecutive steps of one pair.
        let mut cross = 0.0;
        let mut lag = 0.0;
        let mut prev = [0.0; 6];
        for k in 0..n_pairs as u64 {
            let g = noise.pair_normals(k / 64, k % 64, 1000 + k % 7);
            for (c, &z) in g.iter().enumerate() {
                let z2 = z * z;
                sum[0] += z;
                sum[1] += z2;
                sum[2] += z2 * z;
                sum[3] += z2 * z2;
                n += 1;
                if c > 0 {
                    cross += g[c - 1] * z;
                }
            }
            lag += prev[0] * g[0];
            prev = g;
        }
        let nf = n as f64;
        let mean = sum[0] / nf;
        let var = sum[1] / nf - mean * mean;
        let skew = sum[2] / nf / var.powf(1.5);
        let kurt = sum[3] / nf / (var * var);
        let cross = cross / (n_pairs as f64 * 5.0);
        let lag = lag / n_pairs as f64;
        eprintln!("N={n} mean={mean:.2e} var={var:.5} skew={skew:.2e} kurt={kurt:.4} cross={cross:.2e} lag={lag:.2e}");
        assert!(mean.abs() < 5.0 / nf.sqrt(), "mean {mean}");
        assert!((var - 1.0).abs() < 5.0 * (2.0 / nf).sqrt(), "var {var}");
        assert!(skew.abs() < 5.0 * (15.0 / nf).sqrt(), "skew {skew}");
        assert!((kurt - 3.0).abs() < 5.0 * (96.0 / nf).sqrt(), "kurt {kurt}");
        assert!(
            cross.abs() < 5.0 / (n_pairs as f64 * 5.0).sqrt(),
            "cross {cross}"
        );
        assert!(lag.abs() < 5.0 / (n_pairs as f64).sqrt(), "lag {lag}");
    }

    /// Uniforms: mean 1/2 and variance 1/12 within 5 standard errors
    /// (standard error of the variance estimator: sqrt(1/180/N)).
    #[test]
    fn uniform_moments() {
        let noise = PairNoise::new(7, Stream::RandomInsertion);
        let n_draws = 250_000u64;
        let (mut s1, mut s2) = (0.0, 0.0);
        for k in 0..n_draws {
            for u in noise.particle_uniforms(k / 100, k % 100) {
                assert!(u > 0.0 && u < 1.0);
                s1 += u;
                s2 += u * u;
            }
        }
        let nf = (n_draws * 4) as f64;
        let mean = s1 / nf;
        let var = s2 / nf - mean * mean;
        eprintln!("uniforms: mean={mean:.6} var={var:.6}");
        assert!((mean - 0.5).abs() < 5.0 * (1.0 / 12.0 / nf).sqrt());
        assert!((var - 1.0 / 12.0).abs() < 5.0 * (1.0 / 180.0 / nf).sqrt());
    }
}
