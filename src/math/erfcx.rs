//! The scaled complementary error function `erfcx(x) = exp(x²) erfc(x)`
//! ([`erfcx`]), with which the stochastic friction laws
//! ([`crate::contact::stochastic`]) write their diffusion functions.

use std::f64::consts::FRAC_2_SQRT_PI;

/// `1/sqrt(π)`.
const FRAC_1_SQRT_PI: f64 = 0.5 * FRAC_2_SQRT_PI;
/// `sqrt(π)`.
pub(crate) const SQRT_PI: f64 = 1.772_453_850_905_516;

/// Node spacing of the Taylor table of [`erfcx`].
const ERFCX_STEP: f64 = 0.25;
/// Below this argument [`erfcx`] uses the Taylor table, above it the
/// continued fraction.
const ERFCX_TABLE_END: f64 = 8.0;
/// Degree of the Taylor polynomial about the nearest node.
const ERFCX_DEGREE: usize = 14;
/// `erfcx(k/4)` for `k = 0..=32`, correctly rounded (computed with 50-digit
/// arithmetic).
const ERFCX_NODES: [f64; 33] = [
    1.0,                 // x = 0
    0.7703465477309968,  // x = 0.25
    0.6156903441929259,  // x = 0.5
    0.5069376502931449,  // x = 0.75
    0.427583576155807,   // x = 1
    0.3678229164523611,  // x = 1.25
    0.3215854164543175,  // x = 1.5
    0.2849722347374364,  // x = 1.75
    0.25539567631050575, // x = 2
    0.23108725873039188, // x = 2.25
    0.2108063640611436,  // x = 2.5
    0.1936620962790687,  // x = 2.75
    0.17900115118138996, // x = 3
    0.16633534842682188, // x = 3.25
    0.1552936556088943,  // x = 3.5
    0.14558972127503855, // x = 3.75
    0.13699945762506138, // x = 4
    0.12934527478598792, // x = 4.25
    0.12248480427384142, // x = 4.5
    0.11630270721024731, // x = 4.75
    0.11070463773306863, // x = 5
    0.1056127354688918,  // x = 5.25
    0.10096221839949909, // x = 5.5
    0.09669877816971392, // x = 5.75
    0.09277656780053835, // x = 6
    0.08915663178727438, // x = 6.25
    0.08580567010489461, // x = 6.5
    0.08269505677505307, // x = 6.75
    0.07980005432915294, // x = 7
    0.0770991803512599,  // x = 7.25
    0.07457369306287669, // x = 7.5
    0.07220717081466976, // x = 7.75
    0.06998516620088092, // x = 8
];
/// `1/k` for `k = 0..=ERFCX_DEGREE` (entry 0 unused).
const RECIPROCALS: [f64; ERFCX_DEGREE + 1] = {
    let mut r = [0.0; ERFCX_DEGREE + 1];
    let mut k = 1;
    while k <= ERFCX_DEGREE {
        r[k] = 1.0 / k as f64;
        k += 1;
    }
    r
};

/// The scaled complementary error function `erfcx(x) = exp(x²) erfc(x)`.
///
/// Finite and accurate where `exp(x²) erfc(x)` evaluated directly is not
/// (`exp(x²)` overflows beyond `x ≈ 26.6`); `erfcx(x) ≈ 1/(x sqrt(π))` for
/// large `x`. Relative error below `1e-15` for `x ≥ 0` (at most `7.3e-16`
/// on a dense scan of `[0, 8]` against 40-digit values; the tests compare
/// with 60-digit values and with quadrature of the integral
/// `erfcx(x) = 2/sqrt(π) ∫_0^∞ exp(−s(2x + s)) ds`).
///
/// Method, for `x ≥ 0`:
/// - `x < 8`: Taylor polynomial of degree 14 about the nearest multiple
///   `x₀` of 1/4 (`|x − x₀| ≤ 1/8`), from the tabulated value `erfcx(x₀)`.
///   The coefficients follow from the differential equation
///   `y' = 2xy − 2/sqrt(π)`: `c₁ = 2x₀c₀ − 2/sqrt(π)` and
///   `(k+1) c_{k+1} = 2x₀ c_k + 2 c_{k−1}`; the terms `c_k t^k`
///   (`t = x − x₀`) are generated directly and their sum is added to `c₀`
///   last. Rounding errors grow by at most `exp(2x₀|t|) ≤ e²` along the
///   recurrence (the growing solution `exp(x²)` of the equation).
/// - `x ≥ 8`: Laplace's continued fraction
///   `erfcx(x) = (1/sqrt(π)) / (x + (1/2)/(x + (2/2)/(x + (3/2)/(x + …))))`,
///   evaluated from the tail with 12 (fewer for larger `x`) levels.
///
/// For `x < 0`, `erfcx(x) = 2 exp(x²) − erfcx(−x)`, which overflows to
/// `+∞` below `x ≈ −26.6` (as the true value does). `erfcx(+∞) = 0`,
/// `erfcx(NaN)` is NaN.
pub fn erfcx(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    if x < 0.0 {
        // exp(x²) with x² split exactly into hi + lo (fused multiply-add), so
        // that the rounding of x² does not cost accuracy at large |x|.
        let hi = x * x;
        let lo = x.mul_add(x, -hi);
        let e = hi.exp() * (1.0 + lo);
        return 2.0 * e - erfcx_nonnegative(-x);
    }
    erfcx_nonnegative(x)
}

