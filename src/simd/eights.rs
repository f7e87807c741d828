//! Eight particles' vectors in three AVX-512 registers, as they lie in
//! memory: 24 consecutive `f64`, component after component (`x₀ y₀ z₀ x₁
//! …`), so that element `e` of register `r` is component `(8r + e) mod 3`
//! of particle `(8r + e) / 3`. Operations that act on each component
//! alone (sums, products by a value per particle) run on the registers as
//! loaded; a value per particle is spread over its components by one
//! permutation per register ([`SPREAD`]), and the components come apart
//! by two permutations each ([`squared_lengths`]). The first half step's
//! hot loop ([`crate::integrate`]) is built on them. Each is compiled with
//! AVX-512 on, so a caller must have it ([`crate::simd::isa::avx512`]).
#![cfg(target_arch = "x86_64")]

use glam::DVec3;
use std::arch::x86_64::*;

/// Element `e` of a register of eight particles' vectors belongs to
/// particle `e / 3`: per register, the particle (of the eight) of each
/// element, for spreading a value per particle over its components.
pub(crate) const SPREAD: [[i64; 8]; 3] = [
    [0, 0, 0, 1, 1, 1, 2, 2],
    [2, 3, 3, 3, 4, 4, 4, 5],
    [5, 5, 6, 6, 6, 7, 7, 7],
];

/// Per register, the component (0, 1, 2 for x, y, z) of each element.
pub(crate) const COMPONENT: [[usize; 8]; 3] = [
    [0, 1, 2, 0, 1, 2, 0, 1],
    [2, 0, 1, 2, 0, 1, 2, 0],
    [1, 2, 0, 1, 2, 0, 1, 2],
];

/// Per component, the permutations that gather it from the three
/// registers, one value per particle: the first picks from registers 0
/// and 1 (indices 8–15 are register 1's), the second keeps the first's
/// five or six and adds register 2's.
pub(crate) const APART: [([i64; 8], [i64; 8]); 3] = [
    ([0, 3, 6, 9, 12, 15, 0, 0], [0, 1, 2, 3, 4, 5, 10, 13]),
    ([1, 4, 7, 10, 13, 0, 0, 0], [0, 1, 2, 3, 4, 8, 11, 14]),
    ([2, 5, 8, 11, 14, 0, 0, 0], [0, 1, 2, 3, 4, 9, 12, 15]),
];

/// Per eight flags of eight particles (bit `l` for particle `l`), the
/// same flags per element of their three registers (bits `3l` to `3l + 2`
/// of a [`word`]).
pub(crate) const FLAGS_PER_ELEMENT: [u32; 256] = {
    let mut table = [0; 256];
    let mut flags = 0;
    while flags < 256 {
        let mut l = 0;
        while l < 8 {
            if flags >> l & 1 == 1 {
                table[flags] |= 0b111 << (3 * l);
            }
            l += 1;
        }
        flags += 1;
    }
    table
};

/// `[e(0), e(1), e(2)]` for an expression `e` of the register number `r`,
/// written out: the hot loop calls no closure (a closure passed to a
/// library function such as `array::map` is not compiled with AVX-512,
/// and every intrinsic in it became a call).
macro_rules! each {
    ($r:ident => $e:expr) => {
        [
            {
                let $r = 0usize;
                $e
            },
            {
                let $r = 1usize;
                $e
            },
            {
                let $r = 2usize;
                $e
            },
        ]
    };
}

pub(crate) use each;

/// Eight indices in a register.
#[target_feature(enable = "avx2,avx512f,avx512vl,avx512dq,avx512bw,avx512cd")]
#[inline]
pub(crate) fn indices(i: &[i64; 8]) -> __m512i {
    // SAFETY: eight `i64` (64 bytes) are read from the array.
    unsafe { _mm512_loadu_si512(i.as_ptr().cast()) }
}

/// The eight `f64` of `s[g..g + 8]` in a register (panics past the end).
#[target_feature(enable = "avx2,avx512f,avx512vl,avx512dq,avx512bw,avx512cd")]
#[inline]
pub(crate) fn load_values(s: &[f64], g: usize) -> __m512d {
    let s = &s[g..g + 8];
    // SAFETY: the eight `f64` of `s`.
    unsafe { _mm512_loadu_pd(s.as_ptr()) }
}

/// The three registers of the eight particles' vectors `s[g..g + 8]`
/// (panics past the end).
#[target_feature(enable = "avx2,avx512f,avx512vl,avx512dq,avx512bw,avx512cd")]
#[inline]
pub(crate) fn load(s: &[DVec3], g: usize) -> [__m512d; 3] {
    let at = s[g..g + 8].as_ptr().cast::<f64>();
    // SAFETY: the 24 `f64` of `s[g..g + 8]` (a `DVec3` is three `f64`).
    each!(r => unsafe { _mm512_loadu_pd(at.add(8 * r)) })
}

