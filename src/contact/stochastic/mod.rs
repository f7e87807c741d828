//! Markovian stochastic friction: the friction laws, one file each, listed
//! in the registry [`StochasticModel`], and the pair force with
//! fluctuation–dissipation noise they share ([`stochastic_pair`]).
//!
//! Model of Hofmann, Dormann, Liebchen, Schmid, "A general model for
//! frictional contacts in colloidal systems", arXiv:2507.16388 (2025), as
//! shipped by HOOMD-blue in `hoomd.md.pair.friction` (`FrictionalPair`); see
//! `physics.md`, section "Markovian stochastic friction". It replaces the
//! tangential model of a contact and keeps no history.
//!
//! # Model
//!
//! For a contact between `i` (the lower global id) and `j`, with unit normal
//! `n` from `i` to `j`:
//!
//! ```text
//! u     = P(n)(v_j − v_i) − (ω_i R_i + ω_j R_j) × n,     P(n) = 1 − n nᵀ
//! F^f_i = f(|u|) û                                        (û = u/|u|)
//! F^R_i = sqrt(D(|u|)) [P(n) ξ − n × N]
//! F_i   = F^f_i + F^R_i,  F_j = −F_i
//! τ_i   = R_i n × F_i,    τ_j = R_j n × F_i               (same sign)
//! D(u)  = 1/(kT ν) ∫_u^∞ f(u') exp(−(u'² − u²)/(2 kT ν)) du'
//! ν     = (1/m_i + 1/m_j) + (R_i²/I_i + R_j²/I_j)
//! ```
//!
//! `ξ` and `N` are 3-vectors of independent normal variates of variance
//! `kT/Δt`, with `ξ_ij = −ξ_ji` and `N_ij = N_ji`. `f(u)` is the friction
//! law (a [`StochasticModel`]), `w = |F_n|` the conservative part of the normal
//! force.
//!
//! `D` is what makes the noise satisfy fluctuation–dissipation for any `f`:
//! `u` obeys the Itô equation `du = −ν f(|u|) û dt − ν sqrt(D) dW` with
//! `⟨dW dWᵀ⟩ = 2 kT P(n) dt`, and the zero-flux condition of its
//! Fokker–Planck equation for the Maxwell density `exp(−|u|²/(2 kT ν))` is
//! the first-order equation `D' − u D/(kT ν) = −f/(kT ν)`, whose solution
//! that stays bounded at large `u` is the integral above. The noise is
//! therefore evaluated at the velocities of the start of the step (Itô),
//! which is what [`stochastic_pair`] does.
//!
//! # Canonical orientation and the antisymmetric noise
//!
//! The caller evaluates every pair in its canonical orientation (`i` = the
//! lower global id) and passes six normal variates drawn for the *unordered*
//! pair (e.g. `rng::pair_normals`, whose counter is built from `(min id,
//! max id)`). The first three are `ξ_ij` for `i < j`; the pair `(j, i)` is
//! never evaluated, so `ξ_ji = −ξ_ij` holds by construction: `j` receives
//! `−F_i`, which contains `−ξ_ij`. `N` enters through `n × N`, and `n`
//! flips sign with the orientation, so `N_ij = N_ji` is the same numbers.
//! Every rank and thread that evaluates the pair computes the same bits.
//!
//! # Walls
//!
//! A wall is body `j` with `m_j = I_j = R_j = ∞`: it adds nothing to `ν`,
//! its rotation is not used (pass its velocity at the contact point as
//! `v_j`) and it receives no torque (`torque_j = 0`).

pub mod coulomb;
pub mod coulomb_newton;
pub mod linear;

pub use coulomb::Coulomb;
pub use coulomb_newton::CoulombNewton;
pub use linear::Linear;

use super::model::{registry, Key, Model};
use crate::error::Result;
use crate::math::erfcx::{erfcx, SQRT_PI};
use glam::DVec3;

/// The friction law of a stochastic model, besides what every [`Model`]
/// provides. Every law has a temperature `kT` (an energy, `k_B = 1`;
/// 0 gives deterministic friction).
pub trait StochasticLaw: Model {
    /// The friction force magnitude `f(u)` at slip speed `u ≥ 0` and load
    /// `w = |F_n| ≥ 0`.
    fn force(&self, u: f64, w: f64) -> f64;

