//! Constant directional torque (CDT) rolling resistance.

use super::{RollingInput, RollingLaw};
use crate::contact::model::{Key, Model, PairMaterials};
use crate::error::Result;
use crate::simd::lane::{Lane, V3};
use serde::Deserialize;

/// Constant directional torque: `M_r = −μ_r R* |F_n| ω̂_r` against the
/// rolling part of the relative rotation, `ω_r = ω_rel − (ω_rel·n) n`,
/// `ω̂_r = ω_r/|ω_r|`, and no couple when `ω_r = 0` (Ai, Chen, Rotter &
/// Ooi, Powder Technol. 206 (2011) 269, their model type A; LIGGGHTS
/// `rolling_friction cdt`). No history, no stiffness: it works with any
/// normal model.
///
/// A rolling ball loses its angular momentum about the contact point at the
/// constant rate `μ_r R m g`, so it stops at `t = v₀/(μ_r g)` whatever the
/// sliding friction does. The couple is discontinuous at `ω_r = 0`: a ball
/// held at rest by it flips the couple's sign from step to step and jitters
/// about rest (Ai et al. discuss this); `epsd` has a static state.
///
/// Two differences from LIGGGHTS' `cdt`, which normalises the whole
/// `ω_rel` before removing the torque's normal part (so a twist weakens the
/// couple) and uses the elastic force `k_n δ`: gravel takes the rolling part
/// first, as Ai et al. write it, and the total `|F_n|`, as the EPSD limit
/// `M^m` does.
///
/// ```
/// use gravel::contact::rolling::{Cdt, RollingInput, RollingLaw};
/// use glam::DVec3;
///
/// let m = Cdt { friction: 0.5 };
/// let inp = RollingInput {
///     n: DVec3::Z.into(),
///     omega_rel: DVec3::new(0.0, 4.0, 3.0).into(), // rolling about y, twisting about z
///     k_n: 0.0,
///     r_eff: 1.0,
///     normal_force: 2.0,
///     inertia_r: 1.0,
///     dt: 1e-3,
/// };
/// // μ_r R* |F_n| = 0.5 · 1 · 2 = 1 N m against ω̂_r = ŷ; the twist is left alone.
/// assert_eq!(DVec3::from(m.couple(&inp, &mut [])), DVec3::new(0.0, -1.0, 0.0));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cdt {
    /// Coefficient of rolling friction `μ_r` (≥ 0).
    pub friction: f64,
}

/// `rolling = { model = "cdt", … }`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Spec {
    /// Rolling friction coefficient μ_r.
    pub friction: f64,
}

impl Model for Cdt {
    fn describe(&self) -> String {
        format!("friction {}", crate::math::figures::sig(self.friction, 4))
    }

    type Spec = Spec;

    fn from_spec(s: &Spec, key: &Key, _: &PairMaterials) -> Result<Self> {
        Ok(Cdt {
            friction: key.field("friction").non_negative(s.friction)?,
        })
    }

    fn reads_r_eff(&self) -> bool {
        true
    }
}

impl RollingLaw for Cdt {
    #[inline(always)]
    fn couple<T: Lane>(&self, inp: &RollingInput<T>, _history: &mut [T]) -> V3<T> {
        let n = inp.n;
        let omega_r = inp.omega_rel - n.scale(inp.omega_rel.dot(n));
        let rate = omega_r.length();
        let magnitude = T::splat(self.friction) * inp.r_eff * inp.normal_force.abs();
        let couple = omega_r.scale(-(magnitude / rate));
        V3::select(rate.eq(T::splat(0.0)), V3::zero(), couple)
    }
}
