//! Normal force models: Hooke, Hertz (restitution-based damping) and WCA.
//!
//! All return the magnitude of the normal force along `−n` on `i` (positive
//! pushes the bodies apart), its conservative part, the stiffness that
//! rolling models use and the linear damping coefficient `γ_n`.

use super::kinematics::Kinematics;
use crate::contact::{kind_mismatch, Kind};
use crate::simd::lane::Lane;

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

/// How a Hooke contact is damped.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum HookeDamping {
    /// `γ_n = 2 β sqrt(k_n m*)` with `β` from the restitution coefficient.
    Restitution {
        /// Damping ratio `β(e)`.
        beta: f64,
    },
    /// `γ_n = rate · m*` (LAMMPS' `damping` in `gran/hooke`).
    Rate {
        /// `γ_n / m*` in 1/s.
        rate: f64,
    },
}

/// A normal force model with its run-constant parameters for one material pair.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum NormalModel {
    /// Linear spring-dashpot: `F_n = k_n δ + γ_n δ̇`.
    Hooke {
        /// Spring constant `k_n`.
        stiffness: f64,
        /// Damping law.
        damping: HookeDamping,
        /// Clamp `F_n ≥ 0`.
        no_tension: bool,
    },
    /// Hertz: `F_n = (4/3) E* sqrt(R*) δ^{3/2} + γ_n δ̇` with
    /// `γ_n = sqrt(5) β sqrt(k_H m*) δ^{1/4}`, `k_H = (4/3) E* sqrt(R*)`
    /// (Tsuji et al., Powder Technol. 71 (1992) 239; the EDEM/LIGGGHTS form
    /// `2 sqrt(5/6) β sqrt(S_n m*)`, `S_n = 2E* sqrt(R*δ)`, is identical).
    Hertz {
        /// Effective Young's modulus `E*`.
        e_star: f64,
        /// Damping ratio `β(e)`.
        beta: f64,
        /// Clamp `F_n ≥ 0`.
        no_tension: bool,
    },
    /// Weeks–Chandler–Andersen repulsion,
    /// `U = 4ε[(σ/r)^12 − (σ/r)^6] + ε` for `r < 2^{1/6} σ`, `F_n = −dU/dr`
    /// (Weeks, Chandler, Andersen, J. Chem. Phys. 54 (1971) 5237).
    Wca {
        /// Energy scale `ε`.
        epsilon: f64,
        /// Length scale `σ`.
        sigma: f64,
    },
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

/// `2^{1/6}`, the WCA cut-off in units of `σ`.
pub const WCA_CUTOFF_FACTOR: f64 = 1.122_462_048_309_373;

/// The Hooke normal force `F_n = k_n δ + γ_n δ̇` (the body of
/// [`NormalModel::Hooke`]).
#[inline(always)]
pub fn hooke_force<T: Lane>(
    stiffness: f64,
    damping: HookeDamping,
    no_tension: bool,
    k: &Kinematics<T>,
) -> NormalForce<T> {
    let gamma = match damping {
        HookeDamping::Restitution { beta } => {
            T::splat(2.0 * beta) * (T::splat(stiffness) * k.m_eff).sqrt()
        }
        HookeDamping::Rate { rate } => T::splat(rate) * k.m_eff,
    };
    let stiffness = T::splat(stiffness);
    damped(stiffness * k.delta, stiffness, gamma, no_tension, k)
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
        match *self {
            NormalModel::Wca { sigma, .. } => Some(WCA_CUTOFF_FACTOR * sigma),
            _ => None,
        }
    }

    /// Whether the model gives a stiffness (needed by rolling models and linear tangential springs).
    pub fn has_stiffness(&self) -> bool {
        !matches!(self, NormalModel::Wca { .. })
    }

    /// The model's kind: [`Kind::HOOKE`], [`Kind::HERTZ`] or [`Kind::WCA`].
    pub fn kind(&self) -> u8 {
        match self {
            NormalModel::Hooke { .. } => Kind::HOOKE,
            NormalModel::Hertz { .. } => Kind::HERTZ,
            NormalModel::Wca { .. } => Kind::WCA,
        }
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
        let is = |kind| KIND == Kind::ANY || KIND == kind;
        match *self {
            NormalModel::Hooke {
                stiffness,
                damping,
                no_tension,
            } if is(Kind::HOOKE) => hooke_force(stiffness, damping, no_tension, k),
            NormalModel::Hertz {
                e_star,
                beta,
                no_tension,
            } if is(Kind::HERTZ) => {
                let sqrt_delta = k.delta.sqrt();
                let k_h = T::splat((4.0 / 3.0) * e_star) * k.r_eff.sqrt();
                let secant = k_h * sqrt_delta;
                let elastic = secant * k.delta;
                let gamma =
                    T::splat(5f64.sqrt() * beta) * (k_h * k.m_eff).sqrt() * sqrt_delta.sqrt();
                damped(elastic, secant, gamma, no_tension, k)
            }
            NormalModel::Wca { epsilon, sigma } if is(Kind::WCA) => {
                let s2 = T::splat(sigma * sigma) / (k.r * k.r);
                let s6 = s2 * s2 * s2;
                let f = T::splat(24.0 * epsilon) / k.r * (T::splat(2.0) * s6 * s6 - s6);
                let zero = T::splat(0.0);
                NormalForce {
                    total: f,
                    elastic: f,
                    stiffness: zero,
                    damping: zero,
                }
            }
            _ => kind_mismatch(),
        }
    }

    /// Elastic potential energy stored at overlap `δ` (centre distance `r`), for diagnostics.
    pub fn energy(&self, delta: f64, r: f64, r_eff: f64) -> f64 {
        match *self {
            NormalModel::Hooke { stiffness, .. } => 0.5 * stiffness * delta * delta,
            NormalModel::Hertz { e_star, .. } => {
                (8.0 / 15.0) * e_star * r_eff.sqrt() * delta.powf(2.5)
            }
            NormalModel::Wca { epsilon, sigma } => {
                let s6 = (sigma / r).powi(6);
                4.0 * epsilon * (s6 * s6 - s6) + epsilon
            }
        }
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

    #[test]
    fn wca_force_is_minus_energy_gradient_and_vanishes_at_cutoff() {
        let m = NormalModel::Wca {
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
                delta: 0.0,
                delta_dot: 0.0,
                lever_i: 0.0,
                lever_j: 0.0,
                v_t: glam::DVec3::ZERO.into(),
                omega_rel: glam::DVec3::ZERO.into(),
                spin_n: 0.0,
                r_eff: 0.5,
                m_eff: 1.0,
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