/// [`erfcx`] for `x ≥ 0` (including `+∞`).
#[inline]
fn erfcx_nonnegative(x: f64) -> f64 {
    if x < ERFCX_TABLE_END {
        // Nearest node; x − x₀ is exact (x₀/2 ≤ x ≤ 2x₀, or x₀ = 0).
        let k = (x * (1.0 / ERFCX_STEP) + 0.5) as usize;
        let x0 = k as f64 * ERFCX_STEP;
        let t = x - x0;
        let two_x0 = 2.0 * x0;
        // Terms b_j = c_j t^j directly: b_{j+1} = (2x₀ t b_j + 2t² b_{j−1})/(j+1).
        let (a1, a2) = (two_x0 * t, 2.0 * t * t);
        let mut prev = ERFCX_NODES[k];
        let mut cur = (two_x0 * prev - FRAC_2_SQRT_PI) * t;
        let mut tail = cur;
        for j in 1..ERFCX_DEGREE {
            let next = (a1 * cur + a2 * prev) * RECIPROCALS[j + 1];
            prev = cur;
            cur = next;
            tail += cur;
        }
        ERFCX_NODES[k] + tail
    } else {
        // Levels needed for full double precision at the start of each band
        // are 11, 9, 7 and 5.
        let levels: u32 = if x < 10.0 {
            12
        } else if x < 15.0 {
            10
        } else if x < 30.0 {
            8
        } else {
            6
        };
        let mut tail = 0.0;
        for k in (1..=levels).rev() {
            tail = (0.5 * f64::from(k)) / (x + tail);
        }
        FRAC_1_SQRT_PI / (x + tail)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::quadrature::{integrate_rel, rel_err};

    /// Reference values of erfcx computed with 60-digit arithmetic, rounded
    /// to double.
    const ERFCX_REFERENCE: [(f64, f64); 40] = [
        (0.0, 1.0),
        (1e-8, 0.9999999887162084),
        (0.01, 0.9888154610463425),
        (0.1, 0.8964569799691267),
        (0.125, 0.8732218450821508),
        (0.2, 0.8090195199015807),
        (0.37, 0.6889385916581282),
        (0.5, 0.6156903441929259),
        (0.7, 0.525930337349441),
        (1.0, 0.427583576155807),
        (1.3, 0.3576426690860903),
        (1.875, 0.2694299851646704),
        (2.0, 0.25539567631050575),
        (2.5, 0.2108063640611436),
        (3.0, 0.17900115118138996),
        (3.3, 0.16400729757293264),
        (3.875, 0.1411674197630518),
        (3.9999, 0.13700269605032692),
        (4.0, 0.13699945762506138),
        (4.1, 0.133834116418652),
        (5.0, 0.11070463773306863),
        (6.0, 0.09277656780053835),
        (7.5, 0.07457369306287669),
        (8.0, 0.06998516620088092),
        (10.0, 0.05614099274382259),
        (15.0, 0.03752960638850576),
        (20.0, 0.02817434874105132),
        (26.0, 0.021683584850562907),
        (50.0, 0.011281536265323773),
        (100.0, 0.005641613782989433),
        (1000.0, 0.0005641893014533876),
        (1e5, 5.6418958351954685e-06),
        (1e10, 5.641895835477563e-11),
        (1e100, 5.6418958354775625e-101),
        (-1e-8, 1.0000000112837917),
        (-0.5, 1.952360489182557),
        (-1.0, 5.008980080762283),
        (-3.0, 16205.988853999586),
        (-10.0, 5.376234283632271e+43),
        (-26.0, 7.657724931490568e+293),
    ];

    #[test]
    fn erfcx_known_values() {
        assert_eq!(erfcx(0.0), 1.0);
        assert!(rel_err(erfcx(1.0), 0.427_583_576_155_807) < 1e-15);
        assert!(rel_err(erfcx(100.0), 0.005_641_613_782_989_4) < 1e-13);
        // erfcx(1) = 0.42758357615580700442 (rounded to double above).
        // erfcx(10) = 0.0561409927438226 (= 1/(10 sqrt(π)) (1 − 1/200 + 3/40000 − …)).
        assert!(rel_err(erfcx(10.0), 0.056_140_992_743_822_6) < 1e-14);
        let mut worst: f64 = 0.0;
        for (x, y) in ERFCX_REFERENCE {
            let e = rel_err(erfcx(x), y);
            assert!(e < 2e-15, "erfcx({x}) = {} vs {y}: {e:e}", erfcx(x));
            worst = worst.max(e);
        }
        eprintln!("erfcx vs 60-digit values: max relative error {worst:.2e}");
    }

    #[test]
    fn erfcx_extremes() {
        assert_eq!(erfcx(f64::INFINITY), 0.0);
        assert!(erfcx(f64::NAN).is_nan());
        assert_eq!(erfcx(-30.0), f64::INFINITY);
        for x in [1e8, 1e20, 1e150, 1e300, f64::MAX] {
            let y = erfcx(x);
            assert!(y.is_finite() && y > 0.0);
            assert!(rel_err(y * x * SQRT_PI, 1.0) < 1e-15, "{x}");
        }
        // Subnormal and tiny arguments.
        assert_eq!(erfcx(f64::MIN_POSITIVE), 1.0);
        assert_eq!(erfcx(5e-324), 1.0);
    }

    /// `erfcx` decreases strictly and satisfies `y' = 2xy − 2/sqrt(π)`,
    /// checked with central differences across every node and the switch at 8.
    #[test]
    fn erfcx_is_smooth_and_monotone() {
        let mut prev = erfcx(0.0);
        let mut worst_ode: f64 = 0.0;
        for i in 1..=40_000 {
            let x = i as f64 * 5e-4;
            let y = erfcx(x);
            assert!(y < prev, "not decreasing at {x}");
            prev = y;
            if i % 25 == 0 {
                let h = 1e-5;
                let dy = (erfcx(x + h) - erfcx(x - h)) / (2.0 * h);
                let exact = 2.0 * x * y - FRAC_2_SQRT_PI;
                worst_ode = worst_ode.max((dy - exact).abs() / exact.abs().max(1e-3));
            }
        }
        eprintln!("erfcx ODE residual (central differences): {worst_ode:.2e}");
        assert!(worst_ode < 1e-7);
        // Both sides of the switch to the continued fraction.
        let below = erfcx(f64::from_bits(ERFCX_TABLE_END.to_bits() - 1));
        let at = erfcx(ERFCX_TABLE_END);
        assert!(below >= at && rel_err(below, at) < 1e-15, "{below} {at}");
    }

    /// `erfcx(x) = 2/sqrt(π) ∫_0^∞ exp(−s(2x + s)) ds` by quadrature, and
    /// `erfc(x) = 1 − 2/sqrt(π) ∫_0^x exp(−t²) dt` for moderate `x`.
    #[test]
    fn erfcx_matches_quadrature() {
        let mut worst: f64 = 0.0;
        for x in [0.0, 0.3, 0.9, 1.7, 2.6, 4.4, 7.9, 8.1, 12.0, 40.0, 300.0] {
            let s_max = 60.0 / (x + (x * x + 60.0_f64).sqrt());
            let q = FRAC_2_SQRT_PI
                * integrate_rel(&|s: f64| (-s * (2.0 * x + s)).exp(), &[0.0, s_max], 1e-14);
            let e = rel_err(erfcx(x), q);
            worst = worst.max(e);
            assert!(e < 1e-12, "x = {x}: {} vs {q}", erfcx(x));
        }
        eprintln!("erfcx vs quadrature of its integral: max relative error {worst:.2e}");
        for x in [0.25f64, 0.5, 1.0, 2.0, 3.0] {
            let erf = FRAC_2_SQRT_PI * integrate_rel(&|t: f64| (-t * t).exp(), &[0.0, x], 1e-15);
            let erfc = erfcx(x) * (-x * x).exp();
            // 1 − erf loses log10(1/erfc) digits: at x = 3 about 4.7.
            assert!(rel_err(erfc, 1.0 - erf) < 1e-14 / erfc, "x = {x}");
        }
    }
}
