//! Tangential force models: none, DEMLab dashpot-slider, Cundall–Strack spring-slider.
//!
//! The force computed here is the force on `j`: it opposes `j`'s sliding
//! relative to `i` (`v_t` is `j`'s contact-point velocity relative to `i`).
//! `i` receives the opposite force.

use super::kinematics::Kinematics;
use super::normal::NormalForce;
use glam::DVec3;

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
    /// Number of history values the model stores per contact.
    pub fn history_len(&self) -> usize {
        match self {
            TangentialModel::SpringSlider { .. } => 3,
            _ => 0,
        }
    }

    /// Tangential force on `j`. `history` is this model's slice (length [`Self::history_len`]).
    #[inline(always)]
    pub fn force(
        &self,
        k: &Kinematics,
        normal: &NormalForce,
        dt: f64,
        history: &mut [f64],
    ) -> DVec3 {
        match *self {
            TangentialModel::None => DVec3::ZERO,
            TangentialModel::DashpotSlider { friction, damping } => {
                let speed = k.v_t.length();
                if speed == 0.0 {
                    return DVec3::ZERO;
                }
                let magnitude = (damping * speed).min(friction * normal.total.abs());
                -(magnitude / speed) * k.v_t
            }
            TangentialModel::SpringSlider {
                friction,
                stiffness,
                damping_ratio,
            } => spring_slider_force(friction, stiffness, damping_ratio, k, normal, dt, history),
        }
    }
}

/// The Cundall–Strack spring-slider force on `j` (the body of
/// [`TangentialModel::SpringSlider`], callable with the parameters fixed at
/// compile time). `history` holds `ξ` (3 values).
#[inline(always)]
pub fn spring_slider_force(
    friction: f64,
    stiffness: TangentialStiffness,
    damping_ratio: f64,
    k: &Kinematics,
    normal: &NormalForce,
    dt: f64,
    history: &mut [f64],
) -> DVec3 {
    let k_t = match stiffness {
        TangentialStiffness::Linear { ratio } => ratio * normal.stiffness,
        TangentialStiffness::Mindlin { g_star } => 8.0 * g_star * (k.r_eff * k.delta).sqrt(),
    };
    let gamma_t = damping_ratio * normal.damping;
    let old = DVec3::new(history[0], history[1], history[2]);
    let mut xi = rotate_about_normal(rotate_into_plane(old, k.n), k.n, k.spin_n * dt);
    xi += k.v_t * dt;
    let mut f = -k_t * xi - gamma_t * k.v_t;
    let limit = friction * normal.total.abs();
    let f2 = f.length_squared();
    if f2 > limit * limit {
        f *= limit / f2.sqrt();
        xi = if k_t > 0.0 {
            -(f + gamma_t * k.v_t) / k_t
        } else {
            DVec3::ZERO
        };
    }
    history[0] = xi.x;
    history[1] = xi.y;
    history[2] = xi.z;
    f
}

/// Rotate `v` (in the plane normal to the unit vector `n`) by `angle` about
/// `n`: the part of a rigid rotation that twists the contact, which the
/// projection alone cannot follow.
#[inline]
pub fn rotate_about_normal(v: DVec3, n: DVec3, angle: f64) -> DVec3 {
    if angle == 0.0 {
        return v;
    }
    let (s, c) = small_sin_cos(angle);
    c * v + s * n.cross(v)
}

/// `(sin a, cos a)`, by short Taylor series when `|a| < 1e-3` (the usual
/// case: the twist per time step is tiny), where the truncation error
/// (`a^7/5040` and `a^6/720`) lies far below half an ulp, else by `sin_cos`.
/// Several times cheaper than `sin_cos`; the same bits on every thread and rank.
#[inline]
pub fn small_sin_cos(a: f64) -> (f64, f64) {
    if series_covers(a) {
        series_sin_cos(a)
    } else {
        a.sin_cos()
    }
}

/// Whether [`small_sin_cos`] takes its series for `a` (`|a| < 1e-3`; false
/// for NaN).
#[inline(always)]
pub fn series_covers(a: f64) -> bool {
    a.abs() < 1e-3
}

/// The short series of [`small_sin_cos`], for `a` where [`series_covers`].
#[inline(always)]
pub fn series_sin_cos(a: f64) -> (f64, f64) {
    let a2 = a * a;
    let s = a - a * a2 * (1.0 / 6.0) * (1.0 - a2 * (1.0 / 20.0));
    let c = 1.0 - a2 * 0.5 * (1.0 - a2 * (1.0 / 12.0));
    (s, c)
}

/// Project `v` onto the plane normal to the unit vector `n` and rescale it to
/// its old length (objective history update; a vector already in the plane is
/// returned unchanged up to rounding).
#[inline]
pub fn rotate_into_plane(v: DVec3, n: DVec3) -> DVec3 {
    let old2 = v.length_squared();
    if old2 == 0.0 {
        return v;
    }
    let p = v - v.dot(n) * n;
    let new2 = p.length_squared();
    if new2 == 0.0 {
        return DVec3::ZERO;
    }
    p * (old2 / new2).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kin(n: DVec3, v_t: DVec3) -> Kinematics {
        Kinematics {
            n,
            r: 1.0,
            delta: 0.01,
            delta_dot: 0.0,
            lever_i: 0.5,
            lever_j: 0.5,
            v_t,
            omega_rel: DVec3::ZERO,
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
        let slow = m.force(
            &kin(DVec3::Z, DVec3::new(0.1, 0.0, 0.0)),
            &normal(10.0),
            1e-3,
            &mut [],
        );
        assert!((slow - DVec3::new(-0.3, 0.0, 0.0)).length() < 1e-15);
        let fast = m.force(
            &kin(DVec3::Z, DVec3::new(0.0, 10.0, 0.0)),
            &normal(10.0),
            1e-3,
            &mut [],
        );
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
        let f = m.force(&k, &normal(10.0), 0.01, &mut h);
        // ξ = 0.01, F = −100 · 0.01 = −1 (below μF_n = 5).
        assert!((f.x + 1.0).abs() < 1e-14 && h[0] == 0.01);
        for _ in 0..10 {
            m.force(&k, &normal(10.0), 0.01, &mut h);
        }
        let f = m.force(&k, &normal(10.0), 0.01, &mut h);
        assert!((f.length() - 5.0).abs() < 1e-12, "slipping force {f}");
        assert!(
            (h[0] - 0.05).abs() < 1e-14,
            "spring reset to the slip length"
        );
    }

    #[test]
    fn small_sin_cos_matches_libm_to_an_ulp() {
        for i in -2000..=2000 {
            let a = i as f64 * 5.123e-7;
            let (s, c) = small_sin_cos(a);
            let (s0, c0) = a.sin_cos();
            assert!((s - s0).abs() <= f64::EPSILON * s0.abs(), "sin {a}");
            assert!((c - c0).abs() <= f64::EPSILON, "cos {a}");
            assert_eq!(small_sin_cos(-a).0, -s);
        }
    }

    #[test]
    fn rotation_into_plane_keeps_length() {
        let v = DVec3::new(1.0, 2.0, 0.5);
        let n = DVec3::new(0.0, 0.0, 1.0);
        let p = rotate_into_plane(v, n);
        assert!(p.dot(n).abs() < 1e-15);
        assert!((p.length() - v.length()).abs() < 1e-14);
    }
}
