//! Rolling resistance: the elasto-plastic spring-dashpot (EPSD) couple of
//! Ai, Chen, Rotter & Ooi, "Assessment of rolling resistance models in
//! discrete element simulations", Powder Technol. 206 (2011) 269–282
//! (their model type C).
//!
//! Two parameterisations of the same law are offered, see [`RollingModel`]:
//! Aspherix / LIGGGHTS `rolling_friction epsd` and Altair EDEM "Type C
//! Rolling Friction". Both are a rotational spring `M^k` (kept in the
//! contact's history, 3 values) capped at a full-mobilisation torque `M^m`,
//! plus a rotational dashpot `M^d`:
//!
//! ```text
//! ω_r   = ω_rel − (ω_rel·n) n          (ω_r = ω_rel when torsion_torque)
//! M^k  ← rot(M^k) − k_r ω_r Δt         (rot: into the current tangent plane,
//!                                       keeping |M^k|; skipped with torsion)
//! M^m   = μ_r R_r |F_n|
//! |M^k| > M^m  ⇒  M^k ← M^m M^k/|M^k|  (fully mobilised)
//! M^d   = −C_r ω_r   below the limit,   −f C_r ω_r   fully mobilised
//! C_r   = η_r · 2 sqrt(I_r k_r),        k_r = λ k_n μ_r² R_r²
//! M_r   = M^k + M^d                     (+M_r on i, −M_r on j)
//! ```
//!
//! with `ω_rel = ω_i − ω_j`, `n` the unit normal from `i` to `j`, `k_n` the
//! normal model's secant stiffness and
//! `I_r = (1/(I_i + m_i R_i²) + 1/(I_j + m_j R_j²))⁻¹` (see
//! [`pair_rolling_inertia`], [`wall_rolling_inertia`]).
//!
//! **Deliberate difference from LIGGGHTS/Aspherix.** LIGGGHTS keeps the
//! stored spring torque in the global frame and never turns it as the
//! contact normal turns, so a loaded contact that is rigidly rotated keeps
//! a torque that is no longer tangential (the law is not objective).
//! gravel projects the stored torque onto the current tangent plane and
//! restores its length before every increment (Luding, Granular Matter 10
//! (2008) 235, eq. 17, applied to the rotational spring). With
//! `torsion_torque` on, the stored torque legitimately has a normal
//! (twisting) part, which the projection would destroy; it is then kept
//! unrotated, as in LIGGGHTS.

use super::tangential::rotate_into_plane;
use crate::simd::lane::{Lane, V3};
use glam::DVec3;

/// Which published parameterisation of the EPSD rolling law is used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RollingModel {
    /// Aspherix / LIGGGHTS `rolling_friction epsd` (Aspherix documentation,
    /// "rolling_friction model epsd"; Ai et al. 2011):
    /// `k_r = 2.25 k_n μ_r² R*²`, `M^m = μ_r R* |F_n|`, optional
    /// `torsionTorque` and `rollFrictionFactor` (`f`, default 0) settings.
    /// The stiffness factor is fixed at
    /// [`RollingParams::EPSD_STIFFNESS_FACTOR`] and `R_r = R*`.
    Epsd,
    /// Altair EDEM "Type C Rolling Friction" (EDEM documentation; Ai et al.
    /// 2011): `k_r = λ k_n μ_r² R_r²`, `|M^k| ≤ μ_r R_r |F_n|`, with a user
    /// stiffness factor `λ` and equivalent rolling radius `R_r` (default
    /// `R*`). The viscous torque acts only below the limit (`f = 0`).
    TypeC,
}

/// Run-constant parameters of the rolling-resistance couple for one
/// material pair.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RollingParams {
    /// Which parameterisation (fixes `λ`, `R_r` and `f` where the source does).
    pub model: RollingModel,
    /// Coefficient of rolling friction `μ_r` (dimensionless, ≥ 0).
    pub friction: f64,
    /// Rolling viscous damping ratio `η_r`: the fraction of the critical
    /// damping `2 sqrt(I_r k_r)` of the rolling mode, in
    /// `[0, RollingParams::MAX_DAMPING]`.
    pub damping: f64,
    /// When `true`, relative rotation about the normal (twisting) also loads
    /// the spring and the dashpot (Aspherix `torsionTorque on`).
    pub torsion_torque: bool,
    /// Factor `f ∈ [0, 1]` on the viscous torque once the spring is fully
    /// mobilised (Aspherix `rollFrictionFactor`, default 0). Type C uses 0
    /// whatever is set here, and [`RollingParams::validate`] rejects another
    /// value.
    pub mobilised_damping_factor: f64,
    /// Stiffness factor `λ > 0` in `k_r = λ k_n μ_r² R_r²`. Epsd uses
    /// [`RollingParams::EPSD_STIFFNESS_FACTOR`] (2.25) whatever is set here,
    /// and [`RollingParams::validate`] rejects another value.
    pub stiffness_factor: f64,
    /// Equivalent rolling radius `R_r` (Type C); `None` means the contact's
    /// effective radius `R*`. Epsd always uses `R*` and
    /// [`RollingParams::validate`] rejects `Some`.
    pub rolling_radius: Option<f64>,
}

