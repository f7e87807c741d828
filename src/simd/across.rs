//! Four `(x, y, z, w)` quadruples, one per 256-bit register, read across
//! the registers: the AVX2 distance tests of the force stage's filter and
//! the neighbour search, four pairs at a time; and eight, two per 512-bit
//! register, for the AVX-512 filter.

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

/// The squared lengths `(x² + y²) + z²` of four vectors `(x, y, z, ·)`
/// (their fourth values ignored), one per lane: `DVec3::length_squared`'s
/// operations in its order, so the same bits as one vector at a time.
///
/// # Safety
/// The processor must have AVX2 (a caller built with it, or one that
/// checked [`crate::simd::isa::avx2`]).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
pub fn squared_lengths(v: [__m256d; 4]) -> __m256d {
    let sq = v.map(|v| _mm256_mul_pd(v, v));
    let lo01 = _mm256_unpacklo_pd(sq[0], sq[1]); // x0 x1 z0 z1
    let hi01 = _mm256_unpackhi_pd(sq[0], sq[1]); // y0 y1 w0 w1
    let lo23 = _mm256_unpacklo_pd(sq[2], sq[3]);
    let hi23 = _mm256_unpackhi_pd(sq[2], sq[3]);
    let x2 = _mm256_permute2f128_pd::<0x20>(lo01, lo23);
    let z2 = _mm256_permute2f128_pd::<0x31>(lo01, lo23);
    let y2 = _mm256_permute2f128_pd::<0x20>(hi01, hi23);
    _mm256_add_pd(_mm256_add_pd(x2, y2), z2)
}

/// The fourth values (`w`) of four registers, one per lane.
///
/// # Safety
/// As [`squared_lengths`].
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
pub fn fourth_values(v: [__m256d; 4]) -> __m256d {
    let r01 = _mm256_unpackhi_pd(v[0], v[1]); // y0 y1 w0 w1
    let r23 = _mm256_unpackhi_pd(v[2], v[3]);
    _mm256_permute2f128_pd::<0x31>(r01, r23)
}

/// Eight `(x, y, z, w)` quadruples in four 512-bit registers, two per
/// register: register `t` holds items `EIGHT_ORDER[t]` (its low and high
/// halves), so that the values read across them come out in item order.
pub const EIGHT_ORDER: [[usize; 2]; 4] = [[0, 2], [1, 3], [4, 6], [5, 7]];

/// Two quadruples in one 512-bit register, `a` in its low half.
///
/// # Safety
/// As [`squared_lengths_of_eight`].
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,avx512f,avx512vl,avx512dq,avx512bw,avx512cd")]
#[inline]
pub fn two(a: &glam::DVec4, b: &glam::DVec4) -> __m512d {
    // SAFETY: a `DVec4` is four `f64` in order (x, y, z, w).
    let (low, high) = unsafe {
        (
            _mm256_loadu_pd(a.as_ref().as_ptr()),
            _mm256_loadu_pd(b.as_ref().as_ptr()),
        )
    };
    _mm512_insertf64x4::<1>(_mm512_castpd256_pd512(low), high)
}

/// [`squared_lengths`] for eight vectors `(x, y, z, ·)` held as
/// [`EIGHT_ORDER`] says, one per element in item order: the same
/// operations in the same order, so the same bits.
///
/// # Safety
/// The processor must have AVX-512 (a caller built with it, or one that
/// checked [`crate::simd::isa::avx512`]).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,avx512f,avx512vl,avx512dq,avx512bw,avx512cd")]
#[inline]
pub fn squared_lengths_of_eight(v: [__m512d; 4]) -> __m512d {
    let sq = [
        _mm512_mul_pd(v[0], v[0]),
        _mm512_mul_pd(v[1], v[1]),
        _mm512_mul_pd(v[2], v[2]),
        _mm512_mul_pd(v[3], v[3]),
    ];
    // Per 128-bit lane, as in `squared_lengths`: x0 x1 | z0 z1 | x2 x3 | z2 z3
    // for the items of registers 0 and 1 (low halves 0, 1; high halves
    // 2, 3), and the same for registers 2 and 3 (items 4 to 7).
    let lo01 = _mm512_unpacklo_pd(sq[0], sq[1]);
    let hi01 = _mm512_unpackhi_pd(sq[0], sq[1]);
    let lo23 = _mm512_unpacklo_pd(sq[2], sq[3]);
    let hi23 = _mm512_unpackhi_pd(sq[2], sq[3]);
    // Lanes 0 and 2 of each (the x or y pairs), or 1 and 3 (z or w).
    let x2 = _mm512_shuffle_f64x2::<0x88>(lo01, lo23);
    let z2 = _mm512_shuffle_f64x2::<0xDD>(lo01, lo23);
    let y2 = _mm512_shuffle_f64x2::<0x88>(hi01, hi23);
    _mm512_add_pd(_mm512_add_pd(x2, y2), z2)
}

/// [`fourth_values`] of eight quadruples held as [`EIGHT_ORDER`] says,
/// one per element in item order.
///
/// # Safety
/// As [`squared_lengths_of_eight`].
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,avx512f,avx512vl,avx512dq,avx512bw,avx512cd")]
#[inline]
pub fn fourth_values_of_eight(v: [__m512d; 4]) -> __m512d {
    let r01 = _mm512_unpackhi_pd(v[0], v[1]); // y0 y1 | w0 w1 | y2 y3 | w2 w3
    let r23 = _mm512_unpackhi_pd(v[2], v[3]);
    _mm512_shuffle_f64x2::<0xDD>(r01, r23)
}

