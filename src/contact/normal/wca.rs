//! Weeks–Chandler–Andersen repulsion (colloids).

use super::{NormalForce, NormalLaw};
use crate::contact::kinematics::Kinematics;
use crate::contact::model::{Key, Model, PairMaterials};
use crate::contact::Kind;
use crate::error::Result;
use crate::simd::lane::Lane;
use serde::Deserialize;

/// `2^{1/6}`, the WCA cut-off in units of `σ`.
pub const WCA_CUTOFF_FACTOR: f64 = 1.122_462_048_309_373;

/// Weeks–Chandler–Andersen repulsion,
/// `U = 4ε[(σ/r)^12 − (σ/r)^6] + ε` for `r < 2^{1/6} σ`, `F_n = −dU/dr`
/// (Weeks, Chandler, Andersen, J. Chem. Phys. 54 (1971) 5237). It acts
/// over a fixed range whatever the radii, has no stiffness and no damping,
/// so models that need an overlap refuse it.
///
/// ```
/// use gravel::contact::normal::{NormalLaw, Wca};
/// use gravel::contact::Kinematics;
///
/// let wca = Wca { epsilon: 1.0, sigma: 1.0 };
/// // At r = σ: F = 24 ε/σ (2 − 1) = 24, U = ε.
/// let k = Kinematics { r: 1.0, ..Kinematics::default() };
/// assert_eq!(wca.force(&k).total, 24.0);
/// assert_eq!(wca.energy(0.0, 1.0, 0.0), 1.0);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Wca {
    /// Energy scale `ε` \[J\].
    pub epsilon: f64,
    /// Length scale `σ` \[m\].
    pub sigma: f64,
}

/// `normal = { model = "wca", … }`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Spec {
    /// Energy scale ε.
    pub epsilon: f64,
    /// Length scale σ.
    pub sigma: f64,
}

impl Model for Wca {
    fn describe(&self) -> String {
        format!(
            "epsilon {}, sigma {}",
            crate::math::figures::sig(self.epsilon, 4),
            crate::math::figures::sig(self.sigma, 4)
        )
    }

    type Spec = Spec;
    const KIND: u8 = Kind::WCA;

    fn from_spec(s: &Spec, key: &Key, _: &PairMaterials) -> Result<Self> {
        Ok(Wca {
            epsilon: key.field("epsilon").positive(s.epsilon)?,
            sigma: key.field("sigma").positive(s.sigma)?,
        })
    }
}

impl NormalLaw for Wca {
    const HAS_STIFFNESS: bool = false;

    #[inline(always)]
    fn force<T: Lane>(&self, k: &Kinematics<T>) -> NormalForce<T> {
        let s2 = T::splat(self.sigma * self.sigma) / (k.r * k.r);
        let s6 = s2 * s2 * s2;
        let f = T::splat(24.0 * self.epsilon) / k.r * (T::splat(2.0) * s6 * s6 - s6);
        let zero = T::splat(0.0);
        NormalForce {
            total: f,
            elastic: f,
            stiffness: zero,
            damping: zero,
        }
    }

    fn energy(&self, _delta: f64, r: f64, _r_eff: f64) -> f64 {
        let s6 = (self.sigma / r).powi(6);
        4.0 * self.epsilon * (s6 * s6 - s6) + self.epsilon
    }

    fn fixed_range(&self) -> Option<f64> {
        Some(WCA_CUTOFF_FACTOR * self.sigma)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn force_is_minus_energy_gradient_and_vanishes_at_cutoff() {
        let m = Wca {
            epsilon: 1.3,
            sigma: 0.9,
        };
        let rc = WCA_CUTOFF_FACTOR * 0.9;
        for &r in &[0.85, 0.9, 0.95, 1.0] {
            let h = 1e-6;
            let fd = -(m.energy(0.0, r + h, 0.0) - m.energy(0.0, r - h, 0.0)) / (2.0 * h);
            let k = Kinematics {
                n: glam::DVec3::X.into(),
                r,
                r_eff: 0.5,
                m_eff: 1.0,
                ..Kinematics::default()
            };
            let f = m.force(&k).total;
            assert!(
                (f - fd).abs() < 1e-6 * f.abs().max(1.0),
                "r={r}: {f} vs {fd}"
            );
        }
        assert!(m.energy(0.0, rc, 0.0).abs() < 1e-12);
    }
}
