//! The box of the rebuild rule's residuals ([`super::trigger::residual_box`])
//! eight particles at a time with AVX-512, on the arrays as they lie in
//! memory ([`crate::simd::eights`]).
//!
//! Each component goes through the operations of the one-particle path in
//! its order, `x − x_ref`, then `− m_j · x_ref,j` for each column `j` of
//! `m` in use, so the residuals have the same bits; a column's `x_ref,j`
//! is taken apart from the registers and spread over the particle's three
//! elements by permutations. Minima and maxima do not depend on the order
//! they are taken in.
#![cfg(target_arch = "x86_64")]

use crate::simd::eights::{each, indices, load, per_element, spread_indices, APART, COMPONENT};
use glam::{DMat3, DVec3};
use std::arch::x86_64::*;

/// The box of `x_k − x_ref,k − Σ_j m_j x_ref,k,j` over the columns `j`
/// with `used[j]` (in axis order), for the particles of `x` in whole
/// groups of eight (the caller does the last few), `(+∞, −∞)` for none;
/// a NaN leaves the box as it was.
///
/// # Safety
/// The processor must have AVX-512 ([`crate::simd::isa::avx512`]).
#[target_feature(enable = "avx2,avx512f,avx512vl,avx512dq,avx512bw,avx512cd")]
pub(super) unsafe fn residual_box_avx512(
    x: &[DVec3],
    x_ref: &[DVec3],
    m: DMat3,
    used: [bool; 3],
) -> (DVec3, DVec3) {
    let full = x.len().min(x_ref.len()) / 8 * 8;
    let spread = spread_indices();
    let cols = [
        per_element(m.x_axis),
        per_element(m.y_axis),
        per_element(m.z_axis),
    ];
    let mut lo = [_mm512_set1_pd(f64::INFINITY); 3];
    let mut hi = [_mm512_set1_pd(f64::NEG_INFINITY); 3];
    for g in (0..full).step_by(8) {
        let (x1, r) = (load(x, g), load(x_ref, g));
        let mut d = each!(e => _mm512_sub_pd(x1[e], r[e]));
        for j in 0..3 {
            if !used[j] {
                continue;
            }
            // The eight particles' component j, then each over its three
            // elements.
            let (first, second) = &APART[j];
            let part = _mm512_permutex2var_pd(r[0], indices(first), r[1]);
            let part = _mm512_permutex2var_pd(part, indices(second), r[2]);
            let at = each!(e => _mm512_permutexvar_pd(spread[e], part));
            d = each!(e => _mm512_sub_pd(d[e], _mm512_mul_pd(cols[j][e], at[e])));
        }
        // `min(a, b)` is `a < b ? a : b`: a NaN in `d` keeps the box.
        lo = each!(e => _mm512_min_pd(d[e], lo[e]));
        hi = each!(e => _mm512_max_pd(d[e], hi[e]));
    }
    let values = |v: __m512d| {
        let mut a = [0.0; 8];
        // SAFETY: eight `f64` are written to the array.
        unsafe { _mm512_storeu_pd(a.as_mut_ptr(), v) };
        a
    };
    let (mut low, mut high) = (DVec3::INFINITY, DVec3::NEG_INFINITY);
    for (e, component) in COMPONENT.iter().enumerate() {
        let (l, h) = (values(lo[e]), values(hi[e]));
        for (i, &a) in component.iter().enumerate() {
            low[a] = low[a].min(l[i]);
            high[a] = high[a].max(h[i]);
        }
    }
    (low, high)
}
