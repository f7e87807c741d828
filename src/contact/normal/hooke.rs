//! The Hooke (linear spring-dashpot) normal force.

use super::{damped, restitution, NormalForce, NormalLaw};
use crate::contact::kinematics::Kinematics;
use crate::contact::model::{Key, Model, PairMaterials};
use crate::contact::Kind;
use crate::error::Result;
use crate::simd::lane::Lane;
use serde::Deserialize;

/// Linear spring-dashpot: `F_n = k_n δ + γ_n δ̇`, with `γ_n` from a
/// restitution coefficient, `γ_n = 2 β(e) sqrt(k_n m*)`, or from a rate,
/// `γ_n = rate · m*` (LAMMPS `gran/hooke`: Silbert et al., Phys. Rev. E 64
/// (2001) 051302). The total force is clamped at 0 with `no_tension`.
///
/// ```
/// use gravel::contact::normal::{Hooke, HookeDamping, NormalLaw};
/// use gravel::contact::Kinematics;
///
/// let hooke = Hooke {
///     stiffness: 1000.0,
///     damping: HookeDamping::Rate { rate: 2.0 },
///     no_tension: false,
/// };
/// // δ = 1 mm, approaching at δ̇ = 0.5 m/s, m* = 0.25 kg:
/// // F_n = 1000 · 1e-3 + (2 · 0.25) · 0.5 = 1.25 N.
/// let k = Kinematics { delta: 1e-3, delta_dot: 0.5, m_eff: 0.25, ..Kinematics::default() };
/// let f = hooke.force(&k);
/// assert_eq!((f.total, f.elastic, f.stiffness, f.damping), (1.25, 1.0, 1000.0, 0.5));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hooke {
    /// Spring constant `k_n` \[N/m\].
    pub stiffness: f64,
    /// Damping law.
    pub damping: HookeDamping,
    /// Clamp `F_n ≥ 0`.
    pub no_tension: bool,
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

/// `normal = { model = "hooke", … }`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Spec {
    /// Spring constant k_n (N/m).
    pub stiffness: f64,
    /// Coefficient of restitution (gives γ_n = 2β sqrt(k_n m*)).
    pub restitution: Option<f64>,
    /// γ_n / m* (1/s), as LAMMPS writes it.
    pub damping_rate: Option<f64>,
    /// Clamp the total normal force at zero (no attraction).
    #[serde(default)]
    pub no_tension: bool,
}

impl Hooke {
    /// The damping coefficient `γ_n` at effective mass `m*`, per lane.
    #[inline(always)]
    pub fn gamma<T: Lane>(&self, m_eff: T) -> T {
        match self.damping {
            HookeDamping::Restitution { beta } => {
                T::splat(2.0 * beta) * (T::splat(self.stiffness) * m_eff).sqrt()
            }
            HookeDamping::Rate { rate } => T::splat(rate) * m_eff,
        }
    }
}

impl Model for Hooke {
    fn describe(&self) -> String {
        let damping = match self.damping {
            HookeDamping::Restitution { beta } => {
                format!(
                    "restitution {}",
                    crate::math::figures::sig(super::restitution_of(beta), 4)
                )
            }
            HookeDamping::Rate { rate } => {
                format!("damping_rate {}", crate::math::figures::sig(rate, 4))
            }
        };
        let tension = if self.no_tension { ", no_tension" } else { "" };
        format!(
            "stiffness {}, {damping}{tension}",
            crate::math::figures::sig(self.stiffness, 4)
        )
    }

    type Spec = Spec;
    const KIND: u8 = Kind::HOOKE;

    fn from_spec(s: &Spec, key: &Key, _: &PairMaterials) -> Result<Self> {
        let stiffness = key.field("stiffness").positive(s.stiffness)?;
        let damping = match (s.restitution, s.damping_rate) {
            (Some(e), None) => HookeDamping::Restitution {
                beta: restitution(key, e)?,
            },
            (None, Some(r)) => HookeDamping::Rate {
                rate: key.field("damping_rate").non_negative(r)?,
            },
            _ => {
                return Err(key.err(
                    "give exactly one of `restitution` or `damping_rate` for model \"hooke\"",
                ))
            }
        };
        Ok(Hooke {
            stiffness,
            damping,
            no_tension: s.no_tension,
        })
    }
}

impl NormalLaw for Hooke {
    #[inline(always)]
    fn force<T: Lane>(&self, k: &Kinematics<T>) -> NormalForce<T> {
        let gamma = self.gamma(k.m_eff);
        let stiffness = T::splat(self.stiffness);
        damped(stiffness * k.delta, stiffness, gamma, self.no_tension, k)
    }

    fn energy(&self, delta: f64, _r: f64, _r_eff: f64) -> f64 {
        0.5 * self.stiffness * delta * delta
    }
}
