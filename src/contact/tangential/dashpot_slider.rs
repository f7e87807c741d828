//! DEMLab's dashpot-slider tangential force (no history).

use super::TangentialLaw;
use crate::contact::kinematics::Kinematics;
use crate::contact::model::{Key, Model, PairMaterials};
use crate::contact::normal::NormalForce;
use crate::contact::Kind;
use crate::error::Result;
use crate::simd::lane::{Lane, V3};
use serde::Deserialize;

/// DEMLab `ContactForceT_DashpotSlider`: `F_t = −min(η_t |v_t|, μ|F_n|) t̂`, `t̂ = v_t/|v_t|`, on
/// `j`, viscous below the Coulomb limit and sliding above it. No history.
///
/// ```
/// use gravel::contact::normal::NormalForce;
/// use gravel::contact::tangential::{DashpotSlider, TangentialLaw};
/// use gravel::contact::Kinematics;
/// use glam::DVec3;
///
/// let m = DashpotSlider { friction: 0.5, damping: 2.0 };
/// let normal = NormalForce { total: 10.0, elastic: 10.0, stiffness: 0.0, damping: 0.0 };
/// let slow = Kinematics { v_t: DVec3::new(0.5, 0.0, 0.0).into(), ..Kinematics::default() };
/// // Viscous: 2 · 0.5 = 1 N < μ F_n = 5 N.
/// assert_eq!(DVec3::from(m.force(&slow, &normal, 1e-3, &mut [])), DVec3::new(-1.0, 0.0, 0.0));
/// let fast = Kinematics { v_t: DVec3::new(0.0, 10.0, 0.0).into(), ..Kinematics::default() };
/// // Sliding: capped at μ F_n = 5 N.
/// assert_eq!(DVec3::from(m.force(&fast, &normal, 1e-3, &mut [])), DVec3::new(0.0, -5.0, 0.0));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DashpotSlider {
    /// Coulomb coefficient `μ`.
    pub friction: f64,
    /// Dashpot coefficient `η_t` \[N s/m\].
    pub damping: f64,
}

/// `tangential = { model = "dashpot_slider", … }`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Spec {
    /// Coulomb friction coefficient μ.
    pub friction: f64,
    /// Dashpot coefficient η_t (N s/m).
    pub damping: f64,
}

impl Model for DashpotSlider {
    fn describe(&self) -> String {
        format!(
            "friction {}, damping {}",
            crate::math::figures::sig(self.friction, 4),
            crate::math::figures::sig(self.damping, 4)
        )
    }

    type Spec = Spec;
    const KIND: u8 = Kind::DASHPOT_SLIDER;

    fn from_spec(s: &Spec, key: &Key, _: &PairMaterials) -> Result<Self> {
        Ok(DashpotSlider {
            friction: key.field("friction").non_negative(s.friction)?,
            damping: key.field("damping").non_negative(s.damping)?,
        })
    }
}

impl TangentialLaw for DashpotSlider {
    #[inline(always)]
    fn force<T: Lane>(
        &self,
        k: &Kinematics<T>,
        normal: &NormalForce<T>,
        _dt: f64,
        _history: &mut [T],
    ) -> V3<T> {
        let speed = k.v_t.length();
        let magnitude =
            (T::splat(self.damping) * speed).min(T::splat(self.friction) * normal.total.abs());
        let f = k.v_t.scale(-(magnitude / speed));
        V3::select(speed.eq(T::splat(0.0)), V3::zero(), f)
    }

    fn friction(&self) -> f64 {
        self.friction
    }
}
