//! The Hertz normal force with restitution-based damping.

use super::{damped, restitution, NormalForce, NormalLaw};
use crate::contact::kinematics::Kinematics;
use crate::contact::model::{Key, Model, PairMaterials};
use crate::contact::Kind;
use crate::error::Result;
use crate::simd::lane::Lane;
use serde::Deserialize;

/// Hertz: `F_n = (4/3) E* sqrt(R*) δ^{3/2} + γ_n δ̇` with
/// `γ_n = sqrt(5) β sqrt(k_H m*) δ^{1/4}`, `k_H = (4/3) E* sqrt(R*)`
/// (Tsuji et al., Powder Technol. 71 (1992) 239; the EDEM/LIGGGHTS form
/// `2 sqrt(5/6) β sqrt(S_n m*)`, `S_n = 2E* sqrt(R*δ)`, is identical).
/// `E*` comes from the two materials,
/// `1/E* = (1 − ν_a²)/E_a + (1 − ν_b²)/E_b`. The secant stiffness it hands
/// on is `k_H sqrt(δ) = (4/3) E* sqrt(R* δ)`, evaluated in that last form;
/// the total force is clamped at 0 with `no_tension`.
///
/// ```
/// use gravel::contact::normal::{Hertz, NormalLaw};
/// use gravel::contact::Kinematics;
///
/// let hertz = Hertz { e_star: 3.0e6, beta: 0.0, no_tension: false };
/// // R* = 1 cm, δ = 0.1 mm: k_H = 4e6 · 0.1 = 4e5, secant k_H sqrt(δ) = 4e3,
/// // F_n = 4e3 · 1e-4 = 0.4 N.
/// let k = Kinematics { delta: 1e-4, r_eff: 0.01, m_eff: 1.0, ..Kinematics::default() };
/// let f = hertz.force(&k);
/// assert!((f.total - 0.4).abs() < 1e-15 && (f.stiffness - 4e3).abs() < 1e-12);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hertz {
    /// Effective Young's modulus `E*` \[Pa\].
    pub e_star: f64,
    /// Damping ratio `β(e)`.
    pub beta: f64,
    /// Clamp `F_n ≥ 0`.
    pub no_tension: bool,
}

/// `normal = { model = "hertz", … }`: `E*` comes from the materials'
/// `youngs_modulus` and `poisson_ratio`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Spec {
    /// Coefficient of restitution.
    pub restitution: f64,
    /// Clamp the total normal force at zero (no attraction).
    #[serde(default)]
    pub no_tension: bool,
}

impl Model for Hertz {
    fn describe(&self) -> String {
        let tension = if self.no_tension { ", no_tension" } else { "" };
        format!(
            "restitution {}, E* {}{tension}",
            crate::math::figures::sig(super::restitution_of(self.beta), 4),
            crate::math::figures::sig(self.e_star, 4)
        )
    }

    type Spec = Spec;
    const KIND: u8 = Kind::HERTZ;

    fn from_spec(s: &Spec, key: &Key, materials: &PairMaterials) -> Result<Self> {
        let [(ea, na), (eb, nb)] = materials.elastic(key)?;
        Ok(Hertz {
            e_star: 1.0 / ((1.0 - na * na) / ea + (1.0 - nb * nb) / eb),
            beta: restitution(key, s.restitution)?,
            no_tension: s.no_tension,
        })
    }

    fn reads_r_eff(&self) -> bool {
        true
    }
}

impl NormalLaw for Hertz {
    #[inline(always)]
    fn force<T: Lane>(&self, k: &Kinematics<T>) -> NormalForce<T> {
        // Two square roots: the Hertz contact radius `a = sqrt(R* δ)` (the
        // same expression as Mindlin's stiffness, so one root serves both in
        // a law that has the two), and `sqrt(k_H sqrt(δ) m*)`, which is
        // `sqrt(k_H m*) δ^{1/4}`.
        let contact_radius = (k.r_eff * k.delta).sqrt();
        let secant = T::splat((4.0 / 3.0) * self.e_star) * contact_radius;
        let elastic = secant * k.delta;
        let gamma = T::splat(5f64.sqrt() * self.beta) * (secant * k.m_eff).sqrt();
        damped(elastic, secant, gamma, self.no_tension, k)
    }

    fn energy(&self, delta: f64, _r: f64, r_eff: f64) -> f64 {
        (8.0 / 15.0) * self.e_star * r_eff.sqrt() * delta.powf(2.5)
    }
}
