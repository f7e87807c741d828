//! The first half step eight particles at a time with AVX-512, on the
//! arrays as they lie in memory ([`crate::simd::eights`]).
//!
//! The kick and the drift act on each component alone, so they run on the
//! registers as loaded, with each particle's `½Δt/m` and `½Δt/I` spread
//! over its three components; only the sums over components (the squared
//! step and displacement) and the packed images need the components apart.
//! Every component goes through the operations of [`super::drift_lanes`],
//! in its order, so the bits are the same; the lane path gathers and
//! scatters each value one at a time, which costs more than the
//! arithmetic (docs/performance.md, 2026-12-03).

use super::{
    drift_rest, take_for_writing, DriftArrays, DriftConstants, DriftScan, MAX_STEP_FRACTION,
    WRITE_AHEAD,
};
use crate::simd::eights::{
    clear_elements, each, finite, flags, indices, load, load_values, minus_flow, per_element,
    spread_indices, squared_lengths, store, word, COMPONENT,
};
use glam::DVec3;
use std::arch::x86_64::*;

/// [`super::drift_block`] with AVX-512: the block's particles eight at a
/// time ([`eight`]), its last few (fewer than eight) one at a time.
///
/// # Safety
/// The processor must have AVX-512 ([`crate::simd::isa::avx512`]).
#[target_feature(enable = "avx2,avx512f,avx512vl,avx512dq,avx512bw,avx512cd")]
pub(super) unsafe fn drift_block_avx512<const DEFERRED: bool>(
    b: &mut DriftArrays,
    c: &DriftConstants,
    take_lines: bool,
) -> DriftScan {
    let m = b.x.len();
    let k = Constants::new(c);
    let mut scan = DriftScan::NONE;
    let mut widest = Widest::new();
    let full = m - m % 8;
    for g in (0..full).step_by(8) {
        if take_lines {
            take_for_writing(b, (g + WRITE_AHEAD).min(m - 4));
            take_for_writing(b, (g + 4 + WRITE_AHEAD).min(m - 4));
        }
        eight::<DEFERRED>(g, b, c, &k, &mut scan, &mut widest);
    }
    drift_rest::<DEFERRED>(full, b, c, scan, std::iter::once(widest.folded()))
}

/// The permutations that make the four registers of eight packed images
/// `(x, y, z, R)` from the three of the positions and the register of the
/// radii: first the positions of two particles from two position
/// registers (indices 8–15 are the second's), then the radii in (indices
/// 8–15 are the radii's). Images 0–1 and 6–7 lie in one position register
/// (the first step keeps it as it is).
const PACKED: [([i64; 8], [i64; 8]); 4] = [
    ([0, 1, 2, 3, 4, 5, 6, 7], [0, 1, 2, 8, 3, 4, 5, 9]),
    ([6, 7, 8, 0, 9, 10, 11, 0], [0, 1, 2, 10, 4, 5, 6, 11]),
    ([4, 5, 6, 0, 7, 8, 9, 0], [0, 1, 2, 12, 4, 5, 6, 13]),
    ([0, 1, 2, 3, 4, 5, 6, 7], [2, 3, 4, 14, 5, 6, 7, 15]),
];

/// What every group of a block shares, in registers: the step, the bounds
/// of the box per element, the step bound's factor, and the flow whose
/// residuals it measures (if one is fitted).
struct Constants {
    dt: __m512d,
    half: __m512d,
    lo: [__m512d; 3],
    hi: [__m512d; 3],
    step_factor: __m512d,
    spread: [__m512i; 3],
    flow: Option<Flow>,
}

/// A [`crate::neighbor::trigger::ResidualScan`] per element: the flow's
/// columns, which are in use, and the centre if any.
struct Flow {
    cols: [[__m512d; 3]; 3],
    used: [bool; 3],
    centre: Option<[__m512d; 3]>,
}

impl Constants {
    /// The registers of a block's constants `c`.
    #[target_feature(enable = "avx2,avx512f,avx512vl,avx512dq,avx512bw,avx512cd")]
    fn new(c: &DriftConstants) -> Self {
        Constants {
            dt: _mm512_set1_pd(c.dt),
            half: _mm512_set1_pd(0.5 * c.dt),
            lo: per_element(c.lo),
            hi: per_element(c.hi),
            step_factor: _mm512_set1_pd(MAX_STEP_FRACTION * MAX_STEP_FRACTION),
            spread: spread_indices(),
            flow: c.residuals.map(|r| {
                let m = r.flow.matrix();
                Flow {
                    cols: [
                        per_element(m.x_axis),
                        per_element(m.y_axis),
                        per_element(m.z_axis),
                    ],
                    used: r.flow.used(),
                    centre: r.centre.map(|c| per_element(c)),
                }
            }),
        }
    }
}

