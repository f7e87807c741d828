//! The one-dimensional smoothing kernels of the coarse-graining grids
//! ([`super::coarse_grain`]), with the integrals that let a grid's cells
//! take exact averages: the kernel `ψ`, its cumulative `F(u) = ∫_{−∞}^u ψ`
//! and the integral of that, `G(u) = ∫_{−∞}^u F`.
//!
//! Both have width `w` and support `|u| < c = 3w`, and integrate to one
//! exactly (`F(u) = 0` for `u ≤ −c` and `1` for `u ≥ c`, so a sum of cell
//! integrals `F(e_{k+1} − x) − F(e_k − x)` over cells covering the support
//! telescopes to one, to rounding):
//! - **Gaussian**, standard deviation `w`, cut at `3w` and renormalised:
//!   `ψ(u) = exp(−u²/2w²) / (√(2π) w E)`, `E = erf(3/√2)`, so
//!   `F(u) = ½ + erf(u/(√2 w)) / (2E)`;
//! - **Lucy** (Lucy, Astron. J. 82 (1977) 1013; the kernel of Weinhart et
//!   al., Granular Matter 14 (2012) 289, in one dimension), of support
//!   `c = 3w`: with `s = |u|/c`,
//!   `ψ(u) = (5/4c) (1 + 3s)(1 − s)³ = (5/4c)(1 − 6s² + 8s³ − 3s⁴)`, whose
//!   standard deviation is `c √(2/21) ≈ 0.93 w`.
//!
//! `G` gives the average of `F` along a segment in closed form,
//! `∫₀¹ F(a + b s) ds = (G(a + b) − G(a)) / b`, which is how a contact's
//! force is spread along its branch vector.

use crate::config::KernelKind;
use crate::math::erfcx::erfcx;

/// `erf(x)`, from the scaled complementary error function.
fn erf(x: f64) -> f64 {
    let a = x.abs();
    let e = 1.0 - erfcx(a) * (-a * a).exp();
    e.copysign(x)
}

/// A one-dimensional kernel of width `w` (support `3w`).
#[derive(Debug, Clone, Copy)]
pub struct Kernel {
    kind: KernelKind,
    /// The support `c = 3w`.
    c: f64,
    /// The Gaussian's `√2 w`.
    sqrt2_w: f64,
    /// The Gaussian's `E = erf(3/√2)`, the mass inside the cutoff.
    inside: f64,
}

impl Kernel {
    /// The kernel `kind` of width `w > 0`.
    pub fn new(kind: KernelKind, w: f64) -> Self {
        Self {
            kind,
            c: 3.0 * w,
            sqrt2_w: std::f64::consts::SQRT_2 * w,
            inside: erf(3.0 / std::f64::consts::SQRT_2),
        }
    }

    /// The support: `ψ(u) = 0` for `|u| ≥` this.
    pub fn cutoff(&self) -> f64 {
        self.c
    }

    /// The kernel `ψ(u)` (1/m).
    pub fn value(&self, u: f64) -> f64 {
        if u.abs() >= self.c {
            return 0.0;
        }
        match self.kind {
            KernelKind::Gaussian => {
                let t = u / self.sqrt2_w;
                (-t * t).exp() / (std::f64::consts::PI.sqrt() * self.sqrt2_w * self.inside)
            }
            KernelKind::Lucy => {
                let s = u.abs() / self.c;
                1.25 / self.c * (1.0 + 3.0 * s) * (1.0 - s).powi(3)
            }
        }
    }

    /// `F(u) = ∫_{−∞}^u ψ`: exactly 0 below the support and 1 above.
    pub fn cdf(&self, u: f64) -> f64 {
        if u <= -self.c {
            return 0.0;
        }
        if u >= self.c {
            return 1.0;
        }
        match self.kind {
            KernelKind::Gaussian => 0.5 + 0.5 * erf(u / self.sqrt2_w) / self.inside,
            KernelKind::Lucy => {
                let s = u.abs() / self.c;
                let half = 1.25 * s * (1.0 + s * s * (-2.0 + s * (2.0 - 0.6 * s)));
                0.5 + half.copysign(u)
            }
        }
    }