/// Store the three registers `v` as the eight particles' vectors
/// `s[g..g + 8]` (panics past the end).
#[target_feature(enable = "avx2,avx512f,avx512vl,avx512dq,avx512bw,avx512cd")]
#[inline]
pub(crate) fn store(s: &mut [DVec3], g: usize, v: [__m512d; 3]) {
    let at = s[g..g + 8].as_mut_ptr().cast::<f64>();
    for (r, v) in v.into_iter().enumerate() {
        // SAFETY: the 24 `f64` of `s[g..g + 8]`.
        unsafe { _mm512_storeu_pd(at.add(8 * r), v) };
    }
}

/// `a·a` per particle of three registers of eight vectors, as
/// [`crate::simd::lane::V3::dot`] sums it: `(x·x + y·y) + z·z`.
#[target_feature(enable = "avx2,avx512f,avx512vl,avx512dq,avx512bw,avx512cd")]
#[inline]
pub(crate) fn squared_lengths(a: [__m512d; 3]) -> __m512d {
    let sq = each!(r => _mm512_mul_pd(a[r], a[r]));
    let part = each!(c => {
        let (first, second) = &APART[c];
        let t = _mm512_permutex2var_pd(sq[0], indices(first), sq[1]);
        _mm512_permutex2var_pd(t, indices(second), sq[2])
    });
    _mm512_add_pd(_mm512_add_pd(part[0], part[1]), part[2])
}

/// The three registers' element masks in one word, element `e` of
/// register `r` at bit `8r + e`.
#[inline(always)]
pub(crate) fn word(m: [__mmask8; 3]) -> u32 {
    u32::from(m[0]) | u32::from(m[1]) << 8 | u32::from(m[2]) << 16
}

/// Whether each element of three registers is finite, as a [`word`].
#[target_feature(enable = "avx2,avx512f,avx512vl,avx512dq,avx512bw,avx512cd")]
#[inline]
pub(crate) fn finite(v: [__m512d; 3]) -> u32 {
    let inf = _mm512_set1_pd(f64::INFINITY);
    word(each!(r => _mm512_cmp_pd_mask::<_CMP_LT_OQ>(_mm512_abs_pd(v[r]), inf)))
}

/// The vector `v` in every particle's place of three registers.
#[target_feature(enable = "avx2,avx512f,avx512vl,avx512dq,avx512bw,avx512cd")]
pub(crate) fn per_element(v: DVec3) -> [__m512d; 3] {
    COMPONENT.map(|r| {
        let values = r.map(|a| v[a]);
        // SAFETY: eight `f64` are read from the array.
        unsafe { _mm512_loadu_pd(values.as_ptr()) }
    })
}

/// The permutations of [`SPREAD`], in registers.
#[target_feature(enable = "avx2,avx512f,avx512vl,avx512dq,avx512bw,avx512cd")]
pub(crate) fn spread_indices() -> [__m512i; 3] {
    SPREAD.map(|s| indices(&s))
}

/// Eight particles' flags `s[g..g + 8]` as bits (bit `l` for particle
/// `g + l`; panics past the end).
#[target_feature(enable = "avx2,avx512f,avx512vl,avx512dq,avx512bw,avx512cd")]
#[inline]
pub(crate) fn flags(s: &[bool], g: usize) -> u8 {
    let at = s[g..g + 8].as_ptr();
    // SAFETY: the eight `bool` (eight bytes) from `at`.
    let bytes = unsafe { _mm_loadl_epi64(at.cast()) };
    _mm_test_epi8_mask(bytes, bytes) as u8
}

/// The masks of the three registers' elements of the particles whose bits
/// of `flags` are clear.
#[inline(always)]
pub(crate) fn clear_elements(flags: u8) -> [__mmask8; 3] {
    let elements = !FLAGS_PER_ELEMENT[usize::from(flags)];
    each!(r => (elements >> (8 * r)) as __mmask8)
}

/// `d − Σ_j m_j x_ref,j` for eight particles, the residuals of the rebuild
/// rule's fitted flow ([`crate::neighbor::trigger::Foreseen::residual`],
/// whose operations each component goes through in the same order, so
/// the bits are the same): over the columns `j` with `used[j]`, in axis
/// order, the product of column `j` (`cols[j]`, [`per_element`]) and each
/// particle's component `j` of `x_ref` (taken apart from the registers and
/// spread over the particle's three elements by `spread`,
/// [`spread_indices`]) taken from the running difference.
#[target_feature(enable = "avx2,avx512f,avx512vl,avx512dq,avx512bw,avx512cd")]
#[inline]
pub(crate) fn minus_flow(
    mut d: [__m512d; 3],
    x_ref: [__m512d; 3],
    cols: &[[__m512d; 3]; 3],
    used: [bool; 3],
    spread: &[__m512i; 3],
) -> [__m512d; 3] {
    for j in 0..3 {
        if !used[j] {
            continue;
        }
        let (first, second) = &APART[j];
        let part = _mm512_permutex2var_pd(x_ref[0], indices(first), x_ref[1]);
        let part = _mm512_permutex2var_pd(part, indices(second), x_ref[2]);
        let at = each!(e => _mm512_permutexvar_pd(spread[e], part));
        d = each!(e => _mm512_sub_pd(d[e], _mm512_mul_pd(cols[j][e], at[e])));
    }
    d
}