impl RollingParams {
    /// Number of history values per contact: the spring torque `M^k`.
    pub const HISTORY_LEN: usize = 3;

    /// The stiffness factor of Aspherix/LIGGGHTS `epsd`:
    /// `k_r = 2.25 k_n μ_r² R*²`.
    pub const EPSD_STIFFNESS_FACTOR: f64 = 2.25;

    /// Largest accepted damping ratio `η_r`.
    ///
    /// `η_r` is a fraction of the critical damping of the rolling mode, so
    /// `η_r = 1` is critical damping, the fastest return to rest without
    /// overshoot; a larger value only slows that return (over-damping) and,
    /// the dashpot being explicit, tightens the time-step stability bound,
    /// roughly `η_r ω_r Δt · I_r (1/I_i + 1/I_j) < 1` with
    /// `ω_r = sqrt(k_r/I_r)`. Ai et al. (2011) and the EDEM and Aspherix
    /// documentation treat it as a ratio of critical damping, so values
    /// above 1 are refused as a likely input error.
    pub const MAX_DAMPING: f64 = 1.0;

    /// Aspherix/LIGGGHTS `epsd` with rolling friction `μ_r` and damping ratio
    /// `η_r`; `torsionTorque off`, `rollFrictionFactor 0` (the defaults).
    pub fn epsd(friction: f64, damping: f64) -> Self {
        Self {
            model: RollingModel::Epsd,
            friction,
            damping,
            torsion_torque: false,
            mobilised_damping_factor: 0.0,
            stiffness_factor: Self::EPSD_STIFFNESS_FACTOR,
            rolling_radius: None,
        }
    }

    /// EDEM Type C with rolling friction `μ_r`, damping ratio `η_r`,
    /// stiffness factor `λ` (2.25 reproduces `epsd`) and equivalent rolling
    /// radius `R_r` (`None`: `R*`).
    pub fn type_c(
        friction: f64,
        damping: f64,
        stiffness_factor: f64,
        rolling_radius: Option<f64>,
    ) -> Self {
        Self {
            model: RollingModel::TypeC,
            friction,
            damping,
            torsion_torque: false,
            mobilised_damping_factor: 0.0,
            stiffness_factor,
            rolling_radius,
        }
    }

    /// Check the parameters; the error names the offending one.
    ///
    /// Accepted: `μ_r` finite and ≥ 0; `η_r ∈ [0, MAX_DAMPING]`;
    /// `f ∈ [0, 1]` (and `f = 0` for Type C, whose source has no such
    /// factor); `λ` finite and > 0 (and exactly 2.25 for Epsd); `R_r`
    /// finite and > 0 when given (and not given for Epsd, which uses `R*`).
    pub fn validate(&self) -> Result<(), String> {
        let name = match self.model {
            RollingModel::Epsd => "epsd",
            RollingModel::TypeC => "type_c",
        };
        if !self.friction.is_finite() || self.friction < 0.0 {
            return Err(format!(
                "rolling friction ({name}): friction (μ_r) must be finite and ≥ 0, got {}",
                self.friction
            ));
        }
        if !(0.0..=Self::MAX_DAMPING).contains(&self.damping) {
            return Err(format!(
                "rolling friction ({name}): damping (η_r, a ratio of critical damping) must lie \
                 in [0, {}], got {}",
                Self::MAX_DAMPING,
                self.damping
            ));
        }
        if !(0.0..=1.0).contains(&self.mobilised_damping_factor) {
            return Err(format!(
                "rolling friction ({name}): mobilised_damping_factor (f) must lie in [0, 1], \
                 got {}",
                self.mobilised_damping_factor
            ));
        }
        if !self.stiffness_factor.is_finite() || self.stiffness_factor <= 0.0 {
            return Err(format!(
                "rolling friction ({name}): stiffness_factor (λ) must be finite and > 0, got {}",
                self.stiffness_factor
            ));
        }
        if let Some(r) = self.rolling_radius {
            if !r.is_finite() || r <= 0.0 {
                return Err(format!(
                    "rolling friction ({name}): rolling_radius (R_r) must be finite and > 0, \
                     got {r}"
                ));
            }
        }
        match self.model {
            RollingModel::Epsd => {
                if self.stiffness_factor != Self::EPSD_STIFFNESS_FACTOR {
                    return Err(format!(
                        "rolling friction (epsd): stiffness_factor is fixed at {} by the model, \
                         got {}; use type_c for another value",
                        Self::EPSD_STIFFNESS_FACTOR,
                        self.stiffness_factor
                    ));
                }
                if self.rolling_radius.is_some() {
                    return Err(
                        "rolling friction (epsd): rolling_radius cannot be set, the model \
                                uses the effective radius R*; use type_c for another radius"
                            .to_string(),
                    );
                }
            }
            RollingModel::TypeC => {
                if self.mobilised_damping_factor != 0.0 {
                    return Err(format!(
                        "rolling friction (type_c): mobilised_damping_factor must be 0 (Type C \
                         has no viscous torque at full mobilisation), got {}; use epsd for \
                         another value",
                        self.mobilised_damping_factor
                    ));
                }
            }
        }
        Ok(())
    }

