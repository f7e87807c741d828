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
mod tests {
    use super::*;
    use glam::DQuat;
    use proptest::prelude::*;
    use std::f64::consts::PI;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol * (1.0 + a.abs().max(b.abs()))
    }

    fn vclose(a: DVec3, b: DVec3, tol: f64) -> bool {
        (a - b).length() <= tol * (1.0 + a.length().max(b.length()))
    }

    /// μ_r = 0.1, R* = 0.01, k_n = 1e5 ⇒ k_r = 2.25·1e5·1e-2·1e-4 = 0.225;
    /// |F_n| = 10 ⇒ M^m = 0.01; I_r = 1e-6, η_r = 0.3 ⇒
    /// C_r = 0.6 sqrt(2.25e-7).
    fn base_input(omega_rel: DVec3) -> RollingInput {
        RollingInput {
            n: DVec3::Z.into(),
            omega_rel: omega_rel.into(),
            k_n: 1e5,
            r_eff: 0.01,
            normal_force: 10.0,
            inertia_r: 1e-6,
            dt: 1e-4,
        }
    }

    #[test]
    fn pair_and_wall_inertia() {
        // Solid unit spheres: I + m R² = 0.4 + 1 = 1.4; pair: 0.7.
        assert!(close(wall_rolling_inertia(0.4, 1.0, 1.0), 1.4, 1e-15));
        assert!(close(
            pair_rolling_inertia(0.4, 1.0, 1.0, 0.4, 1.0, 1.0),
            0.7,
            1e-15
        ));
        // Unequal: a_i = 1.4, a_j = 0.4·8·4 + 8·4 = 44.8 ⇒ 1.4·44.8/46.2.
        assert!(close(
            pair_rolling_inertia(0.4, 1.0, 1.0, 12.8, 8.0, 2.0),
            1.4 * 44.8 / 46.2,
            1e-14
        ));
        // An immovable partner gives the wall value.
        assert_eq!(
            pair_rolling_inertia(0.4, 1.0, 1.0, f64::INFINITY, f64::INFINITY, 1.0),
            wall_rolling_inertia(0.4, 1.0, 1.0)
        );
    }

    #[test]
    fn single_step_by_hand_below_the_limit() {
        let p = RollingParams::epsd(0.1, 0.3);
        p.validate().unwrap();
        // ω_rel has a twisting part 5 (removed) and a rolling part 2 along x.
        let inp = base_input(DVec3::new(2.0, 0.0, 5.0));
        // Stored torque tilted out of the plane: projected to x, length kept.
        let mut h = [1e-3, 0.0, 5e-4];
        let m = rolling_torque(&p, &inp, &mut h);
        let k_r: f64 = 0.225;
        assert!(close(p.stiffness(inp.k_n, inp.r_eff), k_r, 1e-15));
        let spring_x = 1.25e-6_f64.sqrt() - k_r * 2.0 * 1e-4;
        let c_r = 0.3 * 2.0 * (1e-6 * k_r).sqrt();
        assert!(close(h[0], spring_x, 1e-14) && h[1] == 0.0 && h[2] == 0.0);
        let expected = DVec3::new(spring_x - c_r * 2.0, 0.0, 0.0);
        assert!(vclose(m, expected, 1e-14), "{m} vs {expected}");
        // Hand value: 1.0730340e-3 − 5.6921e-4 = 5.03824e-4.
        assert!((m.x - 5.038243e-4).abs() < 1e-9);
    }

    #[test]
    fn single_step_by_hand_type_c_with_rolling_radius() {
        // λ = 1.5, R_r = 0.02 ⇒ k_r = 1.5·1e5·0.01·4e-4 = 0.6; M^m = 0.02.
        let p = RollingParams::type_c(0.1, 0.5, 1.5, Some(0.02));
        p.validate().unwrap();
        let inp = base_input(DVec3::new(0.0, -3.0, 0.0));
        let mut h = [0.0; 3];
        let m = rolling_torque(&p, &inp, &mut h);
        let k_r: f64 = 0.6;
        assert!(close(p.stiffness(inp.k_n, inp.r_eff), k_r, 1e-15));
        let spring = DVec3::new(0.0, k_r * 3.0 * 1e-4, 0.0);
        let c_r = 0.5 * 2.0 * (1e-6 * k_r).sqrt();
        assert!(vclose(DVec3::from_array(h), spring, 1e-14));
        assert!(vclose(m, spring + DVec3::new(0.0, 3.0 * c_r, 0.0), 1e-14));
    }

    #[test]
    fn fully_mobilised_damping_factor() {
        // ω = 1000 along y: trial spring −0.0225 ŷ exceeds M^m = 0.01.
        let inp = base_input(DVec3::new(0.0, 1000.0, 0.0));
        let k_r: f64 = 0.225;
        let c_r = 0.3 * 2.0 * (1e-6 * k_r).sqrt();

        let mut p = RollingParams::epsd(0.1, 0.3);
        let mut h = [0.0; 3];
        let m = rolling_torque(&p, &inp, &mut h);
        // f = 0: only the capped spring, no damping torque.
        assert!(vclose(m, DVec3::new(0.0, -0.01, 0.0), 1e-15), "{m}");
        assert!(vclose(DVec3::from_array(h), m, 0.0));

        p.mobilised_damping_factor = 0.5;
        p.validate().unwrap();
        let mut h = [0.0; 3];
        let m = rolling_torque(&p, &inp, &mut h);
        let damping_part = m - DVec3::from_array(h);
        let expected = -0.5 * c_r * DVec3::from(inp.omega_rel);
        assert!(vclose(damping_part, expected, 1e-14), "{damping_part}");
        assert!(close(h[1], -0.01, 1e-15));

        // Type C forces f = 0 whatever the field says (and validate refuses it).
        let mut q = RollingParams::type_c(0.1, 0.3, 2.25, None);
        q.mobilised_damping_factor = 0.5;
        assert!(q.validate().is_err());
        let mut h = [0.0; 3];
        let m = rolling_torque(&q, &inp, &mut h);
        assert!(vclose(m, DVec3::new(0.0, -0.01, 0.0), 1e-15), "{m}");
    }

    #[test]
    fn type_c_with_2_25_reproduces_epsd() {
        let a = RollingParams::epsd(0.3, 0.2);
        let b = RollingParams::type_c(0.3, 0.2, 2.25, None);
        let inp = RollingInput {
            n: DVec3::new(0.6, 0.0, 0.8).into(),
            omega_rel: DVec3::new(3.0, -7.0, 1.0).into(),
            ..base_input(DVec3::ZERO)
        };
        let (mut ha, mut hb) = ([1e-4, 2e-4, -0.75e-4], [1e-4, 2e-4, -0.75e-4]);
        for _ in 0..50 {
            let ma = rolling_torque(&a, &inp, &mut ha);
            let mb = rolling_torque(&b, &inp, &mut hb);
            assert_eq!(ma, mb);
            assert_eq!(ha, hb);
        }
    }

    #[test]
    fn zero_friction_gives_zero_torque_and_clears_history() {
        let p = RollingParams::epsd(0.0, 0.3);
        p.validate().unwrap();
        let mut h = [1.0, 2.0, 3.0];
        let m = rolling_torque(&p, &base_input(DVec3::new(1.0, 2.0, 3.0)), &mut h);
        assert_eq!(m, DVec3::ZERO);
        assert_eq!(h, [0.0; 3]);
    }

    #[test]
    fn zero_normal_force_releases_the_spring() {
        let mut p = RollingParams::epsd(0.1, 0.3);
        let inp = RollingInput {
            normal_force: 0.0,
            ..base_input(DVec3::new(1.0, 0.0, 0.0))
        };
        let mut h = [1e-3, 0.0, 0.0];
        let m = rolling_torque(&p, &inp, &mut h);
        assert_eq!(h, [0.0; 3]);
        assert_eq!(m, DVec3::ZERO); // f = 0
        p.mobilised_damping_factor = 1.0;
        let mut h = [1e-3, 0.0, 0.0];
        let m = rolling_torque(&p, &inp, &mut h);
        let c_r = p.damping_coefficient(0.225, 1e-6);
        assert!(vclose(m, -c_r * DVec3::from(inp.omega_rel), 1e-15));
        // At rest with no force and no history nothing happens (not "mobilised").
        let mut h = [0.0; 3];
        let m = rolling_torque(
            &p,
            &RollingInput {
                omega_rel: DVec3::ZERO.into(),
                ..inp
            },
            &mut h,
        );
        assert_eq!((m, h), (DVec3::ZERO, [0.0; 3]));
    }

    #[test]
    fn torsion_only_loads_the_spring_when_enabled() {
        let mut p = RollingParams::epsd(0.1, 0.3);
        let twist = DVec3::new(0.0, 0.0, 4.0); // ω_rel ∥ n
        let mut h = [0.0; 3];
        let m = rolling_torque(&p, &base_input(twist), &mut h);
        assert_eq!(m, DVec3::ZERO);
        assert_eq!(h, [0.0; 3]);

        p.torsion_torque = true;
        let mut h = [0.0; 3];
        let m = rolling_torque(&p, &base_input(twist), &mut h);
        let k_r: f64 = 0.225;
        let c_r = 0.3 * 2.0 * (1e-6 * k_r).sqrt();
        let spring = -k_r * 1e-4 * twist;
        assert!(vclose(DVec3::from_array(h), spring, 1e-15));
        assert!(vclose(m, spring - c_r * twist, 1e-14));
        assert!(m.z < 0.0, "opposes the twist");
    }

    #[test]
    fn stored_torque_follows_a_turning_normal() {
        let p = RollingParams::epsd(0.1, 0.3);
        let mut h = [5e-3, 0.0, 0.0];
        for k in 1..=90 {
            let a = (k as f64).to_radians();
            let n = DVec3::new(-a.sin(), 0.0, a.cos()); // tilts towards −x
            let inp = RollingInput {
                n: n.into(),
                ..base_input(DVec3::ZERO)
            };
            let m = rolling_torque(&p, &inp, &mut h);
            assert!(m.dot(n).abs() < 1e-15, "stays tangential");
            assert!(close(m.length(), 5e-3, 1e-13), "keeps its length");
        }
        // After a quarter turn the torque has rotated with the normal.
        assert!(vclose(
            DVec3::from_array(h),
            DVec3::new(0.0, 0.0, 5e-3),
            1e-12
        ));
    }

    #[test]
    fn validate_messages() {
        assert!(RollingParams::epsd(0.1, 0.3).validate().is_ok());
        assert!(RollingParams::type_c(0.1, 1.0, 4.0, Some(1e-3))
            .validate()
            .is_ok());
        let err = |p: RollingParams| p.validate().unwrap_err();
        assert!(err(RollingParams::epsd(-0.1, 0.3)).contains("friction (μ_r)"));
        assert!(err(RollingParams::epsd(f64::NAN, 0.3)).contains("friction (μ_r)"));
        assert!(err(RollingParams::epsd(0.1, -0.1)).contains("damping (η_r"));
        assert!(err(RollingParams::epsd(0.1, 1.5)).contains("damping (η_r"));
        assert!(err(RollingParams::epsd(0.1, f64::NAN)).contains("damping (η_r"));
        let mut p = RollingParams::epsd(0.1, 0.3);
        p.mobilised_damping_factor = 1.2;
        assert!(err(p).contains("mobilised_damping_factor (f)"));
        p.mobilised_damping_factor = -0.1;
        assert!(err(p).contains("mobilised_damping_factor (f)"));
        assert!(err(RollingParams::type_c(0.1, 0.3, 0.0, None)).contains("stiffness_factor (λ)"));
        assert!(err(RollingParams::type_c(0.1, 0.3, -1.0, None)).contains("stiffness_factor (λ)"));
        assert!(err(RollingParams::type_c(0.1, 0.3, 2.0, Some(0.0))).contains("rolling_radius"));
        let mut p = RollingParams::epsd(0.1, 0.3);
        p.stiffness_factor = 3.0;
        assert!(err(p).contains("fixed at 2.25"));
        let mut p = RollingParams::epsd(0.1, 0.3);
        p.rolling_radius = Some(0.01);
        assert!(err(p).contains("R*"));
    }

    /// Single body (moment `I_r`) rocking on a fixed wall about x. The torque
    /// call advances the spring with the current ω (drift), then ω is kicked
    /// by the new torque: symplectic Euler. Returns the angle θ = −M^k/k_r
    /// at every step (θ is the spring's angle, as the history stores
    /// `M^k = −k_r θ`).
    fn rock(p: &RollingParams, theta0: f64, omega0: f64, steps: usize, dt: f64) -> Vec<f64> {
        let base = RollingInput {
            n: DVec3::Z.into(),
            omega_rel: DVec3::ZERO.into(),
            k_n: 1e6,
            r_eff: 0.01,
            normal_force: 100.0,
            inertia_r: 1e-5,
            dt,
        };
        let k_r = p.stiffness(base.k_n, base.r_eff);
        let limit = p.friction * base.r_eff * base.normal_force;
        let mut h = [-k_r * theta0, 0.0, 0.0];
        let mut omega = omega0;
        let mut theta = Vec::with_capacity(steps);
        for _ in 0..steps {
            let inp = RollingInput {
                omega_rel: DVec3::new(omega, 0.0, 0.0).into(),
                ..base
            };
            let m = rolling_torque(p, &inp, &mut h);
            assert!(h[0].abs() < limit, "test must stay below the limit");
            omega += m.x / base.inertia_r * dt;
            theta.push(-h[0] / k_r);
        }
        theta
    }

    #[test]
    fn undamped_rocking_period() {
        // k_r = 2.25·1e6·0.2²·0.01² = 9 N m/rad, I_r = 1e-5 ⇒ T = 2π sqrt(I_r/k_r).
        let p = RollingParams::epsd(0.2, 0.0);
        let k_r: f64 = 9.0;
        let period = 2.0 * PI * (1e-5 / k_r).sqrt();
        let dt = period / 2000.0;
        let theta = rock(&p, 0.0, 1.0, 20_500, dt);
        // Upward zero crossings, linearly interpolated.
        let crossings: Vec<f64> = theta
            .windows(2)
            .enumerate()
            .filter(|(_, w)| w[0] < 0.0 && w[1] >= 0.0)
            .map(|(i, w)| (i as f64 + 1.0 + w[0] / (w[0] - w[1])) * dt)
            .collect();
        assert!(crossings.len() >= 9, "{} crossings", crossings.len());
        let measured =
            (crossings[crossings.len() - 1] - crossings[0]) / (crossings.len() - 1) as f64;
        let rel = (measured - period).abs() / period;
        println!("rocking period: measured {measured:.6e} s, 2π sqrt(I_r/k_r) = {period:.6e} s, rel. error {rel:.2e}");
        assert!(rel < 0.01);
        // Undamped: the amplitude ω0/ω_r is kept.
        let amp = theta.iter().fold(0.0_f64, |a, t| a.max(t.abs()));
        let expected = 1.0 / (k_r / 1e-5).sqrt();
        assert!(close(amp, expected, 1e-2), "{amp} vs {expected}");
    }

    /// Last time |θ| exceeds 2 % of θ0 (the 2 % settling time).
    fn settling_time(theta: &[f64], theta0: f64, dt: f64) -> f64 {
        let last = theta
            .iter()
            .rposition(|t| t.abs() > 0.02 * theta0)
            .unwrap_or(0);
        (last + 1) as f64 * dt
    }

    #[test]
    fn critical_damping_at_eta_one() {
        let k_r: f64 = 9.0;
        let w = (k_r / 1e-5).sqrt();
        let dt = 2.0 * PI / w / 2000.0;
        let steps = 20_000; // ≈ 10 periods
        let theta0 = 1e-3;
        let run = |eta: f64| rock(&RollingParams::epsd(0.2, eta), theta0, 0.0, steps, dt);

        let crit = run(1.0);
        let under = run(0.5);
        let over = run(2.0);

        // No overshoot of zero at η = 1; η = 0.5 overshoots by about
        // exp(−πζ/sqrt(1−ζ²)) = 16 %.
        let min_crit = crit.iter().cloned().fold(f64::INFINITY, f64::min);
        let min_under = under.iter().cloned().fold(f64::INFINITY, f64::min);
        let min_over = over.iter().cloned().fold(f64::INFINITY, f64::min);
        println!(
            "min θ/θ0: η=1 {:.3e}, η=0.5 {:.3e}, η=2 {:.3e}",
            min_crit / theta0,
            min_under / theta0,
            min_over / theta0
        );
        assert!(min_crit >= 0.0, "critically damped must not cross zero");
        assert!(min_over >= 0.0);
        assert!(close(
            min_under / theta0,
            -(-PI * 0.5 / 0.75_f64.sqrt()).exp(),
            0.02
        ));

        // Critically damped solution θ0 (1 + ω t) e^{−ω t}.
        let err = crit
            .iter()
            .enumerate()
            .map(|(k, th)| {
                let x = w * (k + 1) as f64 * dt;
                (th - theta0 * (1.0 + x) * (-x).exp()).abs()
            })
            .fold(0.0_f64, f64::max);
        println!("max |θ − θ_exact|/θ0 at η=1: {:.3e}", err / theta0);
        assert!(err < 5e-3 * theta0);

        // 2 % settling: fastest at η = 1 among {0.5, 1, 2}; critical value
        // solves (1 + x) e^{−x} = 0.02, x = 5.834.
        let (t_c, t_u, t_o) = (
            settling_time(&crit, theta0, dt),
            settling_time(&under, theta0, dt),
            settling_time(&over, theta0, dt),
        );
        println!(
            "2% settling ω t: η=0.5 {:.3}, η=1 {:.3}, η=2 {:.3}",
            w * t_u,
            w * t_c,
            w * t_o
        );
        assert!(t_c < t_u && t_c < t_o);
        assert!(close(w * t_c, 5.834, 5e-3));
    }

    fn unit(v: DVec3) -> DVec3 {
        let l = v.length();
        if l < 1e-3 {
            DVec3::Z
        } else {
            v / l
        }
    }

    fn vec3(s: f64) -> impl Strategy<Value = DVec3> {
        (-s..s, -s..s, -s..s).prop_map(|(x, y, z)| DVec3::new(x, y, z))
    }

    fn params() -> impl Strategy<Value = RollingParams> {
        (
            prop::bool::ANY,
            0.0..1.0f64,
            0.0..1.0f64,
            prop::bool::ANY,
            0.0..1.0f64,
            0.5..4.0f64,
            prop::option::of(1e-3..1e-1f64),
        )
            .prop_map(|(epsd, mu, eta, torsion, f, lambda, rr)| {
                let mut p = if epsd {
                    RollingParams::epsd(mu, eta)
                } else {
                    RollingParams::type_c(mu, eta, lambda, rr)
                };
                p.torsion_torque = torsion;
                if epsd {
                    p.mobilised_damping_factor = f;
                }
                p
            })
    }

    /// A contact input and a stored torque lying near the tangent plane (as
    /// left by the previous step, a small turn of the normal away).
    fn input_and_history() -> impl Strategy<Value = (RollingInput, DVec3)> {
        (
            vec3(1.0),
            vec3(100.0),
            1e3..1e7f64,
            1e-3..1e-1f64,
            0.0..1e3f64,
            1e-9..1e-3f64,
            1e-7..1e-4f64,
            vec3(1.0),
            -0.1..0.1f64,
        )
            .prop_map(|(n, w, k_n, r, f_n, i_r, dt, hv, tilt)| {
                let n = unit(n);
                let scale = 1e-3 * k_n * r * r;
                let t = hv - hv.dot(n) * n;
                let h = (t + tilt * hv.length() * n) * scale;
                (
                    RollingInput {
                        n: n.into(),
                        omega_rel: w.into(),
                        k_n,
                        r_eff: r,
                        normal_force: f_n,
                        inertia_r: i_r,
                        dt,
                    },
                    h,
                )
            })
    }

    proptest! {
        #[test]
        fn rotation_covariance(
            p in params(),
            (inp, h) in input_and_history(),
            axis in vec3(1.0),
            angle in -PI..PI,
        ) {
            let q = DQuat::from_axis_angle(unit(axis), angle);
            let mut h1 = h.to_array();
            let m1 = rolling_torque(&p, &inp, &mut h1);
            let rotated = RollingInput { n: (q * DVec3::from(inp.n)).into(), omega_rel: (q * DVec3::from(inp.omega_rel)).into(), ..inp };
            let mut h2 = (q * h).to_array();
            let m2 = rolling_torque(&p, &rotated, &mut h2);
            let hs = DVec3::from_array(h1).length().max(h.length());
            prop_assert!((q * m1 - m2).length() <= 1e-12 * (m1.length() + hs) + 1e-300,
                "torque {} vs {}", q * m1, m2);
            prop_assert!((q * DVec3::from_array(h1) - DVec3::from_array(h2)).length()
                <= 1e-12 * hs + 1e-300);
        }

        #[test]
        fn spring_never_exceeds_full_mobilisation(
            p in params(),
            (inp, h) in input_and_history(),
            omegas in prop::collection::vec(vec3(1e3), 1..20),
            forces in prop::collection::vec(0.0..1e3f64, 1..20),
        ) {
            let mut hist = h.to_array();
            for (k, w) in omegas.iter().enumerate() {
                let f_n = forces[k % forces.len()];
                let step = RollingInput { omega_rel: (*w).into(), normal_force: f_n, ..inp };
                rolling_torque(&p, &step, &mut hist);
                let limit = p.friction * p.effective_rolling_radius(inp.r_eff) * f_n;
                let len = DVec3::from_array(hist).length();
                prop_assert!(len <= limit * (1.0 + 1e-12), "|M^k| = {len} > M^m = {limit}");
            }
        }
    }
}