    /// `G(u) = ∫_{−∞}^u F`: 0 below the support, `u` above it (the
    /// kernel is even, so `G(c) = c`).
    pub fn cdf_integral(&self, u: f64) -> f64 {
        let c = self.c;
        if u <= -c {
            return 0.0;
        }
        if u >= c {
            return u;
        }
        match self.kind {
            KernelKind::Gaussian => {
                // ∫ erf(t/a) dt = t erf(t/a) + (a/√π) exp(−t²/a²), a = √2 w;
                // the constant makes G(−c) = 0.
                let a = self.sqrt2_w;
                let rp = a / std::f64::consts::PI.sqrt();
                let t = u / a;
                let tail = rp * (-(c / a) * (c / a)).exp();
                0.5 * u + 0.5 * (u * erf(t) + rp * (-t * t).exp() - tail) / self.inside
            }
            KernelKind::Lucy => {
                // G(u) = c/8 + u/2 + (5c/4) Q(s), Q = s²/2 − s⁴/2 + 2s⁵/5 − s⁶/10
                // (even in u), so that G(−c) = 0 and G(c) = c.
                let s = u.abs() / c;
                let s2 = s * s;
                let q = s2 * (0.5 + s2 * (-0.5 + s * (0.4 - 0.1 * s)));
                c / 8.0 + 0.5 * u + 1.25 * c * q
            }
        }
    }

    /// The mean of `F` along a segment, `∫₀¹ F(a + b s) ds`: in closed form
    /// from [`Self::cdf_integral`], or at the midpoint where `|b|` is so
    /// small (below `10⁻⁶ c`) that the difference of `G` would lose more to
    /// rounding than the midpoint rule's `b² |F''| / 24`.
    pub fn mean_cdf(&self, a: f64, b: f64) -> f64 {
        if b.abs() < 1e-6 * self.c {
            return self.cdf(a + 0.5 * b);
        }
        (self.cdf_integral(a + b) - self.cdf_integral(a)) / b
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::quadrature::integrate_rel;

    /// `∫_a^b f`, split at 0 (Lucy's kink) when it lies inside.
    fn quad(f: impl Fn(f64) -> f64, a: f64, b: f64) -> f64 {
        let points: Vec<f64> = if a < 0.0 && 0.0 < b {
            vec![a, 0.0, b]
        } else {
            vec![a, b]
        };
        integrate_rel(&f, &points, 1e-13)
    }

    fn kernels() -> [Kernel; 2] {
        [
            Kernel::new(KernelKind::Gaussian, 0.7),
            Kernel::new(KernelKind::Lucy, 0.7),
        ]
    }

    #[test]
    fn erf_matches_reference_values() {
        // Abramowitz & Stegun, Table 7.1.
        for (x, e) in [
            (0.5, 0.520_499_877_8),
            (1.0, 0.842_700_792_9),
            (2.0, 0.995_322_265_0),
        ] {
            assert!((erf(x) - e).abs() < 1e-9, "erf({x})");
            assert!((erf(-x) + e).abs() < 1e-9, "erf(-{x})");
        }
    }

    #[test]
    fn each_kernel_integrates_to_one_and_its_integrals_are_consistent() {
        for k in kernels() {
            let c = k.cutoff();
            let mass = quad(|u| k.value(u), -c, c);
            assert!((mass - 1.0).abs() < 1e-10, "{:?}: ∫ψ = {mass}", k.kind);
            assert_eq!(k.cdf(-c), 0.0);
            assert_eq!(k.cdf(c), 1.0);
            assert!((k.cdf_integral(c) - c).abs() < 1e-14 * c);
            for u in [-2.9, -1.3, -0.2, 0.0, 0.4, 1.1, 2.5] {
                let f = quad(|t| k.value(t), -c, u);
                assert!((k.cdf(u) - f).abs() < 1e-10, "{:?}: F({u})", k.kind);
                let g = quad(|t| k.cdf(t), -c, u);
                assert!(
                    (k.cdf_integral(u) - g).abs() < 1e-10,
                    "{:?}: G({u})",
                    k.kind
                );
            }
        }
    }

    #[test]
    fn the_gaussian_has_standard_deviation_near_its_width_and_lucy_sqrt_2_21_c() {
        let [g, l] = kernels();
        let var = |k: Kernel| quad(|u| u * u * k.value(u), -k.c, k.c);
        // The cut at 3w removes 1.1 % of the Gaussian's variance.
        assert!((var(g).sqrt() / 0.7 - 1.0).abs() < 0.02);
        assert!((var(l) - 2.0 / 21.0 * l.c * l.c).abs() < 1e-10);
    }

    #[test]
    fn the_mean_along_a_segment_matches_quadrature_and_its_small_b_limit() {
        for k in kernels() {
            for (a, b) in [
                (-1.0, 0.8),
                (0.3, -1.5),
                (-2.5, 0.4),
                (1.9, 1.5),
                (0.2, 1e-9),
            ] {
                let q = quad(|s| k.cdf(a + b * s), 0.0, 1.0);
                assert!(
                    (k.mean_cdf(a, b) - q).abs() < 1e-10,
                    "{:?}: ({a}, {b})",
                    k.kind
                );
            }
        }
    }
}