/// The running extremes of [`eight`]: per particle of the eight, the
/// largest squared displacement (and with a flow, the largest squared
/// distance of the residuals from the centre); per element of the three
/// registers, the smallest and largest displacement component (and
/// residual component).
struct Widest {
    disp2: __m512d,
    lo: [__m512d; 3],
    hi: [__m512d; 3],
    residual_lo: [__m512d; 3],
    residual_hi: [__m512d; 3],
    spread2: __m512d,
}

impl Widest {
    /// Nothing seen: a zero displacement and an empty box.
    #[target_feature(enable = "avx2,avx512f,avx512vl,avx512dq,avx512bw,avx512cd")]
    fn new() -> Self {
        Widest {
            disp2: _mm512_setzero_pd(),
            lo: [_mm512_set1_pd(f64::INFINITY); 3],
            hi: [_mm512_set1_pd(f64::NEG_INFINITY); 3],
            residual_lo: [_mm512_set1_pd(f64::INFINITY); 3],
            residual_hi: [_mm512_set1_pd(f64::NEG_INFINITY); 3],
            spread2: _mm512_setzero_pd(),
        }
    }

    /// The extremes over the eight particles' places (as the lane path
    /// folds its lanes), as a scan with nothing bad.
    #[target_feature(enable = "avx2,avx512f,avx512vl,avx512dq,avx512bw,avx512cd")]
    fn folded(&self) -> DriftScan {
        let values = |v: __m512d| {
            let mut a = [0.0; 8];
            // SAFETY: eight `f64` are written to the array.
            unsafe { _mm512_storeu_pd(a.as_mut_ptr(), v) };
            a
        };
        let largest = |v: __m512d| values(v).into_iter().fold(0.0, f64::max);
        let boxed = |low: &[__m512d; 3], high: &[__m512d; 3]| {
            let (mut lo, mut hi) = (DVec3::INFINITY, DVec3::NEG_INFINITY);
            for (r, component) in COMPONENT.iter().enumerate() {
                let (l, h) = (values(low[r]), values(high[r]));
                for (e, &a) in component.iter().enumerate() {
                    lo[a] = lo[a].min(l[e]);
                    hi[a] = hi[a].max(h[e]);
                }
            }
            (lo, hi)
        };
        DriftScan {
            max_disp2: largest(self.disp2),
            displacements: boxed(&self.lo, &self.hi),
            residuals: boxed(&self.residual_lo, &self.residual_hi),
            residual_spread2: largest(self.spread2),
            ..DriftScan::NONE
        }
    }
}

/// One half kick of three registers: `v + per·f` per element (as
/// `drift_lanes`: `v + f.scale(per)`, each product `per·f`).
#[target_feature(enable = "avx2,avx512f,avx512vl,avx512dq,avx512bw,avx512cd")]
#[inline]
fn half_kick(v: [__m512d; 3], f: [__m512d; 3], per: [__m512d; 3]) -> [__m512d; 3] {
    each!(r => _mm512_add_pd(v[r], _mm512_mul_pd(per[r], f[r])))
}