    /// The stiffness factor `λ` the model uses (2.25 for Epsd).
    #[inline]
    pub fn effective_stiffness_factor(&self) -> f64 {
        match self.model {
            RollingModel::Epsd => Self::EPSD_STIFFNESS_FACTOR,
            RollingModel::TypeC => self.stiffness_factor,
        }
    }

    /// The mobilised damping factor `f` the model uses (0 for Type C).
    #[inline]
    pub fn effective_mobilised_damping_factor(&self) -> f64 {
        match self.model {
            RollingModel::Epsd => self.mobilised_damping_factor,
            RollingModel::TypeC => 0.0,
        }
    }

    /// The rolling radius `R_r` at a contact of effective radius `r_eff`
    /// (`R*` for Epsd, `rolling_radius` or `R*` for Type C), per lane.
    #[inline(always)]
    pub fn effective_rolling_radius<T: Lane>(&self, r_eff: T) -> T {
        match (self.model, self.rolling_radius) {
            (RollingModel::TypeC, Some(r_r)) => T::splat(r_r),
            _ => r_eff,
        }
    }

    /// Rolling stiffness `k_r = λ k_n μ_r² R_r²` \[N m/rad\] for a secant
    /// normal stiffness `k_n` and effective radius `r_eff`, per lane.
    #[inline(always)]
    pub fn stiffness<T: Lane>(&self, k_n: T, r_eff: T) -> T {
        let r_r = self.effective_rolling_radius(r_eff);
        let mu_r = T::splat(self.friction) * r_r;
        T::splat(self.effective_stiffness_factor()) * k_n * mu_r * mu_r
    }

    /// Rotational dashpot coefficient `C_r = η_r · 2 sqrt(I_r k_r)` \[N m s/rad\], per lane.
    #[inline(always)]
    pub fn damping_coefficient<T: Lane>(&self, k_r: T, inertia_r: T) -> T {
        T::splat(self.damping * 2.0) * (inertia_r * k_r).sqrt()
    }

    /// The rolling-resistance couple on `i` of contacts in lanes (the body
    /// of [`rolling_torque`], which see); `history` is `M^k` (3 values).
    #[inline(always)]
    pub fn couple<T: Lane>(&self, inp: &RollingInput<T>, history: &mut [T]) -> V3<T> {
        if self.friction == 0.0 {
            history[..3].fill(T::splat(0.0));
            return V3::zero();
        }
        let n = inp.n;
        let omega_r = if self.torsion_torque {
            inp.omega_rel
        } else {
            inp.omega_rel - n.scale(inp.omega_rel.dot(n))
        };
        let r_r = self.effective_rolling_radius(inp.r_eff);
        let k_r = self.stiffness(inp.k_n, inp.r_eff);
        let limit = T::splat(self.friction) * r_r * inp.normal_force.abs();
        let stored = V3::new(history[0], history[1], history[2]);
        let stored = if self.torsion_torque {
            stored
        } else {
            rotate_into_plane(stored, n)
        };
        let spring = stored - omega_r.scale(k_r * T::splat(inp.dt));
        let len2 = spring.length_squared();
        let mobilised = len2.gt(limit * limit);
        // Where mobilised, len2 > limit² ≥ 0, so the division is safe.
        let spring = V3::select(mobilised, spring.scale(limit / len2.sqrt()), spring);
        (history[0], history[1], history[2]) = (spring.x, spring.y, spring.z);
        let c_r = self.damping_coefficient(k_r, inp.inertia_r);
        let f = T::splat(self.effective_mobilised_damping_factor());
        let factor = T::select(mobilised, f, T::splat(1.0));
        spring - omega_r.scale(factor * c_r)
    }
}

