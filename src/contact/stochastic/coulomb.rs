//! Coulomb (dry) stochastic friction.

use super::{temperature, unit_coulomb_diffusion, StochasticLaw};
use crate::contact::model::{Key, Model, PairMaterials};
use crate::error::Result;
use serde::Deserialize;

/// Dry (Coulomb) friction, `f(u) = κ w`, whose diffusion function is
/// `D(u) = κ w sqrt(π/(2 kT ν)) erfcx(u/sqrt(2 kT ν))` (Hofmann, Dormann,
/// Liebchen, Schmid, arXiv:2507.16388; HOOMD-blue
/// `hoomd.md.pair.friction`, `Coulomb`).
///
/// ```
/// use gravel::contact::stochastic::{Coulomb, StochasticModel};
///
/// let m = StochasticModel::from(Coulomb { kappa: 0.25, kt: 0.5 });
/// // f = κ w = 0.25 · 4 = 1 N at any slip speed.
/// assert_eq!(m.force(3.0, 4.0), 1.0);
/// // D → κ w/u far above the thermal speed sqrt(2 kT ν) = 1.
/// assert!((m.diffusion(1e9, 4.0, 1.0) * 1e9 - 1.0).abs() < 1e-15);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Coulomb {
    /// `κ` (dimensionless): the friction coefficient.
    pub kappa: f64,
    /// Temperature `kT` (an energy).
    pub kt: f64,
}

/// `stochastic = { model = "coulomb", … }`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Spec {
    /// κ: the friction coefficient.
    pub kappa: f64,
    /// Temperature kT (energy).
    #[serde(rename = "kT")]
    pub kt: f64,
}

impl Model for Coulomb {
    fn describe(&self) -> String {
        format!(
            "kappa {}, kT {}",
            crate::math::figures::sig(self.kappa, 4),
            crate::math::figures::sig(self.kt, 4)
        )
    }

    type Spec = Spec;

    fn from_spec(s: &Spec, key: &Key, _: &PairMaterials) -> Result<Self> {
        Ok(Coulomb {
            kappa: key.field("kappa").non_negative(s.kappa)?,
            kt: temperature(key, s.kt)?,
        })
    }
}

impl StochasticLaw for Coulomb {
    #[inline]
    fn force(&self, _u: f64, w: f64) -> f64 {
        self.kappa * w
    }

    #[inline]
    fn diffusion(&self, u: f64, w: f64, a: f64) -> f64 {
        self.kappa * w * unit_coulomb_diffusion(u, a.sqrt())
    }

    fn kt(&self) -> f64 {
        self.kt
    }
}