    /// The diffusion function
    /// `D(u) = 1/(kT ν) ∫_u^∞ f(u') exp(−(u'² − u²)/(2 kT ν)) du'` in closed
    /// form, for `a = 2 kT ν > 0` (finite and non-negative for all finite
    /// non-negative inputs).
    fn diffusion(&self, u: f64, w: f64, a: f64) -> f64;

    /// The temperature `kT`.
    fn kt(&self) -> f64;
}

registry! {
    /// A stochastic friction model (a friction law `f(u)` and its
    /// temperature) with its run-constant parameters for one material pair.
    pub enum StochasticModel;
    /// Markovian stochastic friction laws (Hofmann et al. 2025, as
    /// HOOMD-blue's `FrictionalPair` ships them), chosen by
    /// `model = "..."`; `kT` is the temperature, an energy (k_B = 1 in the
    /// config's units); `kT = 0` gives deterministic friction. Default none.
    pub enum StochasticSpec or
        /// No stochastic friction.
        None;
    each: each_stochastic, $;
    /// Viscous friction proportional to the load ([`linear`]).
    Linear(Linear) = "linear",
    /// Dry (Coulomb) friction ([`coulomb`]).
    Coulomb(Coulomb) = "coulomb",
    /// Viscous below, Coulomb above a crossover speed ([`coulomb_newton`]).
    CoulombNewton(CoulombNewton) = "coulomb_newton",
}

impl StochasticModel {
    /// The friction force magnitude `f(u)` at slip speed `u ≥ 0` and load
    /// `w = |F_n| ≥ 0`.
    #[inline]
    pub fn force(&self, u: f64, w: f64) -> f64 {
        each_stochastic!(self, m => m.force(u, w))
    }

    /// The diffusion function `D(u)` ([`StochasticLaw::diffusion`]) at the
    /// model's temperature `kT`, for slip speed `u ≥ 0`, load `w ≥ 0` and
    /// mobility `ν` ([`pair_mobility`]).
    ///
    /// `kT ≤ 0` (deterministic friction) or `ν ≤ 0` (nothing can move)
    /// gives `D = 0`, as does `2 kT ν` underflowing to zero. The result is
    /// finite and non-negative for all finite non-negative inputs; for
    /// `u → ∞` the Coulomb forms tend to `κ w/u`.
    #[inline]
    pub fn diffusion(&self, u: f64, w: f64, nu: f64) -> f64 {
        let kt = self.kt();
        let a = 2.0 * kt * nu;
        if kt <= 0.0 || nu <= 0.0 || a == 0.0 {
            return 0.0;
        }
        each_stochastic!(self, m => m.diffusion(u, w, a))
    }

    /// The temperature `kT`.
    #[inline]
    pub fn kt(&self) -> f64 {
        each_stochastic!(self, m => m.kt())
    }
}

/// The temperature `key.kT`: zero or positive.
fn temperature(key: &Key, kt: f64) -> Result<f64> {
    key.field("kT").non_negative(kt)
}

/// `(1/(kT ν)) ∫_u^∞ exp(−(u'² − u²)/(2 kT ν)) du' = sqrt(π)/s · erfcx(u/s)`
/// with `s = sqrt(2 kT ν)`: the diffusion function of a unit Coulomb force.
///
/// Tends to `1/u` for `u ≫ s`; that limit (relative error below `1e-16`)
/// is used once `u/s > 1e8`, so that a tiny `s` cannot produce `∞ · 0`.
#[inline]
fn unit_coulomb_diffusion(u: f64, s: f64) -> f64 {
    let x = u / s;
    if x > 1e8 {
        1.0 / u
    } else {
        SQRT_PI / s * erfcx(x)
    }
}

/// The mobility `ν = (1/m_i + 1/m_j) + (R_i²/I_i + R_j²/I_j)` of a contact.
///
/// A body with infinite mass contributes nothing to the first bracket, one
/// with infinite moment of inertia or radius nothing to the second (a wall:
/// `m = I = R = ∞`).
#[inline]
pub fn pair_mobility(
    m_i: f64,
    m_j: f64,
    r_i: f64,
    r_j: f64,
    inertia_i: f64,
    inertia_j: f64,
) -> f64 {
    let inv_mass = |m: f64| if m.is_finite() { 1.0 / m } else { 0.0 };
    let rot = |r: f64, inertia: f64| {
        if r.is_finite() && inertia.is_finite() {
            r * r / inertia
        } else {
            0.0
        }
    };
    inv_mass(m_i) + inv_mass(m_j) + rot(r_i, inertia_i) + rot(r_j, inertia_j)
}

