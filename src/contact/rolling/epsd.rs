//! Aspherix / LIGGGHTS `rolling_friction epsd`.

use super::{damping_ratio, Parameterisation, SpringDashpot};
use crate::contact::model::Key;
use crate::error::Result;
use serde::Deserialize;

/// Aspherix / LIGGGHTS `rolling_friction epsd` (Aspherix documentation,
/// "rolling_friction model epsd"; Ai et al., Powder Technol. 206 (2011)
/// 269, model type C): the EPSD couple ([`SpringDashpot`], formulas in the
/// [module documentation](super)) with `k_r = 2.25 k_n μ_r² R*²`,
/// `M^m = μ_r R* |F_n|`, and the Aspherix settings `torsionTorque` and
/// `rollFrictionFactor` (`f`, default 0). History: the spring torque
/// `M^k` (3 values), which changes sign with `i` and `j` exchanged.
///
/// ```
/// use gravel::contact::rolling::{Epsd, RollingInput, RollingLaw};
/// use glam::DVec3;
///
/// let m = Epsd::new(0.5, 0.5);
/// // k_n = 4, R* = 1: k_r = 2.25 · 4 · 0.5² = 2.25; M^m = 0.5 · 1 · 2 = 1.
/// // I_r = 4: C_r = 0.5 · 2 sqrt(4 · 2.25) = 3.
/// let inp = RollingInput {
///     n: DVec3::Z.into(),
///     omega_rel: DVec3::X.into(),
///     k_n: 4.0,
///     r_eff: 1.0,
///     normal_force: 2.0,
///     inertia_r: 4.0,
///     dt: 0.125,
/// };
/// let mut spring = [0.0; 3];
/// let couple = DVec3::from(m.couple(&inp, &mut spring));
/// // M^k = −k_r ω_r Δt = −0.28125 (below M^m), M^d = −C_r ω_r = −3.
/// assert_eq!(spring, [-0.28125, 0.0, 0.0]);
/// assert_eq!(couple, DVec3::new(-3.28125, 0.0, 0.0));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Epsd {
    /// Coefficient of rolling friction `μ_r` (≥ 0).
    pub friction: f64,
    /// Damping ratio `η_r` in `[0, MAX_DAMPING]` ([`super::MAX_DAMPING`]).
    pub damping: f64,
    /// Twisting also loads the spring and the dashpot (Aspherix
    /// `torsionTorque on`).
    pub torsion_torque: bool,
    /// Factor `f ∈ [0, 1]` on the dashpot once the spring is fully
    /// mobilised (Aspherix `rollFrictionFactor`).
    pub mobilised_damping_factor: f64,
}

/// `rolling = { model = "epsd", … }`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Spec {
    /// Rolling friction coefficient μ_r.
    pub friction: f64,
    /// Damping ratio η_r (fraction of critical), in [0, 1].
    pub damping: f64,
    /// Twisting also loads the spring and dashpot (default false).
    #[serde(default)]
    pub torsion_torque: bool,
    /// Factor f on the dashpot once fully mobilised, in [0, 1] (default 0).
    #[serde(default)]
    pub mobilised_damping_factor: f64,
}

impl Epsd {
    /// The stiffness factor of `epsd`: `k_r = 2.25 k_n μ_r² R*²`.
    pub const STIFFNESS_FACTOR: f64 = 2.25;

    /// `epsd` with rolling friction `μ_r` and damping ratio `η_r`;
    /// `torsionTorque off`, `rollFrictionFactor 0` (the defaults).
    pub fn new(friction: f64, damping: f64) -> Self {
        Self {
            friction,
            damping,
            torsion_torque: false,
            mobilised_damping_factor: 0.0,
        }
    }
}

impl Parameterisation for Epsd {
    type Spec = Spec;

    fn from_table(s: &Spec, key: &Key) -> Result<Self> {
        Ok(Epsd {
            friction: key.field("friction").non_negative(s.friction)?,
            damping: damping_ratio(key, s.damping)?,
            torsion_torque: s.torsion_torque,
            mobilised_damping_factor: key
                .field("mobilised_damping_factor")
                .unit_interval(s.mobilised_damping_factor)?,
        })
    }

    /// Its spring-dashpot: `λ = 2.25`, `R_r = R*`.
    #[inline(always)]
    fn as_spring_dashpot(&self) -> SpringDashpot {
        SpringDashpot {
            friction: self.friction,
            damping: self.damping,
            stiffness_factor: Self::STIFFNESS_FACTOR,
            rolling_radius: None,
            torsion_torque: self.torsion_torque,
            mobilised_damping_factor: self.mobilised_damping_factor,
        }
    }
}
