//! Rolling resistance models, one file each, listed in the registry
//! [`RollingModel`]; the couple `M_r` acts `+M_r` on `i` and `−M_r` on `j`.
//! [`cdt`] is the constant directional torque (Ai et al.'s model type A),
//! without history.
//!
//! Two of them, [`epsd`] (Aspherix / LIGGGHTS `rolling_friction epsd`) and
//! [`type_c`] (Altair EDEM "Type C Rolling Friction"), are parameterisations
//! of one law, the elasto-plastic spring-dashpot (EPSD) couple of Ai, Chen,
//! Rotter & Ooi, "Assessment of rolling resistance models in discrete
//! element simulations", Powder Technol. 206 (2011) 269–282 (their model
//! type C), computed here once ([`SpringDashpot`]): a rotational spring
//! `M^k` (kept in the contact's history, 3 values) capped at a
//! full-mobilisation torque `M^m`, plus a rotational dashpot `M^d`:
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

pub mod cdt;
pub mod epsd;
pub mod type_c;

pub use cdt::Cdt;
pub use epsd::Epsd;
pub use type_c::TypeC;

use super::kinematics::rotate_into_plane;
use super::model::{registry, Key, Model, PairMaterials};
use crate::error::Result;
use crate::simd::lane::{Lane, V3};
use glam::DVec3;

/// The kernel of a rolling model, besides what every [`Model`] provides.
pub trait RollingLaw: Model {
    /// The couple on `i` of a contact (or of a group, one per lane);
    /// `history` starts with the model's [`Model::HISTORY_LEN`] values
    /// and is updated.
    fn couple<T: Lane>(&self, inp: &RollingInput<T>, history: &mut [T]) -> V3<T>;

    /// The model's EPSD spring-dashpot, if it is one (default: not).
    fn spring_dashpot(&self) -> Option<SpringDashpot> {
        None
    }
}

registry! {
    /// A rolling resistance model with its run-constant parameters for one
    /// material pair.
    pub enum RollingModel;
    /// Rolling resistance models, chosen by `model = "..."` (physics.md,
    /// "Rolling resistance"; default none).
    pub enum RollingSpec or
        /// No rolling resistance.
        None;
    each: each_rolling, $;
    /// Aspherix/LIGGGHTS `rolling_friction epsd` ([`epsd`]).
    Epsd(Epsd) = "epsd",
    /// Altair EDEM "Type C Rolling Friction" ([`type_c`]).
    TypeC(TypeC) = "type_c",
    /// Constant directional torque, no history ([`cdt`]).
    Cdt(Cdt) = "cdt",
}

impl RollingModel {
    /// The couple on `i` of contacts in lanes ([`RollingLaw::couple`]).
    #[inline(always)]
    pub fn couple<T: Lane>(&self, inp: &RollingInput<T>, history: &mut [T]) -> V3<T> {
        each_rolling!(self, m => m.couple(inp, history))
    }

    /// The EPSD spring-dashpot of an EPSD model (`None` for another kind).
    pub fn spring_dashpot(&self) -> Option<SpringDashpot> {
        each_rolling!(self, m => RollingLaw::spring_dashpot(m))
    }
}

/// Largest accepted damping ratio `η_r` of the EPSD models.
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

/// The EPSD damping ratio `key.damping = η_r`, in `[0, MAX_DAMPING]`.
fn damping_ratio(key: &Key, eta: f64) -> Result<f64> {
    if (0.0..=MAX_DAMPING).contains(&eta) {
        Ok(eta)
    } else {
        Err(key.field("damping").err(format!(
            "must lie in [0, {MAX_DAMPING}] (η_r, a ratio of critical damping), got {eta}"
        )))
    }
}

/// An EPSD parameterisation ([`Epsd`], [`TypeC`]): its table, its
/// validation and the spring-dashpot it gives. The rest of [`Model`] and
/// [`RollingLaw`] follows for every one of them: it reads `R*`, needs the
/// normal model's stiffness, keeps the spring torque `M^k` (3 values, which
/// change sign with `i` and `j` exchanged, as `M^k` follows
/// `ω_rel = ω_i − ω_j`) and its couple is [`SpringDashpot::couple`].
pub trait Parameterisation: Copy {
    /// Its TOML table (a serde struct that denies unknown keys).
    type Spec;

    /// The parameters of one material pair from its table; errors name
    /// `key.field(...)` ([`Model::from_spec`] calls it).
    fn from_table(spec: &Self::Spec, key: &Key) -> Result<Self>;

    /// Its spring-dashpot.
    fn as_spring_dashpot(&self) -> SpringDashpot;
}

impl<P: Parameterisation> Model for P {
    type Spec = P::Spec;
    const HISTORY_LEN: usize = 3;