/// The first half step of the eight particles `g..g + 8` of a block (as
/// [`super::drift_lanes`] for each): the deferred half kick if
/// `DEFERRED`, the half kick, the drift, the packed images; flags the
/// lowest-id particle gone bad into `scan` and keeps the largest
/// displacements and their box in `widest` (and with a flow, the
/// residuals' box and largest distance from the centre). Panics past the
/// end of the block.
#[target_feature(enable = "avx2,avx512f,avx512vl,avx512dq,avx512bw,avx512cd")]
#[inline]
fn eight<const DEFERRED: bool>(
    g: usize,
    b: &mut DriftArrays,
    c: &DriftConstants,
    k: &Constants,
    scan: &mut DriftScan,
    widest: &mut Widest,
) {
    let (x0, v0, w0) = (load(b.x, g), load(b.v, g), load(b.w, g));
    let (f, t) = (load(b.f, g), load(b.t, g));
    // `½Δt/m` and `½Δt/I` per particle (as `drift_lanes` makes them),
    // then per element.
    let per_mass = _mm512_mul_pd(k.half, load_values(b.im, g));
    let per_inertia = _mm512_mul_pd(k.half, load_values(b.ii, g));
    let per_mass = each!(r => _mm512_permutexvar_pd(k.spread[r], per_mass));
    let per_inertia = each!(r => _mm512_permutexvar_pd(k.spread[r], per_inertia));
    // `v += (½Δt/m) F`, `ω += (½Δt/I) τ`, once more first if deferred.
    let (mut v1, mut w1) = (v0, w0);
    if DEFERRED {
        (v1, w1) = (half_kick(v1, f, per_mass), half_kick(w1, t, per_inertia));
    }
    (v1, w1) = (half_kick(v1, f, per_mass), half_kick(w1, t, per_inertia));
    let dx = each!(r => _mm512_mul_pd(k.dt, v1[r]));
    // A frozen particle keeps its state; its step is zero.
    let frozen = flags(b.frozen, g);
    let m = clear_elements(frozen);
    let x1 = each!(r => _mm512_mask_add_pd(x0[r], m[r], x0[r], dx[r]));
    let v1 = each!(r => _mm512_mask_mov_pd(v0[r], m[r], v1[r]));
    let w1 = each!(r => _mm512_mask_mov_pd(w0[r], m[r], w1[r]));
    let step2 = _mm512_maskz_mov_pd(!frozen, squared_lengths(dx));
    store(b.x, g, x1);
    store(b.v, g, v1);
    store(b.w, g, w1);
    // The packed images: the new positions with the radii they hold (the
    // rebuild wrote them).
    let at = b.packed[g..g + 8].as_mut_ptr().cast::<f64>();
    // SAFETY: the 32 `f64` of `packed[g..g + 8]` (a `DVec4` is four).
    let old = unsafe {
        [
            _mm512_loadu_pd(at),
            _mm512_loadu_pd(at.add(8)),
            _mm512_loadu_pd(at.add(16)),
            _mm512_loadu_pd(at.add(24)),
        ]
    };
    let low = _mm512_permutex2var_pd(old[0], indices(&[3, 7, 11, 15, 0, 0, 0, 0]), old[1]);
    let high = _mm512_permutex2var_pd(old[2], indices(&[0, 0, 0, 0, 3, 7, 11, 15]), old[3]);
    let radius = _mm512_mask_blend_pd(0xF0, low, high);
    let sources = [
        (x1[0], x1[0]),
        (x1[0], x1[1]),
        (x1[1], x1[2]),
        (x1[2], x1[2]),
    ];
    for (i, ((first, second), (a, b))) in PACKED.iter().zip(sources).enumerate() {
        let positions = _mm512_permutex2var_pd(a, indices(first), b);
        let image = _mm512_permutex2var_pd(positions, indices(second), radius);
        // SAFETY: as the loads above.
        unsafe { _mm512_storeu_pd(at.add(8 * i), image) };
    }
    // Not too far in one step, every component finite, inside the box
    // along the closed axes (a NaN compares false: flagged either way).
    let inside = word(each!(r => _mm512_cmp_pd_mask::<_CMP_LE_OQ>(k.lo[r], x1[r])
        & _mm512_cmp_pd_mask::<_CMP_LE_OQ>(x1[r], k.hi[r])));
    let elements_ok = finite(v1) & finite(w1) & inside;
    let limit = _mm512_mul_pd(k.step_factor, _mm512_mul_pd(radius, radius));
    let slow = _mm512_cmp_pd_mask::<_CMP_LE_OQ>(step2, limit);
    if elements_ok != 0xFF_FFFF || slow != 0xFF {
        for l in 0..8 {
            let ok = elements_ok >> (3 * l) & 0b111 == 0b111 && slow >> l & 1 == 1;
            if !ok {
                scan.flag(c.base + g + l, b.id[g + l]);
            }
        }
    }
    // A NaN displacement leaves the maximum and the box as they were (the
    // particle is flagged above): `max(a, b)` is `a > b ? a : b`, and
    // `min(a, b)` is `a < b ? a : b`, as the lane path selects them.
    let x_ref = load(b.x_ref, g);
    let d = each!(r => _mm512_sub_pd(x1[r], x_ref[r]));
    widest.disp2 = _mm512_max_pd(squared_lengths(d), widest.disp2);
    for (r, &d) in d.iter().enumerate() {
        widest.lo[r] = _mm512_min_pd(d, widest.lo[r]);
        widest.hi[r] = _mm512_max_pd(d, widest.hi[r]);
    }
    if let Some(f) = &k.flow {
        let r = minus_flow(d, x_ref, &f.cols, f.used, &k.spread);
        for (e, &r) in r.iter().enumerate() {
            widest.residual_lo[e] = _mm512_min_pd(r, widest.residual_lo[e]);
            widest.residual_hi[e] = _mm512_max_pd(r, widest.residual_hi[e]);
        }
        if let Some(centre) = &f.centre {
            let apart = each!(e => _mm512_sub_pd(r[e], centre[e]));
            widest.spread2 = _mm512_max_pd(squared_lengths(apart), widest.spread2);
        }
    }
}
