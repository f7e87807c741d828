//! Short series of the sine and cosine for the small angles by which a
//! contact twists in one time step, per lane.

use crate::simd::lane::Lane;

/// `(sin a, cos a)` per lane, by short Taylor series when `|a| < 1e-3`
/// (the usual case: the twist per time step is tiny), where the truncation
/// error (`a^7/5040` and `a^6/720`) lies far below half an ulp, else by
/// `sin` and `cos` (which only lanes outside the series' range compute).
/// Several times cheaper than `sin_cos`; the same bits on every thread and rank.
#[inline(always)]
pub fn small_sin_cos<T: Lane>(a: T) -> (T, T) {
    let (s, c) = series_sin_cos(a);
    let far = !a.abs().lt(T::splat(1e-3));
    if T::any(far) {
        let (s_far, c_far) = (a.map(f64::sin), a.map(f64::cos));
        return (T::select(far, s_far, s), T::select(far, c_far, c));
    }
    (s, c)
}

/// The short series of [`small_sin_cos`], for `|a| < 1e-3`.
#[inline(always)]
pub fn series_sin_cos<T: Lane>(a: T) -> (T, T) {
    let one = T::splat(1.0);
    let a2 = a * a;
    let s = a - a * a2 * T::splat(1.0 / 6.0) * (one - a2 * T::splat(1.0 / 20.0));
    let c = one - a2 * T::splat(0.5) * (one - a2 * T::splat(1.0 / 12.0));
    (s, c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_sin_cos_matches_libm_to_an_ulp() {
        for i in -2000..=2000 {
            let a = i as f64 * 5.123e-7;
            let (s, c) = small_sin_cos(a);
            let (s0, c0) = a.sin_cos();
            assert!((s - s0).abs() <= f64::EPSILON * s0.abs(), "sin {a}");
            assert!((c - c0).abs() <= f64::EPSILON, "cos {a}");
            assert_eq!(small_sin_cos(-a).0, -s);
        }
    }
}