    fn describe(&self) -> String {
        let s = self.as_spring_dashpot();
        let sig = |x| crate::math::figures::sig(x, 4);
        let mut out = format!(
            "friction {}, damping {}, stiffness_factor {}",
            sig(s.friction),
            sig(s.damping),
            sig(s.stiffness_factor)
        );
        if let Some(r) = s.rolling_radius {
            out += &format!(", rolling_radius {}", sig(r));
        }
        if s.torsion_torque {
            out += ", torsion_torque";
        }
        if s.mobilised_damping_factor > 0.0 {
            out += &format!(
                ", mobilised_damping_factor {}",
                sig(s.mobilised_damping_factor)
            );
        }
        out
    }

    fn from_spec(spec: &P::Spec, key: &Key, _: &PairMaterials) -> Result<Self> {
        P::from_table(spec, key)
    }

    fn reads_r_eff(&self) -> bool {
        true
    }

    fn needs_stiffness(&self) -> Option<&'static str> {
        Some("a rolling resistance model needs a normal model with a stiffness")
    }

    fn swap_history(history: &mut [f64]) {
        for h in &mut history[..3] {
            *h = -*h;
        }
    }
}

impl<P: Parameterisation> RollingLaw for P {
    #[inline(always)]
    fn couple<T: Lane>(&self, inp: &RollingInput<T>, history: &mut [T]) -> V3<T> {
        self.as_spring_dashpot().couple(inp, history)
    }

    fn spring_dashpot(&self) -> Option<SpringDashpot> {
        Some(self.as_spring_dashpot())
    }
}

/// The EPSD couple's parameters, as both parameterisations give them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SpringDashpot {
    /// Coefficient of rolling friction `μ_r` (≥ 0).
    pub friction: f64,
    /// Damping ratio `η_r`, a fraction of the critical damping
    /// `2 sqrt(I_r k_r)` of the rolling mode, in `[0, MAX_DAMPING]`.
    pub damping: f64,
    /// Stiffness factor `λ > 0` in `k_r = λ k_n μ_r² R_r²`.
    pub stiffness_factor: f64,
    /// Equivalent rolling radius `R_r`; `None` means the contact's `R*`.
    pub rolling_radius: Option<f64>,
    /// Relative rotation about the normal (twisting) also loads the spring
    /// and the dashpot.
    pub torsion_torque: bool,
    /// Factor `f ∈ [0, 1]` on the dashpot once the spring is fully mobilised.
    pub mobilised_damping_factor: f64,
}

impl SpringDashpot {
    /// The rolling radius `R_r` at a contact of effective radius `r_eff`
    /// (`rolling_radius`, or `R*`), per lane.
    #[inline(always)]
    pub fn rolling_radius<T: Lane>(&self, r_eff: T) -> T {
        match self.rolling_radius {
            Some(r_r) => T::splat(r_r),
            None => r_eff,
        }
    }

    /// Rolling stiffness `k_r = λ k_n μ_r² R_r²` \[N m/rad\] for a secant
    /// normal stiffness `k_n` and effective radius `r_eff`, per lane.
    #[inline(always)]
    pub fn stiffness<T: Lane>(&self, k_n: T, r_eff: T) -> T {
        let r_r = self.rolling_radius(r_eff);
        let mu_r = T::splat(self.friction) * r_r;
        T::splat(self.stiffness_factor) * k_n * mu_r * mu_r
    }

    /// Rotational dashpot coefficient `C_r = η_r · 2 sqrt(I_r k_r)` \[N m s/rad\], per lane.
    #[inline(always)]
    pub fn damping_coefficient<T: Lane>(&self, k_r: T, inertia_r: T) -> T {
        T::splat(self.damping * 2.0) * (inertia_r * k_r).sqrt()
    }

    /// The EPSD couple `M_r = M^k + M^d` on `i` of contacts in lanes, see
    /// the [module documentation](self).
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
        let r_r = self.rolling_radius(inp.r_eff);
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
        // Where mobilised, len2 > limit² ≥ 0, so the division is safe; the
        // root and the division only where a lane is (the same bits).
        let spring = if T::any(mobilised) {
            V3::select(mobilised, spring.scale(limit / len2.sqrt()), spring)
        } else {
            spring
        };
        (history[0], history[1], history[2]) = (spring.x, spring.y, spring.z);
        let c_r = self.damping_coefficient(k_r, inp.inertia_r);
        let f = T::splat(self.mobilised_damping_factor);
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

/// The rolling couple `M_r` on `i` (`j` receives `−M_r`) of one contact,
/// for any rolling model; `history` is the model's slice of the contact's
/// record (for the EPSD models the spring torque `M^k` \[N m\], zero when
/// the contact forms), updated in place.
#[inline]
pub fn rolling_torque(m: &RollingModel, inp: &RollingInput, history: &mut [f64]) -> DVec3 {
    debug_assert!(
        (inp.n.length_squared() - 1.0).abs() < 1e-9,
        "rolling_torque: n is not a unit vector: {:?}",
        inp.n
    );
    debug_assert!(inp.dt >= 0.0, "rolling_torque: negative time step");
    m.couple(inp, history).into()
}

#[cfg(test)]
mod tests;
