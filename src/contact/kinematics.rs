//! Per-pair kinematics, computed once per contact and shared by every sub-model.
//!
//! Notation follows `physics.md`: `i` is the body with the lower global id (a
//! wall is always `j`), `n = d/r` points from `i` to `j`, the overlap is
//! `δ = R_i + R_j − r`, and the lever arms `ℓ_i = R_i − δ/2`, `ℓ_j = R_j − δ/2`
//! put the contact point in the middle of the overlap so that the two lever
//! arms sum to `r` and angular momentum is conserved exactly.

use glam::DVec3;

/// The state of one body that a contact law reads.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Body {
    /// Centre position (for `j`, already including any periodic image shift).
    pub x: DVec3,
    /// Velocity.
    pub v: DVec3,
    /// Angular velocity.
    pub omega: DVec3,
    /// Radius.
    pub radius: f64,
    /// Inverse mass (0 for a frozen particle).
    pub inv_mass: f64,
}

/// Relative kinematics of one contact (see the module docs for the notation).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Kinematics {
    /// Unit normal from `i` to `j`.
    pub n: DVec3,
    /// Centre distance (for walls: the distance from the centre to the wall surface).
    pub r: f64,
    /// Overlap `δ`.
    pub delta: f64,
    /// Overlap rate `δ̇ = −v_c·n`.
    pub delta_dot: f64,
    /// Lever arm of `i`, `ℓ_i = R_i − δ/2`.
    pub lever_i: f64,
    /// Lever arm of `j`, `ℓ_j = R_j − δ/2` (unused for walls).
    pub lever_j: f64,
    /// Tangential part of the contact-point velocity of `j` relative to `i`.
    pub v_t: DVec3,
    /// `ω_i − ω_j`.
    pub omega_rel: DVec3,
    /// Mean spin about the normal, `½(ω_i + ω_j)·n`: the rate at which a
    /// rigidly rotating pair turns about `n` (tangential history co-rotates with it).
    pub spin_n: f64,
    /// Effective radius `R*`.
    pub r_eff: f64,
    /// Effective mass `m*` (infinite parts excluded: a frozen body or wall counts as infinitely heavy).
    pub m_eff: f64,
}

impl Kinematics {
    /// Kinematics of a sphere–sphere contact with separation `d = x_j − x_i` of length `r > 0`.
    #[inline]
    pub fn pair(bi: &Body, bj: &Body, d: DVec3, r: f64) -> Self {
        // One division instead of three (n differs from d / r by at most an ulp).
        let n = d * (1.0 / r);
        let delta = bi.radius + bj.radius - r;
        let lever_i = bi.radius - 0.5 * delta;
        let lever_j = bj.radius - 0.5 * delta;
        let v_c = (bj.v - bi.v) + bj.omega.cross(-lever_j * n) - bi.omega.cross(lever_i * n);
        let vn = v_c.dot(n);
        Self {
            n,
            r,
            delta,
            delta_dot: -vn,
            lever_i,
            lever_j,
            v_t: v_c - vn * n,
            omega_rel: bi.omega - bj.omega,
            spin_n: 0.5 * (bi.omega + bj.omega).dot(n),
            r_eff: bi.radius * bj.radius / (bi.radius + bj.radius),
            m_eff: 1.0 / (bi.inv_mass + bj.inv_mass),
        }
    }

    /// Kinematics of a sphere–wall contact. `n` is the unit normal from the
    /// sphere's centre towards the wall, `dist` the centre-to-surface distance,
    /// `wall_velocity` the wall's velocity at the contact point and
    /// `wall_omega` its angular velocity.
    #[inline]
    pub fn wall(bi: &Body, n: DVec3, dist: f64, wall_velocity: DVec3, wall_omega: DVec3) -> Self {
        let delta = bi.radius - dist;
        let lever_i = bi.radius - 0.5 * delta;
        let v_c = wall_velocity - bi.v - bi.omega.cross(lever_i * n);
        let vn = v_c.dot(n);
        Self {
            n,
            r: dist,
            delta,
            delta_dot: -vn,
            lever_i,
            lever_j: f64::INFINITY,
            v_t: v_c - vn * n,
            omega_rel: bi.omega - wall_omega,
            spin_n: 0.5 * (bi.omega + wall_omega).dot(n),
            r_eff: bi.radius,
            m_eff: 1.0 / bi.inv_mass,
        }
    }
}
