//! Coulomb–Newton stochastic friction: viscous below, Coulomb above a
//! crossover speed.

use super::{temperature, unit_coulomb_diffusion, StochasticLaw};
use crate::contact::model::{Key, Model, PairMaterials};
use crate::error::Result;
use serde::Deserialize;

/// Viscous below, Coulomb above the crossover speed `u_c = κ w/γ`:
/// `f(u) = min(γ u, κ w)` (Hofmann, Dormann, Liebchen, Schmid,
/// arXiv:2507.16388; HOOMD-blue `hoomd.md.pair.friction`,
/// `CoulombNewton`). With `a = 2 kT ν`, `s = sqrt(a)`:
///
/// ```text
/// u ≥ u_c:  D(u) = κ w sqrt(π/a) erfcx(u/s)
/// u < u_c:  D(u) = γ (1 − E) + E κ w sqrt(π/a) erfcx(u_c/s),
///           E = exp(−(u_c² − u²)/a) ∈ (0, 1]
/// ```
///
/// (the linear part `∫_u^{u_c} γ u' exp(−(u'² − u²)/a) du'` gives
/// `γ a/2 (1 − E)`, the Coulomb tail from `u_c` gives `E` times the
/// Coulomb form at `u_c`; both are divided by `kT ν = a/2`). Only
/// `erfcx` of a non-negative argument and `exp` of a non-positive one
/// appear, so nothing overflows; `1 − E` is computed as `−expm1(·)`.
///
/// ```
/// use gravel::contact::stochastic::{CoulombNewton, StochasticModel};
///
/// let m = StochasticModel::from(CoulombNewton { gamma: 2.0, kappa: 0.5, kt: 0.0 });
/// // w = 4: u_c = κ w/γ = 1. Viscous below, Coulomb above.
/// assert_eq!(m.force(0.25, 4.0), 0.5);
/// assert_eq!(m.force(3.0, 4.0), 2.0);
/// // kT = 0: deterministic, no diffusion.
/// assert_eq!(m.diffusion(0.25, 4.0, 1.0), 0.0);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CoulombNewton {
    /// `γ` \[N s/m\]: viscous coefficient below `u_c` (not scaled by the load).
    pub gamma: f64,
    /// `κ` (dimensionless): the friction coefficient above `u_c`.
    pub kappa: f64,
    /// Temperature `kT` (an energy).
    pub kt: f64,
}

/// `stochastic = { model = "coulomb_newton", … }`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Spec {
    /// γ: viscous coefficient below the crossover (N s/m).
    pub gamma: f64,
    /// κ: the friction coefficient above the crossover.
    pub kappa: f64,
    /// Temperature kT (energy).
    #[serde(rename = "kT")]
    pub kt: f64,
}

impl Model for CoulombNewton {
    fn describe(&self) -> String {
        format!(
            "gamma {}, kappa {}, kT {}",
            crate::math::figures::sig(self.gamma, 4),
            crate::math::figures::sig(self.kappa, 4),
            crate::math::figures::sig(self.kt, 4)
        )
    }

    type Spec = Spec;

    fn from_spec(s: &Spec, key: &Key, _: &PairMaterials) -> Result<Self> {
        Ok(CoulombNewton {
            gamma: key.field("gamma").non_negative(s.gamma)?,
            kappa: key.field("kappa").non_negative(s.kappa)?,
            kt: temperature(key, s.kt)?,
        })
    }
}

impl StochasticLaw for CoulombNewton {
    #[inline]
    fn force(&self, u: f64, w: f64) -> f64 {
        (self.gamma * u).min(self.kappa * w)
    }

    #[inline]
    fn diffusion(&self, u: f64, w: f64, a: f64) -> f64 {
        let (gamma, kappa) = (self.gamma, self.kappa);
        let f_max = kappa * w;
        if gamma == 0.0 || f_max == 0.0 {
            return 0.0; // f ≡ 0
        }
        let s = a.sqrt();
        let u_c = f_max / gamma;
        if u >= u_c {
            f_max * unit_coulomb_diffusion(u, s)
        } else {
            // −(u_c² − u²)/a ≤ 0, factored to keep its accuracy near u_c.
            let q = -((u_c - u) * (u_c + u)) / a;
            gamma * -q.exp_m1() + q.exp() * f_max * unit_coulomb_diffusion(u_c, s)
        }
    }

    fn kt(&self) -> f64 {
        self.kt
    }
}
