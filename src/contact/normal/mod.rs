//! Normal force models: Hooke, Hertz (restitution-based damping) and WCA,
//! one file each, listed in the registry [`NormalModel`].
//!
//! All return the magnitude of the normal force along `−n` on `i` (positive
//! pushes the bodies apart), its conservative part, the stiffness that
//! rolling models use and the linear damping coefficient `γ_n`
//! ([`NormalForce`]). Normal models keep no history.

pub mod hertz;
pub mod hooke;
pub mod wca;

pub use hertz::Hertz;
pub use hooke::{Hooke, HookeDamping};
pub use wca::{Wca, WCA_CUTOFF_FACTOR};

use super::kinematics::Kinematics;
use super::model::{kind_of, registry, Key, Model};
use super::{kind_mismatch, Kind};
use crate::error::Result;
use crate::simd::lane::Lane;

/// The kernel of a normal model, besides what every [`Model`] provides.
pub trait NormalLaw: Model {
    /// Whether the model acts through the overlap and gives a stiffness
    /// (needed by rolling models, spring-sliders, spinning friction and
    /// walls). Default: yes.
    const HAS_STIFFNESS: bool = true;

    /// The normal force of a contact (or of a group, one per lane).
    fn force<T: Lane>(&self, k: &Kinematics<T>) -> NormalForce<T>;

    /// Elastic potential energy at overlap `δ` (centre distance `r`,
    /// effective radius `R*`), for diagnostics.
    fn energy(&self, delta: f64, r: f64, r_eff: f64) -> f64;

    /// The interaction range when it does not depend on the radii; `None`
    /// (the default) for contact models, whose range is `R_i + R_j`.
    fn fixed_range(&self) -> Option<f64> {
        None
    }
}

registry! {
    /// A normal force model with its run-constant parameters for one
    /// material pair.
    pub enum NormalModel;
    /// Normal force models, chosen by `model = "..."`.
    pub enum NormalSpec;
    each: each_normal, $;
    /// Linear spring-dashpot ([`hooke`]).
    Hooke(Hooke) = "hooke",
    /// Hertz with restitution-based damping, from the materials' E and ν
    /// ([`hertz`]).
    Hertz(Hertz) = "hertz",
    /// Weeks–Chandler–Andersen repulsion, for colloids ([`wca`]).
    Wca(Wca) = "wca",
}

/// What a normal model hands to the other sub-models (per lane).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NormalForce<T: Lane = f64> {
    /// Total normal force magnitude along `−n` on `i` (after any `no_tension` clamp).
    pub total: T,
    /// Conservative (elastic) part.
    pub elastic: T,
    /// Secant stiffness `k_n` (elastic force over overlap); 0 for WCA.
    pub stiffness: T,
    /// Linear damping coefficient `γ_n` at this contact.
    pub damping: T,
}

/// Damping ratio from the coefficient of restitution,
/// `β(e) = −ln e / sqrt(ln² e + π²)` (e.g. Antypov & Elliott, EPL 94 (2011)
/// 50004; the form EDEM and LIGGGHTS use). `e = 1` gives 0, `e → 0` gives 1.
pub fn damping_ratio_from_restitution(e: f64) -> f64 {
    if e <= 0.0 {
        return 1.0;
    }
    let l = e.ln();
    -l / (l * l + std::f64::consts::PI * std::f64::consts::PI).sqrt()
}

/// The restitution coefficient `e` whose damping ratio is `beta`, the
/// inverse of [`damping_ratio_from_restitution`] (for `gravel check`):
/// `e = exp(−π β / sqrt(1 − β²))`.
pub fn restitution_of(beta: f64) -> f64 {
    (-std::f64::consts::PI * beta / (1.0 - beta * beta).sqrt()).exp()
}

/// The damping ratio `β` of `key.restitution = e`, which must lie in (0, 1].
fn restitution(key: &Key, e: f64) -> Result<f64> {
    if e > 0.0 && e <= 1.0 {
        Ok(damping_ratio_from_restitution(e))
    } else {
        Err(key
            .field("restitution")
            .err(format!("must lie in (0, 1], got {e}")))
    }
}

/// The normal force from its elastic part, secant stiffness and damping
/// coefficient: `F_n = F_el + γ_n δ̇`, clamped at 0 with `no_tension`.
#[inline(always)]
fn damped<T: Lane>(
    elastic: T,
    stiffness: T,
    gamma: T,
    no_tension: bool,
    k: &Kinematics<T>,
) -> NormalForce<T> {
    let mut total = elastic + gamma * k.delta_dot;
    if no_tension {
        let zero = T::splat(0.0);
        total = T::select(total.lt(zero), zero, total);
    }
    NormalForce {
        total,
        elastic,
        stiffness,
        damping: gamma,
    }
}

impl NormalModel {
    /// The centre distance below which two spheres of radii `ri`, `rj` interact.
    #[inline(always)]
    pub fn range(&self, ri: f64, rj: f64) -> f64 {
        self.fixed_range().unwrap_or(ri + rj)
    }

    /// The interaction range when it does not depend on the radii (WCA:
    /// `2^{1/6} σ`); `None` for contact models, whose range is `R_i + R_j`.
    #[inline(always)]
    pub fn fixed_range(&self) -> Option<f64> {
        each_normal!(self, m => m.fixed_range())
    }

    /// Whether the model gives a stiffness ([`NormalLaw::HAS_STIFFNESS`]).
    pub fn has_stiffness(&self) -> bool {
        fn has<M: NormalLaw>(_: &M) -> bool {
            M::HAS_STIFFNESS
        }
        each_normal!(self, m => has(m))
    }

    /// Evaluate the normal force of a contact (or of a group of contacts, one per lane).
    #[inline(always)]
    pub fn force<T: Lane>(&self, k: &Kinematics<T>) -> NormalForce<T> {
        self.force_as::<T, { Kind::ANY }>(k)
    }

    /// [`Self::force`] of a model whose kind `KIND` is known where the
    /// caller is compiled ([`Kind::ANY`]: not known), so that the code of
    /// the other kinds drops out.
    ///
    /// # Panics
    /// If the model is not of kind `KIND`.
    #[inline(always)]
    pub fn force_as<T: Lane, const KIND: u8>(&self, k: &Kinematics<T>) -> NormalForce<T> {
        each_normal!(self, m => {
            if KIND == Kind::ANY || KIND == kind_of(m) {
                m.force(k)
            } else {
                kind_mismatch()
            }
        })
    }

    /// Elastic potential energy stored at overlap `δ` (centre distance `r`), for diagnostics.
    pub fn energy(&self, delta: f64, r: f64, r_eff: f64) -> f64 {
        each_normal!(self, m => m.energy(delta, r, r_eff))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn beta_limits() {
        assert_eq!(damping_ratio_from_restitution(1.0), 0.0);
        assert_eq!(damping_ratio_from_restitution(0.0), 1.0);
        // e = exp(-π) gives β = π / sqrt(2π²) = 1/√2.
        let b = damping_ratio_from_restitution((-std::f64::consts::PI).exp());
        assert!((b - std::f64::consts::FRAC_1_SQRT_2).abs() < 1e-15);
    }
}
