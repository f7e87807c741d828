//! Tangential force models: none, DEMLab dashpot-slider, Cundall–Strack spring-slider.
//!
//! The force computed here is the force on `j`: it opposes `j`'s sliding
//! relative to `i` (`v_t` is `j`'s contact-point velocity relative to `i`).
//! `i` receives the opposite force.

use super::kinematics::Kinematics;
use super::normal::NormalForce;
use crate::contact::{kind_mismatch, Kind};
use crate::math::series::small_sin_cos;
use crate::simd::lane::{Lane, V3};

/// How the spring-slider's tangential stiffness is obtained.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TangentialStiffness {
    /// `k_t = ratio · k_n` with the normal model's (secant) stiffness.
    Linear {
        /// `k_t / k_n`.
        ratio: f64,
    },
    /// Mindlin: `k_t = 8 G* sqrt(R* δ)`.
    Mindlin {
        /// Effective shear modulus `G*`.
        g_star: f64,
    },
}

/// A tangential model with its run-constant parameters for one material pair.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TangentialModel {
    /// No tangential force.
    None,
    /// DEMLab `ContactForceT_DashpotSlider`: `F_t = −min(η_t |v_t|, μ|F_n|) t̂`,
    /// `t̂ = v_t/|v_t|`; no history.
    DashpotSlider {
        /// Coulomb coefficient `μ`.
        friction: f64,
        /// Dashpot coefficient `η_t` (N s/m).
        damping: f64,
    },
    /// Cundall & Strack (Géotechnique 29 (1979) 47) spring-slider with the
    /// history `ξ` (tangential spring elongation, 3 values). Each step the
    /// stored `ξ` is rotated into the current tangent plane and rescaled to
    /// its old length (Luding, Granular Matter 10 (2008) 235, eq. 17), then
    /// `ξ += v_t Δt`, `F_t = −k_t ξ − γ_t v_t`; if `|F_t| > μ|F_n|` the force
    /// is scaled to `μ|F_n|` and `ξ = −(F_t + γ_t v_t)/k_t` (slip). Beyond
    /// physics.md's recipe, `ξ` is also turned about `n` by the pair's mean
    /// spin `½(ω_i + ω_j)·n Δt`, so that it co-rotates when the contact twists.
    SpringSlider {
        /// Coulomb coefficient `μ`.
        friction: f64,
        /// Stiffness law.
        stiffness: TangentialStiffness,
        /// `γ_t = damping_ratio · γ_n`.
        damping_ratio: f64,
    },
}

impl TangentialModel {
    /// Number of history values a model of kind `kind` stores per contact,
    /// if the kind says ([`Kind::ANY`] does not).
    #[inline(always)]
    pub const fn history_len_of(kind: u8) -> Option<usize> {
        match kind {
            Kind::SPRING_SLIDER => Some(3),
            Kind::NONE | Kind::DASHPOT_SLIDER => Some(0),
            _ => None,
        }
    }

    /// Number of history values the model stores per contact.
    pub fn history_len(&self) -> usize {
        Self::history_len_of(self.kind()).expect("every model has a kind")
    }

    /// The model's kind: [`Kind::NONE`], [`Kind::DASHPOT_SLIDER`] or
    /// [`Kind::SPRING_SLIDER`].
    pub fn kind(&self) -> u8 {
        match self {
            TangentialModel::None => Kind::NONE,
            TangentialModel::DashpotSlider { .. } => Kind::DASHPOT_SLIDER,
            TangentialModel::SpringSlider { .. } => Kind::SPRING_SLIDER,
        }
    }

    /// Tangential force on `j` (per lane). `history` is this model's slice
    /// (length [`Self::history_len`]).
    #[inline(always)]
    pub fn force<T: Lane>(
        &self,
        k: &Kinematics<T>,
        normal: &NormalForce<T>,
        dt: f64,
        history: &mut [T],
    ) -> V3<T> {
        self.force_as::<T, { Kind::ANY }>(k, normal, dt, history)
    }

    /// [`Self::force`] of a model whose kind `KIND` is known where the
    /// caller is compiled ([`Kind::ANY`]: not known).
    ///
    /// # Panics
    /// If the model is not of kind `KIND`.
    #[inline(always)]
    pub fn force_as<T: Lane, const KIND: u8>(
        &self,
        k: &Kinematics<T>,
        normal: &NormalForce<T>,
        dt: f64,
        history: &mut [T],
    ) -> V3<T> {
        let is = |kind| KIND == Kind::ANY || KIND == kind;
        match *self {
            TangentialModel::None if is(Kind::NONE) => V3::zero(),
            TangentialModel::DashpotSlider { friction, damping } if is(Kind::DASHPOT_SLIDER) => {
                let speed = k.v_t.length();
                let magnitude =
                    (T::splat(damping) * speed).min(T::splat(friction) * normal.total.abs());
                let f = k.v_t.scale(-(magnitude / speed));
                V3::select(speed.eq(T::splat(0.0)), V3::zero(), f)
            }
            TangentialModel::SpringSlider {
                friction,
                stiffness,
                damping_ratio,
            } if is(Kind::SPRING_SLIDER) => {
                spring_slider_force(friction, stiffness, damping_ratio, k, normal, dt, history)
            }
            _ => kind_mismatch(),
        }
    }
}