/// The state of one contact as [`stochastic_pair`] needs it, in canonical
/// orientation: `i` has the lower global id.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StochasticPairInput {
    /// Unit normal from `i` to `j`.
    pub n: DVec3,
    /// Velocity of `i`.
    pub v_i: DVec3,
    /// Velocity of `j` (a wall: its velocity at the contact point).
    pub v_j: DVec3,
    /// Angular velocity of `i`.
    pub omega_i: DVec3,
    /// Angular velocity of `j` (ignored for a wall).
    pub omega_j: DVec3,
    /// Radius of `i`: the lever arm of the model.
    pub r_i: f64,
    /// Radius of `j` (`∞` for a wall).
    pub r_j: f64,
    /// Mass of `i`.
    pub m_i: f64,
    /// Mass of `j` (`∞` for a wall).
    pub m_j: f64,
    /// Moment of inertia of `i`.
    pub inertia_i: f64,
    /// Moment of inertia of `j` (`∞` for a wall).
    pub inertia_j: f64,
    /// `w = |F_n|`, the magnitude of the conservative normal force (the
    /// load of the friction law).
    pub w: f64,
}

/// Force and torques of one stochastic-friction contact.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct StochasticPairOutput {
    /// Force on `i`, friction plus noise; `j` receives `−force_i`.
    pub force_i: DVec3,
    /// Torque on `i`: `R_i n × force_i`.
    pub torque_i: DVec3,
    /// Torque on `j`: `R_j n × force_i` (same sign as on `i`; zero for a wall).
    pub torque_j: DVec3,
}

/// Evaluate the Markovian stochastic friction of one contact (formulas in
/// the module documentation).
///
/// - `law`: the friction law and its temperature `kT` (`kT = 0`:
///   deterministic friction, no noise; then `normals` are not used).
/// - `dt`: the time step (`> 0` when `kt > 0`); the noise variance is `kT/Δt`.
/// - `input`: the contact in canonical orientation (`i` = lower id).
/// - `normals`: six independent standard normal variates drawn for the
///   unordered pair at this step; `ξ = sqrt(kT/Δt) · normals[0..3]`,
///   `N = sqrt(kT/Δt) · normals[3..6]`.
///
/// `u = 0` gives no friction direction, hence no friction force (the noise
/// remains). The result is `F_i = f(|u|) û + sqrt(D(|u|) kT/Δt) [P(n) g_ξ −
/// n × g_N]` with `g_ξ`, `g_N` the two halves of `normals`, and the torques
/// `R_i n × F_i`, `R_j n × F_i`. Velocities are those at the time of the
/// force evaluation (start of the step: Itô noise).
pub fn stochastic_pair(
    law: &StochasticModel,
    dt: f64,
    input: &StochasticPairInput,
    normals: &[f64; 6],
) -> StochasticPairOutput {
    let kt = law.kt();
    debug_assert!(kt <= 0.0 || dt > 0.0, "noise needs a positive time step");
    let n = input.n;
    let wall_j = !input.r_j.is_finite();
    let dv = input.v_j - input.v_i;
    let spin = if wall_j {
        input.omega_i * input.r_i
    } else {
        input.omega_i * input.r_i + input.omega_j * input.r_j
    };
    let u = (dv - n * n.dot(dv)) - spin.cross(n);
    let speed = u.length();

    let friction = if speed > 0.0 {
        u * (law.force(speed, input.w) / speed)
    } else {
        DVec3::ZERO
    };

    let noise = if kt > 0.0 {
        let nu = pair_mobility(
            input.m_i,
            input.m_j,
            input.r_i,
            input.r_j,
            input.inertia_i,
            input.inertia_j,
        );
        let d = law.diffusion(speed, input.w, nu);
        let amplitude = (d * kt / dt).sqrt();
        let xi = DVec3::new(normals[0], normals[1], normals[2]);
        let big_n = DVec3::new(normals[3], normals[4], normals[5]);
        (xi - n * n.dot(xi) - n.cross(big_n)) * amplitude
    } else {
        DVec3::ZERO
    };

    let force_i = friction + noise;
    let arm = n.cross(force_i);
    StochasticPairOutput {
        force_i,
        torque_i: input.r_i * arm,
        torque_j: if wall_j { DVec3::ZERO } else { input.r_j * arm },
    }
}

#[cfg(test)]
mod tests;