/// Moment of inertia of the rolling vibration mode of a particle pair
/// (Ai et al. 2011):
/// `I_r = (1/(I_i + m_i R_i²) + 1/(I_j + m_j R_j²))⁻¹`.
///
/// Each term is the body's moment of inertia about its contact point
/// (parallel-axis theorem with the radius as the arm). An infinite term
/// (an immovable body) gives the single-body value of
/// [`wall_rolling_inertia`].
#[inline]
pub fn pair_rolling_inertia(
    inertia_i: f64,
    mass_i: f64,
    radius_i: f64,
    inertia_j: f64,
    mass_j: f64,
    radius_j: f64,
) -> f64 {
    let a_i = wall_rolling_inertia(inertia_i, mass_i, radius_i);
    let a_j = wall_rolling_inertia(inertia_j, mass_j, radius_j);
    1.0 / (1.0 / a_i + 1.0 / a_j)
}

/// Moment of inertia of the rolling mode of a particle on a wall: the
/// particle alone about its contact point, `I_r = I_i + m_i R_i²`.
#[inline]
pub fn wall_rolling_inertia(inertia: f64, mass: f64, radius: f64) -> f64 {
    inertia + mass * radius * radius
}

/// Per-contact, per-step input of [`rolling_torque`] (per lane: one
/// contact, or a group, see [`crate::simd::lane`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RollingInput<T: Lane = f64> {
    /// Unit contact normal `n`, from `i` to `j`.
    pub n: V3<T>,
    /// Relative angular velocity `ω_rel = ω_i − ω_j` (for a wall `ω_j` is the
    /// wall's angular velocity).
    pub omega_rel: V3<T>,
    /// Secant normal stiffness `k_n` \[N/m\] (elastic normal force over
    /// overlap; the constant `k_n` for Hooke).
    pub k_n: T,
    /// Effective radius `R*` \[m\] (wall: the particle radius).
    pub r_eff: T,
    /// Normal force magnitude `|F_n|` \[N\] (the absolute value is taken).
    pub normal_force: T,
    /// Rolling-mode inertia `I_r` \[kg m²\], from [`pair_rolling_inertia`] or
    /// [`wall_rolling_inertia`].
    pub inertia_r: T,
    /// Time step `Δt` \[s\].
    pub dt: f64,
}

/// Rolling-resistance couple `M_r` on `i` (`j` receives `−M_r`) of the EPSD
/// law (Ai et al., Powder Technol. 206 (2011) 269; Aspherix `epsd`; EDEM
/// Type C): `M_r = M^k + M^d`, see the [module documentation](self).
///
/// `history` is the contact's spring torque `M^k` \[N m\] (zero when the
/// contact forms); it is updated in place. Each call:
///
/// 1. `ω_r = ω_rel − (ω_rel·n) n` (or `ω_rel` with `torsion_torque`);
/// 2. the stored `M^k` is projected onto the current tangent plane and
///    rescaled to its previous length (skipped with `torsion_torque`; a
///    stored torque exactly along `n` is dropped); gravel does this for
///    objectivity, LIGGGHTS does not;
/// 3. `M^k ← M^k − k_r ω_r Δt`, `k_r = λ k_n μ_r² R_r²`;
/// 4. if `|M^k| > M^m = μ_r R_r |F_n|`, `M^k` is scaled to length `M^m`
///    (fully mobilised);
/// 5. `M^d = −C_r ω_r` below the limit, `−f C_r ω_r` when fully mobilised,
///    `C_r = η_r · 2 sqrt(I_r k_r)`.
///
/// Degenerate cases: `μ_r = 0` returns zero and clears the history;
/// `|F_n| = 0` (e.g. a touching or tensile-clamped contact) has `M^m = 0`,
/// so any spring torque is released (history zero) and only the mobilised
/// dashpot `−f C_r ω_r` can act.
#[inline]
pub fn rolling_torque(p: &RollingParams, inp: &RollingInput, history: &mut [f64; 3]) -> DVec3 {
    debug_assert!(
        (inp.n.length_squared() - 1.0).abs() < 1e-9,
        "rolling_torque: n is not a unit vector: {:?}",
        inp.n
    );
    debug_assert!(inp.dt >= 0.0, "rolling_torque: negative time step");
    p.couple(inp, history).into()
}

#[cfg(test)]
mod tests;