/// The Cundall–Strack spring-slider force on `j` (the body of
/// [`TangentialModel::SpringSlider`]), per lane. `history` holds `ξ` (3
/// values).
#[inline(always)]
pub fn spring_slider_force<T: Lane>(
    friction: f64,
    stiffness: TangentialStiffness,
    damping_ratio: f64,
    k: &Kinematics<T>,
    normal: &NormalForce<T>,
    dt: f64,
    history: &mut [T],
) -> V3<T> {
    let k_t = match stiffness {
        TangentialStiffness::Linear { ratio } => T::splat(ratio) * normal.stiffness,
        TangentialStiffness::Mindlin { g_star } => {
            T::splat(8.0 * g_star) * (k.r_eff * k.delta).sqrt()
        }
    };
    let gamma_t = T::splat(damping_ratio) * normal.damping;
    let old = V3::new(history[0], history[1], history[2]);
    let dt = T::splat(dt);
    let turned = rotate_about_normal(rotate_into_plane(old, k.n), k.n, k.spin_n * dt);
    let xi = turned + k.v_t.scale(dt);
    let f = xi.scale(-k_t) - k.v_t.scale(gamma_t);
    let limit = T::splat(friction) * normal.total.abs();
    let f2 = f.length_squared();
    let slides = f2.gt(limit * limit);
    let capped = f.scale(limit / f2.sqrt());
    let back = (-(capped + k.v_t.scale(gamma_t))).div_by(k_t);
    let slid = V3::select(k_t.gt(T::splat(0.0)), back, V3::zero());
    let xi = V3::select(slides, slid, xi);
    history[0] = xi.x;
    history[1] = xi.y;
    history[2] = xi.z;
    V3::select(slides, capped, f)
}

/// Rotate `v` (in the plane normal to the unit vector `n`) by `angle` about
/// `n`: the part of a rigid rotation that twists the contact, which the
/// projection alone cannot follow.
#[inline(always)]
pub fn rotate_about_normal<T: Lane>(v: V3<T>, n: V3<T>, angle: T) -> V3<T> {
    let (s, c) = small_sin_cos(angle);
    let turned = v.scale(c) + n.cross(v).scale(s);
    V3::select(angle.eq(T::splat(0.0)), v, turned)
}

/// Project `v` onto the plane normal to the unit vector `n` and rescale it to
/// its old length (objective history update; a vector already in the plane is
/// returned unchanged up to rounding; a zero vector stays zero, and one
/// along `n` becomes zero).
#[inline(always)]
pub fn rotate_into_plane<T: Lane>(v: V3<T>, n: V3<T>) -> V3<T> {
    let zero = T::splat(0.0);
    let old2 = v.length_squared();
    let p = v - n.scale(v.dot(n));
    let new2 = p.length_squared();
    let rescaled = p.scale((old2 / new2).sqrt());
    let in_plane = V3::select(new2.eq(zero), V3::zero(), rescaled);
    V3::select(old2.eq(zero), v, in_plane)
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::DVec3;

    fn kin(n: DVec3, v_t: DVec3) -> Kinematics {
        Kinematics {
            n: n.into(),
            r: 1.0,
            delta: 0.01,
            delta_dot: 0.0,
            lever_i: 0.5,
            lever_j: 0.5,
            v_t: v_t.into(),
            omega_rel: DVec3::ZERO.into(),
            spin_n: 0.0,
            r_eff: 0.25,
            m_eff: 1.0,
        }
    }

    fn normal(total: f64) -> NormalForce {
        NormalForce {
            total,
            elastic: total,
            stiffness: 100.0,
            damping: 2.0,
        }
    }

    #[test]
    fn dashpot_slider_is_viscous_below_and_coulomb_above_the_limit() {
        let m = TangentialModel::DashpotSlider {
            friction: 0.5,
            damping: 3.0,
        };
        let slow: DVec3 = m
            .force(
                &kin(DVec3::Z, DVec3::new(0.1, 0.0, 0.0)),
                &normal(10.0),
                1e-3,
                &mut [],
            )
            .into();
        assert!((slow - DVec3::new(-0.3, 0.0, 0.0)).length() < 1e-15);
        let fast: DVec3 = m
            .force(
                &kin(DVec3::Z, DVec3::new(0.0, 10.0, 0.0)),
                &normal(10.0),
                1e-3,
                &mut [],
            )
            .into();
        assert!((fast - DVec3::new(0.0, -5.0, 0.0)).length() < 1e-14);
    }

    #[test]
    fn spring_slider_accumulates_then_slips_at_coulomb_limit() {
        let m = TangentialModel::SpringSlider {
            friction: 0.5,
            stiffness: TangentialStiffness::Linear { ratio: 1.0 },
            damping_ratio: 0.0,
        };
        let mut h = [0.0; 3];
        let k = kin(DVec3::Z, DVec3::new(1.0, 0.0, 0.0));
        let f: DVec3 = m.force(&k, &normal(10.0), 0.01, &mut h).into();
        // ξ = 0.01, F = −100 · 0.01 = −1 (below μF_n = 5).
        assert!((f.x + 1.0).abs() < 1e-14 && h[0] == 0.01);
        for _ in 0..10 {
            m.force(&k, &normal(10.0), 0.01, &mut h);
        }
        let f: DVec3 = m.force(&k, &normal(10.0), 0.01, &mut h).into();
        assert!((f.length() - 5.0).abs() < 1e-12, "slipping force {f}");
        assert!(
            (h[0] - 0.05).abs() < 1e-14,
            "spring reset to the slip length"
        );
    }

    #[test]
    fn rotation_into_plane_keeps_length() {
        let v = DVec3::new(1.0, 2.0, 0.5);
        let n = DVec3::new(0.0, 0.0, 1.0);
        let p: DVec3 = rotate_into_plane(v.into(), n.into()).into();
        assert!(p.dot(n).abs() < 1e-15);
        assert!((p.length() - v.length()).abs() < 1e-14);
    }
}