/// Per outcome of four tests (bit `t` set: item `t` is kept), the places
/// of the kept items, in order, then zeros: the permutation that packs
/// four 32-bit items so that the kept ones come first
/// (`_mm_permutevar_ps`). The neighbour search keeps its candidates' places
/// so.
pub static KEPT_FIRST: [[u32; 4]; 16] = {
    let mut table = [[0u32; 4]; 16];
    let mut mask = 0;
    while mask < 16 {
        let (mut t, mut at) = (0, 0);
        while t < 4 {
            if mask & (1 << t) != 0 {
                table[mask][at] = t as u32;
                at += 1;
            }
            t += 1;
        }
        mask += 1;
    }
    table
};

/// [`KEPT_FIRST`] for four 64-bit items, as pairs of 32-bit words
/// (`_mm256_permutevar8x32_epi32`): the filter keeps its near jobs'
/// `[o, j]` entries so, and the summing pass the share slots in contact
/// ([`crate::force`]).
pub static KEPT_FIRST_64: [[u32; 8]; 16] = {
    let mut table = [[0u32; 8]; 16];
    let mut mask = 0;
    while mask < 16 {
        let mut at = 0;
        while at < (mask as u32).count_ones() as usize {
            let t = KEPT_FIRST[mask][at];
            (table[mask][2 * at], table[mask][2 * at + 1]) = (2 * t, 2 * t + 1);
            at += 1;
        }
        mask += 1;
    }
    table
};

#[cfg(test)]
mod tables {
    use super::*;

    /// Each table keeps, for each outcome of four tests, the items kept
    /// and only those, in order (a 64-bit item's two words together).
    #[test]
    fn the_kept_items_come_first_in_order() {
        for mask in 0..16 {
            let kept: Vec<u32> = (0..4).filter(|t| mask & (1 << t) != 0).collect();
            let n = kept.len();
            assert_eq!(KEPT_FIRST[mask][..n], kept[..], "mask {mask:04b}");
            let words: Vec<u32> = kept.iter().flat_map(|&t| [2 * t, 2 * t + 1]).collect();
            assert_eq!(KEPT_FIRST_64[mask][..2 * n], words[..], "mask {mask:04b}");
        }
    }
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::*;
    use glam::DVec4;

    /// Lane by lane the bits of one vector at a time.
    #[test]
    fn four_at_a_time_give_the_bits_of_one_at_a_time() {
        if !crate::simd::isa::processor_has_avx2() {
            return;
        }
        let v = [
            DVec4::new(0.1, -0.2, 0.3, 0.5),
            DVec4::new(1.0 / 3.0, 2.0 / 7.0, -5.0 / 11.0, 0.25),
            DVec4::new(1e-300, 1e300, -0.0, 7.0),
            DVec4::new(-3.5, 0.0, 2.0f64.sqrt(), f64::NAN),
        ];
        // SAFETY: the processor has AVX2 (tested above); a `DVec4` is four
        // `f64` in order.
        let (lengths, fourth) = unsafe {
            let r = v.map(|v| _mm256_loadu_pd(v.as_ref().as_ptr()));
            (squared_lengths(r), fourth_values(r))
        };
        let (mut l, mut w) = ([0.0; 4], [0.0; 4]);
        // SAFETY: four `f64` each.
        unsafe {
            _mm256_storeu_pd(l.as_mut_ptr(), lengths);
            _mm256_storeu_pd(w.as_mut_ptr(), fourth);
        }
        for t in 0..4 {
            assert_eq!(l[t].to_bits(), v[t].truncate().length_squared().to_bits());
            assert_eq!(w[t].to_bits(), v[t].w.to_bits());
        }
    }

    /// Eight at a time, item by item the bits of one vector at a time.
    #[test]
    fn eight_at_a_time_give_the_bits_of_one_at_a_time() {
        if !crate::simd::isa::avx512() {
            return;
        }
        let v: [DVec4; 8] = std::array::from_fn(|t| {
            let t = t as f64;
            DVec4::new(0.1 * t - 0.3, 1.0 / (t + 3.0), -(t * t) / 7.0, 0.5 + t)
        });
        // SAFETY: the processor has AVX-512 (tested above); a `DVec4` is
        // four `f64` in order.
        let (lengths, fourth) = unsafe {
            let r = EIGHT_ORDER.map(|[a, b]| two(&v[a], &v[b]));
            (squared_lengths_of_eight(r), fourth_values_of_eight(r))
        };
        let (mut l, mut w) = ([0.0; 8], [0.0; 8]);
        // SAFETY: eight `f64` each.
        unsafe {
            _mm512_storeu_pd(l.as_mut_ptr(), lengths);
            _mm512_storeu_pd(w.as_mut_ptr(), fourth);
        }
        for t in 0..8 {
            assert_eq!(
                l[t].to_bits(),
                v[t].truncate().length_squared().to_bits(),
                "item {t}"
            );
            assert_eq!(w[t].to_bits(), v[t].w.to_bits(), "item {t}");
        }
    }
}
