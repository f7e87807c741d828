//! Linear stochastic friction: viscous, proportional to the load.

use super::{temperature, StochasticLaw};
use crate::contact::model::{Key, Model, PairMaterials};
use crate::error::Result;
use serde::Deserialize;

/// Viscous friction proportional to the load, `f(u) = γ w u`, whose
/// diffusion function is `D(u) = γ w` (Hofmann, Dormann, Liebchen, Schmid,
/// arXiv:2507.16388; HOOMD-blue `hoomd.md.pair.friction`, `Linear`).
///
/// ```
/// use gravel::contact::stochastic::{Linear, StochasticModel};
///
/// let m = StochasticModel::from(Linear { gamma: 0.5, kt: 1.0 });
/// // f = γ w u = 0.5 · 4 · 2 = 4 N; D = γ w = 2 at any u.
/// assert_eq!(m.force(2.0, 4.0), 4.0);
/// assert_eq!(m.diffusion(2.0, 4.0, 1.0), 2.0);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Linear {
    /// `γ` \[s/m\]: force per unit load and unit slip speed.
    pub gamma: f64,
    /// Temperature `kT` (an energy).
    pub kt: f64,
}

/// `stochastic = { model = "linear", … }`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Spec {
    /// γ: force per unit load and unit slip speed (s/m).
    pub gamma: f64,
    /// Temperature kT (energy).
    #[serde(rename = "kT")]
    pub kt: f64,
}

impl Model for Linear {
    fn describe(&self) -> String {
        format!(
            "gamma {}, kT {}",
            crate::math::figures::sig(self.gamma, 4),
            crate::math::figures::sig(self.kt, 4)
        )
    }

    type Spec = Spec;

    fn from_spec(s: &Spec, key: &Key, _: &PairMaterials) -> Result<Self> {
        Ok(Linear {
            gamma: key.field("gamma").non_negative(s.gamma)?,
            kt: temperature(key, s.kt)?,
        })
    }
}

impl StochasticLaw for Linear {
    #[inline]
    fn force(&self, u: f64, w: f64) -> f64 {
        self.gamma * w * u
    }

    #[inline]
    fn diffusion(&self, _u: f64, w: f64, _a: f64) -> f64 {
        self.gamma * w
    }

    fn kt(&self) -> f64 {
        self.kt
    }
}
