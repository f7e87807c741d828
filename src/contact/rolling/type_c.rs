//! Altair EDEM "Type C Rolling Friction".

use super::{damping_ratio, Parameterisation, SpringDashpot};
use crate::contact::model::Key;
use crate::error::Result;
use serde::Deserialize;

/// Altair EDEM "Type C Rolling Friction" (EDEM documentation; Ai et al.,
/// Powder Technol. 206 (2011) 269, model type C): the EPSD couple
/// ([`SpringDashpot`], formulas in the [module documentation](super)) with
/// `k_r = λ k_n μ_r² R_r²`, `|M^k| ≤ μ_r R_r |F_n|`, a user stiffness
/// factor `λ` (2.25 reproduces [`super::Epsd`]) and equivalent rolling
/// radius `R_r` (default `R*`). The dashpot acts only below the limit
/// (`f = 0`); no torsion. History: the spring torque `M^k` (3 values),
/// which changes sign with `i` and `j` exchanged.
///
/// ```
/// use gravel::contact::rolling::{RollingInput, RollingLaw, TypeC};
/// use glam::DVec3;
///
/// let m = TypeC { friction: 0.5, damping: 0.0, stiffness_factor: 1.0, rolling_radius: Some(0.5) };
/// // k_n = 16, R_r = 0.5: k_r = 1 · 16 · 0.25² = 1; M^m = 0.5 · 0.5 · 1 = 0.25.
/// let inp = RollingInput {
///     n: DVec3::Z.into(),
///     omega_rel: DVec3::new(0.0, 4.0, 0.0).into(),
///     k_n: 16.0,
///     r_eff: 1.0,
///     normal_force: 1.0,
///     inertia_r: 1.0,
///     dt: 0.125,
/// };
/// let mut spring = [0.0; 3];
/// let couple = DVec3::from(m.couple(&inp, &mut spring));
/// // Trial M^k = −1 · 4 · 0.125 = −0.5 ŷ exceeds M^m: capped at −0.25 ŷ.
/// assert_eq!((couple, spring), (DVec3::new(0.0, -0.25, 0.0), [0.0, -0.25, 0.0]));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TypeC {
    /// Coefficient of rolling friction `μ_r` (≥ 0).
    pub friction: f64,
    /// Damping ratio `η_r` in `[0, MAX_DAMPING]` ([`super::MAX_DAMPING`]).
    pub damping: f64,
    /// Stiffness factor `λ > 0` in `k_r = λ k_n μ_r² R_r²`.
    pub stiffness_factor: f64,
    /// Equivalent rolling radius `R_r` \[m\]; `None` means the contact's
    /// effective radius `R*`.
    pub rolling_radius: Option<f64>,
}

/// `rolling = { model = "type_c", … }`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Spec {
    /// Rolling friction coefficient μ_r.
    pub friction: f64,
    /// Damping ratio η_r (fraction of critical), in [0, 1].
    pub damping: f64,
    /// Stiffness factor λ (2.25 reproduces epsd).
    pub stiffness_factor: f64,
    /// Equivalent rolling radius R_r (m); default R*.
    pub rolling_radius: Option<f64>,
}

impl Parameterisation for TypeC {
    type Spec = Spec;

    fn from_table(s: &Spec, key: &Key) -> Result<Self> {
        Ok(TypeC {
            friction: key.field("friction").non_negative(s.friction)?,
            damping: damping_ratio(key, s.damping)?,
            stiffness_factor: key.field("stiffness_factor").positive(s.stiffness_factor)?,
            rolling_radius: match s.rolling_radius {
                Some(r) => Some(key.field("rolling_radius").positive(r)?),
                None => None,
            },
        })
    }

    /// Its spring-dashpot: no torsion, `f = 0`.
    #[inline(always)]
    fn as_spring_dashpot(&self) -> SpringDashpot {
        SpringDashpot {
            friction: self.friction,
            damping: self.damping,
            stiffness_factor: self.stiffness_factor,
            rolling_radius: self.rolling_radius,
            torsion_torque: false,
            mobilised_damping_factor: 0.0,
        }
    }
}
